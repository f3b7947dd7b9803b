import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The statistics behind the benchmark's verdicts, kept apart from the benchmark so that they
/// can be tested on their own.
///
/// A comparison runs its subject and its peer in the same rounds, in a random order within
/// each round. Each round gives one paired ratio, oriented so that above 1 means the subject
/// is better (the peer's time ÷ the subject's, or the subject's rate ÷ the peer's). Ratios
/// multiply, so everything is computed on their logarithms: the estimate is the geometric
/// mean of the rounds' ratios, and its 95 % interval is Student's t interval on the mean of
/// the log ratios, carried back by `exp`. The t interval (rather than a bootstrap) keeps its
/// coverage with the few rounds an expensive comparison can afford (a server cell may get
/// five), where a percentile bootstrap is too narrow.
package enum PairedStatistics {
    /// The interval's confidence level.
    package static let confidence = 0.95

    /// The estimate from per-round log ratios, or nil with fewer than two rounds (no spread,
    /// so no interval).
    package static func estimate(logRatios: [Double], confidence: Double = confidence) -> Estimate? {
        let values = logRatios.filter(\.isFinite)
        guard values.count >= 2 else { return nil }
        let n = Double(values.count)
        let mean = values.reduce(0, +) / n
        let variance = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / (n - 1)
        let margin = StudentT.quantile(1 - (1 - confidence) / 2, degreesOfFreedom: n - 1) * (variance / n).squareRoot()
        return Estimate(logMean: mean, logMargin: margin, rounds: values.count)
    }

    /// The ratio of two unpaired series (each a set of per-round log values, such as this run's
    /// paired ratios and a saved baseline's): exp(mean(a) − mean(b)), with Welch's t interval
    /// (unequal variances, Welch–Satterthwaite degrees of freedom). Nil when either side has
    /// fewer than two values.
    package static func unpairedEstimate(
        _ a: [Double],
        against b: [Double],
        confidence: Double = confidence
    ) -> Estimate? {
        let a = a.filter(\.isFinite)
        let b = b.filter(\.isFinite)
        guard a.count >= 2, b.count >= 2 else { return nil }
        func moments(_ values: [Double]) -> (mean: Double, variance: Double, n: Double) {
            let n = Double(values.count)
            let mean = values.reduce(0, +) / n
            return (mean, values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / (n - 1), n)
        }
        let (meanA, varianceA, nA) = moments(a)
        let (meanB, varianceB, nB) = moments(b)
        let termA = varianceA / nA
        let termB = varianceB / nB
        let standardError = (termA + termB).squareRoot()
        let denominator = termA * termA / (nA - 1) + termB * termB / (nB - 1)
        let degrees = denominator > 0 ? (termA + termB) * (termA + termB) / denominator : nA + nB - 2
        let margin = StudentT.quantile(1 - (1 - confidence) / 2, degreesOfFreedom: degrees) * standardError
        return Estimate(logMean: meanA - meanB, logMargin: margin, rounds: min(a.count, b.count))
    }

    /// The noise threshold that an A/A comparison (the peer against itself, in the same
    /// rounds) sets: how far from 1 its 95 % interval reaches, as a fraction (0.04 = 4 %),
    /// kept within [`floor`, `ceiling`]. A difference smaller than this is one the machine
    /// produced between two measurements of the same code. The ceiling keeps an A/A of few or
    /// very noisy rounds, whose interval reaches far, from calling wide intervals "same":
    /// uncertainty must make a verdict harder, never easier. Infinite without an A/A.
    package static func noiseThreshold(aa: Estimate?, floor: Double = 0.01, ceiling: Double = 0.10) -> Double {
        guard let aa else { return .infinity }
        let reach = max(abs(aa.logLow), abs(aa.logHigh))
        return min(ceiling, max(floor, exp(reach) - 1))
    }

    /// The verdict on an interval, given the comparison's noise threshold `threshold` (a
    /// fraction; the band of no practical difference is [1/(1+threshold), 1+threshold]):
    ///
    /// - `same` when the whole interval lies inside the band;
    /// - `better` when the interval lies above 1 and the estimate beyond the band;
    /// - `worse` when the interval lies below 1 and the estimate beyond the band;
    /// - `undecided` otherwise (the interval is too wide to tell), and always without an
    ///   interval.
    package static func verdict(_ estimate: Estimate?, threshold: Double) -> Verdict {
        guard let estimate, threshold.isFinite else { return .undecided }
        let band = log1p(max(0, threshold))
        if estimate.logLow > -band, estimate.logHigh < band { return .same }
        if estimate.logLow > 0, estimate.logMean > band { return .better }
        if estimate.logHigh < 0, estimate.logMean < -band { return .worse }
        return .undecided
    }
}

