import Foundation
import BenchmarkStatistics

/// Renders a run as Markdown: how it was measured, the noise, each section's verdicts, the
/// goals, the A/A comparisons.
enum Report {
    /// What the whole report needs beyond the sections' results.
    struct Context {
        var machine: Machine
        var settings: RunSettings
        var budgetMinutes: Double?
        var measuredSeconds: Double
        var countsAllocations: Bool
    }

    static func header(_ context: Context) -> String {
        var text = ""
        if isDebugBuild {
            text += "> **DEBUG BUILD: these numbers are meaningless. Run `swift run -c release Benchmarks`.**\n\n"
        }
        text += "Machine: \(context.machine.summary)\n\n"
        text += "**How to read it.** Every comparison runs its subjects and their peer in the same rounds: "
        text += "each round measures every entry once and the peer twice, in an order drawn at random (seed "
        text += "\(context.settings.seed)). A round gives one paired ratio per subject, oriented so that above 1 "
        text += "means the subject is better (the peer's time ÷ the subject's, or the subject's rate ÷ the "
        text += "peer's). The ratio shown is the geometric mean over the rounds, with a 95 % interval: Student's "
        text += "t interval on the mean of the log ratios. The peer against its own second measurement in the "
        text += "same rounds (the A/A) sets each comparison's noise threshold: how far from 1 its interval "
        text += "reaches, at least 1 % and at most 10 %. Verdict: **better** or **worse** when the interval excludes 1 and the "
        text += "ratio lies beyond the threshold; **same** when the whole interval lies within it; "
        text += "**undecided** when the interval is too wide to tell. A comparison stops when every subject's "
        text += "interval is narrower than ±\(Int(context.settings.stopping.targetHalfWidth * 100)) % (after "
        text += "at least \(context.settings.stopping.minimumRounds) rounds) or when its share of the budget is spent. "
        if let minutes = context.budgetMinutes {
            text += "Budget: \(String(format: "%g", minutes)) minutes; the measurements took "
        } else {
            text += "No time budget (`--full`); the measurements took "
        }
        text += "\(String(format: "%.1f", context.measuredSeconds / 60)) minutes. "
        text +=
            context.countsAllocations
            ? "Allocations are counted by an interposed malloc on every thread of the process. "
            : "**Allocation counting is not working in this build: the allocation columns are meaningless.** "
        text += "Instructions per operation: "
        text += PerfCounters.unavailableReason.map { "n/a (\($0))." } ?? "user-space hardware counters of the whole process."
        text += "\n"
        return text
    }

    /// The run's noise: rounds flagged by the probe, and a warning when the machine was too
    /// noisy to decide anything.
    static func noise(_ summary: NoiseSummary, verdicts: [VerdictRow]) -> String {
        var text = "\n## Noise\n\n"
        text += "Each round records the CPU time the hypervisor stole (`/proc/stat`), the CPU that other "
        text += "processes used, this process's involuntary context switches and its CPU time against the wall "
        text += "time, and the load average. A round is flagged when more than \(String(format: "%g", NoiseProbe.stealLimitPercent)) % "
        text += "of CPU time was stolen, when other processes used more than \(String(format: "%g", NoiseProbe.otherProcessesLimit)) "
        text += "CPUs, or when it was preempted more than \(String(format: "%g", NoiseProbe.switchRateLimit))× as often as "
        text += "its comparison's median round. Flagged rounds stay in the estimates (their pairing cancels what "
        text += "hit both sides); the tables count them.\n\n"
        text += "Rounds: \(summary.rounds), flagged: \(summary.contaminatedRounds)"
        text += String(
            format: "; steal %.2f %% of CPU time; other processes %.2f CPUs on average; highest load average %.2f.\n",
            summary.stealPercent, summary.otherProcessesCPUs, summary.maximumLoadAverage
        )
        let judged = verdicts.filter { !$0.isAA }
        let decided = judged.filter { $0.verdict != .undecided }
        if !judged.isEmpty, decided.isEmpty || summary.contaminatedRounds * 2 > summary.rounds {
            text += "\n> **The machine was too noisy to decide "
            text += decided.isEmpty ? "anything" : "much"
            text += "**: \(summary.contaminatedRounds) of \(summary.rounds) rounds were flagged and "
            text += "\(judged.count - decided.count) of \(judged.count) comparisons are undecided. Run again on a quieter "
            text += "machine, or give it a larger `--budget`.\n"
        }
        return text
    }

