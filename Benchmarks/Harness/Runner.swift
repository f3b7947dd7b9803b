import Foundation
import BenchmarkStatistics

/// How long each sample lasts and when comparisons stop.
struct RunSettings: Sendable {
    /// What one sample should last; the runner picks the iteration count to match.
    var sampleNanoseconds: UInt64
    /// Operations per sample for every scenario that does not fix its own, instead of
    /// calibrating (for profilers, where time is distorted).
    var fixedIterations: Int? = nil
    /// When a comparison stops taking rounds.
    var stopping: StoppingRule
    /// The seed of the rounds' random orders (printed in the report, so a run's orders can be
    /// replayed).
    var seed: UInt64
}

/// The outcome of one scenario within a comparison.
struct EntryResult {
    var name: String
    var subject: Subject
    var unit: String
    var expectedAllocations: String
    var isReference: Bool
    /// Every measured sample (the reference's include its twin's).
    var samples: [Sample]
    var error: String?

    var medianNanosecondsPerOperation: Double? { median(samples.map(\.nanosecondsPerOperation)) }
    var minimumNanosecondsPerOperation: Double? { samples.map(\.nanosecondsPerOperation).min() }
    var maximumNanosecondsPerOperation: Double? { samples.map(\.nanosecondsPerOperation).max() }
    var medianAllocationsPerOperation: Double? { median(samples.map(\.allocationsPerOperation)) }
    var medianInstructionsPerOperation: Double? { median(samples.compactMap(\.instructionsPerOperation)) }
    var medianCyclesPerOperation: Double? { median(samples.compactMap(\.cyclesPerOperation)) }
    /// Latency over every measured sample of this entry (executor scenarios).
    var latency: LatencySummary?
}

/// The outcome of one comparison: every entry, the verdicts on each judged metric (with the
/// A/A rows), and the noise of each round.
struct ComparisonResult {
    var group: String
    var operation: String
    var producers: Int?
    var entries: [EntryResult]
    var referenceIndex: Int?
    var verdicts: [VerdictRow] = []
    var noise: [RoundNoise] = []

    var reference: EntryResult? { referenceIndex.map { entries[$0] } }

    /// What one operation is in this comparison ("op", "link", …).
    var unit: String { entries.first?.unit ?? "op" }

    /// The verdict of the entry named `name` on `metric` (the first judged metric when nil).
    func verdict(for name: String, metric: String? = nil) -> VerdictRow? {
        verdicts.first { !$0.isAA && $0.subject == name && (metric == nil || $0.metric == metric) }
    }
}

/// Runs comparisons in paired rounds. After set-up, calibration (which warms up) and one
/// more warm-up sample of every entry, each round measures every entry once and the
/// reference twice, in an order drawn at random for that round, so that each subject meets
/// its peer under the same conditions and slow drift on a shared machine favours nobody.
/// The rounds go on until every subject's interval is narrower than the target, or the
/// comparison's share of the budget is spent.
final class Runner {
    let settings: RunSettings
    let progress: Progress
    let watchdog: Watchdog
    let budget: Budget
    private var generator: SeededGenerator

    init(settings: RunSettings, progress: Progress, watchdog: Watchdog, budget: Budget) {
        self.settings = settings
        self.progress = progress
        self.watchdog = watchdog
        self.budget = budget
        generator = SeededGenerator(seed: settings.seed)
    }

    /// Shows `text` on the progress line and tells the watchdog that work goes on.
    private func step(_ text: String) {
        watchdog.beat(text)
        progress.update(text)
    }

    /// The metrics judged in `section`: the first decides when to stop.
    static func metrics(for section: Section) -> [(Metric, (Sample) -> Double?)] {
        switch section {
        case .paced:
            return [
                (Metric(title: "p99 hand-off latency", unit: "ns", lowerIsBetter: true), { $0.latency.map { Double($0.p99) } }),
                (Metric(title: "round trip per job", unit: "ns", lowerIsBetter: true), { $0.nanosecondsPerOperation }),
            ]
        case .executors:
            return [(Metric(title: "time per job (throughput)", unit: "ns", lowerIsBetter: true), { $0.nanosecondsPerOperation })]
        default:
            return [(Metric(title: "time per operation", unit: "ns", lowerIsBetter: true), { $0.nanosecondsPerOperation })]
        }
    }

