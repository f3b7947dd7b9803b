import BenchmarkStatistics
import Foundation

/// An "Inside a <framework> server" section in Markdown: a table per metric (a row per route,
/// a column per comparison), the blocking-handler table (a row per executor choice), then the
/// section's goals.
enum FrameworkReport {
    static func render(_ outcome: FrameworkBenchmark.Outcome, framework: Framework) -> String {
        var text = "\n## \(framework.group): \(framework.versionedName) under wrk, per executor\n\n"
        if let skipped = outcome.skipped { return text + "Skipped: \(skipped).\n" }
        let settings = outcome.settings
        let parameters = [
            "`\(framework.packageDirectory)`" + (outcome.notes["buildSeconds"].map { ", built in \($0) s" } ?? ""),
            "executors: " + settings.arms.map(\.shortTitle).joined(separator: ", "),
            "a \(settings.warmUpSeconds)-second warm-up",
            "wrk \(settings.wrkThreads) thread, \(settings.connections) connections", "\(settings.seconds)-second runs",
            "jobs of ~\(settings.jobNanoseconds / 1_000) µs (\(settings.jobRounds) xorshift rounds)",
        ]
        text += Report.method("Inside a framework server", parameters)
        let threads = settings.arms.map { arm in
            let threads = Set(outcome.draws.filter { $0.arm == arm }.compactMap(\.handlerThread)).sorted()
            return "\(arm.shortTitle) `\(threads.joined(separator: "`, `"))`"
        }
        text += "\nWhere the handlers ran: " + threads.joined(separator: "; ") + ".\n"
        // A column per comparison that has rows.
        let columns = FrameworkBenchmark.reportedPairs.filter { subject, peer in
            outcome.verdicts.contains { $0.key?.arm == subject.rawValue && $0.key?.baseline == peer.rawValue }
        }
        for metric in WrkMetrics.all {
            text += "\n### \(metric.title)\n\n"
            var table = MarkdownTable(
                headers: ["route", "default executor", "noise (A/A)"]
                    + columns.map { "\($0.shortTitle) ÷ \($1.shortTitle)" },
                alignments: [.left, .right, .right] + columns.map { _ in .right }
            )
            for route in settings.routes {
                func row(_ subject: FrameworkBenchmark.Arm, _ peer: FrameworkBenchmark.Arm) -> VerdictRow? {
                    outcome.verdict(VerdictKey(framework.section, route.rawValue, subject, peer.rawValue, metric))
                }
                table.rows.append(
                    [
                        "/\(route.path)", outcome.summary(.defaultExecutor, route.rawValue)?.formatted(metric) ?? "–",
                        row(.defaultExecutor, .defaultExecutor)?.formattedThreshold ?? "–",
                    ] + columns.map { row($0, $1)?.formattedCell ?? "–" }
                )
            }
            text += table.render()
        }
        text += blocking(outcome, framework: framework)
        text += Report.goals(outcome.goals, title: framework.name)
        let errors = settings.arms.map { arm in
            let blocking = runs(arm, outcome).flatMap { [$0.plain, $0.block] }
            return (arm, outcome.summaries.filter { $0.arm == arm }.reduce(0) { $0 + $1.errors }
                + blocking.reduce(0) { $0 + $1.errors + $1.timeouts + $1.non2xx })
        }.filter { $0.1 > 0 }
        if !errors.isEmpty {
            text += "\nErrors (wrk's connect, read, write, timeout and non-2xx counts): "
            text += errors.map { "\($0.0.shortTitle) \($0.1)" }.joined(separator: ", ") + ".\n"
        }
        return text
    }

    /// `/plain` beside the blocking handlers, a row per executor choice (medians over the rounds,
    /// the most threads of any round), and under it, for each arm with stall reports, what the
    /// pool's monitor found against what it reported, and the first found report's line.
    private static func blocking(_ outcome: FrameworkBenchmark.Outcome, framework: Framework) -> String {
        let connections = outcome.settings.blockConnections
        var text = "\n### Beside handlers that block their thread\n\n"
        text += Report.method(
            "Beside handlers that block their thread",
            ["\(connections) connections on `/block` (at most \(connections * 50) req/s)"]) + "\n"
        var table = MarkdownTable(
            headers: [
                "executor", "/plain alone", "/plain beside /block", "kept [95%]", "verdict", "/plain p99 beside",
                "/block req/s", "threads", "stall reports",
            ],
            alignments: [.left, .right, .right, .right, .left, .right, .right, .right, .right]
        )
        var examples = ""
        for arm in outcome.settings.arms {
            let runs = runs(arm, outcome)
            guard !runs.isEmpty else { continue }
            func middle(_ value: (BlockingRun) -> Double) -> Double { median(runs.map(value)) ?? .nan }
            let kept = outcome.verdict(
                VerdictKey(
                    framework.section, FrameworkBenchmark.blockingKey, arm, FrameworkBenchmark.aloneKey,
                    FrameworkBenchmark.keptMetric))
            let stalls = FrameworkBenchmark.StallReports.median(of: runs.compactMap(\.stalls))
            table.rows.append([
                arm.shortTitle,
                middle(\.plainAloneRequestsPerSecond).formattedPlain + "/s",
                middle(\.plainRequestsPerSecond).formattedPlain + "/s",
                kept?.formattedRatioAndInterval ?? middle(\.keptFraction).fixed(2) + "×",
                kept?.formattedVerdict ?? "",
                (middle(\.plain.p99) / 1_000).formattedMilliseconds,
                middle(\.blockRequestsPerSecond).formattedPlain,
                "\(Int(middle { Double($0.threadsBefore) })) → \(runs.map(\.peakThreads).max()!)",
                stalls?.formattedCell ?? "–",
            ])
            guard let stalls else { continue }
            examples += "\n\(arm.shortTitle): the pool's monitor found \(stalls.stalls) stalls; reports: "
            examples += "\(stalls.found) found, \(stalls.ended) ended, \(stalls.dropped) dropped (over the pool's "
            examples += "limit a second, or with its queue full)"
            if let example = stalls.example { examples += "; the first found: `\(example)`" }
            examples += ".\n"
        }
        return text + table.render() + examples
    }

    /// `arm`'s blocking-handler runs, twins left out.
    private static func runs(_ arm: FrameworkBenchmark.Arm, _ outcome: FrameworkBenchmark.Outcome) -> [BlockingRun] {
        outcome.draws.filter { $0.arm == arm && !$0.isTwin }.compactMap(\.blocking)
    }
}