extension PairedStatistics {
    /// The rounds at which `estimate` would be decided (`verdict` no longer `undecided`) if
    /// more rounds kept its present mean and spread: the interval's half-width shrinks as
    /// t(n − 1)/√n, and the verdict needs it below |mean| (better or worse, the mean being
    /// beyond the band of `threshold`) or below band − |mean| (same, inside it). Its own
    /// rounds when already decided; nil when more than `limit` rounds would be needed (the
    /// mean sits at the band's edge, where no number of rounds decides), and without a
    /// threshold or a spread.
    package static func roundsToDecide(_ estimate: Estimate, threshold: Double, limit: Int = 1_000) -> Int? {
        guard threshold.isFinite, estimate.rounds >= 2 else { return nil }
        if verdict(estimate, threshold: threshold) != .undecided { return estimate.rounds }
        // The half-width at r rounds is spread × t(r − 1)/√r; its own rounds give the spread.
        func shrink(_ rounds: Int) -> Double {
            StudentT.quantile(1 - (1 - confidence) / 2, degreesOfFreedom: Double(rounds - 1)) / Double(rounds).squareRoot()
        }
        let spread = estimate.logMargin / shrink(estimate.rounds)
        let band = log1p(max(0, threshold))
        let distance = abs(estimate.logMean)
        let target = distance > band ? distance : band - distance
        guard spread > 0, spread.isFinite, target > 0, spread * shrink(limit) < target else { return nil }
        // The half-width falls with the rounds: bisect for the first count below the target
        // (at its own rounds it is not below, or it would be decided).
        var low = estimate.rounds
        var high = limit
        while high - low > 1 {
            let middle = (low + high) / 2
            if spread * shrink(middle) < target { high = middle } else { low = middle }
        }
        return high
    }
}

/// A geometric-mean ratio with its interval, all kept as logarithms.
package struct Estimate: Codable, Sendable, Equatable {
    /// Mean of the log ratios.
    package var logMean: Double
    /// Half the interval's width, on the log scale.
    package var logMargin: Double
    /// Rounds (pairs) behind it.
    package var rounds: Int

    package init(logMean: Double, logMargin: Double, rounds: Int) {
        self.logMean = logMean
        self.logMargin = logMargin
        self.rounds = rounds
    }

    package var logLow: Double { logMean - logMargin }
    package var logHigh: Double { logMean + logMargin }
    /// The geometric-mean ratio.
    package var ratio: Double { exp(logMean) }
    package var low: Double { exp(logLow) }
    package var high: Double { exp(logHigh) }
    /// The interval's half-width relative to the ratio (0.05: the interval is about ±5 %).
    package var relativeHalfWidth: Double { exp(logMargin) - 1 }
}

/// What a comparison concluded.
package enum Verdict: String, Codable, Sendable, CaseIterable {
    /// The subject is better than the peer by more than the noise threshold.
    case better
    /// The subject is worse than the peer by more than the noise threshold.
    case worse
    /// Any difference is within the noise threshold.
    case same
    /// The interval is too wide to tell.
    case undecided
}

/// What a goal such as "≥ 2× Dispatch" concluded, judged on an interval.
package enum GoalVerdict: String, Codable, Sendable {
    case met
    case notMet = "not met"
    case undecided
}

extension PairedStatistics {
    /// A goal that the ratio be at least `bound` is met when the interval's low end reaches it
    /// and not met when its high end stays below it; otherwise undecided.
    package static func atLeast(_ estimate: Estimate?, _ bound: Double) -> GoalVerdict {
        guard let estimate else { return .undecided }
        if estimate.low >= bound { return .met }
        if estimate.high < bound { return .notMet }
        return .undecided
    }

    /// A goal that the value be at most `bound` is met when the interval's high end stays at
    /// or below it and not met when its low end exceeds it; otherwise undecided.
    package static func atMost(_ estimate: Estimate?, _ bound: Double) -> GoalVerdict {
        guard let estimate else { return .undecided }
        if estimate.high <= bound { return .met }
        if estimate.low > bound { return .notMet }
        return .undecided
    }
}