    func run(_ comparison: Comparison, section: Section, weight: Double) -> ComparisonResult {
        let share = budget.allot(weight)
        let started = now()
        var results = comparison.entries.enumerated().map { index, entry in
            EntryResult(
                name: entry.scenario.name,
                subject: entry.scenario.subject,
                unit: entry.scenario.unit,
                expectedAllocations: entry.scenario.expectedAllocations,
                isReference: index == comparison.referenceIndex,
                samples: [],
                error: nil
            )
        }
        var iterations = [Int](repeating: 0, count: comparison.entries.count)
        for (index, entry) in comparison.entries.enumerated() {
            let scenario = entry.scenario
            step("\(comparison.operation): \(scenario.name): set-up and calibration")
            do {
                try scenario.setUp()
                iterations[index] = try calibrate(scenario, section: section)
                step("\(comparison.operation): \(scenario.name): warm-up")
                _ = try scenario.run(iterations: iterations[index])
                (scenario as? LatencyRecording)?.resetLatencies()
            } catch {
                results[index].error = String(describing: error)
            }
        }

        let metrics = Self.metrics(for: section)
        let reference = comparison.referenceIndex
        // One PairedValues per subject and metric; subjects are every entry but the reference.
        let subjects = comparison.entries.indices.filter { $0 != reference }
        var values = [[PairedValues]](
            repeating: [PairedValues](repeating: PairedValues(), count: metrics.count),
            count: comparison.entries.count
        )
        var noise: [RoundNoise] = []
        var lastRound: UInt64 = 0
        var widest: Double?
        // The arms of a round: every entry, and the reference a second time (its twin, -1).
        let arms = comparison.entries.indices.map { $0 } + (reference == nil ? [] : [-1])
        while settings.stopping.wantsAnotherRound(
            rounds: noise.count, widestHalfWidth: widest, elapsed: now() &- started, share: share,
            lastRound: lastRound, budget: budget
        ) {
            let roundStart = now()
            let before = NoiseProbe.read()
            var measured: [Int: Sample] = [:]
            var failed = false
            for arm in arms.shuffled(using: &generator) {
                let index = arm < 0 ? reference! : arm
                guard results[index].error == nil else {
                    failed = true
                    continue
                }
                let scenario = comparison.entries[index].scenario
                step(
                    "\(comparison.operation): \(scenario.name)\(arm < 0 ? " (twin)" : ""): round \(noise.count + 1)"
                        + progressSuffix(widest: widest)
                )
                do {
                    let counters = PerfCounters.read()
                    var sample = try scenario.run(iterations: iterations[index])
                    if let counters, let after = PerfCounters.read() {
                        sample.instructions = after.0 &- counters.0
                        sample.cycles = after.1 &- counters.1
                    }
                    results[index].samples.append(sample)
                    measured[arm] = sample
                } catch {
                    results[index].error = String(describing: error)
                    failed = true
                }
            }
            let roundNoise = NoiseProbe.between(before, NoiseProbe.read())
            noise.append(roundNoise)
            lastRound = now() &- roundStart
            if failed && subjects.allSatisfy({ results[$0].error != nil }) { break }
            guard let reference, let peerSample = measured[reference] else { continue }
            let twinFirst = Bool.random(using: &generator)
            for subject in subjects {
                guard let subjectSample = measured[subject] else { continue }
                for (metricIndex, (_, extract)) in metrics.enumerated() {
                    guard let s = extract(subjectSample), let p = extract(peerSample) else { continue }
                    values[subject][metricIndex].subject.append(s)
                    values[subject][metricIndex].peer.append(p)
                    values[subject][metricIndex].twin.append(measured[-1].flatMap(extract) ?? 0)
                    values[subject][metricIndex].twinFirst.append(twinFirst)
                    values[subject][metricIndex].round.append(noise.count - 1)
                }
            }
            widest = subjects.compactMap { subject in
                PairedStatistics.estimate(logRatios: values[subject][0].logRatios(lowerIsBetter: metrics[0].0.lowerIsBetter))?
                    .relativeHalfWidth
            }.max()
        }
        for (index, entry) in comparison.entries.enumerated() {
            do {
                try entry.scenario.tearDown()
            } catch {
                if results[index].error == nil { results[index].error = String(describing: error) }
            }
            if let recorder = entry.scenario as? LatencyRecording {
                results[index].latency = recorder.latencySummary()
            }
        }
        NoiseProbe.flagPreemption(&noise)
        for entry in values.indices {
            for metric in values[entry].indices { values[entry][metric].markContaminated(noise) }
        }

        var verdicts: [VerdictRow] = []
        if let reference {
            let name = comparison.operation
            for (metricIndex, (metric, _)) in metrics.enumerated() {
                // Every subject shares the peer's rounds; the A/A comes from the first subject's
                // record of them (each round records peer and twin once per subject, alike).
                guard let first = subjects.first(where: { !values[$0][metricIndex].subject.isEmpty }) else { continue }
                let peerValues = values[first][metricIndex]
                let aa = Verdicts.aa(
                    section: section, name: name, peer: results[reference].name, metric: metric, peerValues
                )
                if let aa { verdicts.append(aa) }
                for subject in subjects where !values[subject][metricIndex].subject.isEmpty {
                    verdicts.append(
                        Verdicts.row(
                            section: section, name: name, subject: results[subject].name,
                            peer: results[reference].name, metric: metric, values[subject][metricIndex],
                            threshold: aa?.noiseThreshold
                        )
                    )
                }
            }
        }
        return ComparisonResult(
            group: comparison.group,
            operation: comparison.operation,
            producers: comparison.producers,
            entries: results,
            referenceIndex: comparison.referenceIndex,
            verdicts: verdicts,
            noise: noise
        )
    }

