import CBoltsRuntime

/// The non-generic part of every ``Task``: the C core's task, the pending continuation step
/// and where the task was created. It is `Task`'s first stored property, so it sits right
/// after the two-word object header of a Swift root class, at `_taskHeaderOffset`, whatever
/// the value type: code that does not know the value type (the C core's callbacks, the
/// aggregates' join) reaches it through ``_TaskRef``. `TaskLayoutTests` checks the offset
/// for value types of every kind and size, and every task's initializer asserts it in debug
/// builds.
///
/// Trivial (no reference-counted field), so that creating and destroying a task copies it
/// as plain memory, with no value-witness calls; the error payload is a property of `Task`
/// of its own.
///
/// Field invariants (see `Task`): `parkedStep`, and the step and executor parked in the
/// payload, are handed over by the release CAS that pushes the job that reads them, and
/// read and cleared only by that job (for a job submitted straight to a pool, by whichever
/// of the job and an awaiter on that pool's worker wins `bolts_task_begin_own_job`).
@usableFromInline
internal struct _TaskHeader {
    /// The C state machine (`bolts_task_t *`), owned by the task.
    @usableFromInline
    internal let core: OpaquePointer

    /// The type of the continuation step parked in the core's payload while the task waits
    /// (see `_TaskRef.await`), or nil. A metatype, so clearing it and destroying the task
    /// cost no value-witness calls.
    @usableFromInline
    internal var parkedStep: (any _ContinuationStep.Type)?

    @usableFromInline
    internal let file: StaticString

    @usableFromInline
    internal let line: UInt

    @inlinable
    internal init(core: OpaquePointer, file: StaticString, line: UInt) {
        self.core = core
        self.parkedStep = nil
        self.file = file
        self.line = line
    }
}

/// A task whose value type is not known here: a `Task<T>` of some `T`.
@usableFromInline
internal typealias _AnyTask = AnyObject

/// Where `Task._header` lives in a task object: right after the object header (a metadata
/// pointer and a reference count).
@usableFromInline
internal let _taskHeaderOffset = 2 * MemoryLayout<Int>.size
