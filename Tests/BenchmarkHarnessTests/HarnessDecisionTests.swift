import BenchmarkStatistics
import Foundation
import Testing

@testable import Benchmarks

/// The decisions the benchmark's harness makes above the statistics: when a comparison stops
/// taking rounds and how the budget is shared, how rounds are paired with the reference and
/// turned into rows, the run-wide A/A intervals, the comparison with a saved baseline, and
/// goals judged on intervals.
@Suite struct HarnessDecisionTests {
    // MARK: Stopping and the budget

    private let unlimited = Budget(seconds: nil, totalWeight: 1)
    private let second: UInt64 = 1_000_000_000

    private func wants(
        _ rule: StoppingRule,
        rounds: Int,
        widest: Double?,
        elapsed: UInt64 = 0,
        share: UInt64 = .max,
        lastRound: UInt64 = 0,
        budget: Budget? = nil
    ) -> Bool {
        rule.wantsAnotherRound(
            rounds: rounds, widestHalfWidth: widest, elapsed: elapsed, share: share, lastRound: lastRound,
            budget: budget ?? unlimited
        )
    }

    @Test func fixedRoundsIgnoreTheIntervalAndTheBudget() {
        let rule = StoppingRule(minimumRounds: 5, maximumRounds: 10, fixedRounds: 3)
        let spent = Budget(seconds: 0, totalWeight: 1)
        #expect(wants(rule, rounds: 2, widest: 0.001, budget: spent))
        #expect(!wants(rule, rounds: 3, widest: 0.9))
    }

    @Test func aNarrowIntervalStopsOnlyAfterTheMinimumRounds() {
        let rule = StoppingRule(minimumRounds: 5, maximumRounds: 100)
        #expect(wants(rule, rounds: 4, widest: 0.01))
        #expect(!wants(rule, rounds: 5, widest: 0.01))
        #expect(!wants(rule, rounds: 5, widest: 0.05), "the target half-width itself is narrow enough")
        #expect(wants(rule, rounds: 5, widest: 0.0501))
        #expect(wants(rule, rounds: 50, widest: nil), "no interval yet: go on")
    }

    @Test func theMaximumStopsAWideInterval() {
        let rule = StoppingRule(minimumRounds: 5, maximumRounds: 12)
        #expect(wants(rule, rounds: 11, widest: 0.5))
        #expect(!wants(rule, rounds: 12, widest: 0.5))
    }

    @Test func aRoundThatWouldOverrunTheShareIsNotStarted() {
        let rule = StoppingRule(minimumRounds: 5, maximumRounds: 100)
        #expect(wants(rule, rounds: 6, widest: 0.2, elapsed: 7 * second, share: 10 * second, lastRound: 2 * second))
        #expect(!wants(rule, rounds: 6, widest: 0.2, elapsed: 9 * second, share: 10 * second, lastRound: 2 * second))
    }

    @Test func aRoundThatWouldOverrunTheRunIsNotStarted() {
        let rule = StoppingRule(minimumRounds: 5, maximumRounds: 100)
        let nearlySpent = Budget(seconds: 1, totalWeight: 1)
        #expect(!wants(rule, rounds: 6, widest: 0.2, lastRound: 5 * second, budget: nearlySpent))
        #expect(wants(rule, rounds: 6, widest: 0.2, lastRound: second / 1000, budget: nearlySpent))
    }

    @Test func theFirstRoundsRunUntilTheDeadline() {
        let rule = StoppingRule(minimumRounds: 5, maximumRounds: 100)
        let spent = Budget(seconds: 0, totalWeight: 1)
        #expect(wants(rule, rounds: 0, widest: nil, budget: spent), "a comparison always takes its first round")
        #expect(!wants(rule, rounds: 1, widest: nil, budget: spent))
        #expect(wants(rule, rounds: 1, widest: nil))
    }

    @Test func theBudgetGivesEachWeightItsShareOfWhatIsLeft() {
        let budget = Budget(seconds: 100, totalWeight: 4)
        let first = Double(budget.allot(1)) / 1e9
        #expect(abs(first - 25) < 0.5, "one weight of four: a quarter (\(first) s)")
        let rest = Double(budget.allot(3)) / 1e9
        #expect(abs(rest - 100) < 0.5, "the last weight takes all that is left (\(rest) s)")
        #expect(unlimited.allot(1) == .max)
        #expect(!budget.isSpent)
        #expect(Budget(seconds: 0, totalWeight: 1).isSpent)
    }

