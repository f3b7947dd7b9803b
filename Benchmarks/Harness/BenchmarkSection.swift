/// One section of the benchmark: comparisons that run, are judged and are reported together
/// ("Task operations", "Inside a server", …). `BenchmarksCommand`, which knows nothing of what
/// a section measures, calls on the main thread either `listing` alone (`--list`), or
/// `prepare` on every section, `weight` and `progressSteps` to plan the budget, then `run` on
/// each in order with one `SectionContext`, and writes what their outcomes hold.
protocol BenchmarkSection: AnyObject {
    /// Its lines in `--list`, after `--filter`: a heading per comparison, then its entries with
    /// the reference marked. Empty when the filter leaves nothing of it.
    var listing: [String] { get }

    /// Work before the budget starts (building a server, probing a cgroup), so that it neither
    /// eats a share nor overlaps a measurement. A section that finds here that it cannot run
    /// says why in its outcome and weighs 0.
    func prepare()

    /// Its share of the budget, in the budget's units (`Budget`): a comparison in this process
    /// weighs 1. 0 when it will not measure anything (filtered out, no wrk, no cgroup).
    var weight: Double { get }

    /// How many times its `run` moves the progress line on (`Progress.next`).
    var progressSteps: Int { get }

    /// Where its intervals are over processes rather than rounds, in words for the report's
    /// "How to read it" ("the executor sections"); nil when they never are.
    var processIsTheUnit: String? { get }

    /// Measures, judges and renders; nil when it has nothing to report.
    func run(_ context: SectionContext) -> SectionOutcome?
}

extension BenchmarkSection {
    func prepare() {}
    var processIsTheUnit: String? { nil }
}

/// What every section's `run` shares: the run's budget, progress line and watchdog, the seed
/// each section derives its own from (`seed &+ n`, so that a section replays alone), and the
/// runner of the in-process comparisons, whose round scheduler also paces the comparisons
/// run in child processes (`ProcessReplicas`).
struct SectionContext {
    let budget: Budget
    let progress: Progress
    let watchdog: Watchdog
    let seed: UInt64
    let runner: Runner
}

/// What a section hands back: the rows the run judges together, and what the report, the
/// JSON and the charts take from it.
struct SectionOutcome {
    /// Its verdicts (A/A rows among them); the run makes the A/A intervals simultaneous over
    /// every section's.
    var verdicts: [VerdictRow] = []
    /// Every round's noise reading, for the run's noise summary.
    var noise: [RoundNoise] = []
    /// Its goals, judged on its intervals, in the order they are reported.
    var goals: [GoalCheck] = []
    /// Whether its goals go into the run's goal table (`Report.sections`) rather than into its
    /// own `markdown`.
    var goalsInRunTable = false
    /// Its part of the report: headings, prose, tables (and its goals unless `goalsInRunTable`).
    var markdown = ""
    /// Scenarios that failed, one Markdown list item each, for the report's failures list.
    var failures: [String] = []
    /// Whether the run should exit with status 1 (a scenario or a child failed).
    var failed = false
    /// The comparisons `Runner` or `ProcessReplicas` ran, for the JSON's `comparisons`.
    var comparisons: [ComparisonResult] = []
    /// Its detail in the JSON, each under a top-level key ("server", …).
    var json: [(key: String, value: any Encodable)] = []
    /// Charts it can draw, by name (`BenchmarksCommand` maps `--chart` and `--server-chart` to
    /// them); a chart is nil when there is nothing to draw.
    var charts: [String: (Machine) -> String?] = [:]
}

extension SectionOutcome {
    /// The outcome of a section made of `Runner`/`ProcessReplicas` comparisons: their verdicts,
    /// noise and failures, with `goals` in the run's goal table.
    init(
        comparisons results: [ComparisonResult], goals: [GoalCheck], markdown: String,
        charts: [String: (Machine) -> String?] = [:]
    ) {
        self.init(
            verdicts: results.flatMap(\.verdicts), noise: results.flatMap(\.noise), goals: goals, goalsInRunTable: true,
            markdown: markdown, failures: results.failures, failed: !results.failures.isEmpty, comparisons: results,
            charts: charts)
    }
}

extension [ComparisonResult] {
    /// The entries that failed, as Markdown list items: "- name: error".
    var failures: [String] {
        flatMap { comparison in
            comparison.entries.compactMap { entry in entry.error.map { "- \(entry.name): \($0)" } }
        }
    }
}
