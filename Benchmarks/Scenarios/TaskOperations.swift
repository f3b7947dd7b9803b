import Bolts
import NIOCore

extension Catalog {
    /// Who sets the inputs of the `whenAll` arms: a pool job each (the caller blocks in
    /// `waitUntilCompleted`), or the caller inline, first to last or last to first. The raw
    /// value tells the arms apart.
    enum WhenAllCompletion: Int {
        case poolJobPerInput
        case inlineByCaller
        case inlineByCallerLastToFirst
    }

    /// The SwiftNIO aggregate an arm measures; the case names are SwiftNIO's, and the arm's.
    enum AllSucceedForm {
        case andAllSucceed
        case whenAllSucceed
    }

    /// The task operations as a table: each comparison's arms, Bolts' first and the reference
    /// (SwiftNIO's or Swift Concurrency's) last. Bolts' synchronous arms run on the calling
    /// (main) thread with the default executor (inline, through the trampoline), so they
    /// measure the library's own cost, not a thread hop; SwiftNIO's run on their event loop
    /// (`TaskOperation.onLoop`), the async arms in a Swift task (`TaskOperation.inSwiftTask`).
    /// Closures capture nothing unless the name says otherwise; results go to the opaque sink.
    static func taskOperations(_ environment: Environment) -> [Comparison] {
        let loop = environment.peerLoop
        let pool = environment.pool
        let (links, inputs) = (chainLinks, aggregateInputs)
        var comparisons: [Comparison] = []
        /// Appends the comparison of `arms`, the last its reference.
        func compare(_ id: String, _ operation: String, isProcessTheUnit: Bool = false, _ arms: TaskOperation...) {
            comparisons.append(
                Comparison(
                    group: taskOperationsGroup, section: .taskOperations, metrics: metrics(for: .taskOperations),
                    operation: operation, id: id, entries: arms.map { Comparison.Entry(scenario: $0, id: $0.id) },
                    referenceIndex: arms.count - 1, producers: nil, isProcessTheUnit: isProcessTheUnit))
        }

        // The continuation runs inline. Allocations: the new task (its C core part of it) and one
        // closure context (antecedent, executor, closure); the goal is at most 1.
        // `continueOnSuccessWith` takes the value, like SwiftNIO's `map`.
        let (continueWithAntecedent, onSuccessAntecedent) = (BoltsTask<Int>(1), BoltsTask<Int>(1))
        compare(
            "continue-with-completed", "continueWith on a completed task",
            TaskOperation(
                "BoltsContinueWithOnCompleted", .bolts,
                "Bolts continueWith on a completed task (closure captures nothing)",
                allocations: "≤1 goal: new task; closure context if the library needs one"
            ) { iterations in
                measure(iterations: iterations) {
                    for _ in 0..<iterations {
                        consume(continueWithAntecedent.continueWith { ($0.result ?? 0) &+ 1 })
                    }
                }
            },
            TaskOperation(
                "BoltsContinueOnSuccessWithOnCompleted", .bolts,
                "Bolts continueOnSuccessWith on a completed task (closure captures nothing)",
                allocations: "≤1 goal: new task (+ closure context)"
            ) { iterations in
                measure(iterations: iterations) {
                    for _ in 0..<iterations {
                        consume(onSuccessAntecedent.continueOnSuccessWith { $0 &+ 1 })
                    }
                }
            },
            // Allocations: the new promise's future and the callback's context (RUNTIME-NOTES: 3).
            .onLoop(
                loop, "NIOMapOnSucceeded",
                "SwiftNIO map on a succeeded future, on its event loop (closure captures nothing)",
                allocations: "~3: future, callback contexts"
            ) { iterations in
                let succeeded = loop.makeSucceededFuture(1)
                return measure(iterations: iterations) {
                    for _ in 0..<iterations {
                        consume(succeeded.map { $0 &+ 1 })
                    }
                }
            })

        // The closure returns a new completed task, which the library unwraps.
        let withTaskAntecedent = BoltsTask<Int>(1)
        compare(
            "flat-map-completed", "continuation returning a task (flatMap) on a completed task",
            TaskOperation(
                "BoltsContinueOnSuccessWithTaskOnCompleted", .bolts,
                "Bolts continueOnSuccessWithTask on a completed task, returning a new completed task",
                allocations: "2-3: continuation task (+ context), inner task"
            ) { iterations in
                measure(iterations: iterations) {
                    for _ in 0..<iterations {
                        consume(withTaskAntecedent.continueOnSuccessWithTask { BoltsTask<Int>($0 &+ 1) })
                    }
                }
            },
            .onLoop(
                loop, "NIOFlatMapOnSucceeded",
                "SwiftNIO flatMap on a succeeded future, returning a new succeeded future, on its loop"
                    + " (captures the loop)",
                allocations: "~4: two futures, callback contexts"
            ) { iterations in
                let succeeded = loop.makeSucceededFuture(1)
                return measure(iterations: iterations) {
                    for _ in 0..<iterations {
                        consume(succeeded.flatMap { loop.makeSucceededFuture($0 &+ 1) })
                    }
                }
            })

        // A pending task with `continuations` waiting, then its completion, which runs them; one
        // op is the whole sequence. Bolts allocates the source and its task, plus per continuation
        // its task (+ a closure context), the goal ≤1 each; SwiftNIO the future, then per `map`
        // a future and contexts.
        for (id, operation, continuations) in [
            ("promise-1-waiter", "promise + one waiting continuation + complete", 1),
            ("promise-8-waiters", "promise + 8 waiting continuations + complete", 8),
        ] {
            compare(
                id, operation,
                TaskOperation(
                    "BoltsSourceWithWaitersThenSet", .bolts,
                    "Bolts TaskCompletionSource + \(continuations) waiting continueWith + set(result:)"
                        + " (closures capture nothing)",
                    allocations: "2 + ≤\(continuations) goal: source, task, one per continuation"
                ) { iterations in
                    measure(iterations: iterations) {
                        for i in 0..<iterations {
                            let source = TaskCompletionSource<Int>()
                            for _ in 0..<continuations {
                                consume(source.task.continueWith { ($0.result ?? 0) &+ 1 })
                            }
                            source.set(result: i)
                        }
                    }
                },
                .onLoop(
                    loop, "NIOPromiseWithWaitersThenSucceed",
                    "SwiftNIO makePromise + \(continuations) waiting map + succeed, on its event loop",
                    allocations: "1 + ~2-3 per map"
                ) { iterations in
                    measure(iterations: iterations) {
                        for i in 0..<iterations {
                            let promise = loop.makePromise(of: Int.self)
                            for _ in 0..<continuations {
                                consume(promise.futureResult.map { $0 &+ 1 })
                            }
                            promise.succeed(i)
                        }
                    }
                })
        }

        // A chain of `links` continuations, each waiting on the previous one, built on a pending
        // task and run by its completion on this thread; one op is one link: (build + complete +
        // release) / links. Allocations per link: its task or future (+ closure contexts).
        compare(
            "chain", "chain of \(links.formatted) pending continuations, then complete (per link)",
            TaskOperation(
                "BoltsPendingChainThenSet", .bolts,
                "Bolts chain of \(links.formatted) pending continueWith links, then set(result:) (per link)",
                unit: "link", fixedIterations: links, allocations: "≤1 goal per link: its task (+ closure context)"
            ) { iterations in
                var sum = 0
                let sample = measure(iterations: iterations) {
                    let source = TaskCompletionSource<Int>()
                    var last = source.task
                    for _ in 0..<iterations {
                        last = last.continueWith { ($0.result ?? 0) &+ 1 }
                    }
                    source.set(result: 0)
                    sum = last.result ?? -1
                }
                guard sum == iterations else { throw BenchmarkError.wrongResult("chain ended with \(sum)") }
                return sample
            },
            .onLoop(
                loop, "NIOPendingChainThenSucceed",
                "SwiftNIO chain of \(links.formatted) pending map links, then succeed, on its event loop (per link)",
                unit: "link", fixedIterations: links, allocations: "~2-3 per link: future, callback contexts"
            ) { iterations in
                var result = -1
                let sample = measure(iterations: iterations) {
                    let promise = loop.makePromise(of: Int.self)
                    var last = promise.futureResult
                    for _ in 0..<iterations {
                        last = last.map { $0 &+ 1 }
                    }
                    promise.succeed(0)
                    last.assumeIsolated().whenSuccess { result = $0 }
                }
                guard result == iterations else { throw BenchmarkError.wrongResult("chain ended with \(result)") }
                return sample
            })

        // Create a promise and complete it, nobody waiting. Allocations: Bolts' source and task;
        // SwiftNIO's future (the promise is a struct).
        compare(
            "promise-no-waiter", "promise create + complete, nobody waiting",
            TaskOperation(
                "BoltsSourceCreateAndSet", .bolts, "Bolts TaskCompletionSource create + set(result:), nobody waiting",
                allocations: "2: source, task"
            ) { iterations in
                measure(iterations: iterations) {
                    for i in 0..<iterations {
                        let source = TaskCompletionSource<Int>()
                        source.set(result: i)
                        consume(source.task)
                    }
                }
            },
            .onLoop(
                loop, "NIOPromiseCreateAndSucceed", "SwiftNIO makePromise + succeed, nobody waiting, on its event loop",
                allocations: "1: future"
            ) { iterations in
                measure(iterations: iterations) {
                    for i in 0..<iterations {
                        let promise = loop.makePromise(of: Int.self)
                        promise.succeed(i)
                        consume(promise.futureResult)
                    }
                }
            })

        // `Task.whenAll` over `inputs` pending sources, then each set as `completion` says; one op
        // is one input. The aggregate waits for one pending input at a time, from the last
        // (`_Join`): set first to last, that is one registration in all; last to first, one each
        // (its worst case). Allocations per input: the source's task (the source and the task
        // share it; registrations come from the block magazines, not malloc), plus the pool
        // job's closure context on the pool variant. `how` names who sets them.
        func whenAll(_ completion: WhenAllCompletion, _ how: String, allocations: String) -> TaskOperation {
            TaskOperation(
                "BoltsWhenAll-\(completion.rawValue)", .bolts,
                "Bolts whenAll over \(inputs.formatted) sources, \(how) (per input)",
                unit: "input", fixedIterations: inputs, allocations: allocations
            ) { iterations in
                var succeeded = false
                let sample = measure(iterations: iterations) {
                    let (sources, tasks) = pendingSources(iterations)
                    let all = BoltsTask.whenAll(tasks)
                    switch completion {
                    case .poolJobPerInput:
                        for source in sources {
                            pool.execute { source.set(result: 1) }
                        }
                        all.waitUntilCompleted()
                    case .inlineByCaller:
                        for source in sources { source.set(result: 1) }
                    case .inlineByCallerLastToFirst:
                        for source in sources.reversed() { source.set(result: 1) }
                    }
                    succeeded = all.isCompleted && !all.isFaulted && !all.isCancelled
                }
                guard succeeded else { throw BenchmarkError.wrongResult("whenAll did not succeed") }
                return sample
            }
        }
        // SwiftNIO's aggregate over `inputs` pending promises, all succeeded on the loop; one op
        // is one input. Allocations per input: the promise's future and the aggregate's callback.
        func allSucceed(_ form: AllSucceedForm) -> TaskOperation {
            .onLoop(
                loop, "NIOAllSucceed",
                "SwiftNIO \(form) over \(inputs.formatted) promises, succeeded on its event loop (per input)",
                unit: "input", fixedIterations: inputs, allocations: "~2-3: future, aggregate callback"
            ) { iterations in
                var done = false
                let sample = measure(iterations: iterations) {
                    var promises: [EventLoopPromise<Int>] = []
                    promises.reserveCapacity(iterations)
                    var futures: [EventLoopFuture<Int>] = []
                    futures.reserveCapacity(iterations)
                    for _ in 0..<iterations {
                        let promise = loop.makePromise(of: Int.self)
                        promises.append(promise)
                        futures.append(promise.futureResult)
                    }
                    switch form {
                    case .andAllSucceed:
                        let all = EventLoopFuture.andAllSucceed(futures, on: loop)
                        for promise in promises { promise.succeed(1) }
                        all.assumeIsolated().whenSuccess { done = true }
                    case .whenAllSucceed:
                        let all = EventLoopFuture.whenAllSucceed(futures, on: loop)
                        for promise in promises { promise.succeed(1) }
                        all.assumeIsolated().whenSuccess { done = $0.count == iterations }
                    }
                }
                guard done else { throw BenchmarkError.wrongResult("the aggregate did not succeed on the loop") }
                return sample
            }
        }
        compare(
            "when-all", "whenAll over \(inputs.formatted) tasks, no values collected (per input)",
            isProcessTheUnit: true,  // a job per input on the pool's workers
            whenAll(
                .poolJobPerInput, "each set by its own job on the Bolts pool",
                allocations: "~2: source's task, pool job's closure context"),
            whenAll(.inlineByCaller, "set inline by the caller", allocations: "~1: source's task"),
            whenAll(
                .inlineByCallerLastToFirst, "set inline by the caller from the last",
                allocations: "~1: source's task (a registration per input, from the block magazines)"),
            allSucceed(.andAllSucceed))

        // `Task.whenAllResult`, set inline by the caller, gathers the values into an array, like
        // SwiftNIO's `whenAllSucceed`. Allocations per input: as inline `whenAll`, plus the array.
        compare(
            "when-all-result", "whenAll over \(inputs.formatted) tasks, collecting the values (per input)",
            TaskOperation(
                "BoltsWhenAllResult", .bolts,
                "Bolts whenAllResult over \(inputs.formatted) sources, set inline by the caller (per input)",
                unit: "input", fixedIterations: inputs, allocations: "~1: source's task; result array amortised"
            ) { iterations in
                var count = 0
                let sample = measure(iterations: iterations) {
                    let (sources, tasks) = pendingSources(iterations)
                    let all = BoltsTask.whenAllResult(tasks)
                    for source in sources { source.set(result: 1) }
                    count = all.result?.count ?? -1
                }
                guard count == iterations else {
                    throw BenchmarkError.wrongResult("whenAllResult gave \(count) values")
                }
                return sample
            },
            allSucceed(.whenAllSucceed))

        // Bolts' fast path returns the stored value: no allocation. Its peer is Swift's cheapest
        // suspension point, a continuation resumed at once (RUNTIME-NOTES: 20-34 ns, task-local
        // frame).
        let awaitedTask = BoltsTask<Int>(1)
        compare(
            "await-completed", "await the value of an already-completed task",
            .inSwiftTask(
                "BoltsAwaitCompletedValue", .bolts, "Bolts try await value of a completed task",
                allocations: "0: returns the stored value"
            ) { iterations in
                var sum = 0
                defer { consume(sum) }
                return try await measureAsync(iterations: iterations) {
                    for _ in 0..<iterations { sum &+= try await awaitedTask.value }
                }
            },
            .inSwiftTask(
                "ConcurrencyUnsafeContinuationResumedAtOnce", .concurrency,
                "Swift Concurrency withUnsafeContinuation resumed at once", allocations: "0: the async frame is reused"
            ) { iterations in
                var sum = 0
                defer { consume(sum) }
                return await measureAsync(iterations: iterations) {
                    for i in 0..<iterations {
                        sum &+= await withUnsafeContinuation { $0.resume(returning: i) }
                    }
                }
            })

        // A closure run elsewhere and awaited: on a Bolts pool worker (the caller then resumes on
        // Swift's global executor), as a Swift task awaited through a Bolts task, or as a plain
        // Swift task. Allocations: the tasks, the pool job (context + record), the awaiter and
        // its registration, and Swift's continuation machinery; Swift's own: RUNTIME-NOTES 4.
        compare(
            "async-round-trip", "async round trip: run a closure elsewhere, await its value",
            isProcessTheUnit: true,  // hops between the pool's workers and Swift's
            .inSwiftTask(
                "BoltsPoolExecuteAwaitValue", .bolts,
                "Bolts Task.execute(.pool) + try await value (round trip through the pool)",
                allocations: "~6-8: task, pool job, awaiter, registration, resumption"
            ) { iterations in
                let executor = Executor.pool(pool)
                var sum = 0
                defer { consume(sum) }
                return try await measureAsync(iterations: iterations) {
                    for i in 0..<iterations {
                        sum &+= try await BoltsTask<Int>.execute(executor) { i }.value
                    }
                }
            },
            .inSwiftTask(
                "BoltsFromAsyncAwaitValue", .bolts,
                "Bolts Task.fromAsync { } + try await value (round trip through the global executor)",
                allocations: "~6-8: Bolts task, Swift task + context, awaiter, registration"
            ) { iterations in
                var sum = 0
                defer { consume(sum) }
                return try await measureAsync(iterations: iterations) {
                    for i in 0..<iterations {
                        sum &+= try await BoltsTask<Int>.fromAsync { i }.value
                    }
                }
            },
            .inSwiftTask(
                "ConcurrencyTaskAwaitValue", .concurrency,
                "Swift Concurrency Task { } + await value (round trip through the global executor)",
                allocations: "~4: task, closure context, future storage"
            ) { iterations in
                var sum = 0
                defer { consume(sum) }
                return await measureAsync(iterations: iterations) {
                    for i in 0..<iterations {
                        sum &+= await _Concurrency.Task { i }.value
                    }
                }
            })
        return comparisons
    }

    /// `count` pending sources and their tasks, the inputs of the aggregates (timed: no
    /// closures, capacity reserved up front).
    @inline(__always)
    fileprivate static func pendingSources(_ count: Int) -> ([TaskCompletionSource<Int>], [BoltsTask<Int>]) {
        var sources: [TaskCompletionSource<Int>] = []
        sources.reserveCapacity(count)
        var tasks: [BoltsTask<Int>] = []
        tasks.reserveCapacity(count)
        for _ in 0..<count {
            let source = TaskCompletionSource<Int>()
            sources.append(source)
            tasks.append(source.task)
        }
        return (sources, tasks)
    }
}