/// Student's t distribution: its CDF through the regularized incomplete beta function
/// (a continued fraction evaluated by the modified Lentz method), and its quantile by
/// bisection on that CDF.
package enum StudentT {
    /// P(T ≤ t) for `degreesOfFreedom` > 0.
    package static func cdf(_ t: Double, degreesOfFreedom v: Double) -> Double {
        guard t.isFinite else { return t > 0 ? 1 : 0 }
        let x = v / (v + t * t)
        let tail = 0.5 * regularizedIncompleteBeta(x, a: v / 2, b: 0.5)
        return t >= 0 ? 1 - tail : tail
    }

    /// Quantiles already computed: a run asks for the same few (p, degrees of freedom) pairs
    /// again and again.
    private static let cache = Mutex<[Key: Double]>([:])

    private struct Key: Hashable {
        var p: Double
        var degreesOfFreedom: Double
    }

    /// The t such that P(T ≤ t) = `p`, for 0 < p < 1.
    package static func quantile(_ p: Double, degreesOfFreedom v: Double) -> Double {
        precondition(p > 0 && p < 1, "a quantile needs 0 < p < 1")
        let key = Key(p: p, degreesOfFreedom: v)
        if let known = cache.withLock({ $0[key] }) { return known }
        let value = computeQuantile(p, degreesOfFreedom: v)
        cache.withLock { $0[key] = value }
        return value
    }

    private static func computeQuantile(_ p: Double, degreesOfFreedom v: Double) -> Double {
        guard v.isFinite, v < 1e7 else { return normalQuantile(p) }
        if p < 0.5 { return -computeQuantile(1 - p, degreesOfFreedom: v) }
        var low = 0.0
        var high = 1.0
        while cdf(high, degreesOfFreedom: v) < p { high *= 2 }
        for _ in 0..<200 {
            let middle = (low + high) / 2
            if cdf(middle, degreesOfFreedom: v) < p { low = middle } else { high = middle }
            if high - low < 1e-12 * max(1, high) { break }
        }
        return (low + high) / 2
    }

    /// The standard normal quantile, by bisection on erfc.
    static func normalQuantile(_ p: Double) -> Double {
        if p < 0.5 { return -normalQuantile(1 - p) }
        var low = 0.0
        var high = 40.0
        for _ in 0..<200 {
            let middle = (low + high) / 2
            if 1 - 0.5 * erfc(middle / 2.0.squareRoot()) < p { low = middle } else { high = middle }
        }
        return (low + high) / 2
    }

    /// I_x(a, b), the regularized incomplete beta function, for 0 ≤ x ≤ 1.
    static func regularizedIncompleteBeta(_ x: Double, a: Double, b: Double) -> Double {
        if x <= 0 { return 0 }
        if x >= 1 { return 1 }
        let logFront = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x)
        // The continued fraction converges fast for x below (a + 1) / (a + b + 2); above it,
        // use the symmetry I_x(a, b) = 1 − I_(1−x)(b, a).
        if x < (a + 1) / (a + b + 2) {
            return exp(logFront) * betaContinuedFraction(x, a: a, b: b) / a
        }
        return 1 - exp(logFront) * betaContinuedFraction(1 - x, a: b, b: a) / b
    }

    /// The continued fraction of the incomplete beta function, by the modified Lentz method.
    private static func betaContinuedFraction(_ x: Double, a: Double, b: Double) -> Double {
        let tiny = 1e-300
        var c = 1.0
        var d = 1 - (a + b) * x / (a + 1)
        if abs(d) < tiny { d = tiny }
        d = 1 / d
        var result = d
        for m in 1...500 {
            let m = Double(m)
            // The even step, then the odd step, of the fraction's terms.
            let even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
            d = 1 + even * d
            if abs(d) < tiny { d = tiny }
            c = 1 + even / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            result *= d * c
            let odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
            d = 1 + odd * d
            if abs(d) < tiny { d = tiny }
            c = 1 + odd / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let step = d * c
            result *= step
            if abs(step - 1) < 1e-15 { break }
        }
        return result
    }
}

/// SplitMix64: a small, fast, seedable generator, so that a run's random round orders (and
/// the statistics tests' trials) can be replayed from their seed.
package struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A standard normal deviate (Box–Muller), for tests and simulations.
    package mutating func nextNormal() -> Double {
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &self)
        let u2 = Double.random(in: 0..<1, using: &self)
        return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }
}
