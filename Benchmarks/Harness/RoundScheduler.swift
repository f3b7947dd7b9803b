import BenchmarkStatistics
import Foundation

/// Runs every comparison in paired, randomly ordered rounds: it alone draws the orders and
/// decides when a comparison stops; a section says only what one measurement is and which
/// metrics judge it. Each round measures every arm once and the reference twice (its twin: the
/// A/A, what the machine alone produces) in an order from the seeded generator, so that slow
/// drift favours nobody; `NoiseProbe` reads the machine around it. Rounds go on while
/// `StoppingRule` wants another (until every subject's interval on the deciding metric is
/// narrower than its target, or the comparison's share of the `Budget` is spent). With the
/// process as the unit, `replicas` runs one comparison in child processes (`ProcessReplicas`).
///
/// One scheduler per section (its generator carries over, so a seed replays the section), one
/// `run` per comparison, then the verdicts:
///
///     let scheduler = RoundScheduler(
///         budget: budget, stopping: stopping, seed: seed, progress: progress, watchdog: watchdog)
///     let metrics = [JudgedMetric<Run>(requestsPerSecond) { $0.requestsPerSecond }]
///     let rounds = scheduler.run(
///         "16 jobs", arms: Handler.allCases, reference: .baseline, weight: 5, title: \.title,
///         measure: { draw in try? measureInAChild(draw.arm, round: draw.round, isTwin: draw.isTwin) },
///         widestInterval: { $0.widestHalfWidth(metrics[0]) })
///     let verdicts = rounds.verdicts(section: .server, name: "16 jobs", title: \.title, metrics: metrics)
///
/// `rounds.measurements` holds every measurement in the order taken; `rounds.noise` each
/// round's noise, pre-emption flagged.
final class RoundScheduler {
    let budget: Budget
    /// When each comparison stops taking rounds.
    let stopping: StoppingRule
    let progress: Progress
    let watchdog: Watchdog
    /// The rounds' orders; seeded, so a run's orders can be replayed.
    private var generator: SeededGenerator

    init(budget: Budget, stopping: StoppingRule, seed: UInt64, progress: Progress, watchdog: Watchdog) {
        self.budget = budget
        self.stopping = stopping
        self.progress = progress
        self.watchdog = watchdog
        generator = SeededGenerator(seed: seed)
    }

    /// Runs one comparison of `arms` in paired rounds within `weight`'s share of the budget.
    /// `reference` is measured twice a round (nil: no twin, no verdicts); `setUp` runs once the
    /// share is allotted, before the first round; `title` names an arm on the progress line.
    /// `measure` returns nil for a measurement that failed (the section says why) and throws
    /// to end the comparison at once (the error is `failure`; the cut round keeps its noise).
    /// `widestInterval`, after each round, gives the widest relative half-width among the
    /// intervals that decide the stop (nil while there is none); throwing ends the rounds.
    func run<Arm: Hashable, Measurement>(
        _ name: String, arms: [Arm], reference: Arm?, weight: Double, setUp: () -> Void = {},
        title: (Arm) -> String, measure: (RoundDraw<Arm>) throws -> Measurement?,
        widestInterval: (PairedRounds<Arm, Measurement>) throws -> Double?
    ) -> PairedRounds<Arm, Measurement> {
        let share = budget.allot(weight)
        let started = now()
        setUp()
        var rounds = PairedRounds<Arm, Measurement>(arms: arms, reference: reference)
        // The arms of a round, in a fixed order that the generator then shuffles.
        let draws = arms.map { ($0, false) } + (reference.map { [($0, true)] } ?? [])
        var lastRound: UInt64 = 0
        var widest: Double?
        while rounds.failure == nil,
            stopping.wantsAnotherRound(
                rounds: rounds.count, widestHalfWidth: widest, elapsed: now() &- started, share: share,
                lastRound: lastRound, budget: budget
            )
        {
            let roundStart = now()
            let before = NoiseProbe.read()
            let round = rounds.count
            for (arm, isTwin) in draws.shuffled(using: &generator) {
                let label = "\(title(arm))\(isTwin ? " (twin)" : ""), round \(round + 1)"
                step("\(name): \(label)", widest: widest)
                do {
                    let draw = RoundDraw(arm: arm, isTwin: isTwin, round: round, label: label)
                    if let value = try measure(draw) { rounds.record(draw, value) }
                } catch {
                    rounds.failure = error
                    break
                }
            }
            rounds.noise.append(NoiseProbe.between(before, NoiseProbe.read()))
            lastRound = now() &- roundStart
            if rounds.failure != nil { break }
            do { widest = try widestInterval(rounds) } catch { rounds.failure = error }
        }
        NoiseProbe.flagPreemption(&rounds.noise)
        return rounds
    }

