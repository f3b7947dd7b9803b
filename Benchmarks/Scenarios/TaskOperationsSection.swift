import BenchmarkStatistics
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension Section {
    static let taskOperations = Section(rawValue: "task operations")
}

/// "Task operations": Bolts' task operations against SwiftNIO's (or Swift Concurrency's) on
/// the same operation (`Catalog.taskOperations`). The comparisons run in this process, one
/// after the other; then those whose work hops between threads (`isProcessTheUnit`) run in
/// child processes (`ProcessReplicas`, `ChildKind.taskOperationComparison`), after the
/// environment's loop and pool are shut down so that their idle threads take no part.
final class TaskOperationsSection: BenchmarkSection {
    /// A comparison in this process.
    static let weightInProcess = 1.0
    /// A comparison in child processes: process starts and fewer rounds per process.
    static let weightInProcesses = 2.0
    /// The seeds of a comparison's child processes are this far apart.
    static let childSeedSpacing = 10_000

    private let environment: Environment
    /// Every selected comparison, in the order of `Catalog.taskOperations`.
    let comparisons: [Comparison]
    private let processes: Int
    private let childArguments: [String]

    /// `processes` children per comparison that runs in children, each started with
    /// `childArguments` (which make it build the same list).
    init(filter: String?, withoutReference: Bool, processes: Int, childArguments: [String]) {
        environment = Environment()
        comparisons = Catalog.filtered(
            Catalog.taskOperations(environment), by: filter, withoutReference: withoutReference)
        self.processes = processes
        self.childArguments = childArguments
    }

    var listing: [String] { comparisons.flatMap(\.listing) }

    var weight: Double { comparisons.map(Self.weight).reduce(0, +) }

    static func weight(_ comparison: Comparison) -> Double {
        Quoted.weight(comparison.isProcessTheUnit ? weightInProcesses : weightInProcess, .taskOperations, comparison.id)
    }

    var progressSteps: Int { comparisons.count }

    var processIsTheUnit: String? { "task operations that hop between threads" }

    /// Shuts the loop and pool of the scenarios down (`run` does it itself; `--list` calls it).
    func shutDown() { environment.shutdown() }

    func run(_ context: SectionContext) -> SectionOutcome? {
        var results: [ComparisonResult] = []
        for comparison in comparisons where !comparison.isProcessTheUnit {
            context.progress.next("\(comparison.group): \(comparison.operation)")
            results.append(context.runner.run(comparison, weight: Self.weight(comparison)))
            context.progress.log(verdicts: results.last!.verdicts)
        }
        shutDown()
        // The index is into the list a child builds: the same comparisons, in processes only.
        results += ProcessReplicas.runEach(
            comparisons.filter(\.isProcessTheUnit), kind: .taskOperationComparison, processes: processes,
            arguments: childArguments, seedSpacing: Self.childSeedSpacing, weight: Self.weight, context: context
        )
        return SectionOutcome(comparisons: results, goals: Self.goals(results), markdown: Self.render(results))
    }

    // MARK: Report

    static func render(_ results: [ComparisonResult]) -> String {
        guard !results.isEmpty else { return "" }
        return Catalog.heading(Catalog.taskOperationsGroup) + table(results)
    }

