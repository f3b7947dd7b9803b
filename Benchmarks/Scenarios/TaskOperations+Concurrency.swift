// Swift Concurrency, the peer for the async operations. Each runs inside a detached Swift
// task on the global concurrent executor and times itself there.
extension TaskOperation {
    /// `withUnsafeContinuation` whose body resumes the continuation at once: the cheapest
    /// suspension point Swift offers, the peer for awaiting an already-completed task.
    /// Allocations: none (RUNTIME-NOTES: 20-34 ns, task-local frame).
    static func concurrencyUnsafeContinuationResumedAtOnce() -> TaskOperation {
        inSwiftTask(
            "ConcurrencyUnsafeContinuationResumedAtOnce", .concurrency,
            "Swift Concurrency withUnsafeContinuation resumed at once", allocations: "0: the async frame is reused"
        ) { iterations in
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

    /// `_Concurrency.Task { … }` (an unstructured child on the global executor) + `await
    /// value`: the peer for a round trip through a pool. Allocations: the task and its
    /// context: RUNTIME-NOTES measured 4.
    static func concurrencyTaskAwaitValue() -> TaskOperation {
        inSwiftTask(
            "ConcurrencyTaskAwaitValue", .concurrency,
            "Swift Concurrency Task { } + await value (round trip through the global executor)",
            allocations: "~4: task, closure context, future storage"
        ) { iterations in
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
