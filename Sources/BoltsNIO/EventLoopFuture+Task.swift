import Bolts
import NIOCore

extension EventLoopFuture where Value: Sendable {
    /// A Bolts task that ends when this future completes.
    ///
    /// | the future | the task |
    /// | --- | --- |
    /// | succeeds | ends with the value |
    /// | fails with ``/Bolts/CancelledError`` or Swift's `CancellationError` | is cancelled |
    /// | fails with any other error | is faulted with that error |
    ///
    /// - Parameter cancellationToken: Cancelling it cancels the task at once (SwiftNIO
    ///   futures cannot be cancelled, so the future's later outcome is then ignored).
    ///   Already cancelled: the task is returned cancelled.
    /// - Returns: A task whose continuations run where their executors say; the task
    ///   completes on the future's event loop.
    @inlinable
    public func boltsTask(cancellationToken: CancellationToken? = nil) -> BoltsTask<Value> {
        // Inlinable for the same reason as `Task.eventLoopFuture(on:)`: the caller's `Value`
        // known here spares a metadata look-up per call.
        let source = TaskCompletionSource<Value>()
        let registration = cancellationToken?.register { _ = source.tryCancel() }
        self.whenComplete { result in
            switch result {
            case .success(let value):
                _ = source.trySet(result: value)
            case .failure(let error) where error is CancelledError || error is CancellationError:
                _ = source.tryCancel()
            case .failure(let error):
                _ = source.trySet(error: error)
            }
            registration?.dispose()
        }
        return source.task
    }
}
