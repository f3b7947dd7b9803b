import CBoltsRuntime

/// A task whose value type is not known here, by an unretained reference: the C core's
/// transitions, and the waits that use the task's own job record. Every ``Task`` forwards
/// to these, so each step of the protocol is one C call in one place (see `Task`'s
/// invariants for the ordering). The caller keeps the task alive for the call.
@usableFromInline
@frozen
internal struct _TaskRef {
    /// The task, a `Task<T>` of some `T`.
    @usableFromInline
    internal let object: Unmanaged<AnyObject>

    /// `task`'s address, taken without a retain.
    @inlinable
    @inline(__always)
    internal init<Object: AnyObject>(_ task: Object) {
        object = Unmanaged.fromOpaque(Unmanaged.passUnretained(task).toOpaque())
    }

    @inlinable
    @inline(__always)
    internal init(_ object: Unmanaged<AnyObject>) {
        self.object = object
    }

    /// The task's header (see `_TaskHeader`).
    @inlinable
    internal var header: UnsafeMutablePointer<_TaskHeader> {
        @inline(__always) get {
            UnsafeMutableRawPointer(object.toOpaque()).advanced(by: _taskHeaderOffset)
                .assumingMemoryBound(to: _TaskHeader.self)
        }
    }

    /// The C core.
    @inlinable
    internal var core: OpaquePointer {
        @inline(__always) get { header.pointee.core }
    }

    // MARK: The C core's transitions

    /// The outcome so far; `BOLTS_PENDING` while running. Acquire: a completed outcome
    /// makes the value and the error written before its publication visible.
    @inlinable
    internal var outcome: bolts_outcome_t {
        @inline(__always) get { bolts_task_state(core) }
    }

    /// Whether the task is complete and no continuation of it is still being dispatched,
    /// so that an inline continuation may run at once without a job (`bolts_task_settled`).
    @inlinable
    internal var isSettled: Bool {
        @inline(__always) get { bolts_task_settled(core) }
    }

    /// Takes the sole right to complete the task; false if another completer has it.
    /// The winner writes the outcome's payload (value or error), then calls `publish`.
    @inlinable
    @inline(__always)
    internal func claim() -> Bool {
        bolts_task_claim(core)
    }

    /// Publishes `outcome` (release) after a successful `claim`, and runs the continuations.
    @inlinable
    @inline(__always)
    internal func publish(_ outcome: bolts_outcome_t) {
        bolts_task_publish(core, outcome)
    }

    /// Cancels the task if nobody completed it yet.
    @inlinable
    @discardableResult
    internal func tryCancel() -> Bool {
        guard claim() else { return false }
        publish(BOLTS_CANCELLED)
        return true
    }

    /// Marks the error of a faulted task observed: its reader (a caller of `error`, a
    /// continuation, an aggregate) now owns it, and the task's `deinit` does not report it.
    @inlinable
    @inline(__always)
    internal func markObserved() {
        bolts_task_mark_observed(core)
    }

