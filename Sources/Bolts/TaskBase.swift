import CBoltsRuntime

/// The non-generic part of every ``Task``: the C core's task, the error payload, the
/// pending continuation work and where the task was created. An implementation detail
/// (underscored, not API): it exists so that the C core can call back into a task without
/// knowing its value type.
//
// @unchecked Sendable: the mutable fields follow the invariants listed on `Task`
// (`_error` is written once before the release that publishes completion and read only
// after an acquire that saw it; `_work` is handed over by the release CAS that pushes the
// job that reads it, and read and cleared only by that job).
public class _BoltsTaskBase: @unchecked Sendable {
    /// The C state machine (`bolts_task_t *`), owned by this object.
    @usableFromInline
    internal let _core: OpaquePointer

    /// The error payload (see `Task`'s invariants).
    @usableFromInline
    @exclusivity(unchecked)
    internal nonisolated(unsafe) var _error: (any Error)?

    /// What to run when the task this one waits on completes. Cleared before it runs, so
    /// the captured closures are released as soon as the continuation has run.
    @usableFromInline
    @exclusivity(unchecked)
    internal nonisolated(unsafe) var _work: (@Sendable (_BoltsTaskBase) -> Void)?

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

    /// Runs `work` (with this object) once `other` completes, on `pool` if given, else
    /// inline through the trampoline. Uses this task's own job record: one wait at a time.
    ///
    /// No allocation beyond `work`'s context: the job record lives in this task's core,
    /// and the callback is a plain C function pointer.
    @inlinable
    internal final func _await(
        _ other: _BoltsTaskBase,
        on pool: OpaquePointer?,
        _ work: @escaping @Sendable (_BoltsTaskBase) -> Void
    ) {
        _work = work
        let job = bolts_task_own_job(_core)
        job.pointee.fn = { context in
            let base = Unmanaged<_BoltsTaskBase>.fromOpaque(context.unsafelyUnwrapped).takeRetainedValue()
            let work = base._work!
            base._work = nil
            work(base)
        }
        // Retained until the job runs: a waiting task is kept alive by what it waits on.
        job.pointee.context = Unmanaged.passRetained(self).toOpaque()
        job.pointee.pool = pool
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