    /// Verdict rows as a table: name, subject (and peer), values, ratio with interval, verdict,
    /// noise threshold, rounds (flagged rounds in brackets).
    static func verdictTable(_ rows: [VerdictRow], nameTitle: String, showPeer: Bool, showMetric: Bool = false) -> String {
        var headers = [nameTitle, "subject"]
        if showPeer { headers.append("peer") }
        if showMetric { headers.append("metric") }
        headers += ["subject", "peer", "ratio [95% interval]", "verdict", "noise", "rounds"]
        var table = MarkdownTable(
            headers: headers,
            alignments: [.left, .left] + (showPeer ? [.left] : []) + (showMetric ? [.left] : [])
                + [.right, .right, .right, .left, .right, .right]
        )
        for row in rows {
            var cells = [row.name, row.subject]
            if showPeer { cells.append(row.baseline) }
            if showMetric { cells.append(row.metric) }
            cells += [
                formatted(row.subjectValue, unit: row.unit),
                formatted(row.peerValue, unit: row.unit),
                row.formattedRatioAndInterval,
                row.formattedVerdict,
                row.formattedThreshold,
                row.contaminatedRounds > 0 ? "\(row.rounds) (\(row.contaminatedRounds) flagged)" : "\(row.rounds)",
            ]
            table.rows.append(cells)
        }
        return table.render()
    }

    static func formatted(_ value: Double?, unit: String) -> String {
        guard let value else { return "–" }
        switch unit {
        case "ns": return value.formattedNanoseconds
        case "µs": return value >= 1_000 ? "\((value / 1_000).formattedMilliseconds)" : String(format: "%.1f µs", value)
        case "req/s": return value.formattedPlain + "/s"
        default: return value.formattedPlain + " " + unit
        }
    }

    /// The task operations, executors and paced hand-off sections.
    static func render(_ results: [ComparisonResult], goals: [GoalCheck]) -> String {
        var text = ""
        let ops = results.filter { $0.group == Catalog.taskOperationsGroup }
        if !ops.isEmpty {
            text += "\n## \(Catalog.taskOperationsGroup)\n\n"
            text += "Time per operation, Bolts against SwiftNIO (or Swift Concurrency) on the same operation; "
            text += "ratio = the peer's time ÷ the subject's (above 1: the subject is faster).\n\n"
            text += verdictTable(ops.flatMap { $0.verdicts.filter { !$0.isAA } }, nameTitle: "operation", showPeer: true)
            text += "\n" + costTable(ops)
        }
        let executors = results.filter { $0.group == Catalog.executorsGroup }
        if !executors.isEmpty {
            text += "\n## \(Catalog.executorsGroup)\n\n"
            text += "P producer threads submit tiny jobs (each increments a shared counter) as fast as they can; "
            text += "time runs from the first submission to the end of the last job. Ratio = `DispatchQueue.global()`'s "
            text += "time ÷ the executor's (above 1: more jobs per second than Dispatch). Queued latency: submit to "
            text += "job start of every 64th job, over all samples (HdrHistogram).\n\n"
            text += executorOverview(executors)
            text += "\n" + verdictTable(
                executors.flatMap { comparison in comparison.verdicts.filter { !$0.isAA }.map { shortened($0, comparison) } },
                nameTitle: "producers", showPeer: false
            )
        }
        let handOffs = results.filter { $0.group == Catalog.handOffGroup }
        if !handOffs.isEmpty {
            text += "\n## \(Catalog.handOffGroup)\n\n"
            text += "P producer threads each submit one tiny job and wait until it has run before the next, so nothing "
            text += "queues: hand-off latency (submit to job start, every job) is the executor's own, including "
            text += "waking an idle worker. Two judged metrics: each round's p99 hand-off latency, and the round "
            text += "trip (elapsed time ÷ jobs); ratio = Dispatch's ÷ the executor's (above 1: better).\n\n"
            text += pacedTable(handOffs)
        }
        let judged = goals.filter { $0.verdict != .undecided || $0.decidedBy != "no data" }
        if !judged.isEmpty { text += "\n## Goals (judged on this run's intervals)\n\n" + goalsTable(goals) }
        let failures = results.flatMap { comparison in
            comparison.entries.compactMap { entry in entry.error.map { "- \(entry.name): \($0)" } }
        }
        if !failures.isEmpty { text += "\n## Failed scenarios\n\n" + failures.joined(separator: "\n") + "\n" }
        return text
    }

    /// The paced hand-off: per producer count and executor, the p99 and round-trip verdicts.
    private static func pacedTable(_ comparisons: [ComparisonResult]) -> String {
        var table = MarkdownTable(
            headers: ["producers", "executor", "p99", "Dispatch p99", "p99 ratio", "verdict", "round trip", "ratio", "verdict",
                      "noise (p99)", "rounds"],
            alignments: [.left, .left, .right, .right, .right, .left, .right, .right, .left, .right, .right]
        )
        for comparison in comparisons {
            let rows = comparison.verdicts.filter { !$0.isAA }.map { shortened($0, comparison) }
            for p99 in rows where p99.metric == "p99 hand-off latency" {
                let trip = rows.first { $0.subject == p99.subject && $0.metric == "round trip per job" }
                table.rows.append([
                    p99.name, p99.subject, formatted(p99.subjectValue, unit: "ns"), formatted(p99.peerValue, unit: "ns"),
                    p99.formattedRatioAndInterval, p99.formattedVerdict, formatted(trip?.subjectValue, unit: "ns"),
                    trip?.formattedRatioAndInterval ?? "–", trip?.formattedVerdict ?? "–", p99.formattedThreshold,
                    p99.contaminatedRounds > 0 ? "\(p99.rounds) (\(p99.contaminatedRounds) flagged)" : "\(p99.rounds)",
                ])
            }
        }
        return table.render()
    }

