import Foundation
import BenchmarkStatistics

#if canImport(Glibc)
    import Glibc
#endif

/// One of the product's goals, judged from this run only, on intervals: met when the bound
/// that the goal names is cleared by the whole interval, not met when the whole interval
/// misses it, undecided when the interval holds it. A goal whose rows are missing (filtered
/// out, failed) is undecided, never met. `decidedBy` says which bound decided.
struct GoalCheck: Codable {
    var goal: String
    var measured: String
    var verdict: GoalVerdict
    var decidedBy: String
}

/// A row with the label it has in a goal's text ("P=4", "16 jobs of ~3 µs").
struct LabelledRow {
    var label: String
    var row: VerdictRow?
}

enum Goals {
    /// A goal that every row's ratio be at least `bound` (or, with `atMost`, at most it).
    static func ratio(_ goal: String, _ rows: [LabelledRow], atLeast bound: Double) -> GoalCheck {
        judge(goal, rows, bound: bound, isLowerBound: true)
    }

    static func ratio(_ goal: String, _ rows: [LabelledRow], atMost bound: Double) -> GoalCheck {
        judge(goal, rows, bound: bound, isLowerBound: false)
    }

    private static func judge(_ goal: String, _ rows: [LabelledRow], bound: Double, isLowerBound: Bool) -> GoalCheck {
        guard !rows.isEmpty else {
            return GoalCheck(goal: goal, measured: "not measured in this run", verdict: .undecided, decidedBy: "no data")
        }
        var measured: [String] = []
        var missed: [String] = []
        var open: [String] = []
        var met: [(String, Double)] = []
        for labelled in rows {
            let prefix = labelled.label.isEmpty ? "" : labelled.label + ": "
            guard let row = labelled.row, let estimate = row.estimate else {
                measured.append(prefix + "no interval")
                open.append(prefix + "no interval")
                continue
            }
            measured.append(prefix + row.formattedRatioAndInterval)
            let verdict = isLowerBound ? PairedStatistics.atLeast(estimate, bound) : PairedStatistics.atMost(estimate, bound)
            switch verdict {
            case .met: met.append((labelled.label, isLowerBound ? estimate.low : estimate.high))
            case .notMet:
                missed.append(
                    isLowerBound
                        ? "\(prefix)high bound \(String(format: "%.2f", estimate.high)) < \(bound.formattedBound)"
                        : "\(prefix)low bound \(String(format: "%.2f", estimate.low)) > \(bound.formattedBound)"
                )
            case .undecided: open.append("\(prefix)interval holds \(bound.formattedBound)")
            }
        }
        // Up to two rows are listed; more are summed up by their range (the deciding row is
        // named in `decidedBy`).
        let ratios = rows.compactMap { $0.row?.ratio }
        let text =
            measured.count <= 2 || ratios.isEmpty
            ? measured.joined(separator: "; ")
            : "\(measured.count) rows, \(ratios.min()!.formattedRatio) to \(ratios.max()!.formattedRatio)"
        if !missed.isEmpty {
            return GoalCheck(goal: goal, measured: text, verdict: .notMet, decidedBy: listed(missed))
        }
        if !open.isEmpty {
            let decidedBy =
                open.count <= 2 ? open.joined(separator: "; ") : "\(open.count) of \(rows.count) intervals hold \(bound.formattedBound)"
            return GoalCheck(goal: goal, measured: text, verdict: .undecided, decidedBy: decidedBy)
        }
        let closest = isLowerBound ? met.min { $0.1 < $1.1 }! : met.max { $0.1 < $1.1 }!
        let at = closest.0.isEmpty ? "" : " (closest: \(closest.0))"
        return GoalCheck(
            goal: goal,
            measured: text,
            verdict: .met,
            decidedBy: isLowerBound
                ? "low bound \(String(format: "%.2f", closest.1)) ≥ \(bound.formattedBound)\(at)"
                : "high bound \(String(format: "%.2f", closest.1)) ≤ \(bound.formattedBound)\(at)"
        )
    }

    /// The first of `items`, and how many more there are beyond three.
    private static func listed(_ items: [String]) -> String {
        items.count <= 3 ? items.joined(separator: "; ") : items.prefix(2).joined(separator: "; ") + "; \(items.count - 2) more"
    }

    /// A goal on an exact count (allocations): no interval, the count itself decides.
    static func count(_ goal: String, measured: String, value: Double?, atMost bound: Double) -> GoalCheck {
        guard let value else {
            return GoalCheck(goal: goal, measured: "not measured in this run", verdict: .undecided, decidedBy: "no data")
        }
        return GoalCheck(
            goal: goal,
            measured: measured,
            verdict: value <= bound ? .met : .notMet,
            decidedBy: "an exact count (it does not vary between rounds)"
        )
    }

