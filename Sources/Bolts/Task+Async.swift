import CBoltsRuntime
import Synchronization

extension Task {
    /// Waits for the task without blocking a thread and returns its value.
    ///
    /// Throws the task's error (which marks it observed), or `CancellationError` when the
    /// task was cancelled. If the awaiting Swift task is cancelled, this returns at once by
    /// throwing `CancellationError`, without touching this task: other waiters still get
    /// its real outcome.
    @inlinable
    public var value: T {
        get async throws {
            if completed { return try _get() }
            return try await _awaitValue()
        }
    }

    /// The suspending part of ``value``: not inlined, it is the slow path.
    @usableFromInline
    internal func _awaitValue() async throws -> T {
        if _Concurrency.Task.isCancelled { throw CancellationError() }
        let awaiter = _Awaiter<T>()
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<T, any Error>) in
                guard awaiter.wait(continuation) else {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                _whenComplete(self) { [self] in
                    awaiter.finish()?.resume(with: Result { try self._get() })
                }
            }
        } onCancel: {
            awaiter.finish()?.resume(throwing: CancellationError())
        }
    }

    /// The outcome of a completed task as a value or a thrown error.
    @inlinable
    internal func _get() throws -> T {
        switch _outcome {
        case BOLTS_SUCCESS: return _successValue
        case BOLTS_ERROR: throw _takeError()
        default: throw CancellationError()
        }
    }

    /// Runs `operation` as a Swift Concurrency task and returns a Bolts task that ends
    /// with its outcome (`CancellationError`/`CancelledError` cancel it).
    @discardableResult
    public static func fromAsync(
        priority: TaskPriority? = nil,
        file: StaticString = #fileID,
        line: UInt = #line,
        _ operation: @escaping @Sendable () async throws -> T
    ) -> Task<T> {
        let task = Task<T>(_pendingAt: file, line: line)
        _Concurrency.Task(priority: priority) {
            do {
                task._trySet(value: try await operation())
            } catch {
                task._trySet(thrown: error)
            }
        }
        return task
    }

    /// Runs `operation` as a Swift Concurrency task, like `_Concurrency.Task { … }`, and
    /// ends with its outcome. This keeps `Task { await … }` compiling in files that import
    /// Bolts; the result is a Bolts task (await it with `try await task.value`).
    @discardableResult
    public convenience init(
        priority: TaskPriority? = nil,
        file: StaticString = #fileID,
        line: UInt = #line,
        operation: sending @escaping @isolated(any) () async throws -> T
    ) {
        self.init(_pendingAt: file, line: line)
        _Concurrency.Task(priority: priority) { [self] in
            do {
                self._trySet(value: try await operation())
            } catch {
                self._trySet(thrown: error)
            }
        }
    }
}

/// One `await` of a task's value: whichever of completion and cancellation comes first
/// takes the continuation; the other finds nothing to resume.
internal final class _Awaiter<T: Sendable>: Sendable {
    private enum State {
        case idle
        case waiting(UnsafeContinuation<T, any Error>)
        case finished
    }

    private let state = Mutex<State>(.idle)

    /// Stores the continuation; false if cancellation already happened (resume it now).
    func wait(_ continuation: UnsafeContinuation<T, any Error>) -> Bool {
        state.withLock { state in
            if case .finished = state { return false }
            state = .waiting(continuation)
            return true
        }
    }

    /// Takes the continuation, if nobody has yet; marks the await finished either way.
    func finish() -> UnsafeContinuation<T, any Error>? {
        state.withLock { state in
            defer { state = .finished }
            if case .waiting(let continuation) = state { return continuation }
            return nil
        }
    }
}

// Swift Concurrency's everyday statics, forwarded so that they keep working in files where
// `Task` means Bolts' task.
extension Task where T == Never {
    /// Forwards to `_Concurrency.Task.sleep(nanoseconds:)`.
    public static func sleep(nanoseconds duration: UInt64) async throws {
        try await _Concurrency.Task.sleep(nanoseconds: duration)
    }

    /// Forwards to `_Concurrency.Task.sleep(for:)`.
    public static func sleep(for duration: Duration) async throws {
        try await _Concurrency.Task.sleep(for: duration)
    }

    /// Forwards to `_Concurrency.Task.yield()`.
    public static func yield() async {
        await _Concurrency.Task.yield()
    }

    /// Forwards to `_Concurrency.Task.isCancelled`.
    public static var isCancelled: Bool { _Concurrency.Task.isCancelled }

    /// Forwards to `_Concurrency.Task.checkCancellation()`.
    public static func checkCancellation() throws {
        try _Concurrency.Task.checkCancellation()
    }
}
