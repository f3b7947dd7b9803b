import Foundation
import BenchmarkStatistics

/// Renders a run as Markdown: how it was measured, the noise, each section's part (which the
/// section writes itself, with the tables and goal tables here), the A/A comparisons.
enum Report {
    /// The report's head: the machine, and how the run measured (`processIsTheUnit`: one phrase
    /// per section whose intervals are over processes, `BenchmarkSection.processIsTheUnit`).
    static func header(
        machine: Machine, settings: RunSettings, budgetMinutes: Double?, measuredSeconds: Double,
        countsAllocations: Bool, processIsTheUnit: [String]
    ) -> String {
        var text = ""
        if isDebugBuild {
            text += "> **DEBUG BUILD: these numbers are meaningless. Run `swift run -c release Benchmarks`.**\n\n"
        }
        text += "Machine: \(machine.summary)\n\n"
        var parameters = [
            "seed \(settings.seed)",
            "a comparison stops at ±\(Int(settings.stopping.targetHalfWidth * 100)) % after at least "
                + "\(settings.stopping.minimumRounds) rounds, or when its share of the budget is spent",
            budgetMinutes.map { "budget \($0.shortest) minutes" } ?? "no time budget (`--full`)",
            "measuring took \((measuredSeconds / 60).fixed(1)) minutes",
            "instructions: " + (PerfCounters.unavailableReason.map { "n/a (\($0))" } ?? "user-space hardware counters"),
        ]
        if !processIsTheUnit.isEmpty {
            parameters.append("the process is the unit in " + processIsTheUnit.joined(separator: ", "))
        }
        text += method("Reading the report", parameters) + "\n" + Verdicts.legend + "\n"
        if !countsAllocations {
            text += "\n**Allocation counting is not working in this build: the allocation columns are meaningless.**\n"
        }
        return text
    }

    /// The run's noise: rounds flagged by the probe, and a warning when the machine was too
    /// noisy to decide anything.
    static func noise(_ summary: NoiseSummary, verdicts: [VerdictRow]) -> String {
        var text = "\n## Noise\n\n"
        text += method("Noise", [
            "a round is flagged above \(NoiseProbe.stealLimitPercent.shortest) % stolen CPU time, "
                + "\(NoiseProbe.otherProcessesLimit.shortest) CPUs used by other processes, or "
                + "\(NoiseProbe.switchRateLimit.shortest)× its comparison's median preemption rate"
        ]) + "\n"
        text += "Rounds: \(summary.rounds), flagged: \(summary.contaminatedRounds); steal "
            + "\(summary.stealPercent.fixed(2)) % of CPU time; other processes \(summary.otherProcessesCPUs.fixed(2)) "
            + "CPUs on average; highest load average \(summary.maximumLoadAverage.fixed(2)).\n"
        let judged = verdicts.filter { !$0.isAA }
        let decided = judged.filter { $0.verdict != .undecided }
        if !judged.isEmpty, decided.isEmpty || summary.contaminatedRounds * 2 > summary.rounds {
            text += "\n> **The machine was too noisy to decide \(decided.isEmpty ? "anything" : "much")**: "
                + "\(summary.contaminatedRounds) of \(summary.rounds) rounds were flagged and "
                + "\(judged.count - decided.count) of \(judged.count) comparisons are undecided. Run again on a "
                + "quieter machine, or give it a larger `--budget`.\n"
        }
        text += undecided(judged)
        return text
    }

    /// What more rounds would decide: of the undecided rows, how many their present spread
    /// would decide within twice and four times their rounds (or processes, where the process
    /// is the unit), and how many sit at the noise threshold's edge; with the options that
    /// would give the first group their rounds.
    static func undecided(_ rows: [VerdictRow]) -> String {
        let open = rows.filter { !$0.undecidedHint.isEmpty }  // undecided, and projected or at the edge
        guard !open.isEmpty else { return "" }
        let factors = open.compactMap(\.decidingFactor)
        let within2 = factors.filter { $0 <= 2 }.count
        let within4 = factors.filter { $0 > 2 && $0 <= 4 }.count
        let edge = open.count - factors.count
        return "\nUndecided rows: \(open.count); at their present spread \(within2) would be decided within twice "
            + "their rounds (about twice the `--budget`, `--rounds` at the row's →n, `--processes` at its →np), "
            + "\(within4) within four times, \(factors.count - within2 - within4) beyond that, \(edge) not within a "
            + "thousand (→∞).\n"
    }

