import CBoltsRuntime
import Synchronization

// A fan-out as one aggregate: `executeAll` runs `body(0)`, …, `body(count - 1)` and joins
// them, with what `whenAllResult` over `count` tasks of `execute` would give, but without a
// task per index. On a pool each index is a job record carrying (the shared state, the
// index) in a pool block, so an index costs no Swift allocation at all: the shared state,
// its buffers and the result task are allocated once per call. Inside a server, where the
// jobs are created on event-loop threads and finished on workers, every object per job is
// memory that crosses CPUs twice; this is the path that avoids them.

extension Task {
    /// Runs `body(0)`, `body(1)`, …, `body(count - 1)` on `executor` and returns a task that
    /// succeeds with their values in index order: what
    /// `Task.whenAllResult((0..<count).map { i in Task.execute(executor) { try body(i) } })`
    /// gives, without creating a task per index.
    ///
    /// The outcome follows ``whenAll(_:file:line:)``: if any call throws, the task fails
    /// (with that error when exactly one threw, else an ``AggregateError`` holding the errors
    /// in index order); otherwise, if any call threw `CancelledError` or `CancellationError`,
    /// it is cancelled. `count` 0 gives a task that has already succeeded with `[]`.
    ///
    /// On a ``ThreadPool`` (`.pool(…)`) each index is one pool job and allocates nothing
    /// beyond the job's block; other executors get one closure per index.
    ///
    /// - Parameters:
    ///   - executor: Where each call runs (default: inline, one after the other).
    ///   - count: How many calls; at least 0.
    ///   - cancellationToken: Once it is cancelled, calls that have not started are skipped
    ///     (they count as cancelled); a token cancelled before the call gives a task that is
    ///     already cancelled, and `body` never runs.
    ///   - file: Where the returned task is created: reported with its error if nobody
    ///     observes it (see ``TaskDiagnostics``).
    ///   - line: The line that goes with `file`.
    ///   - body: Receives the index; may run on several threads at once.
    /// - Precondition: `count >= 0`.
    @inlinable
    public static func executeAll(
        _ executor: Executor = .default,
        count: Int,
        cancellationToken: CancellationToken? = nil,
        file: StaticString = #fileID,
        line: UInt = #line,
        body: @escaping @Sendable (Int) throws -> T
    ) -> Task<[T]> {
        precondition(count >= 0, "Task.executeAll(count:) with a negative count")
        if count == 0 {
            return Task<[T]>(_completed: BOLTS_SUCCESS, value: [], error: nil, file: file, line: line)
        }
        if cancellationToken?.isCancellationRequested == true {
            return Task<[T]>(_completed: BOLTS_CANCELLED, value: nil, error: nil, file: file, line: line)
        }
        let state = _FanOut<T>(
            count: count, token: cancellationToken, body: body, result: Task<[T]>(_pendingAt: file, line: line))
        _startFanOut(state, count: count, on: executor)
        return state.result
    }
}

/// The part of a fan-out that does not depend on the value type: what a job needs to run
/// one index (`runIndex`, a closure made where `T` is known, so the per-index work is
/// specialized). Jobs hold it unretained: the calls share one reference, taken before the
/// first job starts and given back by the call that finishes last.
@usableFromInline
internal class _FanOutBase: @unchecked Sendable {
    // @unchecked Sendable: `runIndex` is immutable; `_FanOut` says how its state is shared.
    @usableFromInline
    let runIndex: @Sendable (_FanOutBase, Int) -> Void

    @usableFromInline
    init(runIndex: @escaping @Sendable (_FanOutBase, Int) -> Void) {
        self.runIndex = runIndex
    }
}

/// The shared state of one `executeAll`.
///
/// `@unchecked Sendable`: slot `i` of `values`, `outcomes` and `errors` is written only by
/// the call for index `i`, before its acquiring-and-releasing decrement of `remaining`; the
/// call whose decrement reaches zero has therefore acquired every write, and only it reads
/// the slots (in `finish`) or moves the values out. `deinit` runs after that, when the last
/// reference goes.
@usableFromInline
internal final class _FanOut<T: Sendable>: _FanOutBase, @unchecked Sendable {
    @usableFromInline static var succeeded: UInt8 { 1 }
    @usableFromInline static var threw: UInt8 { 2 }
    @usableFromInline static var cancelled: UInt8 { 3 }

