import Foundation
import Testing

@testable import BenchmarkStatistics

/// The benchmark's statistics: the t quantiles they rest on, the interval and verdict on
/// simulated paired rounds (a known difference is found; two arms drawn from one distribution
/// are almost never called different), the unpaired interval of baselines, and goals.
@Suite struct PairedStatisticsTests {
    @Test func tQuantilesMatchTheTables() {
        let table: [(Double, Double)] = [(1, 12.706), (2, 4.303), (5, 2.571), (10, 2.228), (30, 2.042), (120, 1.980)]
        for (degrees, expected) in table {
            #expect(abs(StudentT.quantile(0.975, degreesOfFreedom: degrees) - expected) < 0.001, "df \(degrees)")
        }
        #expect(abs(StudentT.quantile(0.975, degreesOfFreedom: .infinity) - 1.95996) < 0.0001)
        #expect(abs(StudentT.quantile(0.025, degreesOfFreedom: 7) + 2.3646) < 0.001)
        #expect(abs(StudentT.cdf(0, degreesOfFreedom: 3) - 0.5) < 1e-12)
    }

    /// One simulated comparison: in each round the subject runs once and the peer twice, all
    /// three slowed by a factor common to the round (the machine's drift, which pairing
    /// cancels) and each by its own noise. Times are lognormal; `speedUp` is how many times
    /// faster the subject truly is.
    private func simulate(
        speedUp: Double,
        rounds: Int,
        noise: Double,
        drift: Double,
        generator: inout SeededGenerator
    ) -> (Estimate?, Estimate?) {
        var ratios: [Double] = []
        var selfRatios: [Double] = []
        for _ in 0..<rounds {
            let common = drift * generator.nextNormal()
            let peerA = 100 * exp(common + noise * generator.nextNormal())
            let peerB = 100 * exp(common + noise * generator.nextNormal())
            let subject = 100 / speedUp * exp(common + noise * generator.nextNormal())
            ratios.append(log((peerA * peerB).squareRoot() / subject))
            selfRatios.append(Bool.random(using: &generator) ? log(peerA / peerB) : log(peerB / peerA))
        }
        return (PairedStatistics.estimate(logRatios: ratios), PairedStatistics.estimate(logRatios: selfRatios))
    }

    @Test func aKnownDifferenceIsFound() {
        var generator = SeededGenerator(seed: 35)
        var counts: [Verdict: Int] = [:]
        let trials = 1_000
        for _ in 0..<trials {
            let (estimate, aa) = simulate(speedUp: 1.2, rounds: 8, noise: 0.05, drift: 0.3, generator: &generator)
            let threshold = PairedStatistics.noiseThreshold(aa: aa)
            counts[PairedStatistics.verdict(estimate, threshold: threshold), default: 0] += 1
        }
        #expect(counts[.better, default: 0] >= trials * 95 / 100, "\(counts)")
        #expect(counts[.worse, default: 0] == 0)

        var slower = SeededGenerator(seed: 36)
        var worse = 0
        for _ in 0..<trials {
            let (estimate, aa) = simulate(speedUp: 1 / 1.2, rounds: 8, noise: 0.05, drift: 0.3, generator: &slower)
            if PairedStatistics.verdict(estimate, threshold: PairedStatistics.noiseThreshold(aa: aa)) == .worse {
                worse += 1
            }
        }
        #expect(worse >= trials * 95 / 100)
    }

    @Test func oneDistributionIsSameOrUndecidedInAtLeast95PercentOfTrials() {
        for (seed, rounds, noise) in [(1 as UInt64, 5, 0.02), (2, 8, 0.05), (3, 20, 0.10), (4, 40, 0.01)] {
            var generator = SeededGenerator(seed: seed)
            let trials = 2_000
            var decided = 0
            var aaMissesOne = 0
            for _ in 0..<trials {
                let (estimate, aa) = simulate(speedUp: 1, rounds: rounds, noise: noise, drift: 0.3, generator: &generator)
                let verdict = PairedStatistics.verdict(estimate, threshold: PairedStatistics.noiseThreshold(aa: aa))
                if verdict == .better || verdict == .worse { decided += 1 }
                if let aa, aa.low > 1 || aa.high < 1 { aaMissesOne += 1 }
            }
            #expect(decided <= trials * 5 / 100, "seed \(seed): \(decided) of \(trials) called different")
            // The A/A interval is an honest 95 % interval: it misses 1 about one time in twenty.
            #expect(aaMissesOne <= trials * 7 / 100, "seed \(seed): A/A missed 1 in \(aaMissesOne) trials")
        }
    }

