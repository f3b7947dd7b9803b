import Bolts
import CBoltsRuntime

// Bolts task operations. Each runs on the calling (main) thread with the default executor
// (inline, through the trampoline), so it measures the library's own cost, not a thread
// hop; the one exception says so in its name. Closures capture nothing unless the name
// says otherwise. Results go to the opaque sink.

/// `continueWith` on a task that has already succeeded: the continuation runs inline.
///
/// Expected allocations per op: the new task object (its C core is tail-allocated or part
/// of it, per the library) plus one closure context holding the antecedent, the executor
/// and the caller's closure. Goal: at most 1 for a closure that captures nothing.
final class BoltsContinueWithOnCompleted: Scenario {
    let name = "Bolts continueWith on a completed task (closure captures nothing)"
    let subject = Subject.bolts
    let expectedAllocations = "≤1 goal: new task; closure context if the library needs one"
    private let completed = BoltsTask<Int>(1)

    func run(iterations: Int) -> Sample {
        let antecedent = completed
        return measure(iterations: iterations) {
            for _ in 0..<iterations {
                consume(antecedent.continueWith { ($0.result ?? 0) &+ 1 })
            }
        }
    }
}

/// `continueOnSuccessWith` on a task that has already succeeded (the closure takes the value,
/// like SwiftNIO's `map`).
///
/// Expected allocations per op: as `continueWith`.
final class BoltsContinueOnSuccessWithOnCompleted: Scenario {
    let name = "Bolts continueOnSuccessWith on a completed task (closure captures nothing)"
    let subject = Subject.bolts
    let expectedAllocations = "≤1 goal: new task (+ closure context)"
    private let completed = BoltsTask<Int>(1)

    func run(iterations: Int) -> Sample {
        let antecedent = completed
        return measure(iterations: iterations) {
            for _ in 0..<iterations {
                consume(antecedent.continueOnSuccessWith { $0 &+ 1 })
            }
        }
    }
}

/// `continueOnSuccessWithTask` on a completed task, the closure returning a new completed
/// task (which the library unwraps): the counterpart of SwiftNIO's `flatMap`.
///
/// Expected allocations per op: the continuation's task (+ its closure context) and the
/// returned inner task: about 2-3.
final class BoltsContinueOnSuccessWithTaskOnCompleted: Scenario {
    let name = "Bolts continueOnSuccessWithTask on a completed task, returning a new completed task"
    let subject = Subject.bolts
    let expectedAllocations = "2-3: continuation task (+ context), inner task"
    private let completed = BoltsTask<Int>(1)

    func run(iterations: Int) -> Sample {
        let antecedent = completed
        return measure(iterations: iterations) {
            for _ in 0..<iterations {
                consume(antecedent.continueOnSuccessWithTask { BoltsTask<Int>($0 &+ 1) })
            }
        }
    }
}

/// Create a `TaskCompletionSource`, then `set(result:)` with nobody waiting.
///
/// Expected allocations per op: the source object and its task: 2.
final class BoltsSourceCreateAndSet: Scenario {
    let name = "Bolts TaskCompletionSource create + set(result:), nobody waiting"
    let subject = Subject.bolts
    let expectedAllocations = "2: source, task"

    func run(iterations: Int) -> Sample {
        measure(iterations: iterations) {
            for i in 0..<iterations {
                let source = TaskCompletionSource<Int>()
                source.set(result: i)
                consume(source.task)
            }
        }
    }
}

/// Create a source, add `continuations` continuations to its pending task, then
/// `set(result:)`, which runs them inline. One op is the whole sequence.
///
/// Expected allocations per op: source + task (2), plus per continuation its task and, if
/// the library needs one, a closure context (goal ≤1 each for closures capturing nothing).
final class BoltsSourceWithWaitersThenSet: Scenario {
    let name: String
    let subject = Subject.bolts
    let expectedAllocations: String
    private let continuations: Int

    init(continuations: Int) {
        self.continuations = continuations
        name =
            "Bolts TaskCompletionSource + \(continuations) waiting continueWith + set(result:) (closures capture nothing)"
        expectedAllocations = "2 + ≤\(continuations) goal: source, task, one per continuation"
    }

    func run(iterations: Int) -> Sample {
        let continuations = continuations
        return measure(iterations: iterations) {
            for i in 0..<iterations {
                let source = TaskCompletionSource<Int>()
                for _ in 0..<continuations {
                    consume(source.task.continueWith { ($0.result ?? 0) &+ 1 })
                }
                source.set(result: i)
            }
        }
    }
}

/// A chain of `links` continuations, each waiting on the previous one, built on a pending
/// task; then `set(result:)` runs the whole chain on this thread (through the trampoline).
/// One op is one link: (build + complete + release) / links.
///
/// Expected allocations per link: its task (+ closure context if the library needs one).
final class BoltsPendingChainThenSet: Scenario {
    let name: String
    let subject = Subject.bolts
    let unit = "link"
    let expectedAllocations = "≤1 goal per link: its task (+ closure context)"
    let fixedIterations: Int?

    init(links: Int) {
        fixedIterations = links
        name = "Bolts chain of \(links.formatted) pending continueWith links, then set(result:) (per link)"
    }

    func run(iterations: Int) throws -> Sample {
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
    }
}

/// `Task.whenAll` over `inputs` pending sources; then each source is set. Either each by
/// its own job on the Bolts pool (the caller blocks in `waitUntilCompleted`), or all inline
/// by the caller. One op is one input.
///
/// Expected allocations per input: source + task (2), the aggregate's registration on the
/// input (a job record and a callback box: 2), and on the pool variant the pool job's
/// closure context and job record (2).
final class BoltsWhenAll: Scenario {
    enum Completion {
        case poolJobPerInput(ThreadPool)
        case inlineByCaller
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
            name = "Bolts whenAll over \(inputs.formatted) sources, each set by its own job on the Bolts pool (per input)"
            expectedAllocations = "~6: source, task, aggregate registration (2), pool job (2)"
        case .inlineByCaller:
            name = "Bolts whenAll over \(inputs.formatted) sources, set inline by the caller (per input)"
            expectedAllocations = "~4: source, task, aggregate registration (2)"
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
            }
            succeeded = all.completed && !all.faulted && !all.cancelled
        }
        guard succeeded else { throw BenchmarkError.wrongResult("whenAll did not succeed") }
        return sample
    }
}

/// `Task.whenAllResult` over `inputs` pending sources, set inline by the caller: gathers the
/// values into an array, like SwiftNIO's `whenAllSucceed`.
///
/// Expected allocations per input: as inline `whenAll` (4), plus the result array.
final class BoltsWhenAllResult: Scenario {
    let name: String
    let subject = Subject.bolts
    let unit = "input"
    let expectedAllocations = "~4: source, task, aggregate registration (2); result array amortised"
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

/// Raised when a scenario's own check of its result fails (it measured the wrong thing).
enum BenchmarkError: Error, CustomStringConvertible {
    case wrongResult(String)

    var description: String {
        switch self {
        case .wrongResult(let what): return "wrong result: \(what)"
        }
    }
}

extension Int {
    /// 1000000 as "10^6", 10000 as "10^4"; other numbers as they are.
    var formatted: String {
        var power = 0
        var rest = self
        while rest >= 10, rest % 10 == 0 {
            rest /= 10
            power += 1
        }
        return rest == 1 && power >= 3 ? "10^\(power)" : String(self)
    }
}
