import Bolts

// Bolts continuations and completion sources. Each runs on the calling (main) thread with
// the default executor (inline, through the trampoline), so it measures the library's own
// cost, not a thread hop. Closures capture nothing unless the name says otherwise.
// Results go to the opaque sink.

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
