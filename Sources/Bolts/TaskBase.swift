import CBoltsRuntime

// @unchecked Sendable: the mutable fields follow the invariants listed on `Task`
// (`_error` is written once before the release that publishes completion and read only
// after an acquire that saw it; `_step` and `_executor` are handed over by the release CAS
// that pushes the job that reads them, and read and cleared only by that job).
/// The non-generic part of every ``Task``: the C core's task, the error payload, the
/// pending continuation step and where the task was created. An implementation detail
/// (underscored, not API): it exists so that the C core can call back into a task without
/// knowing its value type.
public class _BoltsTaskBase: @unchecked Sendable {
    /// The C state machine (`bolts_task_t *`), owned by this object.
    @usableFromInline
    internal let _core: OpaquePointer

    /// The error payload (see `Task`'s invariants).
    @usableFromInline
    @exclusivity(unchecked)
    internal nonisolated(unsafe) var _error: (any Error)?

    /// What to run when the task this one waits on completes: a continuation's step (kept
    /// inline, see `Task+Steps.swift`) and where to run it. Cleared before the step runs,
    /// so the antecedent and the caller's closure are released as soon as it has run.
    @usableFromInline
    @exclusivity(unchecked)
    internal nonisolated(unsafe) var _step: (any _ContinuationStep)?

    @usableFromInline
    @exclusivity(unchecked)
    internal nonisolated(unsafe) var _executor: Executor = .default

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
        if bolts_task_state(_core) == BOLTS_ERROR, !bolts_task_observed(_core), let error = _error {
            TaskDiagnostics._reportUnobserved(error, file: _file, line: _line)
        }
        bolts_task_destroy(_core)
    }

    /// Runs `step` (with this task) on `executor` once `other` completes. Uses this task's
    /// own job record: one wait at a time. Continuations whose executor is a pool are handed
    /// to the pool by the C core.
    ///
    /// No allocation: the job record lives in this task's core, the step in this object,
    /// and the callback is a plain C function pointer.
    @inlinable
    internal final func _await(_ other: _BoltsTaskBase, _ executor: Executor, _ step: some _ContinuationStep) {
        _step = step
        _executor = executor
        let job = bolts_task_own_job(_core)
        job.pointee.fn = { context in
            let base = Unmanaged<_BoltsTaskBase>.fromOpaque(context.unsafelyUnwrapped).takeRetainedValue()
            // Moved out, not copied: no retain of the step's antecedent and closure here
            // and no release when the field is cleared.
            let step = base._step.take().unsafelyUnwrapped
            let executor = base._executor
            base._executor = .default
            if executor._runsInPlace {
                step.perform(base)
            } else {
                executor.execute { step.perform(base) }
            }
        }
        // Retained until the job runs: a waiting task is kept alive by what it waits on.
        job.pointee.context = Unmanaged.passRetained(self).toOpaque()
        job.pointee.pool = executor._cPool
        job.pointee.flags = 0
        // If `other` is abandoned while pending, drop the retain taken above.
        job.pointee.drop = { context in
            Unmanaged<_BoltsTaskBase>.fromOpaque(context.unsafelyUnwrapped).release()
        }
        bolts_task_add(other._core, job)
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
    )!
    job.pointee.pool = pool
    job.pointee.drop = { context in Unmanaged<_CallbackBox>.fromOpaque(context.unsafelyUnwrapped).release() }
    bolts_task_add(task._core, job)
}

@usableFromInline
internal final class _CallbackBox: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}
