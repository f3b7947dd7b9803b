import CBoltsRuntime

// @unchecked Sendable: the mutable fields follow the invariants listed on `Task`
// (`_error` is written once before the release that publishes completion and read only
// after an acquire that saw it; `_parkedStep`, and the step and executor parked in the
// payload, are handed over by the release CAS that pushes the job that reads them, and
// read and cleared only by that job; for a job submitted straight to a pool, by whichever
// of the job and an awaiter on that pool's worker wins `bolts_task_begin_own_job`).
/// The non-generic part of every ``Task``: the C core's task, the error payload, the
/// pending continuation step and where the task was created. An implementation detail
/// (underscored, not API): it exists so that the C core can call back into a task without
/// knowing its value type. Public, not `package`, only because the public ``Task`` inherits
/// from it, and a superclass may not be less visible than its subclasses.
public class _BoltsTaskBase: @unchecked Sendable {
    /// The C state machine (`bolts_task_t *`), owned by this object.
    @usableFromInline
    internal let _core: OpaquePointer

    /// The error payload (see `Task`'s invariants).
    @usableFromInline
    @exclusivity(unchecked)
    internal nonisolated(unsafe) var _error: (any Error)?

    /// The type of the continuation step parked in the core's payload while this task
    /// waits (see `_await`), or nil. A metatype, so clearing it and destroying the task
    /// cost no value-witness calls.
    @usableFromInline
    @exclusivity(unchecked)
    internal nonisolated(unsafe) var _parkedStep: (any _ContinuationStep.Type)?

    @usableFromInline
    internal let _file: StaticString

    @usableFromInline
    internal let _line: UInt

    @usableFromInline
    internal init(core: OpaquePointer, file: StaticString, line: UInt) {
        self._core = core
        self._file = file
        self._line = line
    }

    deinit {
        // A step is still parked only if what this task waited on was abandoned pending.
        if let parked = _parkedStep { parked._discardParked(from: self) }
        if _outcome == BOLTS_ERROR, !bolts_task_observed(_core), let error = _error {
            TaskDiagnostics._reportUnobserved(error, file: _file, line: _line)
        }
        bolts_task_destroy(_core)
    }

    // MARK: The C core's transitions
    //
    // The extensions (continuations, cancellation, aggregates) read and complete tasks
    // through these, not through the C functions: one place says which C call each step
    // of the protocol is (see `Task`'s invariants for the ordering).

    /// The outcome so far; `BOLTS_PENDING` while running. Acquire: a completed outcome
    /// makes the value and `_error` written before its publication visible.
    @inlinable
    internal final var _outcome: bolts_outcome_t {
        @inline(__always) get { bolts_task_state(_core) }
    }

    /// Whether the task is complete and no continuation of it is still being dispatched,
    /// so that an inline continuation may run at once without a job (`bolts_task_settled`).
    @inlinable
    internal final var _isSettled: Bool {
        @inline(__always) get { bolts_task_settled(_core) }
    }

    /// Takes the sole right to complete the task; false if another completer has it.
    /// The winner writes the outcome's payload (value or `_error`), then calls `_publish`.
    @inlinable
    @inline(__always)
    internal final func _claim() -> Bool {
        bolts_task_claim(_core)
    }

    /// Publishes `outcome` (release) after a successful `_claim`, and runs the continuations.
    @inlinable
    @inline(__always)
    internal final func _publish(_ outcome: bolts_outcome_t) {
        bolts_task_publish(_core, outcome)
    }

    /// Cancels the task if nobody completed it yet.
    @inlinable
    @discardableResult
    internal final func _tryCancel() -> Bool {
        guard _claim() else { return false }
        _publish(BOLTS_CANCELLED)
        return true
    }

    /// Marks the error of a faulted task observed: its reader (a caller of `error`, a
    /// continuation, an aggregate) now owns it, and `deinit` does not report it.
    @inlinable
    @inline(__always)
    internal final func _markObserved() {
        bolts_task_mark_observed(_core)
    }

    /// The error of a faulted task, marked observed: the caller now owns it.
    @inlinable
    internal final func _takeError() -> any Error {
        _markObserved()
        return _error.unsafelyUnwrapped
    }

    /// Marks the error observed if the task faulted (it is being handed on).
    @inlinable
    internal final func _markObservedIfFaulted() {
        if _outcome == BOLTS_ERROR { _markObserved() }
    }

    /// Adds `job` to the task's continuations: it runs once the task completes, or is
    /// dropped (`job.drop`) if the task is destroyed while still pending.
    @inlinable
    @inline(__always)
    internal final func _add(_ job: UnsafeMutablePointer<bolts_job_t>) {
        bolts_task_add(_core, job)
    }

    // MARK: Waiting with the task's own job record

