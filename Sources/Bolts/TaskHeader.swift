import CBoltsRuntime

/// The non-generic part of every ``Task``: the C core's task itself (its storage, first, so
/// that the task costs one allocation and its state word shares a line with the object's
/// reference count), the pending continuation step and where the task was created. It is `Task`'s first stored property, so it sits right
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
    /// The C state machine, held here: `_TaskRef.core` is its address, the header's own
    /// (its first field). Zero, as a new header makes it, is a pending task
    /// (`bolts_task_storage_t`); never copied once the task exists.
    @usableFromInline
    internal var storage: bolts_task_storage_t

    /// The type of the continuation step parked in the core's payload while the task waits
    /// (see `_TaskRef.await`), or nil. A metatype, so clearing it and destroying the task
    /// cost no value-witness calls.
    @usableFromInline
    internal var parkedStep: (any _ContinuationStep.Type)?

    @usableFromInline
    internal let file: StaticString

    @usableFromInline
    internal let line: UInt

    /// A header whose task is pending (completed tasks complete it in place:
    /// `bolts_task_init_completed`).
    @inlinable
    internal init(file: StaticString, line: UInt) {
        self.storage = bolts_task_storage_t()
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