    @usableFromInline let count: Int
    @usableFromInline let token: CancellationToken?
    @usableFromInline let body: @Sendable (Int) throws -> T
    @usableFromInline let result: Task<[T]>
    @usableFromInline let values: UnsafeMutablePointer<T>
    @usableFromInline let outcomes: UnsafeMutablePointer<UInt8>
    @usableFromInline let errors: UnsafeMutablePointer<(any Error)?>
    @usableFromInline let remaining: Atomic<Int>
    /// Set by `finish` when the values moved into the result (`deinit` then leaves them).
    @usableFromInline nonisolated(unsafe) var valuesMoved = false

    @inlinable
    init(count: Int, token: CancellationToken?, body: @escaping @Sendable (Int) throws -> T, result: Task<[T]>) {
        self.count = count
        self.token = token
        self.body = body
        self.result = result
        values = .allocate(capacity: count)
        outcomes = .allocate(capacity: count)
        outcomes.initialize(repeating: 0, count: count)
        errors = .allocate(capacity: count)
        errors.initialize(repeating: nil, count: count)
        remaining = Atomic(count)
        super.init(runIndex: { base, index in unsafeDowncast(base, to: _FanOut<T>.self).run(index) })
    }

    deinit {
        if !valuesMoved {
            for index in 0..<count where outcomes[index] == Self.succeeded { (values + index).deinitialize(count: 1) }
        }
        values.deallocate()
        outcomes.deallocate()
        errors.deinitialize(count: count)
        errors.deallocate()
    }

    /// Runs the call for `index`; the last call to end completes the result and gives the
    /// jobs' shared reference back (its last touch of `self`).
    @inlinable
    func run(_ index: Int) {
        if let token, token.isCancellationRequested {
            outcomes[index] = Self.cancelled
        } else {
            do {
                (values + index).initialize(to: try body(index))
                outcomes[index] = Self.succeeded
            } catch where _isCancellation(error) {
                outcomes[index] = Self.cancelled
            } catch {
                errors[index] = error
                outcomes[index] = Self.threw
            }
        }
        // Acquiring and releasing: the last call's `finish` reads every slot written above.
        // Wrapping: `count` calls from `count` cannot overflow, and the checked form is a
        // compare-and-swap loop that retries under the other workers' contention.
        guard remaining.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0 else { return }
        finish()
        Unmanaged.passUnretained(self).release()
    }

    /// Completes the result from every slot (see the type's invariants).
    @inlinable
    func finish() {
        var thrown: [any Error] = []
        var anyCancelled = false
        for index in 0..<count {
            switch outcomes[index] {
            case Self.threw: thrown.append(errors[index].unsafelyUnwrapped)
            case Self.cancelled: anyCancelled = true
            default: break
            }
        }
        switch _combinedFailure(thrown, anyCancelled: anyCancelled) {
        case .some(.some(let error)): result._trySet(error: error)
        case .some(.none): result._tryCancel()
        case .none:
            valuesMoved = true
            let moved = [T](unsafeUninitializedCapacity: count) { buffer, initialized in
                buffer.baseAddress.unsafelyUnwrapped.moveInitialize(from: values, count: count)
                initialized = count
            }
            result._trySet(value: moved)
        }
    }
}

/// The payload of one fan-out job in a pool block: the shared state (unretained, see
/// `_FanOutBase`) and the index.
internal struct _FanOutJobPayload {
    let state: Unmanaged<_FanOutBase>
    let index: Int
}

/// Starts the `count` calls of `state` on `executor`. Not generic: the per-index work is
/// `state.runIndex`, specialized where the state was made.
@usableFromInline
internal func _startFanOut(_ state: _FanOutBase, count: Int, on executor: Executor) {
    let shared = Unmanaged.passRetained(state)  // the calls' shared reference
    if let cPool = executor._cPool {
        for index in 0..<count {
            let record = _PoolJobRecord.make(_FanOutJobPayload(state: shared, index: index)) { context in
                let payload = _PoolJobRecord.take(_FanOutJobPayload.self, from: context)
                payload.state._withUnsafeGuaranteedRef { $0.runIndex($0, payload.index) }
            }
            bolts_pool_submit(cPool, record)
        }
    } else {
        for index in 0..<count {
            executor.execute { shared._withUnsafeGuaranteedRef { $0.runIndex($0, index) } }
        }
    }
}