    // MARK: Pairing rounds

    private enum Arm: Hashable { case peer, fast, absent }

    private func noise(flagged: Bool = false) -> RoundNoise {
        RoundNoise(
            seconds: 1, stealPercent: 0, otherProcessesCPUs: 0, cpuOverWall: 1, involuntarySwitchesPerSecond: 0,
            loadAverage: 0, flags: flagged ? ["steal"] : []
        )
    }

    /// Rounds in which `fast` takes half the peer's time, with the peer measured twice (the
    /// A/A) and a little spread; `fast` is missing from round 2, and round 1 is flagged.
    private func rounds(_ count: Int) -> PairedRounds<Arm, Double> {
        var rounds = PairedRounds<Arm, Double>(arms: [.peer, .fast, .absent], reference: .peer)
        for round in 0..<count {
            let spread = 1 + 0.01 * Double(round % 3)
            rounds.record(RoundDraw(arm: .peer, isTwin: false, round: round, label: ""), 100 * spread)
            rounds.record(RoundDraw(arm: .peer, isTwin: true, round: round, label: ""), 100 / spread)
            if round != 2 { rounds.record(RoundDraw(arm: .fast, isTwin: false, round: round, label: ""), 50) }
            rounds.noise.append(noise(flagged: round == 1))
        }
        return rounds
    }

    @Test func pairingKeepsOnlyRoundsWhereBothWereMeasured() {
        let rounds = rounds(6)
        let paired = rounds.paired(.fast) { $0 }
        #expect(paired.round == [0, 1, 3, 4, 5])
        #expect(paired.subject == [50, 50, 50, 50, 50])
        #expect(paired.contaminated == [false, true, false, false, false])
        #expect(rounds.paired(.absent) { $0 }.subject.isEmpty)
        #expect(rounds.value(of: .peer, twin: true, inRound: 3) != nil)
        #expect(rounds.value(of: .fast, inRound: 2) == nil)
    }

    @Test func rowsPutTheAAFirstAndJudgeWithItsThreshold() throws {
        let rounds = rounds(8)
        let metric = JudgedMetric<Double>(Metric(title: "time", unit: "ns", lowerIsBetter: true)) { $0 }
        let rows = rounds.verdicts(section: Section(rawValue: "test"), name: "c", title: { "\($0)" }, metrics: [metric])
        #expect(rows.count == 2, "the A/A and `fast`; `absent` has no values, so no row")
        let aa = try #require(rows.first)
        #expect(aa.isAA && aa.subject == "peer" && aa.baseline == "peer")
        let fast = rows[1]
        #expect(fast.subject == "fast" && !fast.isAA)
        #expect(abs((fast.ratio ?? 0) - 2) < 0.05, "twice as fast: ratio \(fast.ratio ?? .nan)")
        #expect(fast.verdict == .better)
        #expect(fast.noiseThreshold == aa.noiseThreshold)
        #expect(fast.rounds == 7 && fast.contaminatedRounds == 1)
        let none = rounds.verdicts(
            section: Section(rawValue: "test"), name: "c", title: { "\($0)" },
            metrics: [JudgedMetric<Double>(Metric(title: "x", unit: "", lowerIsBetter: true)) { _ in nil }]
        )
        #expect(none.isEmpty, "a metric no arm has a value on has no rows")
    }

    @Test func anUndecidedRowSaysWhenItWouldBeDecided() throws {
        // The subject about 1.15× faster than its peer, with a spread that leaves 4 rounds
        // undecided; the peer's twin about equal to it (a threshold at the floor).
        var values = PairedValues()
        let subjects = [80.0, 95, 78, 99]
        for (round, subject) in subjects.enumerated() {
            values.append(round: round, subject: subject, peer: 100, twin: 100.5)
        }
        let metric = Metric(title: "time", unit: "ns", lowerIsBetter: true)
        let (row, aa) = Verdicts.pair(section: Section(rawValue: "t"), name: "c", subject: "s", peer: "p", metric: metric, values)
        #expect(aa?.roundsToDecide == nil, "an A/A row is never projected")
        #expect(row.verdict == .undecided)
        let rounds = try #require(row.roundsToDecide)
        #expect(rounds > 4 && rounds < 1_000)
        #expect(row.formattedCell.hasSuffix("?→\(rounds)"))
        #expect(row.formattedVerdict == "undecided →\(rounds)")
        let summary = Report.undecided([row])
        #expect(summary.contains("Undecided rows: 1;"))
        var decided = row
        decided.verdict = .better
        decided.roundsToDecide = nil
        #expect(decided.undecidedHint.isEmpty && Report.undecided([decided]).isEmpty)
    }

