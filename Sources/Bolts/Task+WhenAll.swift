import CBoltsRuntime
import Synchronization

// Aggregates. Inputs hand their errors to the aggregate (they count as observed). Inputs
// that are all complete already give an aggregate that is complete when the call returns.

extension Task {
    /// A task that succeeds when every input succeeds. If any input fails, it fails: with
    /// that error when exactly one failed, else with an ``AggregateError`` holding the
    /// errors in input order. Otherwise, if any input was cancelled, it is cancelled.
    /// `whenAll([])` has already succeeded.
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
        for task in tasks where task.completed {
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

    /// Shared by `whenAll` and `whenAllResult`: waits for every input, then fails, cancels
    /// or succeeds with `value(tasks)`.
    @inlinable
    internal static func _aggregate<R>(
        _ tasks: [Task<T>],
        file: StaticString,
        line: UInt,
        value: @escaping @Sendable ([Task<T>]) -> R
    ) -> Task<R> {
        if tasks.allSatisfy({ $0.completed }) {
            let result = Task<R>(_pendingAt: file, line: line)
            _finishAll(result, tasks, value)
            return result
        }
        let result = Task<R>(_pendingAt: file, line: line)
        let countdown = _Countdown(tasks.count) { _finishAll(result, tasks, value) }
        _forEachBorrowed(tasks) { countdown.attach(to: $0) }
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
internal func _finishFailed<R, Base: _BoltsTaskBase>(_ result: Task<R>, _ tasks: [Base]) {
    switch _failure(of: tasks) {
    case .some(.some(let error)): result._trySet(error: error)
    default: result._tryCancel()
    }
}

/// The failure of a set of completed tasks: `nil` if all succeeded, `.some(nil)` if none
/// failed but some were cancelled, else the single error or an ``AggregateError``. Marks
/// every error observed (the aggregate owns them).
///
/// Generic over the element type so that `[Task<T>]` is read in place: passing it as
/// `[_BoltsTaskBase]` would copy the array and retain every element once per aggregate.
@inlinable
internal func _failure<Base: _BoltsTaskBase>(of tasks: [Base]) -> (any Error)?? {
    var errors: [any Error] = []
    var cancelled = false
    _forEachBorrowed(tasks) { task in
        switch task._outcome {
        case BOLTS_ERROR: errors.append(task._takeError())
        case BOLTS_CANCELLED: cancelled = true
        default: break
        }
    }
    return _combinedFailure(errors, anyCancelled: cancelled)
}

/// Calls `body` with each task of `tasks` in order, borrowed from the array: no retain and
/// release of each one, as `for task in tasks` would do (its iterator hands elements out
/// owned, and the optimizer keeps that copy around an opaque call). An aggregate visits
/// inputs that worker threads are completing, so those reference counts sit on cache
/// lines other CPUs are writing: two contended atomic operations per input saved.
@inlinable
internal func _forEachBorrowed<Base: _BoltsTaskBase>(_ tasks: [Base], _ body: (Base) -> Void) {
    tasks.withUnsafeBufferPointer { buffer in
        guard let first = buffer.baseAddress else { return }
        // A class reference and `Unmanaged` have the same layout (one pointer); the array,
        // which the caller holds, keeps every element alive for the call.
        let raw = UnsafeRawPointer(first)
        for index in 0..<buffer.count {
            raw.load(fromByteOffset: index &* MemoryLayout<Base>.stride, as: Unmanaged<Base>.self)
                ._withUnsafeGuaranteedRef(body)
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

/// Counts inputs down to zero. `attach` costs one job record per input (from the runtime's
/// block magazines) and no Swift allocation. The inputs' jobs share one reference to the
/// countdown, taken by the first `attach` and given back by whichever job counts last, so
/// the inputs' completions on different threads do not each retain and release the same
/// object (a contended cache line) on top of the count itself.
@usableFromInline
internal final class _Countdown: Sendable {
    @usableFromInline
    let remaining: Atomic<Int>
    /// Set when an input was destroyed while pending: the aggregate can then never end,
    /// and the last count only gives the shared reference back.
    @usableFromInline
    let abandoned = Atomic<Bool>(false)
    @usableFromInline
    let attached = Atomic<Bool>(false)
    @usableFromInline
    let onZero: (@Sendable () -> Void)?

    @usableFromInline
    init(_ count: Int, onZero: (@Sendable () -> Void)? = nil) {
        remaining = Atomic(count)
        self.onZero = onZero
    }

    /// Counts one input as done; true for the last one. acquiring-and-releasing: every
    /// earlier arrival's reads of its input (and an abandonment's flag) happen before the
    /// last one's `onZero`. Wrapping: the count starts at the number of inputs and each
    /// arrives once, so it cannot overflow, and the checked form compiles to a
    /// compare-and-swap loop, which retries while the other workers' arrivals contend.
    @usableFromInline
    func arrive() -> Bool {
        remaining.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0
    }

    /// Arrives when `task` completes, then runs `onZero` if it was the last input. Every
    /// input of this countdown must be attached before any of them can arrive last: the
    /// count starts at the number of inputs, so the shared reference taken by the first
    /// attach outlives the last attach.
    @usableFromInline
    func attach(to task: _BoltsTaskBase) {
        // Relaxed: only the attaching thread reads or writes the flag.
        if !attached.load(ordering: .relaxed) {
            attached.store(true, ordering: .relaxed)
            _ = Unmanaged.passRetained(self)  // the inputs' shared reference
        }
        let job = bolts_job_create(
            { context in
                let countdown = Unmanaged<_Countdown>.fromOpaque(context.unsafelyUnwrapped)
                // Borrowed, not retained: the inputs' shared reference keeps the countdown
                // alive until the last arrival gives it back, and an arrival that is not
                // the last touches nothing after its count. (A retain and a release here
                // would be two more atomic operations on the line every arrival counts on.)
                let last = countdown._withUnsafeGuaranteedRef { this in
                    guard this.arrive() else { return false }
                    // Relaxed: ordered by the acquiring count above.
                    if !this.abandoned.load(ordering: .relaxed) { this.onZero?() }
                    return true
                }
                if last { countdown.release() }
            },
            Unmanaged.passUnretained(self).toOpaque()
        )
        job.pointee.drop = { context in
            let countdown = Unmanaged<_Countdown>.fromOpaque(context.unsafelyUnwrapped)
            let last = countdown._withUnsafeGuaranteedRef { this in
                // Relaxed: published to the last arrival by the releasing count below.
                this.abandoned.store(true, ordering: .relaxed)
                return this.arrive()
            }
            if last { countdown.release() }
        }
        task._add(job)
    }
}

extension Task where T == Never {
    /// Waits for tasks of different value types; succeeds with all their values as a tuple.
    /// Fails and cancels exactly like ``Task/whenAll(_:file:line:)``.
    public static func whenAll<each U: Sendable>(_ tasks: repeat Task<each U>) -> Task<(repeat each U)> {
        var collected: [_BoltsTaskBase] = []
        for task in repeat each tasks { collected.append(task) }
        let bases = collected
        let result = Task<(repeat each U)>(_pendingAt: #fileID, line: #line)
        // One of three aggregate completions written out on purpose (see `Task._finishAll`).
        let finish: @Sendable () -> Void = {
            switch _failure(of: bases) {
            case .some(.some(let error)): result._trySet(error: error)
            case .some(.none): result._tryCancel()
            case .none: result._trySet(value: (repeat (each tasks)._successValue))
            }
        }
        if bases.allSatisfy({ $0._outcome != BOLTS_PENDING }) {
            finish()
            return result
        }
        let countdown = _Countdown(bases.count, onZero: finish)
        for base in bases { countdown.attach(to: base) }
        return result
    }
}
