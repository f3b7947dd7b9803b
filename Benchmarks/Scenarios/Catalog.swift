/// Every comparison the benchmark knows, in the order they run.
enum Catalog {
    static let taskOperationsGroup = "Task operations"
    static let executorsGroup = "Executors under contention"
    static let handOffGroup = "Executor hand-off latency, paced"

    /// Chain length of the chain comparison (the product's goal is stated at 10^6 links).
    static let chainLinks = 1_000_000
    /// Inputs of the aggregate comparisons.
    static let aggregateInputs = 10_000

    static func taskOperations(_ environment: Environment) -> [Comparison] {
        let loop = environment.peerLoop
        let pool = environment.pool
        func comparison(
            _ id: String, _ operation: String, _ scenarios: [any Scenario], reference: Int,
            isProcessTheUnit: Bool = false
        ) -> Comparison {
            Comparison(
                group: taskOperationsGroup,
                section: .taskOperations,
                metrics: metrics(for: .taskOperations),
                operation: operation,
                id: id,
                entries: scenarios.enumerated().map { index, scenario in
                    // The three whenAll variants share a type.
                    Comparison.Entry(scenario: scenario, id: scenario is BoltsWhenAll ? "BoltsWhenAll-\(index)" : nil)
                },
                referenceIndex: reference,
                producers: nil,
                isProcessTheUnit: isProcessTheUnit
            )
        }
        return [
            comparison(
                "continue-with-completed", "continueWith on a completed task",
                [
                    BoltsContinueWithOnCompleted(), BoltsContinueOnSuccessWithOnCompleted(),
                    NIOMapOnSucceeded(loop: loop),
                ],
                reference: 2
            ),
            comparison(
                "flat-map-completed", "continuation returning a task (flatMap) on a completed task",
                [BoltsContinueOnSuccessWithTaskOnCompleted(), NIOFlatMapOnSucceeded(loop: loop)],
                reference: 1
            ),
            comparison(
                "promise-1-waiter", "promise + one waiting continuation + complete",
                [
                    BoltsSourceWithWaitersThenSet(continuations: 1),
                    NIOPromiseWithWaitersThenSucceed(loop: loop, continuations: 1),
                ],
                reference: 1
            ),
            comparison(
                "promise-8-waiters", "promise + 8 waiting continuations + complete",
                [
                    BoltsSourceWithWaitersThenSet(continuations: 8),
                    NIOPromiseWithWaitersThenSucceed(loop: loop, continuations: 8),
                ],
                reference: 1
            ),
            comparison(
                "chain", "chain of \(chainLinks.formatted) pending continuations, then complete (per link)",
                [
                    BoltsPendingChainThenSet(links: chainLinks),
                    NIOPendingChainThenSucceed(loop: loop, links: chainLinks),
                ],
                reference: 1
            ),
            comparison(
                "promise-no-waiter", "promise create + complete, nobody waiting",
                [BoltsSourceCreateAndSet(), NIOPromiseCreateAndSucceed(loop: loop)],
                reference: 1
            ),
            comparison(
                "when-all", "whenAll over \(aggregateInputs.formatted) tasks, no values collected (per input)",
                [
                    BoltsWhenAll(inputs: aggregateInputs, completion: .poolJobPerInput(pool)),
                    BoltsWhenAll(inputs: aggregateInputs, completion: .inlineByCaller),
                    BoltsWhenAll(inputs: aggregateInputs, completion: .inlineByCallerLastToFirst),
                    NIOAllSucceed(loop: loop, inputs: aggregateInputs, form: .andAllSucceed),
                ],
                reference: 3,
                isProcessTheUnit: true  // a job per input on the pool's workers
            ),
            comparison(
                "when-all-result", "whenAll over \(aggregateInputs.formatted) tasks, collecting the values (per input)",
                [
                    BoltsWhenAllResult(inputs: aggregateInputs),
                    NIOAllSucceed(loop: loop, inputs: aggregateInputs, form: .whenAllSucceed),
                ],
                reference: 1
            ),
            comparison(
                "await-completed", "await the value of an already-completed task",
                [BoltsAwaitCompletedValue(), ConcurrencyUnsafeContinuationResumedAtOnce()],
                reference: 1
            ),
            comparison(
                "async-round-trip", "async round trip: run a closure elsewhere, await its value",
                [BoltsPoolExecuteAwaitValue(pool: pool), BoltsFromAsyncAwaitValue(), ConcurrencyTaskAwaitValue()],
                reference: 2,
                isProcessTheUnit: true  // hops between the pool's workers and Swift's
            ),
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
        producerCounts.map { producers in
            let kinds = ExecutorKind.allCases
            return Comparison(
                group: executorsGroup,
                section: .executors,
                metrics: metrics(for: .executors),
                operation: "tiny jobs from \(producers) producer thread\(producers == 1 ? "" : "s")",
                id: "tiny-P\(producers)",
                entries: kinds.map {
                    Comparison.Entry(scenario: ExecutorContention(kind: $0, producers: producers), id: $0.rawValue)
                },
                referenceIndex: kinds.firstIndex(of: .dispatchGlobal)!,
                producers: producers
            )
        }
    }

    /// One comparison per producer count of the paced hand-off (no queueing); the reference
    /// is `DispatchQueue.global()`.
    static func handOffs(producerCounts: [Int]) -> [Comparison] {
        producerCounts.map { producers in
            let kinds = ExecutorKind.allCases
            return Comparison(
                group: handOffGroup,
                section: .paced,
                metrics: metrics(for: .paced),
                // Each sample gives a p99, which needs jobs: 2.5× the run's sample length.
                sampleScale: 2.5,
                operation: "paced hand-off from \(producers) producer thread\(producers == 1 ? "" : "s")",
                id: "paced-P\(producers)",
                entries: kinds.map {
                    Comparison.Entry(scenario: ExecutorPacedHandOff(kind: $0, producers: producers), id: $0.rawValue)
                },
                referenceIndex: kinds.firstIndex(of: .dispatchGlobal)!,
                producers: producers
            )
        }
    }

    /// The metrics judged in `section` (one of the three above); the first decides when to stop.
    static func metrics(for section: Section) -> [JudgedMetric<Sample>] {
        switch section {
        case .paced:
            return [
                JudgedMetric(Metric(title: "p99 hand-off latency", unit: "ns", lowerIsBetter: true, id: "p99")) {
                    $0.latency.map { Double($0.p99) }
                },
                JudgedMetric(Metric(title: "round trip per job", unit: "ns", lowerIsBetter: true, id: "round-trip")) {
                    $0.nanosecondsPerOperation
                },
            ]
        case .executors:
            return [
                JudgedMetric(Metric(title: "time per job (throughput)", unit: "ns", lowerIsBetter: true, id: "ns")) {
                    $0.nanosecondsPerOperation
                }
            ]
        default:
            return [
                JudgedMetric(Metric(title: "time per operation", unit: "ns", lowerIsBetter: true, id: "ns")) {
                    $0.nanosecondsPerOperation
                }
            ]
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