    @Test func withoutPairingTheDriftHidesTheDifference() {
        // The same 10 % speed-up, with the peer taken from other rounds than the subject
        // (unpaired): the drift between rounds swamps it, and the unpaired interval says so.
        var generator = SeededGenerator(seed: 7)
        var subject: [Double] = []
        var peer: [Double] = []
        for _ in 0..<8 {
            subject.append(log(100 / 1.1) + 0.3 * generator.nextNormal() + 0.02 * generator.nextNormal())
            peer.append(log(100) + 0.3 * generator.nextNormal() + 0.02 * generator.nextNormal())
        }
        let unpaired = PairedStatistics.unpairedEstimate(peer, against: subject)
        #expect(unpaired != nil)
        #expect(PairedStatistics.verdict(unpaired, threshold: 0.02) == .undecided)
    }

    @Test func welchIntervalOfTwoSeries() throws {
        let a = [1.0, 1.1, 0.9, 1.05, 0.95].map { log($0 * 1.5) }
        let b = [1.0, 1.02, 0.98, 1.01, 0.99].map { log($0) }
        let estimate = try #require(PairedStatistics.unpairedEstimate(a, against: b))
        #expect(abs(estimate.ratio - 1.5) < 0.03)
        #expect(estimate.low < 1.5 && estimate.high > 1.5)
        #expect(estimate.low > 1.3)
        #expect(PairedStatistics.unpairedEstimate([1], against: b) == nil)
    }

    @Test func verdictsFollowTheBandAndTheInterval() {
        func estimate(_ low: Double, _ high: Double) -> Estimate {
            Estimate(logMean: (log(low) + log(high)) / 2, logMargin: (log(high) - log(low)) / 2, rounds: 10)
        }
        #expect(PairedStatistics.verdict(estimate(1.01, 1.04), threshold: 0.05) == .same)
        #expect(PairedStatistics.verdict(estimate(0.97, 1.03), threshold: 0.05) == .same)
        #expect(PairedStatistics.verdict(estimate(1.02, 1.12), threshold: 0.05) == .better)
        #expect(PairedStatistics.verdict(estimate(0.85, 0.95), threshold: 0.05) == .worse)
        #expect(PairedStatistics.verdict(estimate(0.97, 1.12), threshold: 0.05) == .undecided)
        // Beyond the band on average, but the interval still holds 1: undecided.
        #expect(PairedStatistics.verdict(estimate(0.99, 1.25), threshold: 0.05) == .undecided)
        #expect(PairedStatistics.verdict(nil, threshold: 0.05) == .undecided)
        #expect(PairedStatistics.verdict(estimate(1.5, 1.6), threshold: .infinity) == .undecided)
    }

    @Test func thresholdComesFromTheAAInterval() {
        let aa = Estimate(logMean: log(1.01), logMargin: log(1.03), rounds: 10)
        #expect(abs(PairedStatistics.noiseThreshold(aa: aa) - (1.01 * 1.03 - 1)) < 1e-9)
        let tight = Estimate(logMean: 0, logMargin: 0.001, rounds: 10)
        #expect(PairedStatistics.noiseThreshold(aa: tight) == 0.01)
        // An A/A of two rounds reaches far; the threshold stops at the ceiling, so a wide
        // interval is undecided rather than "same".
        let wide = Estimate(logMean: 0.1, logMargin: 2, rounds: 2)
        #expect(PairedStatistics.noiseThreshold(aa: wide) == 0.10)
        let interval = Estimate(logMean: log(1.5), logMargin: log(1.6), rounds: 2)  // [0.94, 2.4]
        #expect(PairedStatistics.verdict(interval, threshold: PairedStatistics.noiseThreshold(aa: wide)) == .undecided)
        #expect(PairedStatistics.noiseThreshold(aa: nil) == .infinity)
    }

