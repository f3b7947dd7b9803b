import CBoltsRuntime

extension Task {
    /// Creates a task that runs `closure` on `executor` (inline by default, so the task is
    /// complete when this returns) and ends with what it returns or throws — the same as
    /// ``execute(_:file:line:closure:)``. A closure that awaits picks the async initializer.
    @inlinable
    public convenience init(
        _ executor: Executor = .default,
        file: StaticString = #fileID,
        line: UInt = #line,
        closure: @escaping @Sendable () throws -> T
    ) {
        self.init(_pendingAt: file, line: line)
        executor.execute { [self] in self._complete(with: closure) }
    }

    /// Runs `closure` on `executor` and returns a task that ends with what it returns or
    /// throws (`CancelledError`/`CancellationError` cancel the task).
    @inlinable
    @discardableResult
    public static func execute(
        _ executor: Executor = .default,
        file: StaticString = #fileID,
        line: UInt = #line,
        closure: consuming @escaping @Sendable () throws -> T
    ) -> Task<T> {
        let task = Task<T>(_pendingAt: file, line: line)
        if let cPool = executor._cPool {
            // The pool path allocates nothing beyond the task: its own job record carries
            // the closure to a worker. The closure is taken owned and moved into the job
            // (no retain and release of its context on this thread: the context sits next
            // to the previous jobs' on the heap, whose counts the workers are changing).
            task._submit(toCPool: cPool, _ExecuteStep<T>(body: closure))
        } else {
            let body = closure
            executor.execute { task._complete(with: body) }
        }
        return task
    }

    /// Runs `closure` on `executor`; the returned task ends as the task it returns ends.
    @inlinable
    @discardableResult
    public static func executeWithTask(
        _ executor: Executor = .default,
        file: StaticString = #fileID,
        line: UInt = #line,
        closure: @escaping @Sendable () throws -> Task<T>
    ) -> Task<T> {
        let task = Task<T>(_pendingAt: file, line: line)
        executor.execute {
            // Follow-or-fail, written out in each of its four places on purpose (specialised per step).
            do {
                task._follow(try closure())
            } catch {
                task._trySet(thrown: error)
            }
        }
        return task
    }

    /// Blocks the calling thread until the task ends.
    ///
    /// Deferred continuations queued on this thread's trampoline run before it sleeps, so
    /// waiting can never deadlock against work this thread itself postponed. On a
    /// ``ThreadPool`` worker, the pool is told the worker blocks, so it keeps running other
    /// jobs; but a task of `Task.execute(.pool(…))` still queued on this worker's own pool
    /// is run right here instead (still on that pool, still once), and nothing blocks. Not
    /// available from async code: `await` ``value`` instead.
    @available(*, noasync, message: "use `try await task.value` in async code")
    public func waitUntilCompleted() {
        if !isCompleted, _runOwnJobHere(), isCompleted { return }
        _ = bolts_task_wait(_core, -1)
    }

    /// Blocks the calling thread until the task ends or `timeout` seconds pass; returns
    /// whether the task has ended. A timeout of 0 just checks.
    @available(*, noasync, message: "use `try await task.value` in async code")
    @discardableResult
    public func waitUntilCompleted(timeout: Double) -> Bool {
        precondition(timeout >= 0 && !timeout.isNaN, "waitUntilCompleted(timeout:) with a negative timeout")
        return bolts_task_wait(_core, _waitNanoseconds(timeout))
    }

    /// Blocks the calling thread until the task ends or `timeout` passes; returns whether
    /// the task has ended. The `Double` form, to which it hands `timeout` converted to
    /// seconds (`timeout / .seconds(1)`, a `Double`: exact to the nanosecond up to about
    /// three weeks). `.zero` just checks; a negative timeout traps, as a negative number of
    /// seconds does.
    @available(*, noasync, message: "use `try await task.value` in async code")
    @discardableResult
    public func waitUntilCompleted(timeout: Duration) -> Bool {
        waitUntilCompleted(timeout: timeout / .seconds(1))
    }
}

/// A timeout in seconds (≥ 0, not NaN) as the C core's waits take it: nanoseconds, or -1
/// (no limit) from 9.2e9 seconds (about 292 years) on, whose nanoseconds would not fit an
/// `int64_t` (largest about 9.22e18); the bound is a round number below that, so that the
/// conversion of any smaller timeout cannot overflow. The core saturates its deadlines,
/// so any result is safe whatever the uptime (`bolts__deadline_after`).
internal func _waitNanoseconds(_ seconds: Double) -> Int64 {
    seconds >= 9.2e9 ? -1 : Int64((seconds * 1e9).rounded())
}

/// `Task.execute`'s closure, parked in the new task's payload while the task's own job
/// waits in a pool queue.
@usableFromInline
internal struct _ExecuteStep<T: Sendable>: _ContinuationStep {
    @usableFromInline let body: @Sendable () throws -> T

    @inlinable
    init(body: @escaping @Sendable () throws -> T) { self.body = body }

    @usableFromInline typealias Next = T

    @inlinable
    func perform(_ next: Task<T>) {
        next._complete(with: body)
    }
}
