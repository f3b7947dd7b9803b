import BenchmarkStatistics
import Foundation

extension Section {
    static let executors = Section(rawValue: "executors")
    static let paced = Section(rawValue: "paced")
}

/// "Executors under contention" and "Executor hand-off latency, paced": every executor
/// against `DispatchQueue.global()` at each producer count (`Catalog.executors`). Where an
/// executor's threads land on the CPUs holds for a process's life, so every comparison runs
/// in child processes (`ProcessReplicas`, `ChildKind.executorComparison`); this process
/// starts no executor of its own meanwhile.
final class ExecutorsSection: BenchmarkSection {
    /// A throughput comparison (several child processes).
    static let weightExecutors = 2.0
    /// A paced hand-off comparison.
    static let weightPaced = 1.5
    /// The seeds of a comparison's child processes are this far apart.
    static let childSeedSpacing = 100

    /// The selected comparisons: the throughput ones, then the paced ones (the list a child
    /// builds, which `--comparison-index` points into).
    let comparisons: [Comparison]
    private let processes: Int
    private let childArguments: [String]

    init(producerCounts: [Int], filter: String?, withoutReference: Bool, processes: Int, childArguments: [String]) {
        comparisons = Self.comparisons(
            producerCounts: producerCounts, filter: filter, withoutReference: withoutReference)
        self.processes = processes
        self.childArguments = childArguments
    }

    /// The list this section runs, as a child process builds it too.
    static func comparisons(producerCounts: [Int], filter: String?, withoutReference: Bool) -> [Comparison] {
        let both = [false, true].flatMap { Catalog.executors(producerCounts: producerCounts, paced: $0) }
        return Catalog.filtered(both, by: filter, withoutReference: withoutReference)
    }

    var listing: [String] { comparisons.flatMap(\.listing) }

    var weight: Double { comparisons.map(Self.weight).reduce(0, +) }

    static func weight(_ comparison: Comparison) -> Double {
        Quoted.weight(comparison.section == .paced ? weightPaced : weightExecutors, comparison.section, comparison.id)
    }

    var progressSteps: Int { comparisons.count }

    var processIsTheUnit: String? { "the executor sections" }

    func run(_ context: SectionContext) -> SectionOutcome? {
        let results = ProcessReplicas.runEach(
            comparisons, kind: .executorComparison, processes: processes, arguments: childArguments,
            seedSpacing: Self.childSeedSpacing, weight: Self.weight, context: context
        )
        return SectionOutcome(
            comparisons: results, goals: Self.goals(results), markdown: Self.render(results),
            charts: ["executors": { machine in SVGChart.executorThroughput(results, machine: machine) }]
        )
    }

    // MARK: Report

    static func render(_ results: [ComparisonResult]) -> String {
        var text = ""
        let executors = results.filter { $0.section == .executors }
        if !executors.isEmpty {
            text += Catalog.heading(Catalog.executorsGroup) + producerMatrix(executors, metric: nil)
        }
        let handOffs = results.filter { $0.section == .paced }
        if !handOffs.isEmpty {
            text += Catalog.heading(Catalog.handOffGroup) + "### p99 hand-off latency\n\n"
            let keys = Catalog.metrics(for: .paced).map(\.metric.key)
            text += producerMatrix(handOffs, metric: keys[0])
            text += "\n### Round trip per job\n\n" + producerMatrix(handOffs, metric: keys[1])
        }
        return text
    }

    /// Executors against Dispatch as a matrix: a row per executor (and the A/A), a column per
    /// producer count, each cell "ratio [low, high] verdict"; `metric` (a `VerdictKey.metric`)
    /// picks one of several. Rows are found by key: the arm is the executor's `ExecutorKind`.
    private static func producerMatrix(_ comparisons: [ComparisonResult], metric: String?) -> String {
        var table = MarkdownTable(
            headers: ["executor"] + comparisons.map { "P=\($0.producers ?? 0)" },
            alignments: [.left] + comparisons.map { _ in .right }
        )
        func row(_ comparison: ComparisonResult, _ matches: (VerdictRow) -> Bool) -> VerdictRow? {
            comparison.verdicts.first { matches($0) && (metric == nil || $0.key?.metric == metric) }
        }
        table.rows.append(["noise threshold (A/A)"] + comparisons.map { row($0, \.isAA)?.formattedThreshold ?? "–" })
        for kind in ExecutorKind.allCases where kind != .dispatchGlobal {
            let cells = comparisons.map { row($0) { !$0.isAA && $0.key?.arm == kind.rawValue } }
            guard cells.contains(where: { $0 != nil }) else { continue }
            table.rows.append([kind.shortTitle] + cells.map { $0?.formattedCell ?? "–" })
        }
        return table.render()
    }

    // MARK: Goals

    /// The product's goals for the pool: throughput against Dispatch and the executors with
    /// threads of their own, and the paced hand-off's p99 against Dispatch.
    static func goals(_ results: [ComparisonResult]) -> [GoalCheck] {
        func producers(_ section: Section) -> [Int] {
            results.filter { $0.section == section }.compactMap(\.producers).sorted()
        }
        return goalList(producerCounts: producers(.executors), pacedProducerCounts: producers(.paced))
            .map { Goals.judge($0, in: results.flatMap(\.verdicts)) }
    }

    /// The executors' goals as data, for the producer counts the run measured (a section that
    /// did not run gives its goals no rows: "not measured"): the pool's tiny-job
    /// throughput against `DispatchQueue.global()` (the reference), against SwiftNIO's event
    /// loops and Swift's `Task {}` (each as the pool's row ÷ theirs, both against Dispatch in
    /// the same rounds), and its paced hand-off p99 against Dispatch's.
    static func goalList(producerCounts: [Int], pacedProducerCounts: [Int]) -> [Goal] {
        let throughput = Catalog.metrics(for: .executors)[0].metric
        let p99 = Catalog.metrics(for: .paced)[0].metric
        func key(_ section: Section, _ comparison: String, _ kind: ExecutorKind, _ metric: Metric) -> VerdictKey {
            VerdictKey(section, comparison, kind, ExecutorKind.dispatchGlobal.rawValue, metric)
        }
        func pool(_ producers: Int, over kind: ExecutorKind? = nil) -> GoalRow {
            GoalRow(
                label: "P=\(producers)" + (kind.map { " vs \($0.shortTitle)" } ?? ""),
                key: key(.executors, "tiny-P\(producers)", .boltsPool, throughput),
                over: kind.map { key(.executors, "tiny-P\(producers)", $0, throughput) })
        }
        return [
            Goal(
                text: "Bolts pool throughput ≥ 2× DispatchQueue.global() at every producer count",
                rows: producerCounts.map { pool($0) }, bound: 2, isAtLeast: true),
            Goal(
                text: "Bolts pool throughput ≥ SwiftNIO's event-loop group and Swift Concurrency at every producer count",
                rows: producerCounts.map { pool($0, over: .nioEventLoopGroup) }
                    + producerCounts.map { pool($0, over: .concurrencyTask) },
                bound: 1, isAtLeast: true),
            Goal(
                text: "Bolts pool paced hand-off p99 ≤ DispatchQueue.global()'s at every producer count (ratio ≥ 1)",
                rows: pacedProducerCounts.map {
                    GoalRow(label: "P=\($0)", key: key(.paced, "paced-P\($0)", .boltsPool, p99))
                },
                bound: 1, isAtLeast: true),
        ]
    }
}