    /// One row per subject (its peer named on the comparison's first row, ″ below it): its time
    /// and the peer's, allocations per operation of both (medians; exact counts), instructions
    /// where counted, the ratio and verdict.
    private static func table(_ comparisons: [ComparisonResult]) -> String {
        var table = MarkdownTable(
            headers: ["Bolts", "peer", "time", "peer's", "allocs/op", "ratio [95% interval]", "verdict", "noise", "rounds"],
            alignments: [.left, .left, .right, .right, .right, .right, .left, .right, .right],
            uniform: ["noise", "rounds"]
        )
        for comparison in comparisons {
            for (index, row) in comparison.verdicts.filter({ !$0.isAA }).enumerated() {
                let subject = comparison.entries.first { $0.name == row.subject }
                let peer = comparison.reference
                var allocations = subject?.medianAllocationsPerOperation?.formattedAllocations ?? "–"
                allocations += " / " + (peer?.medianAllocationsPerOperation?.formattedAllocations ?? "–")
                if let instructions = subject?.medianInstructionsPerOperation {
                    allocations += " (\(instructions.fixed(0)) instr.)"
                }
                table.rows.append([
                    shortName(row.subject, keepingDetail: true), index == 0 ? shortName(row.baseline) : "″",
                    row.subjectValue?.formatted(unit: row.unit) ?? "–", row.peerValue?.formatted(unit: row.unit) ?? "–",
                    allocations, row.formattedRatioAndInterval, row.formattedVerdict, row.formattedThreshold,
                    Report.rounds(row),
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

    // MARK: Goals

    /// The task operations' ratio goals as data (the rest need samples or exact counts): each
    /// Bolts arm at least twice as fast as its SwiftNIO peer.
    static let ratioGoals: [Goal] = {
        func twice(_ text: String, _ row: (comparison: String, arm: String), over peer: String) -> Goal {
            let key = VerdictKey(
                section: .taskOperations, comparison: row.comparison, arm: row.arm, baseline: peer,
                metric: Catalog.metrics(for: .taskOperations)[0].metric.key)
            return Goal(text: text, rows: [GoalRow(key: key)], bound: 2, isAtLeast: true)
        }
        return [
            twice(
                "continueWith on a completed task ≥ 2× as fast as SwiftNIO's map on its loop", continueWithRow,
                over: "NIOMapOnSucceeded"),
            twice(
                "promise + one continuation + complete ≥ 2× as fast as SwiftNIO", singleContinuationRow,
                over: "NIOPromiseWithWaitersThenSucceed"),
        ]
    }()

    /// The rows the goals read, as (comparison, arm) identifiers of `VerdictKey`: the chain
    /// link and the single continuation (the Welch interval), and the entries whose
    /// allocations are counted.
    static let chainRow = ("chain", "BoltsPendingChainThenSet")
    static let singleContinuationRow = ("promise-1-waiter", "BoltsSourceWithWaitersThenSet")
    static let continueWithRow = ("continue-with-completed", "BoltsContinueWithOnCompleted")
    static let eightWaitersRow = ("promise-8-waiters", "BoltsSourceWithWaitersThenSet")
    static let noWaiterRow = ("promise-no-waiter", "BoltsSourceCreateAndSet")

    /// The product's goals for task operations: speed against SwiftNIO, and allocations per
    /// continuation (exact counts).
    static func goals(_ results: [ComparisonResult]) -> [GoalCheck] {
        let ops = results.filter { $0.section == .taskOperations }
        /// The entry and row of the arm `row` names, found by its key; nil when the run has no
        /// such row or the entry no samples.
        func find(_ row: (comparison: String, arm: String)) -> (entry: EntryResult, row: VerdictRow)? {
            ops.lazy.compactMap { comparison in
                comparison.verdicts.first {
                    !$0.isAA && $0.key?.comparison == row.comparison && $0.key?.arm == row.arm
                }.flatMap { verdict in
                    comparison.entries.first { $0.name == verdict.subject && !$0.samples.isEmpty }.map { ($0, verdict) }
                }
            }.first
        }
        /// The goal of at most one allocation per continuation on `what`, an exact count.
        func perContinuation(_ what: String, measured: String, _ value: Double?) -> GoalCheck {
            Goals.count(
                "≤ 1 allocation per continuation (closure captures nothing): \(what)", measured: measured, value: value,
                atMost: 1.005)
        }

        var checks = ratioGoals.map { Goals.judge($0, in: ops.flatMap(\.verdicts)) }
        // A chain link against Bolts' own promise + one continuation + complete: two
        // comparisons, so their rounds are not paired; Welch's interval on the two series.
        // Without both rows, the goal has no row and no interval named.
        var welch: [LabelledRow] = []
        if let (chain, chainRow) = find(chainRow), let single = find(singleContinuationRow)?.entry {
            let estimate = PairedStatistics.unpairedEstimate(
                chain.samples.map { log($0.nanosecondsPerOperation) },
                against: single.samples.map { log($0.nanosecondsPerOperation) })
            var row = chainRow
            row.ratio = estimate?.ratio
            row.interval95 = estimate.map { [$0.low, $0.high] }
            welch = [LabelledRow(label: "time ratio", row: row)]
        }
        checks.append(
            Goals.ratio(
                "chain link ≤ 1.5× the time of Bolts' promise + one continuation + complete"
                    + (welch.isEmpty ? "" : " (Welch interval, unpaired)"), welch, atMost: 1.5))

        if let allocations = find(continueWithRow).map({ $0.entry.medianAllocationsPerOperation }) {
            checks.append(
                perContinuation(
                    "continueWith on a completed task",
                    measured: "\(allocations?.formattedAllocations ?? "?") per continuation", allocations))
        }
        if let withWaiters = find(eightWaitersRow)?.entry.medianAllocationsPerOperation,
            let base = find(noWaiterRow)?.entry.medianAllocationsPerOperation
        {
            let perWaiter = (withWaiters - base) / 8
            let waiters =
                "(\(withWaiters.formattedAllocations) with 8 waiters − \(base.formattedAllocations) without) / 8"
            let measured = "\(waiters) = \(perWaiter.formattedAllocations)"
            checks.append(perContinuation("waiting on a pending task", measured: measured, perWaiter))
        }
        if let allocations = find(chainRow)?.entry.medianAllocationsPerOperation {
            checks.append(
                perContinuation("chain link", measured: "\(allocations.formattedAllocations) per link", allocations))
        }
        return checks
    }
}
