/// How long and how often to measure.
struct RunSettings: Sendable {
    /// Measured samples per scenario (the median of these is reported).
    var repetitions: Int
    /// What one sample should last; the runner picks the iteration count to match.
    var sampleNanoseconds: UInt64
    /// Operations per sample for every scenario that does not fix its own, instead of
    /// calibrating (for profilers, where time is distorted).
    var fixedIterations: Int? = nil
}

/// The outcome of one scenario within a comparison.
struct EntryResult {
    var name: String
    var subject: Subject
    var unit: String
    var expectedAllocations: String
    var isReference: Bool
    var samples: [Sample]
    var error: String?

    var medianNanosecondsPerOperation: Double? { median(samples.map(\.nanosecondsPerOperation)) }
    var minimumNanosecondsPerOperation: Double? { samples.map(\.nanosecondsPerOperation).min() }
    var maximumNanosecondsPerOperation: Double? { samples.map(\.nanosecondsPerOperation).max() }
    var medianAllocationsPerOperation: Double? { median(samples.map(\.allocationsPerOperation)) }
    /// Latency over every measured sample of this entry (executor scenarios).
    var latency: LatencySummary?
}

/// The outcome of one comparison: every entry, with ratios to the reference.
struct ComparisonResult {
    var group: String
    var operation: String
    var producers: Int?
    var entries: [EntryResult]
    var referenceIndex: Int?

    var reference: EntryResult? { referenceIndex.map { entries[$0] } }

    /// What one operation is in this comparison ("op", "link", …).
    var unit: String { entries.first?.unit ?? "op" }

    /// `entry`'s median time per operation over the reference's (lower is faster).
    func timeRatio(_ entry: EntryResult) -> Double? {
        guard let mine = entry.medianNanosecondsPerOperation,
            let theirs = reference?.medianNanosecondsPerOperation, theirs > 0
        else { return nil }
        return mine / theirs
    }
}

/// Runs comparisons: set-up, calibration (which warms up), one more warm-up sample, then
/// the measured repetitions with the entries interleaved (each round starts with a
/// different entry, so slow drift on a shared machine does not favour one of them), then
/// tear-down.
final class Runner {
    let settings: RunSettings
    let progress: Progress
    let watchdog: Watchdog

    init(settings: RunSettings, progress: Progress, watchdog: Watchdog) {
        self.settings = settings
        self.progress = progress
        self.watchdog = watchdog
    }

    /// Shows `text` on the progress line and tells the watchdog that work goes on.
    private func step(_ text: String) {
        watchdog.beat(text)
        progress.update(text)
    }

    func run(_ comparison: Comparison) -> ComparisonResult {
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
                iterations[index] = try calibrate(scenario)
                step("\(comparison.operation): \(scenario.name): warm-up")
                _ = try scenario.run(iterations: iterations[index])
                (scenario as? LatencyRecording)?.resetLatencies()
            } catch {
                results[index].error = String(describing: error)
            }
        }
        for round in 0..<settings.repetitions {
            for offset in 0..<comparison.entries.count {
                let index = (round + offset) % comparison.entries.count
                guard results[index].error == nil else { continue }
                let scenario = comparison.entries[index].scenario
                step(
                    "\(comparison.operation): \(scenario.name): sample \(round + 1)/\(settings.repetitions)"
                )
                do {
                    results[index].samples.append(try scenario.run(iterations: iterations[index]))
                } catch {
                    results[index].error = String(describing: error)
                }
            }
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
        return ComparisonResult(
            group: comparison.group,
            operation: comparison.operation,
            producers: comparison.producers,
            entries: results,
            referenceIndex: comparison.referenceIndex
        )
    }

    /// Picks the iteration count for a sample of about `settings.sampleNanoseconds`: grows
    /// it until a run lasts an eighth of that, then scales. These runs warm the scenario up.
    private func calibrate(_ scenario: any Scenario) throws -> Int {
        if let fixed = scenario.fixedIterations ?? settings.fixedIterations { return fixed }
        let target = Double(settings.sampleNanoseconds)
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