    /// A scenario that is never run: `ProcessReplicas.merge` reads only its names.
    private final class NotRun: Scenario {
        let name: String
        let subject = Subject.bolts
        let expectedAllocations = "–"
        init(_ name: String) { self.name = name }
        func run(iterations: Int) throws -> Sample { throw BenchmarkError.wrongResult("not run") }
    }

    @Test func anUndecidedProcessRowSaysHowManyProcessesWouldDecideIt() throws {
        let metric = Metric(title: "time", unit: "ns", lowerIsBetter: true)
        let comparison = Comparison(
            group: "g", section: Section(rawValue: "t"), metrics: [], operation: "o", id: "c",
            entries: [.init(scenario: NotRun("s"), id: "s"), .init(scenario: NotRun("p"), id: "p")], referenceIndex: 1)
        let key = VerdictKey(section: comparison.section, comparison: "c", arm: "s", baseline: "p", metric: "time")
        // Three processes: the subject about 1.1× faster in each, apart enough that three leave it
        // undecided; within a process the rounds agree, so only processes can narrow it.
        let children = [82.0, 97, 88].map { subject -> Benchmarks.ComparisonResult in
            var values = PairedValues()
            for round in 0..<6 { values.append(round: round, subject: subject, peer: 100, twin: 100.3) }
            let (row, aa) = Verdicts.pair(
                section: comparison.section, name: "o", subject: "s", peer: "p", metric: metric, values, key: key)
            var child = Benchmarks.ComparisonResult(comparison)
            child.verdicts = [row] + [aa].compactMap { $0 }
            return child
        }
        let merged = ProcessReplicas.merge(comparison, children, failure: nil)
        let row = try #require(merged.verdicts.first { !$0.isAA })
        #expect(row.processes == 3 && row.rounds == 18)
        #expect(row.verdict == .undecided && row.roundsToDecide == nil)
        let processes = try #require(row.processesToDecide)
        #expect(processes > 3 && processes < 1_000)
        #expect(row.formattedVerdict == "undecided →\(processes)p")
        #expect(row.decidingFactor == Double(processes) / 3)
        #expect(Report.undecided([row]).contains("Undecided rows: 1;"))
        #expect(merged.verdicts.first(where: \.isAA)?.processesToDecide == nil, "an A/A row is never projected")
    }

    // MARK: Run-wide A/A intervals

    private func aaRow(_ logs: [Double]) -> VerdictRow {
        var values = PairedValues()
        for (round, log) in logs.enumerated() {
            values.append(round: round, subject: 1, peer: exp(log), twin: 1)
        }
        return Verdicts.aa(section: Section(rawValue: "t"), name: "aa", peer: "p", metric: Metric(title: "m", unit: "", lowerIsBetter: true), values)!
    }

    @Test func aaIntervalsWidenWithTheirNumberAndOtherRowsPassThrough() throws {
        let logs = [0.02, -0.01, 0.03, 0.0, -0.02, 0.01, 0.015, -0.005]
        let other = VerdictRow(section: Section(rawValue: "t"), name: "x", subject: "s", baseline: "p", metric: "m",
                               ratio: 1.5, interval95: [1.4, 1.6], verdict: .better, rounds: 8)
        let rows = Verdicts.simultaneous([aaRow(logs), aaRow(logs.map { -$0 }), aaRow(logs), other])
        for row in rows.prefix(3) {
            let own = try #require(row.individualInterval95)
            let joint = try #require(row.interval95)
            #expect(joint[0] < own[0] && joint[1] > own[1], "simultaneous \(joint) contains its own \(own)")
        }
        #expect(rows[3].interval95 == [1.4, 1.6] && rows[3].individualInterval95 == nil)
        let alone = Verdicts.simultaneous([aaRow(logs)])
        #expect(alone[0].individualInterval95 == nil, "one A/A row: its own interval is already the claim's")
    }

    // MARK: Baselines

