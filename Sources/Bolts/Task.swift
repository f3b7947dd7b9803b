import CBoltsRuntime

//
// @unchecked Sendable, proven by these invariants:
//  1. The success value (in the core's payload) and `_error` are written only by the thread whose `bolts_task_claim`
//     succeeded, and only before its `bolts_task_publish` (release).
//  2. They are read only after `bolts_task_state` (acquire) returned a completed outcome,
//     so every read happens-after the single write; after publish they never change.
//  3. `parkedStep` (in the header) and the step and executor parked in the payload are
//     written before the job that reads them is pushed with a release CAS, and read and
//     cleared only by that job, which runs once.
/// A thread-safe promise: a `Task` ends exactly once, in success (with a value), in an error,
/// or cancelled, and runs the continuations added to it after that outcome is visible.
///
/// Create pending tasks with ``TaskCompletionSource``, completed ones with ``init(_:)``,
/// ``init(error:file:line:)`` and ``cancelledTask()``, and derived ones with the
/// `continue…` methods and the aggregates (`whenAll`, `whenAny`, …).
///
/// Inside a file that imports Bolts, `Task` names this type; `_Concurrency.Task` still names
/// Swift Concurrency's, and ``BoltsTask`` is an unambiguous alias for this one. The common
/// Swift Concurrency statics (`Task.sleep`, `Task.yield()`, `Task.isCancelled`,
/// `Task.checkCancellation()`) are forwarded, and `Task { await … }` still compiles: it runs
/// the closure and completes with its outcome.
///
/// Memory ordering: the state lives in one atomic word of the C core. The completer writes
/// the outcome, then publishes it with a release exchange; every reader (`isCompleted`,
/// `result`, a continuation) goes through an acquire load of that word first.
public final class Task<T: Sendable>: @unchecked Sendable {
    /// The non-generic part: the first stored property, at `_taskHeaderOffset` for every
    /// `T` (see `_TaskHeader`). Read and written through `_ref`, whose offset is a constant,
    /// not through the property, whose offset unspecialized code would look up in the
    /// class's metadata.
    @usableFromInline
    internal var _header: _TaskHeader

    /// The error payload (see the invariants above).
    @usableFromInline
    @exclusivity(unchecked)
    internal nonisolated(unsafe) var _error: (any Error)?

    @usableFromInline
    internal init(_pendingAt file: StaticString, line: UInt) {
        _header = _TaskHeader(core: bolts_task_create(), file: file, line: line)
        _assertHeaderOffset()
    }

    @usableFromInline
    internal init(_completed outcome: bolts_outcome_t, value: T?, error: (any Error)?, file: StaticString, line: UInt) {
        _header = _TaskHeader(core: bolts_task_create_completed(outcome), file: file, line: line)
        _error = error
        _assertHeaderOffset()
        if let value { _storeValue(value) }
    }

    deinit {
        let ref = _ref
        // Read once: nothing else holds the task, so nobody can complete it now.
        let outcome = ref.outcome
        // A trivial value kept inline needs nothing.
        if !(_isPOD(T.self) && Self._valueIsInline), outcome == BOLTS_SUCCESS {
            let slot = _valueSlot
            if !_isPOD(T.self) { slot.deinitialize(count: 1) }
            if !Self._valueIsInline { slot.deallocate() }
        }
        let header = ref.header
        // A step is still parked only if what this task waited on was abandoned pending.
        if let parked = header.pointee.parkedStep { parked._discardParked(from: ref) }
        if outcome == BOLTS_ERROR, !bolts_task_observed(header.pointee.core), let error = _error {
            TaskDiagnostics._reportUnobserved(error, file: header.pointee.file, line: header.pointee.line)
        }
        bolts_task_destroy(header.pointee.core)
    }

    /// Checks, in debug builds, that `_header` is where `_TaskRef` reads it.
    @inlinable
    internal func _assertHeaderOffset() {
        assert(
            withUnsafeMutablePointer(to: &_header) { (field: UnsafeMutablePointer<_TaskHeader>) in field == _ref.header },
            "Task._header is not at _taskHeaderOffset"
        )
    }

    // MARK: The C core (see `_TaskRef`)

    /// This task, seen without its value type.
    @inlinable
    internal var _ref: _TaskRef {
        @inline(__always) get { _TaskRef(self) }
    }

    /// The C core.
    @inlinable
    internal var _core: OpaquePointer {
        @inline(__always) get { _ref.core }
    }

    /// The outcome so far; `BOLTS_PENDING` while running (acquire: see `_TaskRef.outcome`).
    @inlinable
    internal var _outcome: bolts_outcome_t {
        @inline(__always) get { _ref.outcome }
    }

    /// Whether the task is complete and done dispatching (see `_TaskRef.isSettled`).
    @inlinable
    internal var _isSettled: Bool {
        @inline(__always) get { _ref.isSettled }
    }

