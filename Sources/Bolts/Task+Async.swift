import CBoltsRuntime
import Synchronization

extension Task {
    /// Waits for the task without blocking a thread and returns its value.
    ///
    /// Throws the task's error (which marks it observed), or `CancellationError` when the
    /// task was cancelled. If the awaiting Swift task is cancelled, this returns at once by
    /// throwing `CancellationError`, without touching this task: other waiters still get
    /// its real outcome.
    ///
    /// Awaited on a worker of the pool that a `Task.execute(.pool(…))` task was submitted to,
    /// before any worker has started it, the closure runs right here (still on that pool,
    /// still once) instead of suspending the caller until a worker gets to it. Awaited
    /// anywhere else (a thread of Swift's default executor, an event loop), such a task is
    /// first waited for by spinning for a few microseconds at most, so that a short
    /// closure's value arrives without a suspension and a wake-up; a thread whose recent
    /// spins all ran out skips them for a while.
    ///
    /// The value of a completed task is read on the caller's executor (the getter is
    /// `nonisolated(nonsending)`): awaited from an actor, it does not hop off the actor and
    /// back. A pending task is waited for off the caller's actor, so that neither the spin
    /// nor a closure run in its place holds the actor.
    @inlinable
    public nonisolated(nonsending) var value: T {
        get async throws {
            // One acquire load of the state decides and reads the outcome.
            let outcome = _outcome
            if outcome != BOLTS_PENDING { return try _get(outcome) }
            return try await _valueWhenPending()
        }
    }

    /// ``value`` of a task that was pending when the getter looked: `@concurrent`, so it runs
    /// on the generic executor (or the awaiting task's executor preference), never on an
    /// actor the caller holds.
    @inlinable
    @concurrent
    internal func _valueWhenPending() async throws -> T {
        if isCompleted { return try _get() }
        if _runOwnJobHere(), isCompleted { return try _get() }
        if _spinForCompletion(), isCompleted { return try _get() }
        return try await _awaitValue()
    }

    /// The suspending part of ``value``: not inlined, it is the slow path. It touches no
    /// generic type built from `T` (an awaiter, a continuation or a result of `T` would each
    /// cost a metadata-cache lookup per call in this unspecialized code): the continuation
    /// only says whether the task completed, and the value is read from the task afterwards.
    @usableFromInline
    internal func _awaitValue() async throws -> T {
        if _Concurrency.Task.isCancelled { throw CancellationError() }
        // An awaiter off the pools that suspends on a pool's task: the workers' next idle
        // spins outlast its resumption (`BOLTS_POOL_SPIN_AWAITED_NS`), so that its next
        // task finds a worker awake; in a runtime built to yield idle CPUs
        // (`BOLTS_POOL_SPIN_YIELD`), they also keep theirs until it has resumed.
        let counted = bolts_task_await_suspend_begin(_core)
        defer { if counted { bolts_task_await_suspend_end() } }
        let awaiter = _Awaiter()
        let completed = await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Bool, Never>) in
                guard awaiter.wait(continuation) else {
                    continuation.resume(returning: false)
                    return
                }
                awaiter.resumeWhenCompleted(self)
            }
        } onCancel: {
            awaiter.finish(completed: false)
        }
        guard completed else { throw CancellationError() }
        return try _get()
    }

    /// The outcome of a completed task as a value or a thrown error.
    @inlinable
    internal func _get() throws -> T {
        try _get(_outcome)
    }

    /// `outcome`, which an acquire load of this task's state returned and which is not
    /// pending, as a value or a thrown error.
    @inlinable
    internal func _get(_ outcome: bolts_outcome_t) throws -> T {
        switch outcome {
        case BOLTS_SUCCESS: return _successValue
        case BOLTS_ERROR: throw _takeError()
        default: throw CancellationError()
        }
    }

    // Deliberately the same body as `init(priority:file:line:operation:)` (which takes a
    // `sending @isolated(any)` closure): each captures its own closure type, unconverted.
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

    // Deliberately the same body as `fromAsync` (see there).
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
/// resumes the continuation (with whether the task completed); the other finds nothing to
/// resume. Not generic (see `_awaitValue`), and it is itself the context of the job that
/// the task runs when it completes, so an await allocates this object and one job record.
/// (`_whenComplete` registers a closure the same way, in a box of its own: deliberately not
/// used here, where the box and the closure's context would be two more allocations.)
///
/// `@unchecked Sendable`: `continuation` is written once, by `wait`, before its release
/// CAS of `state` from idle to waiting, and read only by the one `finish` whose exchange
/// (acquire) found `waiting`; every other access goes through the atomic `state`.
internal final class _Awaiter: @unchecked Sendable {
    private static let idle = 0
    private static let waiting = 1
    private static let finished = 2

    private let state = Atomic<Int>(_Awaiter.idle)
    private var continuation: UnsafeContinuation<Bool, Never>?

    /// Stores the continuation; false if cancellation already happened (resume it now).
    func wait(_ continuation: UnsafeContinuation<Bool, Never>) -> Bool {
        self.continuation = continuation
        return state.compareExchange(expected: Self.idle, desired: Self.waiting, ordering: .acquiringAndReleasing)
            .exchanged
    }

    /// Resumes the continuation with `completed`, if nobody has yet.
    func finish(completed: Bool) {
        guard state.exchange(Self.finished, ordering: .acquiringAndReleasing) == Self.waiting else { return }
        continuation.unsafelyUnwrapped.resume(returning: completed)
    }

    /// Registers a job on `task` that finishes this await when the task completes. The job
    /// holds a reference to the awaiter; if the task is destroyed while still pending (so it
    /// can never complete), the job is dropped and the reference released.
    func resumeWhenCompleted(_ task: _AnyTask) {
        let job = bolts_job_create(
            { context in
                Unmanaged<_Awaiter>.fromOpaque(context.unsafelyUnwrapped).takeRetainedValue().finish(completed: true)
            },
            Unmanaged.passRetained(self).toOpaque()
        )
        job.pointee.drop = { context in Unmanaged<_Awaiter>.fromOpaque(context.unsafelyUnwrapped).release() }
        _TaskRef(task).add(job)
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