    @Test func goalsAreJudgedOnTheBoundThatDecides() {
        let estimate = Estimate(logMean: log(2.2), logMargin: log(1.05), rounds: 10)
        #expect(PairedStatistics.atLeast(estimate, 2) == .met)
        #expect(PairedStatistics.atLeast(estimate, 2.2) == .undecided)
        #expect(PairedStatistics.atLeast(estimate, 2.5) == .notMet)
        #expect(PairedStatistics.atMost(estimate, 2.5) == .met)
        #expect(PairedStatistics.atMost(estimate, 2.2) == .undecided)
        #expect(PairedStatistics.atMost(estimate, 2) == .notMet)
        #expect(PairedStatistics.atLeast(nil, 1) == .undecided)
    }

    /// The estimate that `rounds` rounds with the spread of `estimate` would give.
    private func projected(_ estimate: Estimate, to rounds: Int) -> Estimate {
        let t = { (n: Int) in StudentT.quantile(0.975, degreesOfFreedom: Double(n - 1)) }
        let spread = estimate.logMargin / t(estimate.rounds) * Double(estimate.rounds).squareRoot()
        return Estimate(logMean: estimate.logMean, logMargin: t(rounds) * spread / Double(rounds).squareRoot(), rounds: rounds)
    }

    @Test func roundsToDecideIsTheFirstCountThatDecides() throws {
        let threshold = 0.05
        // Beyond the band (1.2×) but with an interval that holds 1: decides better later.
        let beyond = Estimate(logMean: log(1.2), logMargin: log(1.3), rounds: 4)
        #expect(PairedStatistics.verdict(beyond, threshold: threshold) == .undecided)
        let rounds = try #require(PairedStatistics.roundsToDecide(beyond, threshold: threshold))
        #expect(rounds > 4)
        #expect(PairedStatistics.verdict(projected(beyond, to: rounds), threshold: threshold) == .better)
        #expect(PairedStatistics.verdict(projected(beyond, to: rounds - 1), threshold: threshold) == .undecided)
        // Inside the band (1.01×), too wide to call the same: decides `same` later.
        let inside = Estimate(logMean: log(1.01), logMargin: log(1.2), rounds: 5)
        let same = try #require(PairedStatistics.roundsToDecide(inside, threshold: threshold))
        #expect(PairedStatistics.verdict(projected(inside, to: same), threshold: threshold) == .same)
        #expect(PairedStatistics.verdict(projected(inside, to: same - 1), threshold: threshold) == .undecided)
        // Below the band: worse, symmetrically.
        let below = Estimate(logMean: -log(1.2), logMargin: log(1.3), rounds: 4)
        #expect(PairedStatistics.roundsToDecide(below, threshold: threshold) == rounds)
    }

    @Test func roundsToDecideAnswersDecidedEdgeAndMissingCases() {
        let decided = Estimate(logMean: log(1.5), logMargin: log(1.1), rounds: 7)
        #expect(PairedStatistics.roundsToDecide(decided, threshold: 0.05) == 7)
        // A mean on the band's edge is never decided; one just inside it (too close to the edge
        // to be called the same) needs more than the limit. Just outside it, the interval need
        // only clear 1 to be called better: that comes soon.
        let edge = Estimate(logMean: log1p(0.05), logMargin: 0.2, rounds: 4)
        #expect(PairedStatistics.roundsToDecide(edge, threshold: 0.05) == nil)
        let inside = Estimate(logMean: log1p(0.05) - 0.0005, logMargin: 0.2, rounds: 4)
        #expect(PairedStatistics.roundsToDecide(inside, threshold: 0.05, limit: 1_000) == nil)
        let outside = Estimate(logMean: log1p(0.05) + 0.0005, logMargin: 0.2, rounds: 4)
        #expect((PairedStatistics.roundsToDecide(outside, threshold: 0.05) ?? .max) < 100)
        let noThreshold = Estimate(logMean: log(1.2), logMargin: log(1.3), rounds: 4)
        #expect(PairedStatistics.roundsToDecide(noThreshold, threshold: .infinity) == nil)
    }

    @Test func theGeneratorReplaysFromItsSeed() {
        var a = SeededGenerator(seed: 42)
        var b = SeededGenerator(seed: 42)
        #expect((0..<10).map { _ in a.next() } == (0..<10).map { _ in b.next() })
    }
}
