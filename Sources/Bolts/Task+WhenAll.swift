import CBoltsRuntime
import Synchronization

// Aggregates. Inputs hand their errors to the aggregate (they count as observed). Inputs
// that are all complete already give an aggregate that is complete when the call returns.
// `whenAll`, `whenAllResult` and the tuple `whenAll` wait for one pending input at a time
// (`_Join`), so a continuation added to an input after the call may run before the
// aggregate has seen that input complete; the aggregate completes on the thread that
// completes its last pending input.

extension Task {
    /// A task that succeeds when every input succeeds. If any input fails, it fails: with
    /// that error when exactly one failed, else with an ``AggregateError`` holding the
    /// errors in input order. Otherwise, if any input was cancelled, it is cancelled.
    /// `whenAll([])` has already succeeded.
    ///
    /// It waits for one pending input at a time, from the last (inputs started in order
    /// mostly complete in order, so this usually costs one wait in all): it completes on
    /// the thread that completes its last pending input, and a continuation added to an
    /// input after this call may run before the aggregate has seen that input complete.
    @inlinable
    public static func whenAll(_ tasks: [Task<T>], file: StaticString = #fileID, line: UInt = #line) -> Task<Void> {
        _aggregate(tasks, file: file, line: line) { _ in () }
    }

    /// Like ``whenAll(_:file:line:)``, but succeeds with the inputs' values, in input order.
    /// `whenAllResult([])` has already succeeded with `[]`.
    @inlinable
    public static func whenAllResult(_ tasks: [Task<T>], file: StaticString = #fileID, line: UInt = #line)
        -> Task<[T]>
    {
        _aggregate(tasks, file: file, line: line) { tasks in tasks.map { $0._successValue } }
    }

    /// A task that succeeds with the first input to end, whatever its outcome (inputs that
    /// have already ended win in input order). `whenAny([])` is cancelled: nothing can win.
    public static func whenAny(_ tasks: [Task<T>], file: StaticString = #fileID, line: UInt = #line)
        -> Task<Task<T>>
    {
        guard !tasks.isEmpty else { return Task<Task<T>>.cancelledTask() }
        for task in tasks where task.isCompleted {
            for other in tasks { _whenComplete(other) { other._markObservedIfFaulted() } }
            return Task<Task<T>>(_completed: BOLTS_SUCCESS, value: task, error: nil, file: file, line: line)
        }
        let result = Task<Task<T>>(_pendingAt: file, line: line)
        for task in tasks {
            _whenComplete(task) { [weak result] in
                task._markObservedIfFaulted()
                result?._trySet(value: task)
            }
        }
        return result
    }

    /// A task that succeeds with the value of the first input to succeed. If none
    /// succeeds: it fails when any input failed (with the error itself when exactly one
    /// failed, else an ``AggregateError`` in input order), else it is cancelled.
    /// `whenAnySuccess([])` is cancelled.
    public static func whenAnySuccess(_ tasks: [Task<T>], file: StaticString = #fileID, line: UInt = #line)
        -> Task<T>
    {
        guard !tasks.isEmpty else { return Task<T>.cancelledTask() }
        let result = Task<T>(_pendingAt: file, line: line)
        let countdown = _Countdown(tasks.count)
        for task in tasks {
            _whenComplete(task) {
                if task._outcome == BOLTS_SUCCESS {
                    result._trySet(value: task._successValue)
                } else {
                    task._markObservedIfFaulted()
                }
                if countdown.arrive() { _finishFailed(result, tasks) }
            }
        }
        return result
    }

    /// Shared by `whenAll` and `whenAllResult`: waits for every input (`_Join`: one input at
    /// a time, from the last), then fails, cancels or succeeds with `value(tasks)`.
    @inlinable
    internal static func _aggregate<R>(
        _ tasks: [Task<T>],
        file: StaticString,
        line: UInt,
        value: @escaping @Sendable ([Task<T>]) -> R
    ) -> Task<R> {
        if tasks.allSatisfy({ $0.isCompleted }) {
            let result = Task<R>(_pendingAt: file, line: line)
            _finishAll(result, tasks, value)
            return result
        }
        let result = Task<R>(_pendingAt: file, line: line)
        _Join(tasks) { _finishAll(result, tasks, value) }.waitForNext()
        return result
    }

    /// Ends `result` from its completed inputs. One of three aggregate completions written
    /// out on purpose (with `_finishFailed` and the tuple `whenAll`'s): each is specialised
    /// for its result; all three read the inputs through `_failure`.
    @inlinable
    internal static func _finishAll<R>(_ result: Task<R>, _ tasks: [Task<T>], _ value: ([Task<T>]) -> R) {
        switch _failure(of: tasks) {
        case .some(.some(let error)): result._trySet(error: error)
        case .some(.none): result._tryCancel()
        case .none: result._trySet(value: value(tasks))
        }
    }
}

/// Ends `result` for an aggregate none of whose inputs succeeded. One of three aggregate
/// completions written out on purpose (see `Task._finishAll`).
@inlinable
internal func _finishFailed<R, T>(_ result: Task<R>, _ tasks: [Task<T>]) {
    switch _failure(of: tasks) {
    case .some(.some(let error)): result._trySet(error: error)
    default: result._tryCancel()
    }
}

/// The failure of a set of completed tasks: `nil` if all succeeded, `.some(nil)` if none
/// failed but some were cancelled, else the single error or an ``AggregateError``. Marks
/// every error observed (the aggregate owns them).
///
/// Reads `[Task<T>]` in place, each element borrowed (`_forEachBorrowed`).
@inlinable
internal func _failure<T>(of tasks: [Task<T>]) -> (any Error)?? {
    var errors: [any Error] = []
    var cancelled = false
    _forEachBorrowed(tasks) { task in _collectFailure(of: task, into: &errors, anyCancelled: &cancelled) }
    return _combinedFailure(errors, anyCancelled: cancelled)
}

/// Adds what the completed `task` ended with to an aggregate's tally: its error (marked
/// observed: the aggregate owns it) to `errors`, or a cancellation to `anyCancelled`.
@inlinable
internal func _collectFailure<T>(of task: Task<T>, into errors: inout [any Error], anyCancelled: inout Bool) {
    switch task._outcome {
    case BOLTS_ERROR: errors.append(task._takeError())
    case BOLTS_CANCELLED: anyCancelled = true
    default: break
    }
}

/// Calls `body` with each task of `tasks` in order, borrowed from the array: no retain and
/// release of each one, as `for task in tasks` would do (its iterator hands elements out
/// owned, and the optimizer keeps that copy around an opaque call). An aggregate visits
/// inputs that worker threads are completing, so those reference counts sit on cache
/// lines other CPUs are writing: two contended atomic operations per input saved.
@inlinable
internal func _forEachBorrowed<Base: AnyObject>(_ tasks: [Base], _ body: (Base) -> Void) {
    _withBorrowedElements(of: tasks) { element in
        for index in 0..<tasks.count { element(index)._withUnsafeGuaranteedRef(body) }
    }
}

/// Calls `body` with an accessor of the elements of `tasks` by index (valid indices only),
/// each handed out unretained: the array, which the caller holds, keeps every element
/// alive for the call. The one place that reads an array of tasks without a retain and a
/// release per element (`_forEachBorrowed`, `_Join`).
@inlinable
internal func _withBorrowedElements<Base: AnyObject, R>(
    of tasks: [Base],
    _ body: (_ element: (Int) -> Unmanaged<Base>) -> R
) -> R {
    tasks.withUnsafeBufferPointer { buffer in
        // A class reference and `Unmanaged` have the same layout (one pointer).
        let raw = UnsafeRawPointer(buffer.baseAddress)
        return body { index in
            raw.unsafelyUnwrapped.load(fromByteOffset: index &* MemoryLayout<Base>.stride, as: Unmanaged<Base>.self)
        }
    }
}

/// The aggregate rule on what its inputs ended with: `nil` if none failed or was cancelled,
/// `.some(nil)` if none failed but some were cancelled, else the single error (unchanged) or
/// an ``AggregateError`` with `errors` in input order.
@inlinable
internal func _combinedFailure(_ errors: [any Error], anyCancelled: Bool) -> (any Error)?? {
    if errors.count == 1 { return .some(errors[0]) }
    if errors.count > 1 { return .some(AggregateError(errors: errors)) }
    return anyCancelled ? .some(nil) : nil
}

/// Waits for every input of an aggregate, one at a time: it looks at the inputs from the
/// last to the first, passes over those already complete, and registers one job on the
/// first one still pending; when that one completes, the job looks on from the input before
/// it. Once none is left, it calls `onDone`, on the thread that made that last look: the one
/// that completed the last input the join waited for, or the one that registered on an
/// input that completed before the registration (the core then runs the job at once, on
/// the registering thread: the caller's, if every input was complete or became so).
///
/// Inputs are mostly started in order and complete in about that order (a pool's queues are
/// first in, first out), so the last input is usually the last to complete: a fan-out of N
/// pending tasks then costs one or two registrations instead of N, and the inputs'
/// completions on different threads touch no shared count. In the worst case (inputs that
/// complete from the last to the first) it registers on every input, one after another,
/// each registration made by the thread that completed the input before. Every input is
/// looked at once in all.
///
/// Not generic, on purpose: the job that resumes it is a plain C callback, so its walk is a
/// method called through the class; a generic class's methods run unspecialised and look
/// up the metadata of their generic types (`[Base]`, `Unmanaged<Base>?`, the closures) in
/// the runtime's hash table on every call, which a server paid on every request (found with
/// perf). The inputs are kept as `[AnyObject]`, which `init` makes from the caller's
/// `[Task<T>]` without a copy (see there), and read through `_TaskRef`.
///
/// `@unchecked Sendable`: `remaining` is read and written by one thread at a time. The
/// caller's `waitForNext` writes it before its job is added to an input (a release: the
/// task's continuation stack), and the job that runs after that input completes reads it
/// (an acquire: the completion hands the job over); no other thread touches it meanwhile,
/// and a call touches nothing of `self` after the add.
@usableFromInline
internal final class _Join: @unchecked Sendable {
    @usableFromInline
    let inputs: [AnyObject]
    @usableFromInline
    let onDone: @Sendable () -> Void
    /// Inputs below this index are not known to be complete. Those from it on were seen
    /// complete, except, while a registration is outstanding, the input the join waits for
    /// at this index, which has completed by the time its job reads this.
    @usableFromInline
    var remaining: Int

    /// Takes `inputs` as they are: an array of a class and an array of `AnyObject` have one
    /// representation (one reference to the array's storage, whose elements are class
    /// references, one pointer each), and the join only reads the elements as tasks
    /// (`_TaskRef`), which they are. Nothing mutates it (a mutation could copy the storage
    /// as the wrong element type); the storage, which knows its own element type, is
    /// released as usual. An `as [AnyObject]` upcast would copy the array and retain every
    /// element.
    @inlinable
    init<Base: _AnyTask>(_ inputs: [Base], onDone: @escaping @Sendable () -> Void) {
        self.inputs = unsafeBitCast(inputs, to: [AnyObject].self)
        self.onDone = onDone
        remaining = inputs.count
    }

    /// Passes over complete inputs from `remaining` down; registers on the first pending
    /// one (and returns), or calls `onDone` when there is none.
    @usableFromInline
    func waitForNext() {
        var index = remaining
        let pending: Unmanaged<AnyObject>? = _withBorrowedElements(of: inputs) { element in
            while index > 0 {
                let input = element(index &- 1)
                // Acquire (`outcome`): a complete input's outcome and payload are visible
                // to `onDone`.
                if _TaskRef(input).outcome == BOLTS_PENDING { return input }
                index &-= 1
            }
            return nil
        }
        guard let pending else {
            onDone()
            return
        }
        // The job runs once `pending` has completed: the next look starts below it.
        remaining = index &- 1
        _waitForNext(after: _TaskRef(pending))
    }

    /// Registers a job on `input` that calls `waitForNext` once it has completed. The job
    /// holds a reference to the join until it runs. Its `drop` (the core's path for a task
    /// destroyed while pending) only releases that reference; it does not run here, since
    /// the join holds its inputs: an input that is never completed keeps itself, the join
    /// and the aggregate alive, and the aggregate pending, as before (the countdown that
    /// this replaced held them the same way). The caller touches nothing of `self`
    /// afterwards (the job may already be running).
    private func _waitForNext(after input: _TaskRef) {
        let job = bolts_job_create(
            { context in
                Unmanaged<_Join>.fromOpaque(context.unsafelyUnwrapped).takeRetainedValue().waitForNext()
            },
            Unmanaged.passRetained(self).toOpaque()
        )
        job.pointee.drop = { context in Unmanaged<_Join>.fromOpaque(context.unsafelyUnwrapped).release() }
        input.add(job)
    }
}

/// Counts inputs down to zero (`whenAnySuccess`, whose every input's outcome matters).
@usableFromInline
internal final class _Countdown: Sendable {
    @usableFromInline
    let remaining: Atomic<Int>

    @usableFromInline
    init(_ count: Int) {
        remaining = Atomic(count)
    }

    /// Counts one input as done; true for the last one. acquiring-and-releasing: every
    /// earlier arrival's reads of its input happen before the last one's. Wrapping: the
    /// count starts at the number of inputs and each arrives once, so it cannot overflow,
    /// and the checked form compiles to a compare-and-swap loop, which retries while the
    /// other workers' arrivals contend.
    @usableFromInline
    func arrive() -> Bool {
        remaining.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0
    }
}

extension Task where T == Never {
    /// Waits for tasks of different value types; succeeds with all their values as a tuple.
    /// Fails and cancels exactly like ``Task/whenAll(_:file:line:)``.
    public static func whenAll<each U: Sendable>(_ tasks: repeat Task<each U>) -> Task<(repeat each U)> {
        var inputs: [_AnyTask] = []
        for task in repeat each tasks { inputs.append(task) }
        let result = Task<(repeat each U)>(_pendingAt: #fileID, line: #line)
        // One of three aggregate completions written out on purpose (see `Task._finishAll`).
        let finish: @Sendable () -> Void = {
            var errors: [any Error] = []
            var cancelled = false
            for task in repeat each tasks { _collectFailure(of: task, into: &errors, anyCancelled: &cancelled) }
            switch _combinedFailure(errors, anyCancelled: cancelled) {
            case .some(.some(let error)): result._trySet(error: error)
            case .some(.none): result._tryCancel()
            case .none: result._trySet(value: (repeat (each tasks)._successValue))
            }
        }
        if inputs.allSatisfy({ _TaskRef($0).outcome != BOLTS_PENDING }) {
            finish()
            return result
        }
        _Join(inputs, onDone: finish).waitForNext()
        return result
    }
}
