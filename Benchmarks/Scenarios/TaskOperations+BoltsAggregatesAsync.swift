import Bolts

// Bolts aggregates and the async bridge. The aggregates run on the calling (main) thread
// unless the name says the pool completes the inputs; the async scenarios run in a
// detached Swift task and time themselves there.

/// `Task.whenAll` over `inputs` pending sources; then each source is set. Either each by
/// its own job on the Bolts pool (the caller blocks in `waitUntilCompleted`), or all inline
/// by the caller, from the first input to the last or from the last to the first. One op
/// is one input.
///
/// The aggregate waits for one pending input at a time, from the last (`_Join`): sources set
/// from the first to the last cost it one registration in all, set from the last to the
/// first one registration each (its worst case). Expected allocations per input: the
/// source's task object (1; the source and the task share it); the registrations' job
/// records come from the runtime's block magazines, not from malloc; on the pool variant,
/// the pool job's closure context (1).
final class BoltsWhenAll: Scenario {
    enum Completion {
        case poolJobPerInput(ThreadPool)
        case inlineByCaller
        case inlineByCallerLastToFirst
    }

    let name: String
    let subject = Subject.bolts
    let unit = "input"
    let expectedAllocations: String
    let fixedIterations: Int?
    private let completion: Completion

    init(inputs: Int, completion: Completion) {
        fixedIterations = inputs
        self.completion = completion
        switch completion {
        case .poolJobPerInput:
            name =
                "Bolts whenAll over \(inputs.formatted) sources, each set by its own job on the Bolts pool (per input)"
            expectedAllocations = "~2: source's task, pool job's closure context"
        case .inlineByCaller:
            name = "Bolts whenAll over \(inputs.formatted) sources, set inline by the caller (per input)"
            expectedAllocations = "~1: source's task"
        case .inlineByCallerLastToFirst:
            name = "Bolts whenAll over \(inputs.formatted) sources, set inline by the caller from the last (per input)"
            expectedAllocations = "~1: source's task (a registration per input, from the block magazines)"
        }
    }

    func run(iterations: Int) throws -> Sample {
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

/// `Task.whenAllResult` over `inputs` pending sources, set inline by the caller: gathers the
/// values into an array, like SwiftNIO's `whenAllSucceed`.
///
/// Expected allocations per input: as inline `whenAll` (1), plus the result array.
final class BoltsWhenAllResult: Scenario {
    let name: String
    let subject = Subject.bolts
    let unit = "input"
    let expectedAllocations = "~1: source's task; result array amortised"
    let fixedIterations: Int?

    init(inputs: Int) {
        fixedIterations = inputs
        name = "Bolts whenAllResult over \(inputs.formatted) sources, set inline by the caller (per input)"
    }

    func run(iterations: Int) throws -> Sample {
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
///
/// Expected allocations per op: none (the fast path returns the stored value).
final class BoltsAwaitCompletedValue: Scenario {
    let name = "Bolts try await value of a completed task"
    let subject = Subject.bolts
    let expectedAllocations = "0: returns the stored value"
    private let completed = BoltsTask<Int>(1)

    func run(iterations: Int) throws -> Sample {
        let task = completed
        return try runAsync {
            var sum = 0
            let sample = try await measureAsync(iterations: iterations) {
                for _ in 0..<iterations { sum &+= try await task.value }
            }
            consume(sum)
            return sample
        }
    }
}

/// Round trip: `Task.execute(.pool(pool))` runs a closure on a Bolts pool worker, and the
/// async caller suspends in `try await value` until it is done, then resumes on Swift's
/// global executor.
///
/// Expected allocations per op: the task, the pool job (context + record), the awaiter and
/// its registration (about 3), and Swift's continuation machinery: about 6-8.
final class BoltsPoolExecuteAwaitValue: Scenario {
    let name = "Bolts Task.execute(.pool) + try await value (round trip through the pool)"
    let subject = Subject.bolts
    let expectedAllocations = "~6-8: task, pool job, awaiter, registration, resumption"
    private let pool: ThreadPool

    init(pool: ThreadPool) { self.pool = pool }

    func run(iterations: Int) throws -> Sample {
        let executor = Executor.pool(pool)
        return try runAsync {
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
}

/// Round trip through Swift's global executor, the Bolts way: `Task.fromAsync` runs a
/// closure as a Swift task and the async caller awaits the Bolts task's `value`.
///
/// Expected allocations per op: the Bolts task, the Swift task and its context, the awaiter
/// and its registration: about 6-8.
final class BoltsFromAsyncAwaitValue: Scenario {
    let name = "Bolts Task.fromAsync { } + try await value (round trip through the global executor)"
    let subject = Subject.bolts
    let expectedAllocations = "~6-8: Bolts task, Swift task + context, awaiter, registration"

    func run(iterations: Int) throws -> Sample {
        try runAsync {
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
