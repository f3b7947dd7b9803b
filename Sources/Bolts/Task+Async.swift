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

    /// The suspending part of ``value``: not inlined, it is the slow path. One allocation
    /// (the awaiter, which is also the context of the job that resumes it).
    @usableFromInline
    internal func _awaitValue() async throws -> T {
        if _Concurrency.Task.isCancelled { throw CancellationError() }
        let awaiter = _Awaiter<T>(self)
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<T, any Error>) in
                guard awaiter.wait(continuation) else {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                awaiter._resumeWhenComplete()
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

// @unchecked Sendable: no stored state; the subclass synchronizes its own (one atomic word).
/// The non-generic part of an awaiter: what the C job that fires on completion calls.
internal class _AwaiterBase: @unchecked Sendable {
    /// Resumes the waiting continuation, if cancellation has not taken it already, with
    /// the (completed) task's outcome.
    func _taskCompleted() {}

    /// Adds a job to `task` that calls `_taskCompleted` once it completes. The job holds a
    /// reference to this awaiter until it runs (or until the task is abandoned).
    final func _fire(whenComplete task: _BoltsTaskBase) {
        let job = bolts_job_create(
            { context in
                Unmanaged<_AwaiterBase>.fromOpaque(context.unsafelyUnwrapped).takeRetainedValue()._taskCompleted()
            },
            Unmanaged.passRetained(self).toOpaque()
        )!
        job.pointee.drop = { context in Unmanaged<_AwaiterBase>.fromOpaque(context.unsafelyUnwrapped).release() }
        bolts_task_add(task._core, job)
    }
}

// @unchecked Sendable: `task` is immutable (and `Task` is Sendable); `continuation` is
// written once, before the release CAS that publishes it, and read only by the one caller
// of `finish` whose exchange (acquire) saw it published.
/// One `await` of a task's value: whichever of completion and cancellation comes first
/// takes the continuation; the other finds nothing to resume. Lock-free: one atomic word
/// (idle → waiting → finished, or idle → finished when cancellation comes first).
internal final class _Awaiter<T: Sendable>: _AwaiterBase, @unchecked Sendable {
    private static var idle: Int { 0 }
    private static var waiting: Int { 1 }
    private static var finished: Int { 2 }

    private let task: Task<T>
    private let state = Atomic<Int>(0)
    private nonisolated(unsafe) var continuation: UnsafeContinuation<T, any Error>?

    init(_ task: Task<T>) { self.task = task }

    /// Stores the continuation; false if cancellation already happened (resume it now).
    func wait(_ continuation: UnsafeContinuation<T, any Error>) -> Bool {
        self.continuation = continuation
        // Release on success: publishes `continuation` to the `finish` that takes it.
        // Relaxed on failure: the state is then `finished` and nothing is read.
        return state.compareExchange(
            expected: Self.idle,
            desired: Self.waiting,
            successOrdering: .releasing,
            failureOrdering: .relaxed
        ).exchanged
    }

    /// Takes the continuation, if nobody has yet; marks the await finished either way.
    func finish() -> UnsafeContinuation<T, any Error>? {
        // Acquiring: if the old state is `waiting`, pairs with `wait`'s release so that the
        // continuation is visible; exactly one exchange can see `waiting`.
        guard state.exchange(Self.finished, ordering: .acquiring) == Self.waiting else { return nil }
        return continuation
    }

    /// Resumes the continuation with the task's outcome once it completes.
    func _resumeWhenComplete() { _fire(whenComplete: task) }

    override func _taskCompleted() {
        finish()?.resume(with: Result { try task._get() })
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
