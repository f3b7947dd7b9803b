// Swift Concurrency, the peer for the async operations. Each runs inside a detached Swift
// task on the global concurrent executor and times itself there.

/// `withUnsafeContinuation` whose body resumes the continuation at once: the cheapest
/// suspension point Swift offers, the peer for awaiting an already-completed task.
///
/// Expected allocations per op: none (RUNTIME-NOTES: 20-34 ns, task-local frame).
final class ConcurrencyUnsafeContinuationResumedAtOnce: Scenario {
    let name = "Swift Concurrency withUnsafeContinuation resumed at once"
    let subject = Subject.concurrency
    let expectedAllocations = "0: the async frame is reused"

    func run(iterations: Int) throws -> Sample {
        try runAsync {
            var sum = 0
            let sample = await measureAsync(iterations: iterations) {
                for i in 0..<iterations {
                    sum &+= await withUnsafeContinuation { $0.resume(returning: i) }
                }
            }
            consume(sum)
            return sample
        }
    }
}

/// `_Concurrency.Task { … }` (an unstructured child on the global executor) + `await value`:
/// the peer for a round trip through a pool.
///
/// Expected allocations per op: the task and its context: RUNTIME-NOTES measured 4.
final class ConcurrencyTaskAwaitValue: Scenario {
    let name = "Swift Concurrency Task { } + await value (round trip through the global executor)"
    let subject = Subject.concurrency
    let expectedAllocations = "~4: task, closure context, future storage"

    func run(iterations: Int) throws -> Sample {
        try runAsync {
            var sum = 0
            let sample = await measureAsync(iterations: iterations) {
                for i in 0..<iterations {
                    sum &+= await _Concurrency.Task { i }.value
                }
            }
            consume(sum)
            return sample
        }
    }
}