    /// Runs `step` (with this task) on `executor` once `other` completes. Uses this task's
    /// own job record: one wait at a time. Continuations whose executor is a pool are handed
    /// to the pool by the C core.
    ///
    /// No allocation: the job record lives in this task's core, the executor and the step
    /// are parked in the core's payload (free until this task completes; see
    /// `_ContinuationStep._park`), and the callback is a plain C function pointer.
    @inlinable
    internal final func _await<Step: _ContinuationStep>(
        _ other: _BoltsTaskBase,
        _ executor: Executor,
        _ step: consuming Step
    ) {
        let job = _parkInOwnJob(step, executor: executor)
        job.pointee.pool = executor._cPool
        // If `other` is abandoned while pending, drop the retain the job holds.
        job.pointee.drop = { context in
            Unmanaged<_BoltsTaskBase>.fromOpaque(context.unsafelyUnwrapped).release()
        }
        other._add(job)
    }

    /// Runs `step` (with this task) on a worker of the C pool `cPool`, through this task's
    /// own job record: the pool path of `Task.execute`. No allocation, as for `_await`. The
    /// step is parked with `.immediate` as its executor: the job already runs on the pool,
    /// and parking the pool's executor would bounce its reference count between the
    /// submitting thread and the workers. No `drop`: the pool runs every job exactly once
    /// (invariant I1).
    ///
    /// A worker of the same pool that awaits the task before the job is dequeued runs the
    /// step itself (`_runOwnJobHere`); the job, when dequeued, then finds it begun and only
    /// drops its reference.
    @inlinable
    internal final func _submit<Step: _ContinuationStep>(toCPool cPool: OpaquePointer, _ step: consuming Step) {
        let job = _parkInOwnJob(step, executor: .immediate)
        job.pointee.fn = { context in
            let base = Unmanaged<_BoltsTaskBase>.fromOpaque(context.unsafelyUnwrapped).takeRetainedValue()
            guard bolts_task_begin_own_job(base._core) else { return }  // an awaiter ran the step
            base._runParkedStep()
        }
        bolts_task_submit_own_job(_core, cPool)
    }

    /// For an awaiter: if this task's step sits in the queue of the pool whose worker is the
    /// calling thread (`_submit(toCPool:)`) and nobody has begun it, runs it here, now,
    /// instead of suspending until a worker dequeues it; returns whether it did. The step
    /// still runs on that pool, once; it only runs ahead of the jobs queued before it.
    @usableFromInline
    internal final func _runOwnJobHere() -> Bool {
        guard bolts_task_begin_own_job_here(_core) else { return false }
        _runParkedStep()
        return true
    }

    /// For an awaiter that is not a pool worker: if a pool runs this task's step (or is about
    /// to) and the awaiting Swift task is not cancelled, spins for a few microseconds
    /// (`bolts_task_spin_for_completion`: bounded, and skipped by a thread whose recent
    /// spins timed out); returns whether the task completed meanwhile, so that the awaiter
    /// neither suspends nor waits for its executor to wake a thread to resume it.
    @usableFromInline
    internal final func _spinForCompletion() -> Bool {
        if _Concurrency.Task.isCancelled { return false }
        return bolts_task_spin_for_completion(_core)
    }

    /// Parks `step` and `executor` in this task's payload and readies the core's own job
    /// record to run the step: a plain C callback, and a reference to this task that the
    /// job holds until it runs (a waiting task is kept alive by what it waits on). `pool`
    /// and `drop` are left clear for the caller. The step is moved in, not copied (see
    /// `_ContinuationStep._park`).
    @inlinable
    internal final func _parkInOwnJob<Step: _ContinuationStep>(_ step: consuming Step, executor: Executor)
        -> UnsafeMutablePointer<bolts_job_t>
    {
        assert(_parkedStep == nil, "a task waits on one task at a time")
        Step._park(executor, step, in: self)
        _parkedStep = Step.self
        let job = bolts_task_own_job(_core)
        job.pointee.fn = { context in
            Unmanaged<_BoltsTaskBase>.fromOpaque(context.unsafelyUnwrapped).takeRetainedValue()._runParkedStep()
        }
        job.pointee.context = Unmanaged.passRetained(self).toOpaque()
        job.pointee.pool = nil
        job.pointee.flags = 0
        job.pointee.drop = nil
        return job
    }

    /// Runs the step parked by `_parkInOwnJob` (with this task) and clears it: the body of
    /// the own job, for whoever holds the right to run it.
    @inlinable
    internal final func _runParkedStep() {
        let parked = _parkedStep.unsafelyUnwrapped
        _parkedStep = nil
        parked._runParked(on: self)
    }
}

/// Runs `body` once `task` completes, inline through the trampoline (or on `pool`).
/// Allocates one job record and one box; for aggregates and awaiters, not for continuations.
@usableFromInline
internal func _whenComplete(
    _ task: _BoltsTaskBase,
    on pool: OpaquePointer? = nil,
    _ body: @escaping @Sendable () -> Void
) {
    let box = Unmanaged.passRetained(_CallbackBox(body)).toOpaque()
    let job = bolts_job_create(
        { context in
            Unmanaged<_CallbackBox>.fromOpaque(context.unsafelyUnwrapped).takeRetainedValue().body()
        },
        box
    )
    job.pointee.pool = pool
    job.pointee.drop = { context in Unmanaged<_CallbackBox>.fromOpaque(context.unsafelyUnwrapped).release() }
    task._add(job)
}

@usableFromInline
internal final class _CallbackBox: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}
