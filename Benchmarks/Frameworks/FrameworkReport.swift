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
        var parameters = ["`\(framework.packageDirectory)`" + (outcome.notes["buildSeconds"].map { ", built in \($0) s" } ?? "")]
        parameters.append("executors: " + settings.arms.map(\.shortTitle).joined(separator: ", "))
        parameters += [
            "a \(settings.warmUpSeconds)-second warm-up", "wrk \(settings.wrkThreads) thread, \(settings.connections) connections",
            "\(settings.seconds)-second runs", "jobs of ~\(settings.jobNanoseconds / 1_000) µs (\(settings.jobRounds) xorshift rounds)",
        ]
        text += Report.method("Inside a framework server", parameters) + Verdicts.legend + "\n"
        text += "\nWhere the handlers ran: "
        text +=
            settings.arms.map { arm in
                let threads = Set(outcome.draws.filter { $0.arm == arm }.compactMap(\.handlerThread)).sorted()
                return "\(arm.shortTitle) `\(threads.joined(separator: "`, `"))`"
            }.joined(separator: "; ") + ".\n"
        // A column per comparison that has rows.
        let columns = FrameworkBenchmark.reportedPairs.filter { subject, peer in
            outcome.verdicts.contains { $0.key?.arm == subject.rawValue && $0.key?.baseline == peer.rawValue }
        }
        for metric in WrkMetrics.all {
            text += "\n### \(metric.title)\n\n"
            var table = MarkdownTable(
                headers: ["route", "default executor", "noise (A/A)"] + columns.map { "\($0.shortTitle) ÷ \($1.shortTitle)" },
                alignments: [.left, .right, .right] + columns.map { _ in .right }
            )
            for route in settings.routes {
                func row(_ subject: FrameworkBenchmark.Arm, _ peer: FrameworkBenchmark.Arm) -> VerdictRow? {
                    outcome.verdict(FrameworkBenchmark.key(framework, route.rawValue, subject, peer.rawValue, metric))
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
        if !outcome.goals.isEmpty {
            text +=
                "\n### \(framework.name) goals (judged on this run's intervals)\n\n" + Report.goalsTable(outcome.goals)
        }
        let errors = settings.arms.map { arm in
            (arm, outcome.summaries.filter { $0.arm == arm }.reduce(blocking(arm, outcome)?.errors ?? 0) { $0 + $1.errors })
        }.filter { $0.1 > 0 }
        if !errors.isEmpty {
            text += "\nErrors (wrk's connect, read, write, timeout and non-2xx counts): "
            text += errors.map { "\($0.0.shortTitle) \($0.1)" }.joined(separator: ", ") + ".\n"
        }
        return text
    }

    /// `/plain` beside the blocking handlers, a row per executor choice (medians over the rounds).
    private static func blocking(_ outcome: FrameworkBenchmark.Outcome, framework: Framework) -> String {
        let settings = outcome.settings
        var text = "\n### Beside handlers that block their thread\n\n"
        text += Report.method(
            "Beside handlers that block their thread",
            ["\(settings.blockConnections) connections on `/block` (at most \(settings.blockConnections * 50) req/s)"]) + "\n"
        var table = MarkdownTable(
            headers: [
                "executor", "/plain alone", "/plain beside /block", "kept [95%]", "verdict", "/plain p99 beside",
                "/block req/s", "threads", "stall reports",
            ],
            alignments: [.left, .right, .right, .right, .left, .right, .right, .right, .right]
        )
        for arm in settings.arms {
            guard let summary = blocking(arm, outcome) else { continue }
            let kept = outcome.verdict(
                FrameworkBenchmark.key(
                    framework, FrameworkBenchmark.blockingKey, arm, FrameworkBenchmark.aloneKey, FrameworkBenchmark.keptMetric))
            table.rows.append([
                arm.shortTitle,
                summary.plainAloneRequestsPerSecond.formattedPlain + "/s",
                summary.plainBesideBlockRequestsPerSecond.formattedPlain + "/s",
                kept?.formattedRatioAndInterval ?? summary.keptFraction.fixed(2) + "×",
                kept?.formattedVerdict ?? "",
                (summary.plainBesideBlockP99 / 1_000).formattedMilliseconds,
                summary.blockRequestsPerSecond.formattedPlain,
                "\(summary.threadsBefore) → \(summary.peakThreads)",
                summary.stalls?.formattedCell ?? "–",
            ])
        }
        return text + table.render() + stallExamples(outcome)
    }

    /// `arm`'s blocking-handler runs, summarized.
    private static func blocking(_ arm: FrameworkBenchmark.Arm, _ outcome: FrameworkBenchmark.Outcome) -> BlockingSummary? {
        BlockingSummary(outcome.draws.filter { $0.arm == arm && !$0.isTwin }.compactMap(\.blocking))
    }

    /// Under the blocking table, for each arm with stall reports: what the pool's monitor found
    /// against what it reported, and the first found report's line, as a user's log shows it.
    private static func stallExamples(_ outcome: FrameworkBenchmark.Outcome) -> String {
        outcome.settings.arms.compactMap { arm -> String? in
            guard let stalls = blocking(arm, outcome)?.stalls else { return nil }
            var line = "\n\(arm.shortTitle): the pool's monitor found \(stalls.stalls) stalls; reports: "
            line += "\(stalls.found) found, \(stalls.ended) ended, \(stalls.dropped) dropped (over the pool's "
            line += "limit a second, or with its queue full)"
            if let example = stalls.example { line += "; the first found: `\(example)`" }
            return line + ".\n"
        }.joined()
    }
}