    /// Takes the sole right to complete the task (see `_TaskRef.claim`).
    @inlinable
    @inline(__always)
    internal func _claim() -> Bool { _ref.claim() }

    /// Publishes `outcome` after a successful `_claim` (see `_TaskRef.publish`).
    @inlinable
    @inline(__always)
    internal func _publish(_ outcome: bolts_outcome_t) { _ref.publish(outcome) }

    /// Cancels the task if nobody completed it yet.
    @inlinable
    @discardableResult
    internal func _tryCancel() -> Bool { _ref.tryCancel() }

    /// Marks the error of a faulted task observed (see `_TaskRef.markObserved`).
    @inlinable
    @inline(__always)
    internal func _markObserved() { _ref.markObserved() }

    /// The error of a faulted task, marked observed: the caller now owns it.
    @inlinable
    internal func _takeError() -> any Error {
        _markObserved()
        return _error.unsafelyUnwrapped
    }

    /// Marks the error observed if the task faulted (it is being handed on).
    @inlinable
    internal func _markObservedIfFaulted() {
        if _outcome == BOLTS_ERROR { _markObserved() }
    }

    /// Adds `job` to the task's continuations (see `_TaskRef.add`).
    @inlinable
    @inline(__always)
    internal func _add(_ job: UnsafeMutablePointer<bolts_job_t>) { _ref.add(job) }

    /// Runs `step` (with this task) on `executor` once `other` completes (see `_TaskRef.await`).
    @inlinable
    internal func _await<U, Step: _ContinuationStep>(_ other: Task<U>, _ executor: Executor, _ step: consuming Step) {
        _ref.await(other._ref, executor, step)
    }

    /// Runs `step` (with this task) on a worker of the C pool `cPool` (see `_TaskRef.submit`).
    @inlinable
    internal func _submit<Step: _ContinuationStep>(toCPool cPool: OpaquePointer, _ step: consuming Step) {
        _ref.submit(toCPool: cPool, step)
    }

    /// Runs this task's queued step here, on its pool's worker (see `_TaskRef.runOwnJobHere`).
    @inlinable
    internal func _runOwnJobHere() -> Bool { _ref.runOwnJobHere() }

    /// Spins briefly for a pool to complete this task (see `_TaskRef.spinForCompletion`).
    @inlinable
    internal func _spinForCompletion() -> Bool { _ref.spinForCompletion() }

    // MARK: Value storage
    //
    // The success value lives in the C task's payload area when it fits (most values do),
    // else in a separate allocation whose pointer the payload holds. Keeping it out of a
    // Swift `T?` stored property matters: destroying a generic optional field in the
    // (unspecialized) deinit costs a metadata-cache lookup on every task.

    /// Whether values of `T` fit in the core's payload area.
    @inlinable
    internal static var _valueIsInline: Bool {
        MemoryLayout<T>.size <= Int(BOLTS_TASK_PAYLOAD_SIZE) && MemoryLayout<T>.alignment <= 16
    }

    /// Where the success value is (valid once the task succeeded, or while storing it).
    @inlinable
    internal var _valueSlot: UnsafeMutablePointer<T> {
        let raw = bolts_task_payload(_core)
        if Self._valueIsInline { return raw.assumingMemoryBound(to: T.self) }
        return raw.load(as: UnsafeMutablePointer<T>.self)
    }

    /// Stores the success value; only the claimer, before publishing.
    @inlinable
    internal func _storeValue(_ value: T) {
        let raw = bolts_task_payload(_core)
        if Self._valueIsInline {
            raw.initializeMemory(as: T.self, to: value)
        } else {
            let slot = UnsafeMutablePointer<T>.allocate(capacity: 1)
            slot.initialize(to: value)
            raw.storeBytes(of: slot, as: UnsafeMutablePointer<T>.self)
        }
    }

    /// The value of a task known to have succeeded (after an acquire that saw it).
    @inlinable
    internal var _successValue: T { _valueSlot.pointee }

