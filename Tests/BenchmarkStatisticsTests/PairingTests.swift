import Foundation
import Testing

@testable import BenchmarkStatistics

/// The pairing of rounds (`PairedValues`), the twin-order rule, and the averages the report
/// gives beside the ratios.
@Suite struct PairingTests {
    @Test func logRatiosPointTheWayTheMetricIsBetter() {
        var values = PairedValues()
        values.append(round: 0, subject: 50, peer: 100, twin: nil)
        // A time: half the peer's is a ratio of 2.
        #expect(abs(values.logRatios(lowerIsBetter: true)[0] - log(2)) < 1e-12)
        // A rate: half the peer's is a ratio of 0.5.
        #expect(abs(values.logRatios(lowerIsBetter: false)[0] + log(2)) < 1e-12)
    }

    @Test func theSubjectIsPairedWithTheGeometricMeanOfPeerAndTwin() {
        var values = PairedValues()
        values.append(round: 0, subject: 100, peer: 100, twin: 400)
        // √(100 × 400) = 200: the subject is twice as fast as the peer's two runs together.
        #expect(abs(values.logRatios(lowerIsBetter: true)[0] - log(2)) < 1e-12)
    }

    @Test func roundsWithoutAValueAreSkipped() {
        var values = PairedValues()
        values.append(round: 0, subject: 0, peer: 100, twin: 100)
        values.append(round: 1, subject: 100, peer: 100, twin: nil)
        values.append(round: 2, subject: 100, peer: 200, twin: 200)
        #expect(values.logRatios(lowerIsBetter: true).count == 2)
        // Without a twin a round has no A/A ratio.
        #expect(values.aaLogRatios.count == 2)
        #expect(values.twin == [100, 0, 200])
        #expect(values.round == [0, 1, 2])
    }

    @Test func theAAFollowsTheTwinOrderRule() {
        var values = PairedValues()
        for round in 0..<64 { values.append(round: round, subject: 1, peer: 110, twin: 100) }
        let ratios = values.aaLogRatios
        for round in 0..<64 {
            let expected = PairedStatistics.twinFirst(inRound: round) ? log(100.0 / 110) : log(110.0 / 100)
            #expect(abs(ratios[round] - expected) < 1e-12, "round \(round)")
        }
        // Peer and twin are the same code: an A/A of a constant difference in both orders
        // averages out near 1.
        let estimate = PairedStatistics.estimate(logRatios: ratios)
        #expect(estimate.map { $0.low < 1 && $0.high > 1 } == true)
    }

    @Test func theTwinOrderRuleAlternatesEvenlyAndIsFixedByTheRound() {
        for length in [16, 64, 256] {
            let first = (0..<length).filter { PairedStatistics.twinFirst(inRound: $0) }.count
            #expect(abs(Double(first) / Double(length) - 0.5) <= 0.2, "\(first) of \(length)")
        }
        // The rule's first rounds, pinned, so that a change to the rule shows.
        let firstRounds = (0..<8).map { PairedStatistics.twinFirst(inRound: $0) }
        #expect(firstRounds == [false, true, true, true, false, false, false, true])
    }

    @Test func contaminationIsMarkedByRound() {
        var values = PairedValues()
        values.append(round: 0, subject: 1, peer: 1, twin: 1)
        values.append(round: 2, subject: 1, peer: 1, twin: 1)
        values.append(round: 5, subject: 1, peer: 1, twin: 1)
        values.markContaminated([false, true, true])
        // Round 5 lies beyond the flags: clean.
        #expect(values.contaminated == [false, true, false])
    }

    @Test func medianOfOddAndEvenCounts() {
        #expect(median([]) == nil)
        #expect(median([3]) == 3)
        #expect(median([5, 1, 3]) == 3)
        #expect(median([4, 1, 3, 2]) == 2.5)
    }

    @Test func geometricMeanSkipsMissingValues() throws {
        #expect(geometricMean([]) == nil)
        #expect(geometricMean([0, -1, .infinity]) == nil)
        let mean = try #require(geometricMean([1, 0, 4, .nan, 16]))
        #expect(abs(mean - 4) < 1e-12)
    }
}
