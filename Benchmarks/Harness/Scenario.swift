/// One measured thing, named for exactly what one operation is. The runner calls `setUp` once,
/// `run` many times (calibration, warm-up, the rounds), then `tearDown` once; `run` performs
/// `iterations` operations and times them itself, so that it can time inside an event loop or
/// an async context.
protocol Scenario: AnyObject {
    /// What is measured, exactly; unique within the run.
    var name: String { get }
    /// Whose implementation it is.
    var subject: Subject { get }
    /// What one operation is, for the unit column: "op", "link", "input", "job".
    var unit: String { get }
    /// Operations per sample when the scenario fixes them (a 10^6-link chain), else nil
    /// and the runner calibrates.
    var fixedIterations: Int? { get }
    /// Where calibration starts (it multiplies from there until a sample is long enough).
    var initialIterations: Int { get }
    /// Expected allocations per operation, for the report (a short reason included).
    var expectedAllocations: String { get }

    func setUp() throws
    func run(iterations: Int) throws -> Sample
    func tearDown() throws
}

extension Scenario {
    var fixedIterations: Int? { nil }
    var initialIterations: Int { 1 }
    var unit: String { "op" }
    func setUp() throws {}
    func tearDown() throws {}
}

/// An operation measured in several implementations in the same run. Ratios are taken to
/// `reference`, a peer measured in the same run, interleaved with the others.
struct Comparison {
    /// The heading its section gives it in progress lines and `--list`.
    var group: String
    /// The report section its verdicts belong to.
    var section: Section
    /// The metrics that judge it; the first decides when it stops.
    var metrics: [JudgedMetric<Sample>]
    /// How many times the run's sample length one of its samples lasts.
    var sampleScale: Double = 1
    /// The operation, in words: "continueWith on a completed task".
    var operation: String
    /// Its identifier in verdict keys (`VerdictKey.comparison`): "continue-with-completed",
    /// "tiny-P4".
    var id: String
    var entries: [Entry]
    /// Index into `entries` of the peer every ratio is taken to; nil when the reference
    /// was left out of this run (`--without-reference`), and then there are no ratios.
    var referenceIndex: Int?
    /// Producer threads, for executor comparisons.
    var producers: Int?
    /// Whether its variance lives between processes (its work hops between threads, placed on
    /// the CPUs for the process's life): it runs in child processes (`ProcessReplicas`).
    var isProcessTheUnit = false

    struct Entry {
        var scenario: any Scenario
        /// Its identifier in verdict keys (`VerdictKey.arm`), unique within the comparison:
        /// `id`, or the scenario's type name.
        var id: String

        init(scenario: any Scenario, id: String? = nil) {
            self.scenario = scenario
            self.id = id ?? String(describing: type(of: scenario))
        }
    }

    var reference: (any Scenario)? { referenceIndex.map { entries[$0].scenario } }

    /// Its lines in `--list`: the heading, then each entry, the reference marked.
    var listing: [String] {
        ["\(group): \(operation)"]
            + entries.map { "  \($0.scenario === reference ? "[reference] " : "")\($0.scenario.name)" }
    }
}