    /// Creates a task that has already succeeded with `value`.
    ///
    /// Disfavoured so that `Task { … }` picks the async-closure initializer rather than
    /// making a task whose value is the closure.
    @inlinable
    @_disfavoredOverload
    public convenience init(_ value: T) {
        self.init(_completed: BOLTS_SUCCESS, value: value, error: nil, file: #fileID, line: #line)
    }

    /// Creates a task that has already failed with `error`.
    ///
    /// If nobody reads the error (through ``error``, ``value``, a continuation or an
    /// aggregate) before the task is deallocated, the handler set with
    /// ``TaskDiagnostics/setUnobservedErrorHandler(_:)`` receives it with `file` and `line`.
    @inlinable
    public convenience init(error: any Error, file: StaticString = #fileID, line: UInt = #line) {
        self.init(_completed: BOLTS_ERROR, value: nil, error: error, file: file, line: line)
    }

    /// Returns a task that is already cancelled.
    @inlinable
    public static func cancelledTask() -> Task<T> {
        Task(_completed: BOLTS_CANCELLED, value: nil, error: nil, file: #fileID, line: #line)
    }

    // MARK: Reading

    /// Whether the task has ended (successfully, with an error, or cancelled).
    ///
    /// Bolts-Swift spelled it `completed`, which still compiles, deprecated.
    @inlinable
    public var isCompleted: Bool { _outcome != BOLTS_PENDING }

    /// Whether the task ended with an error. Reading it does not mark the error observed.
    ///
    /// Bolts-Swift spelled it `faulted`, which still compiles, deprecated.
    @inlinable
    public var isFaulted: Bool { _outcome == BOLTS_ERROR }

    /// Whether the task was cancelled.
    ///
    /// Bolts-Swift spelled it `cancelled`, which still compiles, deprecated. Not to be
    /// confused with the static `Task.isCancelled`, which forwards to Swift Concurrency's.
    @inlinable
    public var isCancelled: Bool { _outcome == BOLTS_CANCELLED }

    /// The success value, or `nil` while pending, after an error, or when cancelled.
    @inlinable
    public var result: T? {
        _outcome == BOLTS_SUCCESS ? _successValue : nil
    }

    /// The error the task failed with, or `nil`. Reading it marks the error as observed.
    @inlinable
    public var error: (any Error)? {
        guard _outcome == BOLTS_ERROR else { return nil }
        _markObserved()
        return _error
    }

    // MARK: Completing (used by TaskCompletionSource and continuations)

    /// Completes with `value` if nobody completed the task yet. Exactly one caller wins.
    @inlinable
    @discardableResult
    internal func _trySet(value: T) -> Bool {
        guard _claim() else { return false }
        _storeValue(value)
        _publish(BOLTS_SUCCESS)
        return true
    }

    /// Completes with `error` if nobody completed the task yet. A `CancelledError` or
    /// Swift's `CancellationError` cancels instead (thrown-error semantics).
    @inlinable
    @discardableResult
    internal func _trySet(thrown error: any Error) -> Bool {
        if _isCancellation(error) { return _tryCancel() }
        return _trySet(error: error)
    }

    /// Completes with `error` (as given) if nobody completed the task yet.
    @inlinable
    @discardableResult
    internal func _trySet(error: any Error) -> Bool {
        guard _claim() else { return false }
        _error = error
        _publish(BOLTS_ERROR)
        return true
    }

    /// Runs `body` and completes with what it returns or throws.
    @inlinable
    internal func _complete(with body: () throws -> T) {
        do {
            _trySet(value: try body())
        } catch {
            _trySet(thrown: error)
        }
    }

    /// Completes this task the way `other` (which is complete) ended. Takes ownership of
    /// `other`'s error, if any.
    @inlinable
    internal func _trySet(outcomeOf other: Task<T>) {
        switch other._outcome {
        case BOLTS_SUCCESS: _trySet(value: other._successValue)
        case BOLTS_ERROR:
            other._markObserved()
            _trySet(error: other._error!)
        default: _tryCancel()
        }
    }

    /// Ends as `inner` ends: at once if it is complete, else when it completes. Uses this
    /// task's own job record, so it must not already be waiting on another task.
    @inlinable
    internal func _follow(_ inner: Task<T>) {
        if inner.isCompleted {
            _trySet(outcomeOf: inner)
            return
        }
        _await(inner, .default, _FollowStep(inner: inner))
    }
}

/// An unambiguous name for Bolts' ``Task``, for files that also use Swift Concurrency's.
public typealias BoltsTask<T: Sendable> = Task<T>

extension Task: CustomStringConvertible {
    /// `"Task<Int>: pending"`, `"Task<Int>: success(5)"`, `"Task<Int>: error(<error>)"` or
    /// `"Task<Int>: cancelled"`. Describing an error does not mark it observed.
    public var description: String {
        let state: String
        switch _outcome {
        case BOLTS_SUCCESS: state = "success(\(String(describing: _successValue)))"
        case BOLTS_ERROR: state = "error(\(String(describing: _error!)))"
        case BOLTS_CANCELLED: state = "cancelled"
        default: state = "pending"
        }
        return "Task<\(String(describing: T.self))>: \(state)"
    }
}

/// Whether a thrown `error` means "cancelled" rather than "failed" (`CancelledError` or Swift's
/// `CancellationError`): the thrown-error rule of every closure a task runs.
@inlinable
internal func _isCancellation(_ error: any Error) -> Bool {
    error is CancelledError || error is CancellationError
}
