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
        text += "**How to read it.** Each round measures every entry once and the peer twice, in a random "
        text += "order (seed \(context.settings.seed)). Ratio: the geometric mean of the rounds' paired ratios, "
        text += "above 1 when the subject is better (the peer's time ÷ the subject's, or the subject's rate ÷ the "
        text += "peer's), with Student's t 95 % interval on the mean log ratio (over the processes' means where "
        text += "the process is the unit: task operations that hop between threads, the executor sections, Swift "
        text += "Concurrency). Noise threshold: how far from 1 the peer-against-itself (A/A) interval reaches, "
        text += "within [1 %, 10 %]. **better**/**worse**: the interval excludes 1 and the ratio lies beyond the "
        text += "threshold; **same**: the interval lies within it; **undecided**: neither. A comparison stops at "
        text += "±\(Int(context.settings.stopping.targetHalfWidth * 100)) % (after at least "
        text += "\(context.settings.stopping.minimumRounds) rounds) or when its share of the budget is spent. "
        if let minutes = context.budgetMinutes {
            text += "Budget: \(String(format: "%g", minutes)) minutes; measuring took "
        } else {
            text += "No time budget (`--full`); measuring took "
        }
        text += "\(String(format: "%.1f", context.measuredSeconds / 60)) minutes. "
        text +=
            context.countsAllocations
            ? "Allocations: an interposed malloc, every thread. "
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
        text += "A round is flagged when more than \(String(format: "%g", NoiseProbe.stealLimitPercent)) % of CPU time "
        text += "was stolen (`/proc/stat`), other processes used more than "
        text += "\(String(format: "%g", NoiseProbe.otherProcessesLimit)) CPUs, or it was preempted "
        text += "\(String(format: "%g", NoiseProbe.switchRateLimit))× as often as its comparison's median round; flagged "
        text += "rounds stay in the estimates (the JSON has each round's readings).\n\n"
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
            text += "ratio = the peer's time ÷ the subject's (above 1: the subject is faster). The operations whose "
            text += "work hops between threads run in child processes, each interval over the processes' means.\n\n"
            text += taskOperationsTable(ops)
        }
        let executors = results.filter { $0.group == Catalog.executorsGroup }
        if !executors.isEmpty {
            text += "\n## \(Catalog.executorsGroup)\n\n"
            text += "P producer threads submit tiny jobs as fast as they can, until all ran. Where an executor's "
            text += "threads land on the CPUs holds for a process's life, so each comparison here and in the next "
            text += "section runs in several child processes, and its interval is over the processes' mean log "
            text += "ratios. Ratio = `DispatchQueue.global()`'s time ÷ the executor's. \(Verdicts.legend)\n\n"
            text += producerMatrix(executors, metric: nil)
        }
        let handOffs = results.filter { $0.group == Catalog.handOffGroup }
        if !handOffs.isEmpty {
            text += "\n## \(Catalog.handOffGroup)\n\n"
            text += "P producer threads each submit one tiny job and wait until it has run, so nothing queues: the "
            text += "hand-off latency (submit to job start) is the executor's own. Ratio = Dispatch's ÷ the "
            text += "executor's, for each round's p99 and for the round trip per job.\n\n### p99 hand-off latency\n\n" + producerMatrix(handOffs, metric: "p99 hand-off latency")
            text += "\n### Round trip per job\n\n" + producerMatrix(handOffs, metric: "round trip per job")
        }
        let judged = goals.filter { $0.verdict != .undecided || $0.decidedBy != "no data" }
        if !judged.isEmpty { text += "\n## Goals (judged on this run's intervals)\n\n" + goalsTable(goals) }
        let failures = results.flatMap { comparison in
            comparison.entries.compactMap { entry in entry.error.map { "- \(entry.name): \($0)" } }
        }
        if !failures.isEmpty { text += "\n## Failed scenarios\n\n" + failures.joined(separator: "\n") + "\n" }
        return text
    }

    /// Executors against Dispatch as a matrix: a row per executor (and the A/A), a column per
    /// producer count, each cell "ratio [low, high] verdict"; `metric` picks one of several.
    private static func producerMatrix(_ comparisons: [ComparisonResult], metric: String?) -> String {
        var table = MarkdownTable(
            headers: ["executor"] + comparisons.map { "P=\($0.producers ?? 0)" },
            alignments: [.left] + comparisons.map { _ in .right }
        )
        func cell(_ row: VerdictRow?) -> String { row?.formattedCell ?? "–" }
        table.rows.append(
            ["noise threshold (A/A)"] + comparisons.map { comparison in
                comparison.verdicts.first { $0.isAA && (metric == nil || $0.metric == metric) }?.formattedThreshold ?? "–"
            }
        )
        for kind in ExecutorKind.allCases where kind != .dispatchGlobal {
            let cells = comparisons.map { comparison in
                comparison.verdicts.first {
                    !$0.isAA && $0.subject.hasPrefix(kind.title + ":") && (metric == nil || $0.metric == metric)
                }
            }
            guard cells.contains(where: { $0 != nil }) else { continue }
            table.rows.append([kind.shortTitle] + cells.map(cell))
        }
        return table.render()
    }

    /// One row per subject: its time and the peer's, allocations per operation of both
    /// (medians; exact counts), instructions where counted, the ratio and verdict.
    private static func taskOperationsTable(_ comparisons: [ComparisonResult]) -> String {
        var table = MarkdownTable(
            headers: ["Bolts", "peer", "time", "peer's", "allocs/op", "ratio [95% interval]", "verdict", "noise", "rounds"],
            alignments: [.left, .left, .right, .right, .right, .right, .left, .right, .right]
        )
        for comparison in comparisons {
            for row in comparison.verdicts where !row.isAA {
                let subject = comparison.entries.first { $0.name == row.subject }
                let peer = comparison.reference
                var allocations = subject?.medianAllocationsPerOperation?.formattedAllocations ?? "–"
                allocations += " / " + (peer?.medianAllocationsPerOperation?.formattedAllocations ?? "–")
                if let instructions = subject?.medianInstructionsPerOperation {
                    allocations += String(format: " (%.0f instr.)", instructions)
                }
                table.rows.append([
                    shortName(row.subject, keepingDetail: true), shortName(row.baseline),
                    formatted(row.subjectValue, unit: row.unit), formatted(row.peerValue, unit: row.unit), allocations,
                    row.formattedRatioAndInterval, row.formattedVerdict, row.formattedThreshold, rounds(row),
                ])
            }
        }
        return table.render()
    }

    /// A scenario's name up to its first parenthesised remark or comma: "Bolts continueWith on
    /// a completed task". With `keepingDetail`, only the remark goes, so that the subjects of
    /// one operation stay apart ("…, set inline by the caller").
    static func shortName(_ name: String, keepingDetail: Bool = false) -> String {
        var end = name.range(of: " (")?.lowerBound ?? name.endIndex
        if !keepingDetail, let comma = name[..<end].firstIndex(of: ",") { end = comma }
        return name[..<end].trimmingCharacters(in: .whitespaces)
    }

    static func rounds(_ row: VerdictRow) -> String {
        row.contaminatedRounds > 0 ? "\(row.rounds) (\(row.contaminatedRounds) flagged)" : "\(row.rounds)"
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

    /// The A/A comparisons: the peer against itself in its comparison's rounds. The report
    /// summarises them and lists any whose interval misses 1; the JSON holds every one.
    static func aaTable(_ rows: [VerdictRow]) -> String {
        guard !rows.isEmpty else { return "" }
        var text = "\n## A/A comparisons\n\n"
        text += "Each comparison's peer against its own second measurement in the same rounds (which of the two "
        text += "is the numerator is drawn at random each round). How far its own 95 % interval reaches from 1 is "
        text += "the comparison's noise threshold. \"Every A/A interval holds 1\" is one claim about the whole run, "
        text += "so their intervals are simultaneous: 95 % for all \(rows.count) together (Bonferroni, each at "
        text += String(format: "%.2f", 100 - 5 / Double(max(rows.count, 1))) + " %). "
        let misses = rows.filter { row in row.interval95.map { $0[0] > 1 || $0[1] < 1 } ?? false }
        let thresholds = rows.compactMap(\.noiseThreshold).sorted()
        if let low = thresholds.first, let high = thresholds.last {
            text += String(format: "Noise thresholds ranged from ±%.1f%% to ±%.1f%% ", low * 100, high * 100)
            text += String(format: "(median ±%.1f%%). ", thresholds[thresholds.count / 2] * 100)
        }
        if misses.isEmpty {
            text += "All \(rows.count) A/A intervals hold 1 (every one is in the JSON, `isAA`).\n"
            return text
        }
        text += "**\(misses.count) of \(rows.count) A/A intervals miss 1**: the two positions of a round differed "
        text += "there, and that comparison's verdicts deserve doubt.\n\n"
        var table = MarkdownTable(
            headers: ["section", "comparison", "metric", "ratio [simultaneous 95%]", "own 95%", "rounds"],
            alignments: [.left, .left, .left, .right, .right, .right]
        )
        for row in misses {
            let own = row.individualInterval95.map { String(format: "[%.2f, %.2f]", $0[0], $0[1]) } ?? "–"
            table.rows.append([row.section.rawValue, row.name, row.metric, row.formattedRatioAndInterval, own, "\(row.rounds)"])
        }
        return text + table.render()
    }
}

#if DEBUG
    /// Whether this is a debug build (every number it measures is meaningless).
    let isDebugBuild = true
#else
    /// Whether this is a debug build (every number it measures is meaningless).
    let isDebugBuild = false
#endif
