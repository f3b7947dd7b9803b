import BenchmarkStatistics
import Foundation

extension Section {
    static let executors = Section(rawValue: "executors")
    static let paced = Section(rawValue: "paced")
}

/// "Executors under contention" and "Executor hand-off latency, paced": every executor
/// against `DispatchQueue.global()` at each producer count (`Catalog.executors`,
/// `Catalog.handOffs`). Where an executor's threads land on the CPUs holds for a process's
/// life, so every comparison runs in child processes (`ProcessReplicas`,
/// `ChildKind.executorComparison`); this process starts no executor of its own meanwhile.
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
        comparisons = Self.comparisons(producerCounts: producerCounts, filter: filter, withoutReference: withoutReference)
        self.processes = processes
        self.childArguments = childArguments
    }

    /// The list this section runs, as a child process builds it too.
    static func comparisons(producerCounts: [Int], filter: String?, withoutReference: Bool) -> [Comparison] {
        Catalog.filtered(
            Catalog.executors(producerCounts: producerCounts) + Catalog.handOffs(producerCounts: producerCounts),
            by: filter, withoutReference: withoutReference
        )
    }

    var listing: [String] { comparisons.flatMap(\.listing) }

    var weight: Double { comparisons.map(Self.weight).reduce(0, +) }

    static func weight(_ comparison: Comparison) -> Double {
        comparison.section == .paced ? weightPaced : weightExecutors
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
            text += "\n## \(Catalog.executorsGroup)\n\n"
            text += Report.method("Executors under contention", []) + Verdicts.legend + "\n\n"
            text += producerMatrix(executors, metric: nil)
        }
        let handOffs = results.filter { $0.section == .paced }
        if !handOffs.isEmpty {
            text += "\n## \(Catalog.handOffGroup)\n\n"
            text += Report.method("Executor hand-off latency, paced", []) + "\n### p99 hand-off latency\n\n"
            text += producerMatrix(handOffs, metric: "p99 hand-off latency")
            text += "\n### Round trip per job\n\n" + producerMatrix(handOffs, metric: "round trip per job")
        }
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

    // MARK: Goals

    /// The product's goals for the pool: throughput against Dispatch and the executors with
    /// threads of their own, and the paced hand-off's p99 against Dispatch.
    static func goals(_ results: [ComparisonResult]) -> [GoalCheck] {
        var checks: [GoalCheck] = []
        // Pool throughput against Dispatch global and the other executors with threads of
        // their own, at every producer count.
        let executorResults = results.filter { $0.section == .executors }
        func poolRows(against kind: ExecutorKind?) -> [LabelledRow] {
            executorResults.compactMap { comparison in
                guard let pool = comparison.entries.first(where: { $0.name.hasPrefix(ExecutorKind.boltsPool.title) })
                else { return nil }
                let label = "P=\(comparison.producers ?? 0)"
                guard let kind else { return LabelledRow(label: label, row: comparison.verdict(for: pool.name)) }
                // Against a peer other than the reference: the pool's rounds and the peer's are
                // the same rounds, so the two rows' log ratios pair round by round.
                guard let peer = comparison.entries.first(where: { $0.name.hasPrefix(kind.title) }),
                    let poolRow = comparison.verdict(for: pool.name), let peerRow = comparison.verdict(for: peer.name)
                else { return LabelledRow(label: label, row: nil) }
                // Where the process is the unit, the difference of the two rows' process means.
                let logs =
                    poolRow.processMeans.flatMap { pool in peerRow.processMeans.map { zip(pool, $0).map { $0 - $1 } } }
                    ?? zip(poolRow.logRatios, peerRow.logRatios).map { $0 - $1 }
                let estimate = PairedStatistics.estimate(logRatios: logs)
                var row = poolRow
                row.baseline = peer.name
                row.ratio = estimate?.ratio
                row.interval95 = estimate.map { [$0.low, $0.high] }
                return LabelledRow(label: "\(label) vs \(kind.shortTitle)", row: row)
            }
        }
        checks.append(
            Goals.ratio(
                "Bolts pool throughput ≥ 2× DispatchQueue.global() at every producer count",
                poolRows(against: nil), atLeast: 2
            )
        )
        checks.append(
            Goals.ratio(
                "Bolts pool throughput ≥ SwiftNIO's event-loop group and Swift Concurrency at every producer count",
                poolRows(against: .nioEventLoopGroup) + poolRows(against: .concurrencyTask), atLeast: 1
            )
        )

        // Paced hand-off p99 against Dispatch global, at every producer count.
        let handOffRows = results.filter { $0.section == .paced }.compactMap { comparison -> LabelledRow? in
            guard let pool = comparison.entries.first(where: { $0.name.hasPrefix(ExecutorKind.boltsPool.title) })
            else { return nil }
            return LabelledRow(
                label: "P=\(comparison.producers ?? 0)",
                row: comparison.verdict(for: pool.name, metric: "p99 hand-off latency")
            )
        }
        checks.append(
            Goals.ratio(
                "Bolts pool paced hand-off p99 ≤ DispatchQueue.global()'s at every producer count (ratio ≥ 1)",
                handOffRows, atLeast: 1
            )
        )
        return checks
    }
}
