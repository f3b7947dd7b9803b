import BenchmarkStatistics
import Foundation

/// Comparisons whose variance lives between processes (where threads land on the CPUs holds
/// for a process's life, so two processes can put the same ratio on opposite sides of 1, each
/// tightly): each runs in several child processes, one after the other, in paired rounds, and
/// its interval (and its A/A's) is Student's t over the processes' mean log ratios.
enum ProcessReplicas {
    /// The child's main: runs comparison `index` of `comparisons` for `seconds` (its share)
    /// in paired rounds and prints its `ComparisonResult` (every sample, the verdict rows with
    /// their rounds' log ratios, each round's noise) as one JSON line.
    static func runChild(
        _ comparisons: [Comparison], index: Int, seconds: Double, settings: RunSettings
    ) throws -> Never {
        guard comparisons.indices.contains(index) else {
            writeError("no comparison \(index)\n")
            exit(64)
        }
        let budget = Budget(seconds: seconds, totalWeight: 1)
        let progress = Progress(budget: nil)
        let watchdog = Watchdog(limitSeconds: 300)
        let runner = Runner(settings: settings, progress: progress, watchdog: watchdog, budget: budget)
        let result = runner.run(comparisons[index], weight: 1)
        progress.finish()
        print(String(decoding: try JSONCoding.encoder().encode(result), as: UTF8.self))
        exit(0)
    }

    /// Runs each of `comparisons` (the list that children of `kind` build, in its order) in
    /// `processes` children, one after the other, within `weight`'s share of the budget
    /// (`RoundScheduler.replicas`), and merges what they measured. Comparison `index` has the
    /// seed `context.seed &+ seedSpacing × (index + 1)`, and its process `p` that seed `&+ p`.
    /// Moves `context`'s progress line on before each comparison and logs its verdicts after.
    static func runEach(
        _ comparisons: [Comparison], kind: ChildKind, processes: Int, arguments: [String], seedSpacing: Int,
        weight: (Comparison) -> Double, context: SectionContext
    ) -> [ComparisonResult] {
        comparisons.enumerated().map { index, comparison in
            context.progress.next("\(comparison.group): \(comparison.operation)")
            let seed = context.seed &+ UInt64(seedSpacing * (index + 1))
            let (children, failure) = context.runner.scheduler.replicas(
                comparison.operation, count: processes, weight: weight(comparison)
            ) { process, seconds in
                let data = try runBenchmarkChild(
                    kind.arguments + ["--comparison-index", "\(index)", "--comparison-seconds", seconds.fixed(3)]
                        + ["--seed", "\(seed &+ UInt64(process))"] + arguments
                )
                return try JSONCoding.decoder().decode(ComparisonResult.self, from: data)
            }
            let result = merge(comparison, children, failure: failure.map { "\($0)" })
            context.progress.log(verdicts: result.verdicts)
            return result
        }
    }

    /// One comparison from its processes: entries with every sample, and verdict rows whose
    /// estimate is over the processes' mean log ratios.
    static func merge(_ comparison: Comparison, _ children: [ComparisonResult], failure: String?) -> ComparisonResult {
        var result = ComparisonResult(comparison, error: failure)
        for entry in children.flatMap(\.entries) {
            guard let index = result.entries.firstIndex(where: { $0.name == entry.name }) else { continue }
            result.entries[index].samples += entry.samples
            if result.entries[index].error == nil { result.entries[index].error = entry.error }
            // Percentiles do not merge; the report shows the first process's.
            if result.entries[index].latency == nil { result.entries[index].latency = entry.latency }
        }
        let first = children.first?.verdicts ?? []
        // The A/A rows first: their thresholds judge the subjects' rows of the same metric.
        var thresholds: [String: Double] = [:]
        result.verdicts = first.sorted(by: { $0.isAA && !$1.isAA }).map { template in
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
            row.rounds = perProcess.reduce(0) { $0 + $1.rounds }
            row.processes = means.count
            // The process is the unit: more rounds would not narrow it, more processes would.
            row.roundsToDecide = nil
            row.processMeans = means
            row.contaminatedRounds = perProcess.reduce(0) { $0 + $1.contaminatedRounds }
            row.logRatios = perProcess.flatMap(\.logRatios)
            row.subjectValue = geometricMean(perProcess.compactMap(\.subjectValue))
            row.peerValue = geometricMean(perProcess.compactMap(\.peerValue))
            row.judge(estimate, threshold: thresholds[template.metric])
            if template.isAA { thresholds[template.metric] = row.noiseThreshold }
            return row
        }
        result.noise = children.flatMap(\.noise)
        return result
    }
}