    /// A section's pointer to the part of `Benchmarks/METHODOLOGY.md` that says what its figures
    /// mean (`heading`, that part's heading; the link is relative, as `Benchmarks/RESULTS.md`
    /// reads it), and the parameters this run gave it.
    static func method(_ heading: String, _ parameters: [String]) -> String {
        let anchor = heading.lowercased().filter { $0.isLetter || $0.isNumber || $0 == " " || $0 == "-" }
            .replacingOccurrences(of: " ", with: "-")
        let given = parameters.isEmpty ? "" : " Parameters: " + parameters.joined(separator: "; ") + "."
        return "Method: [\(heading)](METHODOLOGY.md#\(anchor)).\(given)\n"
    }

    /// The sections' parts in run order. The goals of the sections that keep no goal table of
    /// their own (`SectionOutcome.goalsInRunTable`) form the run's goal table, and the failed
    /// scenarios the list after it; both follow the last of those sections.
    static func sections(_ outcomes: [SectionOutcome]) -> String {
        let sharing = outcomes.filter(\.goalsInRunTable)
        let place = outcomes.lastIndex(where: \.goalsInRunTable) ?? outcomes.count - 1
        var text = ""
        for (index, outcome) in outcomes.enumerated() {
            text += outcome.markdown
            guard index == place else { continue }
            let goals = sharing.flatMap(\.goals)
            let judged = goals.filter { $0.verdict != .undecided || $0.decidedBy != "no data" }
            if !judged.isEmpty { text += "\n## Goals (judged on this run's intervals)\n\n" + goalsTable(goals) }
            let failures = outcomes.flatMap(\.failures)
            if !failures.isEmpty { text += "\n## Failed scenarios\n\n" + failures.joined(separator: "\n") + "\n" }
        }
        return text
    }

    /// A section's goals under a heading of its own: "### Server goals (judged on this run's
    /// intervals)" and the table; nothing when there are none.
    static func goals(_ goals: [GoalCheck], title: String) -> String {
        guard !goals.isEmpty else { return "" }
        return "\n### \(title) goals (judged on this run's intervals)\n\n" + goalsTable(goals)
    }

    /// A row's rounds and how many of them the noise probe flagged: "8 (2 flagged)".
    static func rounds(_ row: VerdictRow) -> String {
        row.contaminatedRounds > 0 ? "\(row.rounds) (\(row.contaminatedRounds) flagged)" : "\(row.rounds)"
    }

    /// Goals as a Markdown table: goal, what was measured, the verdict and which bound decided it.
    static func goalsTable(_ goals: [GoalCheck]) -> String {
        var table = MarkdownTable(
            headers: ["goal", "measured", "verdict", "decided by"], alignments: [.left, .left, .left, .left])
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
        text += method("A/A comparisons", [
            "simultaneous 95 % intervals for all \(rows.count) (Bonferroni, each at "
                + (100 - 5 / Double(max(rows.count, 1))).fixed(2) + " %)"
        ])
        let misses = rows.filter { row in row.interval95.map { $0[0] > 1 || $0[1] < 1 } ?? false }
        let thresholds = rows.compactMap(\.noiseThreshold).sorted()
        if let low = thresholds.first, let high = thresholds.last {
            text += "Noise thresholds ranged from \(low.plusMinusPercent) to \(high.plusMinusPercent) "
            text += "(median \(thresholds[thresholds.count / 2].plusMinusPercent)). "
        }
        guard !misses.isEmpty else {
            return text + "All \(rows.count) A/A intervals hold 1 (every one is in the JSON, `isAA`).\n"
        }
        text += "**\(misses.count) of \(rows.count) A/A intervals miss 1**: the two positions of a round differed "
        text += "there, and that comparison's verdicts deserve doubt.\n\n"
        var table = MarkdownTable(
            headers: ["section", "comparison", "metric", "ratio [simultaneous 95%]", "own 95%", "rounds"],
            alignments: [.left, .left, .left, .right, .right, .right])
        for row in misses {
            let own = row.individualInterval95.map { Double.formattedInterval($0[0], $0[1]) } ?? "–"
            table.rows.append(
                [row.section.rawValue, row.name, row.metric, row.formattedRatioAndInterval, own, "\(row.rounds)"])
        }
        return text + table.render()
    }
}

/// Whether this is a debug build (every number it measures is meaningless).
#if DEBUG
    let isDebugBuild = true
#else
    let isDebugBuild = false
#endif
