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
        if let cpus = settings.cpus {
            text += "Each handler's server (the same SwiftNIO HTTP/1.1 server, \(settings.eventLoops) event loops) in a "
            text += "child process of its own, placed in a cgroup of its own with a quota of "
            text += "\(cpus.formattedCPUs) per \(CPUQuotaCgroup.periodMicroseconds / 1_000) ms period "
            text += "(\(outcome.notes["cgroup"] ?? "cgroup")); wrk stays outside the quota (\(settings.wrkThreads) thread, "
            text += "\(settings.connections) connections, \(settings.seconds)-second runs). "
            if let pools = outcome.notes["poolThreads"] { text += "`ThreadPool.shared` had \(pools) worker(s) in the children. " }
            text += "CPU is the child's (user + system). Throttled: the share of the scheduler periods in which the "
            text += "cgroup used up its quota and was stopped, and how long it was stopped per second of the run "
            text += "(`cpu.stat`; medians over the rounds). "
        } else {
            text += "A SwiftNIO HTTP/1.1 server on 127.0.0.1 (\(settings.eventLoops) event loops) in this process, wrk in "
            text += "another (\(settings.connections) connections, \(settings.seconds)-second runs); each request is fanned "
            text += "out to N CPU jobs by one handler. CPU is the server process's. "
        }
        text += "Each round runs every handler once and `DispatchGroup` twice, in a random order. A table per metric "
        text += "(above 1 is better), a column per configuration (jobs per request × job length). \(Verdicts.legend)\n"
        let configurations = settings.configurations { _ in 0 }
        for metric in WrkMetrics.all {
            text += "\n### \(metric.title)\n\n" + matrix(outcome, configurations, metric: metric)
        }
        if settings.cpus != nil {
            var table = MarkdownTable(
                headers: ["handler"] + configurations.map { "\($0.header): throttled periods, ms/s" },
                alignments: [.left] + configurations.map { _ in .right })
            for peer in ServerPeer.allCases {
                let cells = configurations.map { configuration in
                    outcome.summary(peer, configuration.key).map {
                        ($0.figures["throttledFraction"] ?? .nan).percent(0) + ", "
                            + ($0.figures["throttledMillisecondsPerSecond"] ?? .nan).fixed(0)
                    } ?? "–"
                }
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

    /// One metric as a matrix: a row per handler (and the A/A), a column per configuration,
    /// each cell "ratio [low, high] verdict"; the first row gives DispatchGroup's own median.
    private static func matrix(
        _ outcome: ServerBenchmark.Outcome, _ configurations: [ServerBenchmark.Configuration], metric: Metric
    ) -> String {
        let server = ServerBenchmark(settings: outcome.settings, peers: [])
        var table = MarkdownTable(
            headers: ["handler"] + configurations.map(\.header),
            alignments: [.left] + configurations.map { _ in .right }
        )
        table.rows.append(
            ["DispatchGroup (reference)"]
                + configurations.map { outcome.summary(.dispatchGroup, $0.key)?.formatted(metric) ?? "–" }
        )
        table.rows.append(
            ["noise threshold (A/A)"]
                + configurations.map { outcome.verdict(server.name($0), metric, subject: nil)?.formattedThreshold ?? "–" }
        )
        for peer in ServerPeer.allCases where peer != .dispatchGroup {
            let cells = configurations.map { outcome.verdict(server.name($0), metric, subject: peer.title) }
            guard cells.contains(where: { $0 != nil }) else { continue }
            table.rows.append([peer.shortTitle] + cells.map { $0?.formattedCell ?? "–" })
        }
        return table.render()
    }

    // MARK: Chart

    /// One panel per configuration: latency (log scale) at p50, p90, p99, p99.9 and max,
    /// one line per peer.
    static func chart(_ outcome: ServerBenchmark.Outcome, machine: Machine) -> String? {
        let summaries = outcome.settings.configurations { _ in 0 }.map { configuration in
            (title: configuration.title, peers: outcome.summaries.filter { $0.load == configuration.key })
        }.filter { !$0.peers.isEmpty }
        guard !summaries.isEmpty else { return nil }
        let columns = min(3, summaries.count)
        let rows = (summaries.count + columns - 1) / columns
        let panelWidth = 330.0
        let panelHeight = 250.0
        let left = 60.0
        let top = 80.0
        let legendHeight = 40.0 + 18.0 * Double(ServerPeer.allCases.count)
        let width = left + Double(columns) * panelWidth + 20
        let height = top + Double(rows) * (panelHeight + 40) + legendHeight
        let percentiles: [(String, KeyPath<WrkSummary<ServerPeer>, Double>)] = [
            ("p50", \.p50), ("p90", \.p90), ("p99", \.p99), ("p99.9", \.p999), ("max", \.max),
        ]
        let all = summaries.flatMap { $0.peers.flatMap { peer in percentiles.map { peer[keyPath: $0.1] } } }
            .filter { $0 > 0 }
        guard let smallest = all.min(), let largest = all.max() else { return nil }
        let lowDecade = floor(log10(smallest))
        let highDecade = ceil(log10(largest))
        let decades = max(highDecade - lowDecade, 1)

        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif">
            <rect width="100%" height="100%" fill="#ffffff"/>
            <text x="\(left)" y="30" font-size="19" font-weight="bold" fill="#222">Request latency inside a SwiftNIO server under wrk (lower is better)</text>
            <text x="\(left)" y="52" font-size="12" fill="#555">\(escape("\(machine.cpuModel), \(machine.usableCPUs) CPUs · Swift \(machine.swiftCompiler) \(machine.build) · \(outcome.settings.eventLoops) event loops, wrk \(outcome.settings.connections) connections · medians of \(outcome.settings.seconds)-second runs (max: worst) · \(machine.date.prefix(10))"))</text>

            """
        for (index, summary) in summaries.enumerated() {
            let originX = left + Double(index % columns) * panelWidth
            let originY = top + Double(index / columns) * (panelHeight + 40)
            let plotWidth = panelWidth - 40
            let plotHeight = panelHeight - 40
            func x(_ position: Int) -> Double { originX + plotWidth * Double(position) / Double(percentiles.count - 1) }
            func y(_ microseconds: Double) -> Double {
                let value = max(microseconds, smallest)
                return originY + 20 + plotHeight * (1 - (log10(value) - lowDecade) / decades)
            }
            svg += "<text x=\"\(f(originX))\" y=\"\(f(originY + 10))\" font-size=\"13\" font-weight=\"bold\" fill=\"#333\">\(escape(summary.title))</text>\n"
            var decade = lowDecade
            while decade <= highDecade {
                let value = pow(10, decade)
                let ty = y(value)
                svg += "<line x1=\"\(f(originX))\" y1=\"\(f(ty))\" x2=\"\(f(originX + plotWidth))\" y2=\"\(f(ty))\" stroke=\"#e5e5e5\"/>\n"
                svg += "<text x=\"\(f(originX - 6))\" y=\"\(f(ty + 4))\" font-size=\"10.5\" fill=\"#555\" text-anchor=\"end\">\(decadeLabel(value))</text>\n"
                decade += 1
            }
            for (position, (label, _)) in percentiles.enumerated() {
                svg += "<text x=\"\(f(x(position)))\" y=\"\(f(originY + 20 + plotHeight + 16))\" font-size=\"11\" fill=\"#444\" text-anchor=\"middle\">\(label)</text>\n"
            }
            for peer in summary.peers {
                let style = style(for: peer.arm)
                let points = percentiles.enumerated().map { position, item in
                    "\(f(x(position))),\(f(y(peer[keyPath: item.1])))"
                }.joined(separator: " ")
                let dash = style.dashed ? " stroke-dasharray=\"6 4\"" : ""
                svg += "<polyline fill=\"none\" stroke=\"\(style.color)\" stroke-width=\"\(style.width)\"\(dash) points=\"\(points)\"><title>\(escape(peer.arm.title))</title></polyline>\n"
            }
        }
        var legendY = top + Double(rows) * (panelHeight + 40) + 10
        for peer in ServerPeer.allCases {
            let style = style(for: peer)
            let dash = style.dashed ? " stroke-dasharray=\"6 4\"" : ""
            svg += "<line x1=\"\(f(left))\" y1=\"\(f(legendY))\" x2=\"\(f(left + 30))\" y2=\"\(f(legendY))\" stroke=\"\(style.color)\" stroke-width=\"\(style.width)\"\(dash)/>\n"
            svg += "<text x=\"\(f(left + 40))\" y=\"\(f(legendY + 4))\" font-size=\"12\" fill=\"#333\">\(escape(peer.title))</text>\n"
            legendY += 18
        }
        svg += "</svg>\n"
        return svg
    }

    private static func style(for peer: ServerPeer) -> (color: String, width: Double, dashed: Bool) {
        switch peer {
        case .boltsTasks: return ("#d62728", 3.5, false)
        case .boltsExecuteAll: return ("#8c564b", 3, false)
        case .boltsPool: return ("#f28e2b", 2.5, false)
        case .dispatchGroup: return ("#1f77b4", 3, false)
        case .nioFutures: return ("#2ca02c", 2, false)
        case .nioThreadPool: return ("#98df8a", 2, true)
        case .concurrencyTaskGroup: return ("#9467bd", 2, false)
        case .inlineOnLoop: return ("#7f7f7f", 1.5, true)
        }
    }

    private static func decadeLabel(_ microseconds: Double) -> String {
        if microseconds >= 1_000_000 { return "\(Int(microseconds / 1_000_000)) s" }
        if microseconds >= 1_000 { return "\(Int(microseconds / 1_000)) ms" }
        return "\(Int(microseconds)) µs"
    }

    private static func f(_ value: Double) -> String { SVGChart.f(value) }

    private static func escape(_ text: String) -> String { SVGChart.escape(text) }
}