    /// The task operations' and executors' goals.
    static func check(_ results: [ComparisonResult]) -> [GoalCheck] {
        var checks: [GoalCheck] = []
        let ops = results.filter { $0.group == Catalog.taskOperationsGroup }

        func find(_ operationPrefix: String, _ entryPrefix: String) -> (ComparisonResult, EntryResult)? {
            for comparison in ops where comparison.operation.hasPrefix(operationPrefix) {
                if let entry = comparison.entries.first(where: { $0.name.hasPrefix(entryPrefix) && !$0.samples.isEmpty }) {
                    return (comparison, entry)
                }
            }
            return nil
        }
        func row(_ operationPrefix: String, _ entryPrefix: String) -> [LabelledRow] {
            guard let (comparison, entry) = find(operationPrefix, entryPrefix) else { return [] }
            return [LabelledRow(label: "", row: comparison.verdict(for: entry.name))]
        }

        checks.append(
            ratio(
                "continueWith on a completed task ≥ 2× as fast as SwiftNIO's map on its loop",
                row("continueWith on a completed task", "Bolts continueWith"), atLeast: 2
            )
        )
        checks.append(
            ratio(
                "promise + one continuation + complete ≥ 2× as fast as SwiftNIO",
                row("promise + one waiting continuation", "Bolts"), atLeast: 2
            )
        )
        // A chain link against Bolts' own promise + one continuation + complete: two
        // comparisons, so their rounds are not paired; Welch's interval on the two series.
        if let (chainComparison, chain) = find("chain of", "Bolts"),
            let (singleComparison, single) = find("promise + one waiting continuation", "Bolts"),
            let chainRow = chainComparison.verdict(for: chain.name),
            let singleRow = singleComparison.verdict(for: single.name)
        {
            let chainTimes = chain.samples.map { log($0.nanosecondsPerOperation) }
            let singleTimes = single.samples.map { log($0.nanosecondsPerOperation) }
            let estimate = PairedStatistics.unpairedEstimate(chainTimes, against: singleTimes)
            var row = chainRow
            row.ratio = estimate?.ratio
            row.interval95 = estimate.map { [$0.low, $0.high] }
            _ = singleRow
            checks.append(
                ratio(
                    "chain link ≤ 1.5× the time of Bolts' promise + one continuation + complete (Welch interval, unpaired)",
                    [LabelledRow(label: "time ratio", row: row)], atMost: 1.5
                )
            )
        } else {
            checks.append(
                ratio("chain link ≤ 1.5× the time of Bolts' promise + one continuation + complete", [], atMost: 1.5)
            )
        }

        // Pool throughput against Dispatch global and the other executors with threads of
        // their own, at every producer count.
        let executorResults = results.filter { $0.group == Catalog.executorsGroup }
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
            ratio(
                "Bolts pool throughput ≥ 2× DispatchQueue.global() at every producer count",
                poolRows(against: nil), atLeast: 2
            )
        )
        checks.append(
            ratio(
                "Bolts pool throughput ≥ SwiftNIO's event-loop group and Swift Concurrency at every producer count",
                poolRows(against: .nioEventLoopGroup) + poolRows(against: .concurrencyTask), atLeast: 1
            )
        )

        // Paced hand-off p99 against Dispatch global, at every producer count.
        let handOffRows = results.filter { $0.group == Catalog.handOffGroup }.compactMap { comparison -> LabelledRow? in
            guard let pool = comparison.entries.first(where: { $0.name.hasPrefix(ExecutorKind.boltsPool.title) })
            else { return nil }
            return LabelledRow(
                label: "P=\(comparison.producers ?? 0)",
                row: comparison.verdict(for: pool.name, metric: "p99 hand-off latency")
            )
        }
        checks.append(
            ratio(
                "Bolts pool paced hand-off p99 ≤ DispatchQueue.global()'s at every producer count (ratio ≥ 1)",
                handOffRows, atLeast: 1
            )
        )

        // Allocations per continuation whose closure captures nothing: exact counts.
        if let (_, entry) = find("continueWith on a completed task", "Bolts continueWith") {
            let allocations = entry.medianAllocationsPerOperation
            checks.append(
                count(
                    "≤ 1 allocation per continuation (closure captures nothing): continueWith on a completed task",
                    measured: "\(allocations?.formattedAllocations ?? "?") per continuation",
                    value: allocations, atMost: 1.005
                )
            )
        }
        if let (_, eight) = find("promise + 8 waiting continuations", "Bolts"),
            let (_, bare) = find("promise create + complete", "Bolts"),
            let withWaiters = eight.medianAllocationsPerOperation, let base = bare.medianAllocationsPerOperation
        {
            let perContinuation = (withWaiters - base) / 8
            checks.append(
                count(
                    "≤ 1 allocation per continuation (closure captures nothing): waiting on a pending task",
                    measured:
                        "(\(withWaiters.formattedAllocations) with 8 waiters − \(base.formattedAllocations) without) / 8 = \(perContinuation.formattedAllocations)",
                    value: perContinuation, atMost: 1.005
                )
            )
        }
        if let (_, chain) = find("chain of", "Bolts"), let allocations = chain.medianAllocationsPerOperation {
            checks.append(
                count(
                    "≤ 1 allocation per continuation (closure captures nothing): chain link",
                    measured: "\(allocations.formattedAllocations) per link", value: allocations, atMost: 1.005
                )
            )
        }
        return checks
    }
}

extension Double {
    /// A goal's bound: "2", "1.25", "0.9".
    var formattedBound: String {
        self == rounded() ? String(Int(self)) : String(format: "%g", self)
    }
}
