import Bolts

// Bolts continuations and completion sources. Each runs on the calling (main) thread with
// the default executor (inline, through the trampoline), so it measures the library's own
// cost, not a thread hop. Closures capture nothing unless the name says otherwise.
// Results go to the opaque sink.
extension TaskOperation {
    /// `continueWith` on a task that has already succeeded: the continuation runs inline.
    /// Allocations: the new task (its C core tail-allocated or part of it) plus one closure
    /// context (antecedent, executor, closure). Goal: at most 1 for a closure capturing nothing.
    static func boltsContinueWithOnCompleted() -> TaskOperation {
        let antecedent = BoltsTask<Int>(1)
        return TaskOperation(
            "BoltsContinueWithOnCompleted", .bolts, "Bolts continueWith on a completed task (closure captures nothing)",
            allocations: "≤1 goal: new task; closure context if the library needs one"
        ) { iterations in
            measure(iterations: iterations) {
                for _ in 0..<iterations {
                    consume(antecedent.continueWith { ($0.result ?? 0) &+ 1 })
                }
            }
        }
    }

    /// `continueOnSuccessWith` on a task that has already succeeded (the closure takes the
    /// value, like SwiftNIO's `map`). Allocations: as `continueWith`.
    static func boltsContinueOnSuccessWithOnCompleted() -> TaskOperation {
        let antecedent = BoltsTask<Int>(1)
        return TaskOperation(
            "BoltsContinueOnSuccessWithOnCompleted", .bolts,
            "Bolts continueOnSuccessWith on a completed task (closure captures nothing)",
            allocations: "≤1 goal: new task (+ closure context)"
        ) { iterations in
            measure(iterations: iterations) {
                for _ in 0..<iterations {
                    consume(antecedent.continueOnSuccessWith { $0 &+ 1 })
                }
            }
        }
    }

    /// `continueOnSuccessWithTask` on a completed task, the closure returning a new completed
    /// task (which the library unwraps): the counterpart of SwiftNIO's `flatMap`.
    /// Allocations: the continuation's task (+ its closure context), the inner task: 2-3.
    static func boltsContinueOnSuccessWithTaskOnCompleted() -> TaskOperation {
        let antecedent = BoltsTask<Int>(1)
        return TaskOperation(
            "BoltsContinueOnSuccessWithTaskOnCompleted", .bolts,
            "Bolts continueOnSuccessWithTask on a completed task, returning a new completed task",
            allocations: "2-3: continuation task (+ context), inner task"
        ) { iterations in
            measure(iterations: iterations) {
                for _ in 0..<iterations {
                    consume(antecedent.continueOnSuccessWithTask { BoltsTask<Int>($0 &+ 1) })
                }
            }
        }
    }

    /// Create a `TaskCompletionSource`, then `set(result:)` with nobody waiting.
    /// Allocations: the source object and its task: 2.
    static func boltsSourceCreateAndSet() -> TaskOperation {
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
        }
    }

    /// Create a source, add `continuations` continuations to its pending task, then
    /// `set(result:)`, which runs them inline; one op is the whole sequence. Allocations:
    /// source + task (2), plus per continuation its task (+ a closure context): goal ≤1 each.
    static func boltsSourceWithWaitersThenSet(continuations: Int) -> TaskOperation {
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
        }
    }

    /// A chain of `links` continuations, each waiting on the previous one, built on a pending
    /// task; then `set(result:)` runs the whole chain on this thread (through the trampoline).
    /// One op is one link: (build + complete + release) / links. Allocations per link: its
    /// task (+ closure context if the library needs one).
    static func boltsPendingChainThenSet(links: Int) -> TaskOperation {
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
        }
    }
}
