import Bolts
import NIOCore

extension Task {
    /// A future on `eventLoop` that completes when this task ends.
    ///
    /// | the task ends | the future |
    /// | --- | --- |
    /// | with a value | succeeds with it |
    /// | with an error | fails with that error (which counts as observed: it is handed on) |
    /// | cancelled | fails with ``/Bolts/CancelledError`` (which turns back into a cancelled task in ``NIOCore/EventLoopFuture/boltsTask(cancellationToken:)``) |
    ///
    /// The future's callbacks run on `eventLoop`, as with any future of that loop. The task
    /// is not retained beyond its completion.
    ///
    /// The future is completed on the thread that completes the task, except on a worker of
    /// a ``/Bolts/ThreadPool`` of more than one worker whose queue holds jobs: there it is
    /// completed by a job queued behind them on that pool. A busy pool then wakes a
    /// sleeping event loop once for several completed tasks rather than once for each. A
    /// job queued there that waits for this future where the pool cannot see it
    /// (`wait()`, a semaphore) waits until another worker takes the completion from that
    /// worker's queue (an idle one within 1.6 ms, a busy one once the waiting worker has
    /// run nothing for a millisecond); Bolts' own waits (`waitUntilCompleted()`) get a
    /// compensating worker. A task already completed when this is called completes the
    /// future here and now.
    @inlinable
    public func eventLoopFuture(on eventLoop: any EventLoop) -> EventLoopFuture<T> {
        // Inlinable, so that the caller's `T` is known here: unspecialized, creating the
        // promise would look up `EventLoopPromise<T>`'s metadata in the runtime on every call.
        let promise = eventLoop.makePromise(of: T.self)
        if self.isCompleted {
            Self._complete(promise, from: self)
            return promise.futureResult
        }
        // Completing a promise from any thread is safe in SwiftNIO (it hops to the loop).
        self.continueWith { task in
            ThreadPool._runNowOrBehindQueuedJobs((task, promise)) { task, promise in
                Self._complete(promise, from: task)
            }
        }
        return promise.futureResult
    }

    /// Completes `promise` with the outcome of `task`, which has completed.
    @inlinable
    static func _complete(_ promise: EventLoopPromise<T>, from task: Task<T>) {
        if task.isCancelled {
            promise.fail(CancelledError())
        } else if let error = task.error {
            promise.fail(error)
        } else if let value = task.result {
            promise.succeed(value)
        }
    }
}
