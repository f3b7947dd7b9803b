/// The run's time budget: each comparison, when it begins, is allotted its weight's share of
/// the time left, so that time one did not need (its interval narrowed early) goes to the
/// ones after it. Without a limit (`--full`) every share is unlimited.
final class Budget {
    /// When the measurements must end, on the monotonic clock; nil when unlimited.
    let deadline: UInt64?
    private var remainingWeight: Double

    init(seconds: Double?, totalWeight: Double) {
        deadline = seconds.map { now() &+ UInt64($0 * 1e9) }
        remainingWeight = max(totalWeight, 1e-9)
    }

    /// The nanoseconds that a comparison of `weight` may take from now (UInt64.max when
    /// unlimited); its weight leaves the weight still to run.
    func allot(_ weight: Double) -> UInt64 {
        defer { remainingWeight = max(remainingWeight - weight, 1e-9) }
        guard let deadline else { return .max }
        let left = deadline > now() ? deadline - now() : 0
        return UInt64(Double(left) * min(1, weight / remainingWeight))
    }

    /// Seconds until the deadline (nil when unlimited; 0 once passed).
    var secondsLeft: Double? {
        guard let deadline else { return nil }
        let time = now()
        return deadline > time ? Double(deadline - time) / 1e9 : 0
    }

    var isSpent: Bool { (secondsLeft ?? 1) <= 0 }
}

/// When a comparison stops taking rounds.
struct StoppingRule {
    /// Rounds taken in any case (while the run's budget lasts).
    var minimumRounds: Int
    /// Rounds after which it stops whatever its interval.
    var maximumRounds: Int
    /// It stops once every judged interval is narrower than ± this fraction.
    var targetHalfWidth: Double = 0.05
    /// Exactly this many rounds, ignoring the interval and the budget (`--rounds`).
    var fixedRounds: Int? = nil

    /// Whether to start another round, given the rounds so far, the widest relative
    /// half-width among the judged intervals (nil before there is one), how long the
    /// comparison has run, its share, and how long its last round took.
    func wantsAnotherRound(
        rounds: Int, widestHalfWidth: Double?, elapsed: UInt64, share: UInt64, lastRound: UInt64, budget: Budget
    ) -> Bool {
        if let fixedRounds { return rounds < fixedRounds }
        if rounds >= maximumRounds { return false }
        // Two rounds give the first interval; below that, only the run's deadline stops it.
        if rounds < 2 { return !budget.isSpent || rounds == 0 }
        if let widest = widestHalfWidth, widest <= targetHalfWidth, rounds >= minimumRounds { return false }
        // Another round must fit in the share (and in the run) by the last round's duration.
        if share != .max, elapsed &+ lastRound > share { return false }
        if let left = budget.secondsLeft, Double(lastRound) / 1e9 > left { return false }
        return true
    }
}