    private func progressSuffix(widest: Double?) -> String {
        var text = ""
        if let widest { text += String(format: ", widest interval ±%.1f%%", widest * 100) }
        if let left = budget.secondsLeft { text += String(format: ", %.0f s left", left) }
        return text
    }

    /// Picks the iteration count for a sample of about `settings.sampleNanoseconds`: grows
    /// it until a run lasts an eighth of that, then scales. These runs warm the scenario up.
    /// The paced hand-off's samples last 2.5× as long: each gives a p99, which needs jobs.
    private func calibrate(_ scenario: any Scenario, section: Section) throws -> Int {
        if let fixed = scenario.fixedIterations ?? settings.fixedIterations { return fixed }
        let target = Double(settings.sampleNanoseconds) * (section == .paced ? 2.5 : 1)
        var iterations = max(scenario.initialIterations, 1)
        while true {
            let sample = try scenario.run(iterations: iterations)
            let elapsed = Double(max(sample.nanoseconds, 1))
            if elapsed >= target / 8 || iterations >= 1 << 28 {
                return max(1, min(1 << 30, Int((Double(iterations) * target / elapsed).rounded())))
            }
            iterations *= elapsed < target / 512 ? 16 : 4
        }
    }
}

/// Scenarios that record hand-off latencies across their samples.
protocol LatencyRecording {
    /// Forgets what calibration and warm-up recorded.
    func resetLatencies()
    /// Percentiles over everything recorded since the last reset.
    func latencySummary() -> LatencySummary?
}

/// The median of `values` (the mean of the middle two for an even count); nil when empty.
func median(_ values: [Double]) -> Double? {
    guard !values.isEmpty else { return nil }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}
