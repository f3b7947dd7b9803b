import BenchmarkStatistics
import Foundation

/// Comparisons whose variance lives between processes: where an executor's threads land on
/// the CPUs is decided when they start and holds for the process's life, so two processes of
/// the same code can put the same paired ratio on opposite sides of 1, each with a tight
/// interval of its own. The executor sections, and the task operations whose work hops
/// between threads, therefore run each comparison in several child processes of this
/// benchmark, one after the other, each in paired rounds; a comparison's interval is then
/// Student's t interval over the processes' mean log ratios (the process is the unit), and
/// its A/A the same over the processes' A/A means.
enum ProcessReplicas {
    /// What a child sends back: its comparison's entries (every sample) and its verdict rows
    /// (each with its rounds' log ratios), and each round's noise.
    struct ChildResult: Codable {
        struct Entry: Codable {
            var name: String
            var subject: Subject
            var unit: String
            var expectedAllocations: String
            var isReference: Bool
            var samples: [Sample]
            var error: String?
            var latency: LatencySummary?
        }

        var entries: [Entry]
        var verdicts: [VerdictRow]
        var noise: [RoundNoise]
    }

    /// The child's main: runs comparison `index` of `comparisons` for `seconds` (its share)
    /// in paired rounds and prints a `ChildResult` as one JSON line.
    static func runChild(
        _ comparisons: [Comparison],
        index: Int,
        seconds: Double,
        settings: RunSettings
    ) throws -> Never {
        guard comparisons.indices.contains(index) else {
            writeError("no comparison \(index)\n")
            exit(64)
        }
        let comparison = comparisons[index]
        let budget = Budget(seconds: seconds, totalWeight: 1)
        let progress = Progress(budget: nil)
        let runner = Runner(settings: settings, progress: progress, watchdog: Watchdog(limitSeconds: 300), budget: budget)
        let result = runner.run(comparison, weight: 1)
        progress.finish()
        let child = ChildResult(
            entries: result.entries.map {
                .init(
                    name: $0.name, subject: $0.subject, unit: $0.unit, expectedAllocations: $0.expectedAllocations,
                    isReference: $0.isReference, samples: $0.samples, error: $0.error, latency: $0.latency
                )
            },
            verdicts: result.verdicts,
            noise: result.noise
        )
        print(String(decoding: try JSONCoding.encoder().encode(child), as: UTF8.self))
        exit(0)
    }

    /// Runs each of `comparisons` (the list that children of `kind` build, in its order) as
    /// `run` does, comparison `index` with seed `context.seed &+ seedSpacing × (index + 1)`,
    /// moving `context`'s progress line on before each and logging its verdicts after.
    static func runEach(
        _ comparisons: [Comparison],
        kind: ChildKind,
        processes: Int,
        arguments: [String],
        seedSpacing: Int,
        weight: (Comparison) -> Double,
        context: SectionContext
    ) -> [ComparisonResult] {
        comparisons.enumerated().map { index, comparison in
            context.progress.next("\(comparison.group): \(comparison.operation)")
            let result = run(
                comparison, kind: kind, index: index, processes: processes, arguments: arguments,
                seed: context.seed &+ UInt64(seedSpacing * (index + 1)), weight: weight(comparison),
                scheduler: context.runner.scheduler
            )
            context.progress.log(verdicts: result.verdicts)
            return result
        }
    }

    /// Runs comparison `index` (of the list that children of `kind` build) in `processes`
    /// children, one after the other, within `weight`'s share of the budget of `scheduler`
    /// (`RoundScheduler.replicas`), and merges what they measured.
    static func run(
        _ comparison: Comparison,
        kind: ChildKind,
        index: Int,
        processes: Int,
        arguments: [String],
        seed: UInt64,
        weight: Double,
        scheduler: RoundScheduler
    ) -> ComparisonResult {
        let (children, failure) = scheduler.replicas(comparison.operation, count: processes, weight: weight) {
            process, seconds in
            let data = try runBenchmarkChild(
                kind.arguments + ["--comparison-index", "\(index)",
                 "--comparison-seconds", seconds.fixed(3),
                 "--seed", "\(seed &+ UInt64(process))"] + arguments
            )
            return try JSONCoding.decoder().decode(ChildResult.self, from: data)
        }
        return merge(comparison, children, failure: failure.map { "\($0)" })
    }

    /// One comparison from its processes: entries with every sample, and verdict rows whose
    /// estimate is over the processes' mean log ratios.
    static func merge(_ comparison: Comparison, _ children: [ChildResult], failure: String?) -> ComparisonResult {
        var entries = comparison.entries.enumerated().map { index, entry in
            EntryResult(
                name: entry.scenario.name, subject: entry.scenario.subject, unit: entry.scenario.unit,
                expectedAllocations: entry.scenario.expectedAllocations, isReference: index == comparison.referenceIndex,
                samples: [], error: failure
            )
        }
        for child in children {
            for entry in child.entries {
                guard let index = entries.firstIndex(where: { $0.name == entry.name }) else { continue }
                entries[index].samples += entry.samples
                if entries[index].error == nil { entries[index].error = entry.error }
                // Percentiles do not merge; the report shows the first process's.
                if entries[index].latency == nil { entries[index].latency = entry.latency }
            }
        }
        var rows: [VerdictRow] = []
        let first = children.first?.verdicts ?? []
        // The A/A rows first: their thresholds judge the subjects' rows of the same metric.
        var thresholds: [String: Double] = [:]
        for template in first.sorted(by: { $0.isAA && !$1.isAA }) {
            let perProcess = children.compactMap { child in
                child.verdicts.first { row in
                    guard row.isAA == template.isAA else { return false }
                    if let key = template.key { return row.key == key }
                    return row.subject == template.subject && row.metric == template.metric
                }
            }
            let means = perProcess.compactMap { row -> Double? in
                row.logRatios.isEmpty ? nil : row.logRatios.reduce(0, +) / Double(row.logRatios.count)
            }
            let estimate = PairedStatistics.estimate(logRatios: means)
            var row = template
            row.ratio = estimate?.ratio ?? means.first.map { exp($0) }
            row.interval95 = estimate.map { [$0.low, $0.high] }
            row.rounds = perProcess.reduce(0) { $0 + $1.rounds }
            row.processes = means.count
            row.roundsToDecide = nil  // the process is the unit: more rounds would not narrow it
            row.processMeans = means
            row.contaminatedRounds = perProcess.reduce(0) { $0 + $1.contaminatedRounds }
            row.logRatios = perProcess.flatMap(\.logRatios)
            row.subjectValue = geometricMean(perProcess.compactMap(\.subjectValue))
            row.peerValue = geometricMean(perProcess.compactMap(\.peerValue))
            if template.isAA {
                let threshold = PairedStatistics.noiseThreshold(aa: estimate)
                row.noiseThreshold = threshold.isFinite ? threshold : nil
                thresholds[template.metric] = row.noiseThreshold
                row.verdict = PairedStatistics.verdict(estimate, threshold: threshold)
            } else {
                row.noiseThreshold = thresholds[template.metric]
                row.verdict = PairedStatistics.verdict(estimate, threshold: row.noiseThreshold ?? .infinity)
            }
            rows.append(row)
        }
        return ComparisonResult(
            group: comparison.group, section: comparison.section, operation: comparison.operation, producers: comparison.producers,
            entries: entries, referenceIndex: comparison.referenceIndex, verdicts: rows,
            noise: children.flatMap(\.noise)
        )
    }
}
