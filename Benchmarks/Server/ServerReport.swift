import BenchmarkStatistics
import Foundation

/// The server scenario in Markdown (one table per configuration, then its goals) and as
/// an SVG chart of latency percentiles per peer.
enum ServerReport {
    static func render(_ outcome: ServerBenchmark.Outcome) -> String {
        let settings = outcome.settings
        var text = "\n## \(ServerBenchmark.group)"
        text += settings.cpus == nil ? ": SwiftNIO HTTP/1.1 under wrk\n\n" : ", under a CPU quota\n\n"
        if let skipped = outcome.skipped { return text + "Skipped: \(skipped).\n" }
        var parameters = [
            "\(settings.eventLoops) event loops",
            "wrk \(settings.wrkThreads) thread, \(settings.connections) connections", "\(settings.seconds)-second runs",
        ]
        if let cpus = settings.cpus {
            parameters.append(
                "a quota of \(cpus.formattedCPUs) per \(CPUQuotaCgroup.periodMicroseconds / 1_000) ms period "
                    + "(\(outcome.notes["cgroup"] ?? "cgroup"))")
            parameters += outcome.notes["poolThreads"].map { ["`ThreadPool.shared` of \($0) worker(s)"] } ?? []
        }
        text += Report.method(settings.cpus == nil ? "Inside a server" : "Under a CPU quota", parameters)
        let configurations = settings.configurations { _ in 0 }
        if let only = configurations.first, configurations.count == 1 {
            // One configuration: its three metrics in one table (and the quota's throttling).
            text += "\n### \(only.title)\n\n"
            text += grid(outcome, WrkMetrics.all.map { ($0.title, only, $0) }, throttling: settings.cpus != nil)
        } else {
            for metric in WrkMetrics.all {
                text += "\n### \(metric.title)\n\n" + grid(outcome, configurations.map { ($0.header, $0, metric) })
            }
        }
        if settings.cpus != nil, configurations.count > 1 {
            var table = MarkdownTable(
                headers: ["handler"] + configurations.map { "\($0.header): throttled periods, ms/s" },
                alignments: [.left] + configurations.map { _ in .right })
            for peer in ServerPeer.allCases {
                let cells = configurations.map { outcome.summary(peer, $0.key).map(throttling) ?? "–" }
                if cells.contains(where: { $0 != "–" }) { table.rows.append([peer.shortTitle] + cells) }
            }
            text += "\n### Throttling\n\n" + table.render()
        }
        let errors = ServerPeer.allCases.compactMap { peer -> String? in
            let count = outcome.summaries.filter { $0.arm == peer }.reduce(0) { $0 + $1.errors }
            return count > 0 ? "\(peer.shortTitle) \(count)" : nil
        }
        if !errors.isEmpty { text += "\nErrors: " + errors.joined(separator: ", ") + ".\n" }
        return settings.cpus == nil ? text + Report.goals(outcome.goals, title: "Server") : text
    }

    /// A summary's throttling under the quota: "95%, 505" (the share of periods throttled, and
    /// milliseconds throttled per second).
    private static func throttling(_ summary: WrkSummary<ServerPeer>) -> String {
        (summary.figures["throttledFraction"] ?? .nan).percent(0) + ", "
            + (summary.figures["throttledMillisecondsPerSecond"] ?? .nan).fixed(0)
    }

    /// A grid's column: one metric in one configuration.
    private typealias Column = (header: String, configuration: ServerBenchmark.Configuration, metric: Metric)

    /// A table of verdict cells ("ratio [low, high] verdict"): a row per handler after
    /// DispatchGroup's own medians and the A/A, a column per entry of `columns`. With
    /// `throttling`, a last column gives each handler's throttling in the first configuration.
    private static func grid(
        _ outcome: ServerBenchmark.Outcome, _ columns: [Column], throttling withThrottling: Bool = false
    ) -> String {
        func row(_ peer: ServerPeer, _ column: Column) -> VerdictRow? {
            let (section, key) = (outcome.settings.section, column.configuration.key)
            return outcome.verdict(VerdictKey(section, key, peer, ServerPeer.dispatchGroup.rawValue, column.metric))
        }
        func throttled(_ peer: ServerPeer) -> [String] {
            withThrottling ? [outcome.summary(peer, columns[0].configuration.key).map(throttling) ?? "–"] : []
        }
        var table = MarkdownTable(
            headers: ["handler"] + columns.map(\.header) + (withThrottling ? ["throttled periods, ms/s"] : []),
            alignments: [.left] + columns.map { _ in .right } + (withThrottling ? [.right] : []))
        table.rows.append(
            ["DispatchGroup (reference)"]
                + columns.map { outcome.summary(.dispatchGroup, $0.configuration.key)?.formatted($0.metric) ?? "–" }
                + throttled(.dispatchGroup))
        table.rows.append(
            ["noise threshold (A/A)"] + columns.map { row(.dispatchGroup, $0)?.formattedThreshold ?? "–" }
                + (withThrottling ? [""] : []))
        for peer in ServerPeer.allCases where peer != .dispatchGroup {
            let cells = columns.map { row(peer, $0) }
            guard cells.contains(where: { $0 != nil }) else { continue }
            table.rows.append([peer.shortTitle] + cells.map { $0?.formattedCell ?? "–" } + throttled(peer))
        }
        return table.render()
    }

    // MARK: Chart

    /// One panel per configuration: latency (log scale) at p50, p90, p99, p99.9 and max,
    /// one line per peer.
    static func chart(_ outcome: ServerBenchmark.Outcome, machine: Machine) -> String? {
        let percentiles: [(String, KeyPath<WrkSummary<ServerPeer>, Double>)] = [
            ("p50", \.p50), ("p90", \.p90), ("p99", \.p99), ("p99.9", \.p999), ("max", \.max),
        ]
        let panels = outcome.settings.configurations { _ in 0 }.map { configuration in
            SVGChart.Panel(
                title: configuration.title,
                series: ServerPeer.allCases.compactMap { peer in
                    outcome.summary(peer, configuration.key).map { summary in
                        let style = peer.chartStyle
                        return SVGChart.Series(
                            label: peer.title, color: style.color, width: style.width, dashed: style.dashed,
                            values: percentiles.map { summary[keyPath: $0.1] })
                    }
                })
        }.filter { !$0.series.isEmpty }
        let settings = outcome.settings
        return SVGChart.render(
            panels,
            .init(
                title: "Request latency inside a SwiftNIO server under wrk (lower is better)",
                subtitle: "\(machine.cpuModel), \(machine.usableCPUs) CPUs · Swift \(machine.swiftCompiler) "
                    + "\(machine.build) · \(settings.eventLoops) event loops, wrk \(settings.connections) "
                    + "connections · medians of \(settings.seconds)-second runs (max: worst) · "
                    + machine.date.prefix(10),
                xLabels: percentiles.map(\.0), scale: .logMicroseconds, columns: 3, labelsAtEnds: false))
    }
}
