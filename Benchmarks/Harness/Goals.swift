import Foundation
import BenchmarkStatistics

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

/// A goal as data: its text, the rows it bounds (each by its `VerdictKey`, with the label it
/// has in the text), the bound and its direction. `Goals.judge` finds the rows and judges them;
/// a key that matches no row is judged as a row without an interval, and the harness's tests
/// check every goal's keys against the rows its section makes.
struct Goal {
    var text: String
    var rows: [GoalRow]
    var bound: Double
    /// At least `bound` (else at most).
    var isAtLeast: Bool
    /// Whether the rows are of a lower-is-better metric read as the subject's value ÷ the
    /// peer's ("≤ 0.9× Dispatch's CPU"), the inverse of their ratio.
    var inverts = false
}

/// One row a goal bounds, and optionally one whose ratio and interval are shown beside it
/// (a floor or a ceiling: what no executor, or an executor costing nothing, would reach).
/// With `over`, the bounded ratio is `key`'s row ÷ `over`'s, two subjects against the same
/// reference in the same rounds: their log ratios differ round by round (process by process
/// where the process is the unit), which is the first subject against the second.
struct GoalRow {
    var label: String = ""
    var key: VerdictKey
    var beside: (label: String, key: VerdictKey)? = nil
    var over: VerdictKey? = nil
}

enum Goals {
    /// `goal` judged on `rows` (a run's verdicts, and any rows made for goals alone).
    static func judge(_ goal: Goal, in rows: [VerdictRow]) -> GoalCheck {
        func row(_ key: VerdictKey) -> VerdictRow? {
            guard var row = rows.first(where: { $0.key == key }) else { return nil }
            if goal.inverts, let ratio = row.ratio {
                row.ratio = 1 / ratio
                row.interval95 = row.interval95.map { [1 / $0[1], 1 / $0[0]] }
            }
            return row
        }
        func row(_ goalRow: GoalRow) -> VerdictRow? {
            guard let over = goalRow.over else { return row(goalRow.key) }
            guard var subject = row(goalRow.key), let peer = row(over) else { return nil }
            let logs =
                subject.processMeans.flatMap { mine in peer.processMeans.map { zip(mine, $0).map { $0 - $1 } } }
                ?? zip(subject.logRatios, peer.logRatios).map { $0 - $1 }
            let estimate = PairedStatistics.estimate(logRatios: logs)
            subject.baseline = peer.subject
            subject.ratio = estimate?.ratio
            subject.interval95 = estimate.map { [$0.low, $0.high] }
            return subject
        }
        let labelled = goal.rows.map { goalRow -> LabelledRow in
            var label = goalRow.label
            if let beside = goalRow.beside, let shown = row(beside.key) {
                label += (label.isEmpty ? "" : " ") + "(\(beside.label) \(shown.formattedRatioAndInterval))"
            }
            return LabelledRow(label: label, row: row(goalRow))
        }
        return judge(goal.text, labelled, bound: goal.bound, isLowerBound: goal.isAtLeast)
    }

    /// A goal that every row's ratio be at least `bound` (or, with `atMost`, at most it).
    static func ratio(_ goal: String, _ rows: [LabelledRow], atLeast bound: Double) -> GoalCheck {
        judge(goal, rows, bound: bound, isLowerBound: true)
    }

    static func ratio(_ goal: String, _ rows: [LabelledRow], atMost bound: Double) -> GoalCheck {
        judge(goal, rows, bound: bound, isLowerBound: false)
    }

    private static func judge(_ goal: String, _ rows: [LabelledRow], bound: Double, isLowerBound: Bool) -> GoalCheck {
        guard !rows.isEmpty else { return notMeasured(goal) }
        let limit = bound.formattedBound
        var measured: [String] = []
        var missed: [String] = []
        var open: [String] = []
        var met: [(label: String, bound: Double)] = []
        let verdict = isLowerBound ? PairedStatistics.atLeast : PairedStatistics.atMost
        for labelled in rows {
            let prefix = labelled.label.isEmpty ? "" : labelled.label + ": "
            guard let row = labelled.row, let estimate = row.estimate else {
                measured.append(prefix + "no interval")
                open.append(prefix + "no interval")
                continue
            }
            measured.append(prefix + row.formattedRatioAndInterval)
            switch verdict(estimate, bound) {
            case .met: met.append((labelled.label, isLowerBound ? estimate.low : estimate.high))
            case .notMet:
                missed.append(
                    isLowerBound
                        ? "\(prefix)high bound \(estimate.high.fixed(2)) < \(limit)"
                        : "\(prefix)low bound \(estimate.low.fixed(2)) > \(limit)")
            case .undecided: open.append("\(prefix)interval holds \(limit)")
            }
        }
        // Up to two rows are listed; more are summed up by their range (the deciding row is
        // named in `decidedBy`).
        let ratios = rows.compactMap { $0.row?.ratio }
        let text =
            measured.count <= 2 || ratios.isEmpty
            ? measured.joined(separator: "; ")
            : "\(measured.count) rows, \(ratios.min()!.formattedRatio) to \(ratios.max()!.formattedRatio)"
        func check(_ verdict: GoalVerdict, _ decidedBy: String) -> GoalCheck {
            GoalCheck(goal: goal, measured: text, verdict: verdict, decidedBy: decidedBy)
        }
        if !missed.isEmpty { return check(.notMet, listed(missed)) }
        if !open.isEmpty {
            let holding = "\(open.count) of \(rows.count) intervals hold \(limit)"
            return check(.undecided, open.count <= 2 ? open.joined(separator: "; ") : holding)
        }
        let closest = isLowerBound ? met.min { $0.bound < $1.bound }! : met.max { $0.bound < $1.bound }!
        let side = isLowerBound ? "low bound \(closest.bound.fixed(2)) ≥" : "high bound \(closest.bound.fixed(2)) ≤"
        return check(.met, "\(side) \(limit)" + (closest.label.isEmpty ? "" : " (closest: \(closest.label))"))
    }

    /// The first of `items`, and how many more there are beyond three.
    private static func listed(_ items: [String]) -> String {
        items.count <= 3
            ? items.joined(separator: "; ") : items.prefix(2).joined(separator: "; ") + "; \(items.count - 2) more"
    }

    /// A goal without rows: undecided.
    private static func notMeasured(_ goal: String) -> GoalCheck {
        GoalCheck(goal: goal, measured: "not measured in this run", verdict: .undecided, decidedBy: "no data")
    }

    /// A goal on an exact count (allocations): no interval, the count itself decides.
    static func count(_ goal: String, measured: String, value: Double?, atMost bound: Double) -> GoalCheck {
        guard let value else { return notMeasured(goal) }
        let verdict: GoalVerdict = value <= bound ? .met : .notMet
        return GoalCheck(goal: goal, measured: measured, verdict: verdict, decidedBy: "an exact count")
    }
}
