import Dispatch
import Synchronization

/// Where a detached Swift task leaves its outcome for the blocked thread that waits on it.
private final class OutcomeBox: Sendable {
    let outcome = Mutex<Result<Sample, any Error>?>(nil)
}

/// Runs `body` in a detached Swift task (on the global concurrent executor) and blocks the
/// calling thread, which is never one of Swift's cooperative threads (the harness runs on
/// the main thread), until it returns.
func runAsync(_ body: @escaping @Sendable () async throws -> Sample) throws -> Sample {
    let box = OutcomeBox()
    let done = DispatchSemaphore(value: 0)
    _Concurrency.Task.detached {
        let result: Result<Sample, any Error>
        do {
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        box.outcome.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    return try box.outcome.withLock { $0! }.get()
}
