import Foundation

/// The CPU-limit variant of the server scenario in Markdown: one table per configuration.
enum ServerCPULimitReport {
    static func render(_ outcome: ServerCPULimit.Outcome) -> String {
        var text = "\n## \(ServerBenchmark.group), under a CPU quota\n\n"
        if let skipped = outcome.skipped {
            return text + "Skipped: \(skipped).\n"
        }
        let settings = outcome.settings
        text += "Each handler's server (the same SwiftNIO HTTP/1.1 server, \(settings.eventLoops) event loops) in a "
        text += "child process of its own, placed in a cgroup of its own with a quota of "
        text += "\(settings.cpus.formattedCPUs) per \(CPUQuotaCgroup.periodMicroseconds / 1_000) ms period "
        text += "(\(outcome.cgroup ?? "cgroup")); wrk stays outside the quota (\(settings.wrkThreads) thread, "
        text += "\(settings.connections) connections, \(settings.seconds)-second runs). "
        if !outcome.children.isEmpty {
            let pools = Set(outcome.children.map(\.poolThreads)).sorted().map(String.init).joined(separator: "/")
            text += "`ThreadPool.shared` had \(pools) worker(s) in the children. "
        }
        text += "Each round runs every handler once and `DispatchGroup` twice, in an order drawn at random. "
        text += "Ratios are to `DispatchGroup` in the same rounds, above 1 better: requests/s (handler ÷ Dispatch) "
        text += "and CPU per request (the child's user + system time, Dispatch's ÷ the handler's). Throttled: the "
        text += "share of the scheduler periods in which the cgroup used up its quota and was stopped, and how "
        text += "long it was stopped per second of the run (`cpu.stat`; medians over the rounds). Max is the "
        text += "slowest request of any run.\n"
        for summary in outcome.summaries {
            let rows = outcome.verdicts.filter { $0.name == summary.title }
            text += "\n### \(summary.title)\n\n"
            if let aa = rows.first(where: { $0.isAA && $0.metric == ServerBenchmark.requestsPerSecond.title }) {
                text += "A/A (DispatchGroup against itself): requests/s \(aa.formattedRatioAndInterval), noise "
                text += "threshold \(aa.formattedThreshold), \(aa.rounds) rounds.\n\n"
            }
            var table = MarkdownTable(
                headers: [
                    "handler", "req/s", "req/s ratio", "verdict", "CPU µs/req", "CPU ratio", "verdict", "p99 ms",
                    "max ms", "throttled periods", "throttled ms/s",
                ],
                alignments: [.left, .right, .right, .left, .right, .right, .left, .right, .right, .right, .right]
            )
            for peer in summary.peers {
                func verdict(_ metric: Metric) -> VerdictRow? {
                    rows.first { !$0.isAA && $0.subject == peer.peer.title && $0.metric == metric.title }
                }
                let requests = verdict(ServerBenchmark.requestsPerSecond)
                let cpu = verdict(ServerBenchmark.cpuPerRequest)
                table.rows.append([
                    peer.isReference ? "\(peer.peer.shortTitle) **(reference)**" : peer.peer.shortTitle,
                    peer.requestsPerSecond.formattedPlain,
                    requests?.formattedRatioAndInterval ?? "",
                    requests?.formattedVerdict ?? "",
                    peer.cpuMicrosecondsPerRequest.fixed(1),
                    cpu?.formattedRatioAndInterval ?? "",
                    cpu?.formattedVerdict ?? "",
                    milliseconds(peer.p99),
                    milliseconds(peer.max),
                    peer.throttledFraction.percent(0),
                    peer.throttledMillisecondsPerSecond.fixed(0),
                ])
            }
            text += table.render()
            let errors = summary.peers.filter { $0.errors > 0 }
            if !errors.isEmpty {
                text +=
                    "\nErrors: " + errors.map { "\($0.peer.shortTitle) \($0.errors)" }.joined(separator: ", ") + ".\n"
            }
        }
        return text
    }

    /// Microseconds as milliseconds with three significant digits.
    private static func milliseconds(_ microseconds: Double) -> String { microseconds.microsecondsAsMilliseconds }
}