    private func row(subject: String, logs: [Double], threshold: Double = 0.03, isAA: Bool = false) -> VerdictRow {
        let estimate = PairedStatistics.estimate(logRatios: logs)
        return VerdictRow(
            section: Section(rawValue: "t"), name: "c", subject: subject, baseline: "p", metric: "m",
            ratio: estimate?.ratio, interval95: estimate.map { [$0.low, $0.high] }, verdict: .undecided,
            rounds: logs.count, noiseThreshold: threshold, isAA: isAA, logRatios: logs
        )
    }

    @Test func aBaselineComparesTheSameRowAndFindsARegression() throws {
        let before = (0..<10).map { 0.7 + 0.01 * Double($0 % 3) }  // about 2× its peer
        let after = before.map { $0 - 0.3 }  // a quarter slower against the same peer
        let saved = [row(subject: "s", logs: before), row(subject: "gone", logs: before), row(subject: "p", logs: before, isAA: true)]
        let current = [row(subject: "s", logs: after), row(subject: "new", logs: after), row(subject: "p", logs: after, isAA: true)]
        let comparisons = Baseline.compare(current, with: saved)
        #expect(comparisons.map(\.subject) == ["s"], "A/A rows and rows only one run has are left out")
        let only = try #require(comparisons.first)
        #expect(only.verdict == .worse)
        #expect(abs((only.ratio ?? 0) - exp(-0.3)) < 0.01)
        let unchanged = Baseline.compare([row(subject: "s", logs: before)], with: saved)
        #expect(unchanged.first?.verdict == .same)
    }

    /// A keyed row meets its saved row by key, whatever its titles became; a row saved without
    /// a key (a baseline from before rows had keys) is met by its titles.
    @Test func aBaselineRowIsFoundByItsKeyOrElseByItsTitles() {
        let logs = (0..<6).map { 0.2 + 0.01 * Double($0 % 2) }
        let key = VerdictKey(section: Section(rawValue: "t"), comparison: "c", arm: "s", baseline: "p", metric: "m")
        var saved = row(subject: "s, as it was called", logs: logs)
        saved.key = key
        var current = row(subject: "s, renamed", logs: logs)
        current.key = key
        #expect(Baseline.compare([current], with: [saved]).map(\.subject) == ["s, renamed"])
        var other = current
        other.key?.arm = "t"
        #expect(Baseline.compare([other], with: [saved]).isEmpty, "a different key is a different row")
        var keyless = saved
        keyless.key = nil
        keyless.subject = current.subject
        #expect(Baseline.compare([current], with: [keyless]).count == 1)
    }

    @Test func aBaselineNameIsCheckedBeforeAnyFileIsTouched() {
        #expect(throws: Baseline.Failure.self) { try Baseline.path("../etc/passwd") }
        #expect(throws: Baseline.Failure.self) { try Baseline.path(".hidden") }
        #expect(throws: Baseline.Failure.self) { try Baseline.path("") }
        #expect((try? Baseline.path("main-2026.1")) == ".benchmarks/main-2026.1.json")
    }

    // MARK: Goals

    private func ratioRow(_ logs: [Double]) -> VerdictRow { row(subject: "s", logs: logs) }

    @Test func aGoalIsMetOnlyWhenTheWholeIntervalClearsItsBound() {
        let twice = ratioRow([0.69, 0.70, 0.71, 0.69, 0.70])  // about 2.0×, narrow
        let met = Goals.ratio("≥ 1.5×", [LabelledRow(label: "P=1", row: twice)], atLeast: 1.5)
        #expect(met.verdict == .met)
        let missed = Goals.ratio("≥ 3×", [LabelledRow(label: "P=1", row: twice)], atLeast: 3)
        #expect(missed.verdict == .notMet && missed.decidedBy.contains("P=1"))
        let open = Goals.ratio("≥ 2×", [LabelledRow(label: "", row: twice)], atLeast: 2)
        #expect(open.verdict == .undecided)
        #expect(Goals.ratio("≤ 2.5×", [LabelledRow(label: "", row: twice)], atMost: 2.5).verdict == .met)
        let oneMissing = Goals.ratio("≥ 1.5×", [LabelledRow(label: "a", row: twice), LabelledRow(label: "b", row: nil)], atLeast: 1.5)
        #expect(oneMissing.verdict == .undecided, "a row without an interval never counts as met")
        let none = Goals.ratio("≥ 1.5×", [], atLeast: 1.5)
        #expect(none.verdict == .undecided && none.decidedBy == "no data")
    }
}