    /// With the process as the unit: runs `count` replicas of one comparison (child processes
    /// with rounds of their own) one after the other within `weight`'s share, each given an
    /// equal part of what is left of it (at least 1 s; 60 s without a limit). Stops at the
    /// first that throws, and returns the results so far with that error.
    func replicas<Replica>(
        _ name: String, count: Int, weight: Double, run: (_ replica: Int, _ seconds: Double) throws -> Replica
    ) -> (results: [Replica], failure: (any Error)?) {
        let share = budget.allot(weight)
        let started = now()
        var results: [Replica] = []
        for replica in 0..<count {
            let elapsed = now() &- started
            let left = share == .max ? 60 : Double(share > elapsed ? share - elapsed : 0) / 1e9
            let seconds = max(1, left / Double(count - replica))
            step("\(name): process \(replica + 1)/\(count)", widest: nil)
            do {
                results.append(try run(replica, seconds))
            } catch {
                return (results, error)
            }
        }
        return (results, nil)
    }

    /// Tells the watchdog that `text` runs, and shows it on the progress line with
    /// ", widest interval ±4.2%, 310 s left".
    private func step(_ text: String, widest: Double?) {
        watchdog.beat(text)
        var line = text
        if let widest { line += ", widest interval \(widest.plusMinusPercent)" }
        if let left = budget.secondsLeft { line += ", \(left.fixed(0)) s left" }
        progress.update(line)
    }
}

/// One measurement the scheduler asks a section for.
struct RoundDraw<Arm> {
    var arm: Arm
    /// Whether this is the reference's second measurement in the round (for the A/A).
    var isTwin: Bool
    /// The round, from 0.
    var round: Int
    /// "the reference's title (twin), round 3", for the section's log lines.
    var label: String
}

/// A metric that judges a comparison, and how to read it from one measurement (nil: this
/// measurement has no value for it).
struct JudgedMetric<Measurement> {
    var metric: Metric
    var value: (Measurement) -> Double?

    init(_ metric: Metric, _ value: @escaping (Measurement) -> Double?) {
        self.metric = metric
        self.value = value
    }
}

/// The rounds of one comparison: every measurement, each round's noise, and the pairing of
/// each arm with the reference in the rounds where both were measured.
struct PairedRounds<Arm: Hashable, Measurement> {
    /// Which measurement: an arm's (its twin's when `isTwin`) in one round.
    struct Key: Hashable {
        var arm: Arm
        var isTwin: Bool
        var round: Int
    }

    let arms: [Arm]
    let reference: Arm?
    /// Every measurement, in the order taken.
    private(set) var measurements: [(key: Key, value: Measurement)] = []
    /// Each round's noise, in order; pre-emption is flagged once the rounds end.
    var noise: [RoundNoise] = []
    /// What ended the rounds early (a `measure` or `widestInterval` that threw), if anything.
    var failure: (any Error)?
    private var positions: [Key: Int] = [:]

    init(arms: [Arm], reference: Arm?) {
        self.arms = arms
        self.reference = reference
    }

    /// Rounds taken (the last may have been cut short by `failure`).
    var count: Int { noise.count }

    mutating func record(_ draw: RoundDraw<Arm>, _ value: Measurement) {
        let key = Key(arm: draw.arm, isTwin: draw.isTwin, round: draw.round)
        positions[key] = measurements.count
        measurements.append((key, value))
    }

    /// What `arm` (its twin when `twin`) measured in `round`, if it was measured.
    func value(of arm: Arm, twin: Bool = false, inRound round: Int) -> Measurement? {
        positions[Key(arm: arm, isTwin: twin, round: round)].map { measurements[$0].value }
    }

