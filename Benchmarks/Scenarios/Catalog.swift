/// Every comparison the benchmark knows, in the order they run.
enum Catalog {
    static let taskOperationsGroup = "Task operations"
    static let executorsGroup = "Executors under contention"
    static let handOffGroup = "Executor hand-off latency, paced"

    /// A group's heading in the report, then its pointer to the part of METHODOLOGY.md that has
    /// the same heading.
    static func heading(_ group: String) -> String { "\n## \(group)\n\n" + Report.method(group, []) + "\n" }

    /// Chain length of the chain comparison (the product's goal is stated at 10^6 links).
    static let chainLinks = 1_000_000
    /// Inputs of the aggregate comparisons.
    static let aggregateInputs = 10_000

    /// The task operations that run in child processes (`Comparison.isProcessTheUnit`), after
    /// `filter`: the list that a child's `--comparison-index` points into.
    static func taskOperationsInProcesses(
        _ environment: Environment, filter: String?, withoutReference: Bool
    ) -> [Comparison] {
        filtered(taskOperations(environment), by: filter, withoutReference: withoutReference).filter(\.isProcessTheUnit)
    }

    /// One comparison per producer count, every executor in each, of tiny jobs or (`paced`) of
    /// the paced hand-off (no queueing); the reference is `DispatchQueue.global()`.
    static func executors(producerCounts: [Int], paced: Bool = false) -> [Comparison] {
        producerCounts.map { producers in
            let kinds = ExecutorKind.allCases
            let threads = "\(producers) producer thread\(producers == 1 ? "" : "s")"
            return Comparison(
                group: paced ? handOffGroup : executorsGroup,
                section: paced ? .paced : .executors,
                metrics: metrics(for: paced ? .paced : .executors),
                // Each paced sample gives a p99, which needs jobs: 2.5× the run's sample length.
                sampleScale: paced ? 2.5 : 1,
                operation: paced ? "paced hand-off from \(threads)" : "tiny jobs from \(threads)",
                id: paced ? "paced-P\(producers)" : "tiny-P\(producers)",
                entries: kinds.map {
                    Comparison.Entry(scenario: ExecutorJobs($0, producers: producers, paced: paced), id: $0.rawValue)
                },
                referenceIndex: kinds.firstIndex(of: .dispatchGlobal)!,
                producers: producers
            )
        }
    }

    /// The metrics judged in `section` (one of the three above); the first decides when to stop.
    static func metrics(for section: Section) -> [JudgedMetric<Sample>] {
        func nanoseconds(_ title: String, id: String = "ns") -> JudgedMetric<Sample> {
            JudgedMetric(Metric(title: title, unit: "ns", lowerIsBetter: true, id: id)) { $0.nanosecondsPerOperation }
        }
        switch section {
        case .paced:
            return [
                JudgedMetric(Metric(title: "p99 hand-off latency", unit: "ns", lowerIsBetter: true, id: "p99")) {
                    $0.latency.map { Double($0.p99) }
                },
                nanoseconds("round trip per job", id: "round-trip"),
            ]
        case .executors: return [nanoseconds("time per job (throughput)")]
        default: return [nanoseconds("time per operation")]
        }
    }

    /// Keeps the comparisons whose operation matches `filter`, and from the others the
    /// entries whose name matches, plus their reference, which every ratio needs, unless
    /// `withoutReference` (for profiling one scenario alone; there are no ratios then).
    static func filtered(_ comparisons: [Comparison], by filter: String?, withoutReference: Bool = false)
        -> [Comparison]
    {
        let filter = filter?.lowercased() ?? ""
        return comparisons.compactMap { comparison in
            let reference = comparison.reference
            let wholeComparison = "\(comparison.group) \(comparison.operation)".lowercased().contains(filter)
            func named(_ entry: Comparison.Entry) -> Bool { entry.scenario.name.lowercased().contains(filter) }
            let kept = comparison.entries.filter { entry in
                if entry.scenario === reference { return withoutReference ? filter.isEmpty || named(entry) : true }
                return filter.isEmpty || wholeComparison || named(entry)
            }
            guard kept.contains(where: { filter.isEmpty || wholeComparison || named($0) }) else { return nil }
            var copy = comparison
            copy.entries = kept
            copy.referenceIndex = kept.firstIndex { $0.scenario === reference }
            return copy
        }
    }
}