    /// Adds `job` to the task's continuations: it runs once the task completes, or is
    /// dropped (`job.drop`) if the task is destroyed while still pending.
    @inlinable
    @inline(__always)
    internal func add(_ job: UnsafeMutablePointer<bolts_job_t>) {
        bolts_task_add(core, job)
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
    internal func await<Step: _ContinuationStep>(_ other: _TaskRef, _ executor: Executor, _ step: consuming Step) {
        let job = parkInOwnJob(step, executor: executor)
        job.pointee.pool = executor._cPool
        // If `other` is abandoned while pending, drop the retain the job holds.
        job.pointee.drop = { context in
            Unmanaged<AnyObject>.fromOpaque(context.unsafelyUnwrapped).release()
        }
        other.add(job)
    }

    /// Runs `step` (with this task) on a worker of the C pool `cPool`, through this task's
    /// own job record: the pool path of `Task.execute`. No allocation, as for `await`. The
    /// step is parked with `.immediate` as its executor: the job already runs on the pool,
    /// and parking the pool's executor would bounce its reference count between the
    /// submitting thread and the workers. No `drop`: the pool runs every job exactly once
    /// (invariant I1).
    ///
    /// A worker of the same pool that awaits the task before the job is dequeued runs the
    /// step itself (`runOwnJobHere`); the job, when dequeued, then finds it begun and only
    /// drops its reference.
    @inlinable
    internal func submit<Step: _ContinuationStep>(toCPool cPool: OpaquePointer, _ step: consuming Step) {
        let job = parkInOwnJob(step, executor: .immediate)
        job.pointee.fn = { context in
            let object = Unmanaged<AnyObject>.fromOpaque(context.unsafelyUnwrapped)
            defer { object.release() }
            let task = _TaskRef(object)
            guard bolts_task_begin_own_job(task.core) else { return }  // an awaiter ran the step
            task.runParkedStep()
        }
        bolts_task_submit_own_job(core, cPool)
    }

    /// For an awaiter: if this task's step sits in the queue of the pool whose worker is the
    /// calling thread (`submit(toCPool:)`) and nobody has begun it, runs it here, now,
    /// instead of suspending until a worker dequeues it; returns whether it did. The step
    /// still runs on that pool, once; it only runs ahead of the jobs queued before it.
    @usableFromInline
    internal func runOwnJobHere() -> Bool {
        guard bolts_task_begin_own_job_here(core) else { return false }
        runParkedStep()
        return true
    }

    /// For an awaiter that is not a pool worker: if a pool runs this task's step (or is about
    /// to) and the awaiting Swift task is not cancelled, spins for a few microseconds
    /// (`bolts_task_spin_for_completion`: bounded, and skipped by a thread whose recent
    /// spins timed out); returns whether the task completed meanwhile, so that the awaiter
    /// neither suspends nor waits for its executor to wake a thread to resume it.
    @usableFromInline
    internal func spinForCompletion() -> Bool {
        if _Concurrency.Task.isCancelled { return false }
        return bolts_task_spin_for_completion(core)
    }

    /// Parks `step` and `executor` in this task's payload and readies the core's own job
    /// record to run the step: a plain C callback, and a reference to this task that the
    /// job holds until it runs (a waiting task is kept alive by what it waits on). `pool`
    /// and `drop` are left clear for the caller. The step is moved in, not copied (see
    /// `_ContinuationStep._park`).
    @inlinable
    internal func parkInOwnJob<Step: _ContinuationStep>(_ step: consuming Step, executor: Executor)
        -> UnsafeMutablePointer<bolts_job_t>
    {
        assert(header.pointee.parkedStep == nil, "a task waits on one task at a time")
        Step._park(executor, step, in: self)
        header.pointee.parkedStep = Step.self
        let job = bolts_task_own_job(core)
        job.pointee.fn = { context in
            let object = Unmanaged<AnyObject>.fromOpaque(context.unsafelyUnwrapped)
            defer { object.release() }
            _TaskRef(object).runParkedStep()
        }
        job.pointee.context = UnsafeMutableRawPointer(object.retain().toOpaque())
        job.pointee.pool = nil
        job.pointee.flags = 0
        job.pointee.drop = nil
        return job
    }

    /// Runs the step parked by `parkInOwnJob` (with this task) and clears it: the body of
    /// the own job, for whoever holds the right to run it. The caller holds a reference to
    /// the task for the call.
    @inlinable
    internal func runParkedStep() {
        let parked = header.pointee.parkedStep.unsafelyUnwrapped
        header.pointee.parkedStep = nil
        object._withUnsafeGuaranteedRef { parked._runParked(on: $0) }
    }
}

/// Runs `body` once `task` completes, inline through the trampoline (or on `pool`).
/// Allocates one job record and one box; for aggregates and awaiters, not for continuations.
@usableFromInline
internal func _whenComplete(
    _ task: _AnyTask,
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
    _TaskRef(task).add(job)
}

@usableFromInline
internal final class _CallbackBox: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}