    /// `subject` against the reference on `value`, in every round where both have a value
    /// (with the reference's twin, when it has one), contaminated rounds marked. For the
    /// reference itself, these are the A/A's values.
    func paired(_ subject: Arm, _ value: (Measurement) -> Double?) -> PairedValues {
        guard let reference else { return PairedValues() }
        return paired(subject, value, against: reference, value, twin: true)
    }

    /// `subject`'s `subjectValue` against `peer`'s `peerValue` (the same reading, unless the
    /// comparison sets two loads side by side), in every round where both have one, with the
    /// peer's twin only when `twin`, contaminated rounds marked.
    func paired(
        _ subject: Arm, _ subjectValue: (Measurement) -> Double?, against peer: Arm,
        _ peerValue: (Measurement) -> Double?, twin: Bool = false
    ) -> PairedValues {
        var paired = PairedValues()
        for round in 0..<count {
            guard let s = value(of: subject, inRound: round).flatMap(subjectValue),
                let p = value(of: peer, inRound: round).flatMap(peerValue)
            else { continue }
            let twinValue = twin ? value(of: peer, twin: true, inRound: round).flatMap(peerValue) : nil
            paired.append(round: round, subject: s, peer: p, twin: twinValue)
        }
        paired.markContaminated(noise)
        return paired
    }

    /// The widest relative half-width among the subjects' intervals on `metric` (nil before
    /// any has two rounds): what `StoppingRule` compares with its target.
    func widestHalfWidth(_ metric: JudgedMetric<Measurement>) -> Double? {
        arms.filter { $0 != reference }.compactMap { arm in
            let logRatios = paired(arm, metric.value).logRatios(lowerIsBetter: metric.metric.lowerIsBetter)
            return PairedStatistics.estimate(logRatios: logRatios)?.relativeHalfWidth
        }.max()
    }

    /// Every arm against the reference on each of `metrics`: the metric's A/A row (the
    /// reference against its twin) first, whose noise threshold judges that metric's rows.
    /// A subject with no value on a metric has no row, and a metric no subject has a value
    /// on has none at all; no reference, no rows. With `comparison` and `id`, each row carries
    /// its key (`VerdictKey`: the comparison, the arms' and the metric's identifiers).
    func verdicts(
        section: Section, name: String, title: (Arm) -> String, metrics: [JudgedMetric<Measurement>],
        comparison: String? = nil, id: ((Arm) -> String)? = nil
    ) -> [VerdictRow] {
        guard let reference else { return [] }
        var rows: [VerdictRow] = []
        for judged in metrics {
            let subjects = arms.filter { $0 != reference }.map { ($0, paired($0, judged.value)) }
                .filter { !$0.1.subject.isEmpty }
            guard !subjects.isEmpty else { continue }
            func key(_ arm: Arm) -> VerdictKey? {
                guard let comparison, let id else { return nil }
                return VerdictKey(
                    section: section, comparison: comparison, arm: id(arm), baseline: id(reference),
                    metric: judged.metric.key)
            }
            let aa = Verdicts.aa(
                section: section, name: name, peer: title(reference), metric: judged.metric,
                paired(reference, judged.value), key: key(reference)
            )
            if let aa { rows.append(aa) }
            rows += subjects.map { subject, values in
                Verdicts.row(
                    section: section, name: name, subject: title(subject), peer: title(reference),
                    metric: judged.metric, values, threshold: aa?.noiseThreshold, key: key(subject))
            }
        }
        return rows
    }
}

extension VerdictKey {
    /// The key of `arm` against `baseline` (a raw value) on `metric` in `section`'s `comparison`.
    init<Arm: RawRepresentable>(
        _ section: Section, _ comparison: String, _ arm: Arm, _ baseline: String, _ metric: Metric
    ) where Arm.RawValue == String {
        self.init(section: section, comparison: comparison, arm: arm.rawValue, baseline: baseline, metric: metric.key)
    }
}

extension SectionContext {
    /// A section's scheduler on this run's budget, progress and watchdog, seeded `seedOffset` past the run's seed.
    func scheduler(_ stopping: StoppingRule, seedOffset: UInt64) -> RoundScheduler {
        RoundScheduler(
            budget: budget, stopping: stopping, seed: seed &+ seedOffset, progress: progress, watchdog: watchdog)
    }
}