    /// An executor row with the producer count as its name and the executor's short title.
    private static func shortened(_ row: VerdictRow, _ comparison: ComparisonResult) -> VerdictRow {
        var copy = row
        copy.name = "P=\(comparison.producers ?? 0)"
        copy.subject = ExecutorKind.allCases.first { row.subject.hasPrefix($0.title + ":") }?.shortTitle ?? row.subject
        return copy
    }

    /// Medians of what each entry costs beyond time: allocations and instructions per operation.
    private static func costTable(_ comparisons: [ComparisonResult]) -> String {
        var table = MarkdownTable(
            headers: ["implementation", "median time", "allocs/op", "instructions/op"],
            alignments: [.left, .right, .right, .right]
        )
        for comparison in comparisons {
            for entry in comparison.entries {
                table.rows.append([
                    entry.name,
                    entry.medianNanosecondsPerOperation.map { $0.formattedNanoseconds + "/" + entry.unit } ?? "failed",
                    entry.medianAllocationsPerOperation?.formattedAllocations ?? "–",
                    entry.medianInstructionsPerOperation.map { String(format: "%.0f", $0) } ?? "n/a",
                ])
            }
        }
        return table.render()
    }

    /// Goals as a Markdown table: goal, what was measured, the verdict and which bound decided it.
    static func goalsTable(_ goals: [GoalCheck]) -> String {
        var table = MarkdownTable(
            headers: ["goal", "measured", "verdict", "decided by"],
            alignments: [.left, .left, .left, .left]
        )
        for goal in goals {
            let verdict = goal.verdict == .notMet ? "**not met**" : goal.verdict.rawValue
            table.rows.append([goal.goal, goal.measured, verdict, goal.decidedBy])
        }
        return table.render()
    }

    /// Every A/A comparison: the peer against itself in its comparison's rounds.
    static func aaTable(_ rows: [VerdictRow]) -> String {
        guard !rows.isEmpty else { return "" }
        var text = "\n## A/A comparisons\n\n"
        text += "Each comparison's peer against its own second measurement in the same rounds (which of the two "
        text += "is the numerator is drawn at random each round). How far its own 95 % interval reaches from 1 is "
        text += "the comparison's noise threshold. \"Every A/A interval holds 1\" is one claim about the whole run, "
        text += "so the intervals below are simultaneous: 95 % for all \(rows.count) together (Bonferroni, each at "
        text += String(format: "%.2f", 100 - 5 / Double(max(rows.count, 1)))
        text += " %). A run where one of them misses 1 had a bias between the two positions of a round.\n\n"
        var table = MarkdownTable(
            headers: ["section", "comparison", "metric", "ratio [simultaneous 95%]", "holds 1", "own 95%", "threshold", "rounds"],
            alignments: [.left, .left, .left, .right, .left, .right, .right, .right]
        )
        for row in rows {
            let holds = row.interval95.map { $0[0] <= 1 && $0[1] >= 1 ? "yes" : "**no**" } ?? "–"
            let own = row.individualInterval95.map { String(format: "[%.2f, %.2f]", $0[0], $0[1]) } ?? "–"
            table.rows.append([
                row.section.rawValue, row.name, row.metric, row.formattedRatioAndInterval, holds, own,
                row.formattedThreshold, "\(row.rounds)",
            ])
        }
        return text + table.render()
    }

    private static func executorOverview(_ comparisons: [ComparisonResult]) -> String {
        let producerCounts = comparisons.compactMap(\.producers)
        var table = MarkdownTable(
            headers: ["jobs per second (median)"] + producerCounts.map { "P=\($0)" },
            alignments: [.left] + producerCounts.map { _ in .right }
        )
        for kind in ExecutorKind.allCases {
            var row = [kind.title]
            var any = false
            for comparison in comparisons {
                if let entry = comparison.entries.first(where: { $0.name.hasPrefix(kind.title + ":") }),
                    let ns = entry.medianNanosecondsPerOperation
                {
                    row.append((1e9 / ns).formattedRate)
                    any = true
                } else {
                    row.append("–")
                }
            }
            if any { table.rows.append(row) }
        }
        return table.render()
    }
}

#if DEBUG
    /// Whether this is a debug build (every number it measures is meaningless).
    let isDebugBuild = true
#else
    /// Whether this is a debug build (every number it measures is meaningless).
    let isDebugBuild = false
#endif
