import Bolts

// Bolts aggregates and the async bridge. The aggregates run on the calling (main) thread
// unless the name says the pool completes the inputs; the async scenarios run in a
// detached Swift task and time themselves there.
extension TaskOperation {
    /// Who sets the inputs of `boltsWhenAll`: a pool job each (the caller blocks in
    /// `waitUntilCompleted`), or the caller inline, first to last or last to first.
    enum WhenAllCompletion {
        case poolJobPerInput(ThreadPool)
        case inlineByCaller
        case inlineByCallerLastToFirst
    }

    /// `Task.whenAll` over `inputs` pending sources, then each source set as `completion` says;
    /// one op is one input; `index` tells the variants' identifiers apart. The aggregate waits
    /// for one pending input at a time, from the last (`_Join`): set first to last, that is one
    /// registration in all; last to first, one each (its worst case). Allocations per input:
    /// the source's task (the source and the task share it; registrations come from the block
    /// magazines, not malloc), plus the pool job's closure context on the pool variant.
    static func boltsWhenAll(inputs: Int, completion: WhenAllCompletion, index: Int) -> TaskOperation {
        let (how, allocations) =
            switch completion {
            case .poolJobPerInput:
                ("each set by its own job on the Bolts pool", "~2: source's task, pool job's closure context")
            case .inlineByCaller: ("set inline by the caller", "~1: source's task")
            case .inlineByCallerLastToFirst:
                (
                    "set inline by the caller from the last",
                    "~1: source's task (a registration per input, from the block magazines)"
                )
            }
        return TaskOperation(
            "BoltsWhenAll-\(index)", .bolts, "Bolts whenAll over \(inputs.formatted) sources, \(how) (per input)",
            unit: "input", fixedIterations: inputs, allocations: allocations
        ) { iterations in
            var succeeded = false
            let sample = measure(iterations: iterations) {
                var sources: [TaskCompletionSource<Int>] = []
                sources.reserveCapacity(iterations)
                var tasks: [BoltsTask<Int>] = []
                tasks.reserveCapacity(iterations)
                for _ in 0..<iterations {
                    let source = TaskCompletionSource<Int>()
                    sources.append(source)
                    tasks.append(source.task)
                }
                let all = BoltsTask.whenAll(tasks)
                switch completion {
                case .poolJobPerInput(let pool):
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

    /// `Task.whenAllResult` over `inputs` pending sources, set inline by the caller: gathers
    /// the values into an array, like SwiftNIO's `whenAllSucceed`. Allocations per input: as
    /// inline `whenAll` (1), plus the result array.
    static func boltsWhenAllResult(inputs: Int) -> TaskOperation {
        TaskOperation(
            "BoltsWhenAllResult", .bolts,
            "Bolts whenAllResult over \(inputs.formatted) sources, set inline by the caller (per input)",
            unit: "input", fixedIterations: inputs, allocations: "~1: source's task; result array amortised"
        ) { iterations in
            var count = 0
            let sample = measure(iterations: iterations) {
                var sources: [TaskCompletionSource<Int>] = []
                sources.reserveCapacity(iterations)
                var tasks: [BoltsTask<Int>] = []
                tasks.reserveCapacity(iterations)
                for _ in 0..<iterations {
                    let source = TaskCompletionSource<Int>()
                    sources.append(source)
                    tasks.append(source.task)
                }
                let all = BoltsTask.whenAllResult(tasks)
                for source in sources { source.set(result: 1) }
                count = all.result?.count ?? -1
            }
            guard count == iterations else { throw BenchmarkError.wrongResult("whenAllResult gave \(count) values") }
            return sample
        }
    }

    /// `try await task.value` on a task that has already succeeded, in an async function.
    /// Allocations: none (the fast path returns the stored value).
    static func boltsAwaitCompletedValue() -> TaskOperation {
        let task = BoltsTask<Int>(1)
        return inSwiftTask(
            "BoltsAwaitCompletedValue", .bolts, "Bolts try await value of a completed task",
            allocations: "0: returns the stored value"
        ) { iterations in
            var sum = 0
            let sample = try await measureAsync(iterations: iterations) {
                for _ in 0..<iterations { sum &+= try await task.value }
            }
            consume(sum)
            return sample
        }
    }

    /// Round trip: `Task.execute(.pool(pool))` runs a closure on a Bolts pool worker, and the
    /// async caller suspends in `try await value` until it is done, then resumes on Swift's
    /// global executor. Allocations: the task, the pool job (context + record), the awaiter
    /// and its registration (about 3), and Swift's continuation machinery: about 6-8.
    static func boltsPoolExecuteAwaitValue(pool: ThreadPool) -> TaskOperation {
        let executor = Executor.pool(pool)
        return inSwiftTask(
            "BoltsPoolExecuteAwaitValue", .bolts,
            "Bolts Task.execute(.pool) + try await value (round trip through the pool)",
            allocations: "~6-8: task, pool job, awaiter, registration, resumption"
        ) { iterations in
            var sum = 0
            let sample = try await measureAsync(iterations: iterations) {
                for i in 0..<iterations {
                    sum &+= try await BoltsTask<Int>.execute(executor) { i }.value
                }
            }
            consume(sum)
            return sample
        }
    }

    /// Round trip through Swift's global executor, the Bolts way: `Task.fromAsync` runs a
    /// closure as a Swift task and the async caller awaits the Bolts task's `value`.
    /// Allocations: the Bolts task, the Swift task and its context, the awaiter and its
    /// registration: about 6-8.
    static func boltsFromAsyncAwaitValue() -> TaskOperation {
        inSwiftTask(
            "BoltsFromAsyncAwaitValue", .bolts,
            "Bolts Task.fromAsync { } + try await value (round trip through the global executor)",
            allocations: "~6-8: Bolts task, Swift task + context, awaiter, registration"
        ) { iterations in
            var sum = 0
            let sample = try await measureAsync(iterations: iterations) {
                for i in 0..<iterations {
                    sum &+= try await BoltsTask<Int>.fromAsync { i }.value
                }
            }
            consume(sum)
            return sample
        }
    }
}
