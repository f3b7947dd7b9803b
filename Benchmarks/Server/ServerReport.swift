import BenchmarkStatistics
import Foundation

/// The server scenario in Markdown (one table per configuration, then its goals) and as
/// an SVG chart of latency percentiles per peer.
enum ServerReport {
    static func render(_ outcome: ServerBenchmark.Outcome) -> String {
        var text = "\n## \(ServerBenchmark.group): SwiftNIO HTTP/1.1 under wrk\n\n"
        if let skipped = outcome.skipped {
            return text + "Skipped: \(skipped).\n"
        }
        let settings = outcome.settings
        text += "A SwiftNIO HTTP/1.1 server on 127.0.0.1 (\(settings.eventLoops) event loops) in this process, wrk in "
        text += "another (\(settings.connections) connections, \(settings.seconds)-second runs); each request is fanned "
        text += "out to N CPU jobs by one handler. Each round runs every handler once and `DispatchGroup` twice, in "
        text += "a random order. A table per metric (above 1 is better; CPU is the server process's), a column "
        text += "per configuration (jobs per request × job length). \(Verdicts.legend)\n"
        for metric in [ServerBenchmark.requestsPerSecond, ServerBenchmark.cpuPerRequest, ServerBenchmark.p99Latency] {
            text += "\n### \(metric.title)\n\n" + matrix(outcome, metric: metric)
        }
        return text + Report.goals(outcome.goals, title: "Server")
    }

    /// One metric as a matrix: a row per handler (and the A/A), a column per configuration,
    /// each cell "ratio [low, high] verdict"; the first row gives DispatchGroup's own median.
    private static func matrix(_ outcome: ServerBenchmark.Outcome, metric: Metric) -> String {
        let summaries = outcome.summaries
        var table = MarkdownTable(
            headers: ["handler"] + summaries.map { "\($0.configuration.fanOut) × \($0.configuration.jobNanoseconds < 1_000 ? "0.3" : "\($0.configuration.jobNanoseconds / 1_000)") µs" },
            alignments: [.left] + summaries.map { _ in .right }
        )
        func value(_ peer: ServerBenchmark.PeerSummary) -> String {
            switch metric.title {
            case ServerBenchmark.requestsPerSecond.title: return peer.requestsPerSecond.formattedPlain + "/s"
            case ServerBenchmark.cpuPerRequest.title: return peer.cpuMicrosecondsPerRequest.fixed(1) + " µs"
            default: return milliseconds(peer.p99) + " ms"
            }
        }
        table.rows.append(
            ["DispatchGroup (reference)"]
                + summaries.map { summary in summary.peers.first(where: \.isReference).map(value) ?? "–" }
        )
        func cell(_ row: VerdictRow?) -> String { row?.formattedCell ?? "–" }
        table.rows.append(
            ["noise threshold (A/A)"] + summaries.map { summary in
                outcome.verdicts.first { $0.isAA && $0.name == summary.title && $0.metric == metric.title }?
                    .formattedThreshold ?? "–"
            }
        )
        for peer in ServerPeer.allCases where peer != .dispatchGroup {
            let cells = summaries.map { summary in
                outcome.verdicts.first {
                    !$0.isAA && $0.name == summary.title && $0.subject == peer.title && $0.metric == metric.title
                }
            }
            guard cells.contains(where: { $0 != nil }) else { continue }
            table.rows.append([peer.shortTitle] + cells.map(cell))
        }
        return table.render()
    }

    /// Microseconds as milliseconds with three significant digits.
    private static func milliseconds(_ microseconds: Double) -> String { microseconds.microsecondsAsMilliseconds }

    // MARK: Chart

    /// One panel per configuration: latency (log scale) at p50, p90, p99, p99.9 and max,
    /// one line per peer.
    static func chart(_ outcome: ServerBenchmark.Outcome, machine: Machine) -> String? {
        let summaries = outcome.summaries
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
        let percentiles: [(String, KeyPath<ServerBenchmark.PeerSummary, Double>)] = [
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
                let style = style(for: peer.peer)
                let points = percentiles.enumerated().map { position, item in
                    "\(f(x(position))),\(f(y(peer[keyPath: item.1])))"
                }.joined(separator: " ")
                let dash = style.dashed ? " stroke-dasharray=\"6 4\"" : ""
                svg += "<polyline fill=\"none\" stroke=\"\(style.color)\" stroke-width=\"\(style.width)\"\(dash) points=\"\(points)\"><title>\(escape(peer.title))</title></polyline>\n"
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
