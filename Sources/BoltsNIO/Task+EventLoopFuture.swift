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
    /// a ``/Bolts/ThreadPool`` whose queue holds jobs: there it is completed by a job queued
    /// behind them on that pool. A busy pool then wakes a sleeping event loop once for
    /// several completed tasks rather than once for each.
    ///
    /// Inlinable, so that the caller's `T` is known here: unspecialised, creating the
    /// promise looked up `EventLoopPromise<T>`'s metadata in the runtime on every call.
    @inlinable
    public func eventLoopFuture(on eventLoop: any EventLoop) -> EventLoopFuture<T> {
        let promise = eventLoop.makePromise(of: T.self)
        // Completing a promise from any thread is safe in SwiftNIO (it hops to the loop).
        self.continueWith { task in
            ThreadPool._runNowOrBehindQueuedJobs {
                if task.cancelled {
                    promise.fail(CancelledError())
                } else if let error = task.error {
                    promise.fail(error)
                } else if let value = task.result {
                    promise.succeed(value)
                }
            }
        }
        return promise.futureResult
    }
}
