/// Every comparison the benchmark knows, in the order they run.
enum Catalog {
    static let taskOperationsGroup = "Task operations"
    static let executorsGroup = "Executors under contention"
    static let handOffGroup = "Executor hand-off latency, paced"

    /// Chain length of the chain comparison (the product's goal is stated at 10^6 links).
    static let chainLinks = 1_000_000
    /// Inputs of the aggregate comparisons.
    static let aggregateInputs = 10_000

    /// The task operations, each comparison's reference its last entry (SwiftNIO's or Swift's).
    static func taskOperations(_ environment: Environment) -> [Comparison] {
        let loop = environment.peerLoop
        let pool = environment.pool
        let (links, inputs) = (chainLinks, aggregateInputs)
        func comparison(
            _ id: String, _ operation: String, isProcessTheUnit: Bool = false, _ scenarios: [TaskOperation]
        ) -> Comparison {
            Comparison(
                group: taskOperationsGroup, section: .taskOperations, metrics: metrics(for: .taskOperations),
                operation: operation, id: id, entries: scenarios.map { Comparison.Entry(scenario: $0, id: $0.id) },
                referenceIndex: scenarios.count - 1, producers: nil, isProcessTheUnit: isProcessTheUnit)
        }
        return [
            comparison(
                "continue-with-completed", "continueWith on a completed task",
                [.boltsContinueWithOnCompleted(), .boltsContinueOnSuccessWithOnCompleted(), .nioMapOnSucceeded(loop)]),
            comparison(
                "flat-map-completed", "continuation returning a task (flatMap) on a completed task",
                [.boltsContinueOnSuccessWithTaskOnCompleted(), .nioFlatMapOnSucceeded(loop)]),
            comparison(
                "promise-1-waiter", "promise + one waiting continuation + complete",
                [
                    .boltsSourceWithWaitersThenSet(continuations: 1),
                    .nioPromiseWithWaitersThenSucceed(loop, continuations: 1),
                ]),
            comparison(
                "promise-8-waiters", "promise + 8 waiting continuations + complete",
                [
                    .boltsSourceWithWaitersThenSet(continuations: 8),
                    .nioPromiseWithWaitersThenSucceed(loop, continuations: 8),
                ]),
            comparison(
                "chain", "chain of \(links.formatted) pending continuations, then complete (per link)",
                [.boltsPendingChainThenSet(links: links), .nioPendingChainThenSucceed(loop, links: links)]),
            comparison(
                "promise-no-waiter", "promise create + complete, nobody waiting",
                [.boltsSourceCreateAndSet(), .nioPromiseCreateAndSucceed(loop)]),
            comparison(
                "when-all", "whenAll over \(inputs.formatted) tasks, no values collected (per input)",
                isProcessTheUnit: true,  // a job per input on the pool's workers
                [
                    .boltsWhenAll(inputs: inputs, completion: .poolJobPerInput(pool), index: 0),
                    .boltsWhenAll(inputs: inputs, completion: .inlineByCaller, index: 1),
                    .boltsWhenAll(inputs: inputs, completion: .inlineByCallerLastToFirst, index: 2),
                    .nioAllSucceed(loop, inputs: inputs, form: .andAllSucceed),
                ]),
            comparison(
                "when-all-result", "whenAll over \(inputs.formatted) tasks, collecting the values (per input)",
                [.boltsWhenAllResult(inputs: inputs), .nioAllSucceed(loop, inputs: inputs, form: .whenAllSucceed)]),
            comparison(
                "await-completed", "await the value of an already-completed task",
                [.boltsAwaitCompletedValue(), .concurrencyUnsafeContinuationResumedAtOnce()]),
            comparison(
                "async-round-trip", "async round trip: run a closure elsewhere, await its value",
                isProcessTheUnit: true,  // hops between the pool's workers and Swift's
                [.boltsPoolExecuteAwaitValue(pool: pool), .boltsFromAsyncAwaitValue(), .concurrencyTaskAwaitValue()]),
        ]
    }

    /// The task operations that run in child processes (`Comparison.isProcessTheUnit`), after
    /// `filter`: the list that a child's `--comparison-index` points into.
    static func taskOperationsInProcesses(
        _ environment: Environment, filter: String?, withoutReference: Bool
    ) -> [Comparison] {
        filtered(taskOperations(environment), by: filter, withoutReference: withoutReference).filter(\.isProcessTheUnit)
    }

    /// One comparison per producer count, every executor in each; the reference is
    /// `DispatchQueue.global()`.
    static func executors(producerCounts: [Int]) -> [Comparison] {
        executorComparisons(producerCounts, paced: false)
    }

    /// One comparison per producer count of the paced hand-off (no queueing); the reference
    /// is `DispatchQueue.global()`.
    static func handOffs(producerCounts: [Int]) -> [Comparison] {
        executorComparisons(producerCounts, paced: true)
    }

    private static func executorComparisons(_ producerCounts: [Int], paced: Bool) -> [Comparison] {
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
