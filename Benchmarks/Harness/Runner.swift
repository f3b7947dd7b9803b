import BenchmarkStatistics
import Foundation

/// How long each sample lasts and when comparisons stop.
struct RunSettings: Sendable {
    /// What one sample should last; the runner picks the iteration count to match.
    var sampleNanoseconds: UInt64
    /// Operations per sample for every scenario that does not fix its own, instead of
    /// calibrating (for profilers, where time is distorted).
    var fixedIterations: Int? = nil
    /// When a comparison stops taking rounds.
    var stopping: StoppingRule
    /// The seed of the rounds' random orders (in the report, so a run's orders can be replayed).
    var seed: UInt64
}

/// The outcome of one scenario within a comparison.
struct EntryResult: Codable {
    var name: String
    /// Its identifier in verdict keys (`Comparison.Entry.id`).
    var id: String
    var subject: Subject
    var unit: String
    var expectedAllocations: String
    var isReference: Bool
    /// Every measured sample (the reference's include its twin's).
    var samples: [Sample]
    var error: String?
    /// Latency over every measured sample of this entry (executor scenarios).
    var latency: LatencySummary?

    var medianNanosecondsPerOperation: Double? { median(samples.map(\.nanosecondsPerOperation)) }
    var medianAllocationsPerOperation: Double? { median(samples.map(\.allocationsPerOperation)) }
    var medianInstructionsPerOperation: Double? { median(samples.compactMap(\.instructionsPerOperation)) }
}

/// The outcome of one comparison: every entry, the verdicts on each judged metric (with the
/// A/A rows), and the noise of each round.
struct ComparisonResult: Codable {
    var group: String
    var section: Section
    var operation: String
    var producers: Int?
    var entries: [EntryResult]
    var referenceIndex: Int?
    var verdicts: [VerdictRow] = []
    var noise: [RoundNoise] = []

    var reference: EntryResult? { referenceIndex.map { entries[$0] } }

    /// `comparison` before anything is measured: its entries without samples, each failed with
    /// `error` if given.
    init(_ comparison: Comparison, error: String? = nil) {
        group = comparison.group
        section = comparison.section
        operation = comparison.operation
        producers = comparison.producers
        referenceIndex = comparison.referenceIndex
        entries = comparison.entries.enumerated().map { index, entry in
            let scenario = entry.scenario
            return EntryResult(
                name: scenario.name, id: entry.id, subject: scenario.subject, unit: scenario.unit,
                expectedAllocations: scenario.expectedAllocations, isReference: index == comparison.referenceIndex,
                samples: [], error: error
            )
        }
    }
}

/// Runs the in-process comparisons: set-up, calibration (which warms up) and one more
/// warm-up sample of every entry, then the paired rounds of `RoundScheduler`, the tear-downs,
/// and the verdicts on the section's metrics.
final class Runner {
    let settings: RunSettings
    /// The rounds of every comparison this runner runs, from `settings.seed`.
    let scheduler: RoundScheduler
    var watchdog: Watchdog { scheduler.watchdog }

    init(settings: RunSettings, progress: Progress, watchdog: Watchdog, budget: Budget) {
        self.settings = settings
        scheduler = RoundScheduler(
            budget: budget, stopping: settings.stopping, seed: settings.seed, progress: progress, watchdog: watchdog)
    }

    /// Runs `comparison` within `weight`'s share of the budget, set-up and calibration included.
    func run(_ comparison: Comparison, weight: Double) -> ComparisonResult {
        var result = ComparisonResult(comparison)
        var iterations = [Int](repeating: 0, count: comparison.entries.count)
        func setUp() {
            for (index, entry) in comparison.entries.enumerated() {
                let scenario = entry.scenario
                step("\(comparison.operation): \(scenario.name): set-up and calibration")
                do {
                    try scenario.setUp()
                    iterations[index] = try calibrate(scenario, scale: comparison.sampleScale)
                    step("\(comparison.operation): \(scenario.name): warm-up")
                    _ = try scenario.run(iterations: iterations[index])
                    (scenario as? LatencyRecording)?.resetLatencies()
                } catch {
                    result.entries[index].error = String(describing: error)
                }
            }
        }

        let metrics = comparison.metrics
        let subjects = comparison.entries.indices.filter { $0 != comparison.referenceIndex }
        let rounds = scheduler.run(
            comparison.operation, arms: Array(comparison.entries.indices), reference: comparison.referenceIndex,
            weight: weight, setUp: setUp, title: { result.entries[$0].name },
            measure: { draw -> Sample? in
                // An entry that failed is not run again.
                guard result.entries[draw.arm].error == nil else { return nil }
                do {
                    let counters = PerfCounters.read()
                    var sample = try comparison.entries[draw.arm].scenario.run(iterations: iterations[draw.arm])
                    if let counters, let after = PerfCounters.read() {
                        sample.instructions = after.0 &- counters.0
                        sample.cycles = after.1 &- counters.1
                    }
                    result.entries[draw.arm].samples.append(sample)
                    return sample
                } catch {
                    result.entries[draw.arm].error = String(describing: error)
                    return nil
                }
            },
            widestInterval: { rounds in
                if !subjects.isEmpty, subjects.allSatisfy({ result.entries[$0].error != nil }) {
                    throw EverySubjectFailed()
                }
                return rounds.widestHalfWidth(metrics[0])
            }
        )
        for (index, entry) in comparison.entries.enumerated() {
            do {
                try entry.scenario.tearDown()
            } catch {
                if result.entries[index].error == nil { result.entries[index].error = String(describing: error) }
            }
            result.entries[index].latency = (entry.scenario as? LatencyRecording)?.latencySummary()
        }
        result.verdicts = rounds.verdicts(
            section: comparison.section, name: comparison.operation, title: { result.entries[$0].name },
            metrics: metrics, comparison: comparison.id, id: { comparison.entries[$0].id }
        )
        result.noise = rounds.noise
        return result
    }

    /// Shows `text` on the progress line and tells the watchdog that work goes on.
    private func step(_ text: String) {
        watchdog.beat(text)
        scheduler.progress.update(text)
    }

    /// Picks the iteration count for a sample of about `settings.sampleNanoseconds`: grows
    /// it until a run lasts an eighth of that, then scales. These runs warm the scenario up.
    /// `scale` (`Comparison.sampleScale`) lengthens the target.
    private func calibrate(_ scenario: any Scenario, scale: Double) throws -> Int {
        if let fixed = scenario.fixedIterations ?? settings.fixedIterations { return fixed }
        let target = Double(settings.sampleNanoseconds) * scale
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

/// Ends a comparison's rounds once every subject has failed.
private struct EverySubjectFailed: Error {}
