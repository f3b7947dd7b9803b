import CBoltsRuntime

// Continuations. Every form creates one new task and waits with that task's own job record
// (no node allocation); what to run is a small step value (this task and the caller's
// closure, see `Task+Steps.swift`) parked inline in the new task: a continuation whose
// closure captures nothing costs one allocation, the new task. Thrown `CancelledError` or
// `CancellationError` cancels the new task; any other thrown error faults it; a returned
// task is unwrapped (the new task ends as it ends).
//
// With a cancellation token (see `Task+Cancellation.swift`): a token that is already
// cancelled gives an already-cancelled task, and cancelling it while the continuation waits
// cancels the new task at once; the closure then never runs.

extension Task {
    /// Runs `continuation` with this task once it completes, whatever the outcome, on
    /// `executor`; the returned task ends with what the closure returns or throws.
    ///
    /// - Parameters:
    ///   - executor: where the closure runs (default: inline on the completing thread).
    ///   - cancellationToken: cancelling it cancels the returned task at once, and the
    ///     closure never runs if it has not started.
    ///   - file: Where the returned task is created: reported with its error if nobody
    ///     observes it (see ``TaskDiagnostics``).
    ///   - line: The line that goes with `file`.
    ///   - continuation: receives this (completed) task.
    @inlinable
    @discardableResult
    public func continueWith<U>(
        _ executor: Executor = .default,
        cancellationToken: CancellationToken? = nil,
        file: StaticString = #fileID,
        line: UInt = #line,
        continuation: @escaping @Sendable (Task<T>) throws -> U
    ) -> Task<U> {
        _continue(
            executor, cancellationToken, file: file, line: line, _ContinueWithStep(antecedent: self, body: continuation)
        )
    }

    /// Like ``continueWith(_:cancellationToken:file:line:continuation:)``, but the closure
    /// returns a task, and the returned task ends as that task ends.
    @inlinable
    @discardableResult
    public func continueWithTask<U>(
        _ executor: Executor = .default,
        cancellationToken: CancellationToken? = nil,
        file: StaticString = #fileID,
        line: UInt = #line,
        continuation: @escaping @Sendable (Task<T>) throws -> Task<U>
    ) -> Task<U> {
        _continue(
            executor, cancellationToken, file: file, line: line,
            _ContinueWithTaskStep(antecedent: self, body: continuation))
    }

    /// Runs `continuation` with the value when this task succeeds. If it fails or is
    /// cancelled, the closure does not run and the returned task fails with the same error
    /// or is cancelled.
    @inlinable
    @discardableResult
    public func continueOnSuccessWith<U>(
        _ executor: Executor = .default,
        cancellationToken: CancellationToken? = nil,
        file: StaticString = #fileID,
        line: UInt = #line,
        continuation: @escaping @Sendable (T) throws -> U
    ) -> Task<U> {
        _continue(
            executor, cancellationToken, file: file, line: line, _OnSuccessStep(antecedent: self, body: continuation))
    }

    /// Like ``continueOnSuccessWith(_:cancellationToken:file:line:continuation:)``, but the
    /// closure returns a task, which is unwrapped.
    @inlinable
    @discardableResult
    public func continueOnSuccessWithTask<U>(
        _ executor: Executor = .default,
        cancellationToken: CancellationToken? = nil,
        file: StaticString = #fileID,
        line: UInt = #line,
        continuation: @escaping @Sendable (T) throws -> Task<U>
    ) -> Task<U> {
        _continue(
            executor, cancellationToken, file: file, line: line,
            _OnSuccessTaskStep(antecedent: self, body: continuation))
    }

    /// Runs `continuation` with the error when this task fails, to recover a value. If it
    /// succeeds, the returned task succeeds with the same value; if it is cancelled, the
    /// returned task is cancelled.
    @inlinable
    @discardableResult
    public func continueOnErrorWith(
        _ executor: Executor = .default,
        cancellationToken: CancellationToken? = nil,
        file: StaticString = #fileID,
        line: UInt = #line,
        continuation: @escaping @Sendable (any Error) throws -> T
    ) -> Task<T> {
        _continue(
            executor, cancellationToken, file: file, line: line,
            _OnErrorTypedStep<T, any Error>(antecedent: self, body: continuation))
    }

    /// Like ``continueOnErrorWith(_:cancellationToken:file:line:continuation:)`` for errors
    /// of type `E` only: any other error passes through to the returned task unchanged.
    @inlinable
    @discardableResult
    public func continueOnErrorWith<E: Error>(
        _ executor: Executor = .default,
        cancellationToken: CancellationToken? = nil,
        file: StaticString = #fileID,
        line: UInt = #line,
        continuation: @escaping @Sendable (E) throws -> T
    ) -> Task<T> {
        _continue(
            executor, cancellationToken, file: file, line: line, _OnErrorTypedStep(antecedent: self, body: continuation)
        )
    }

    /// Like ``continueOnErrorWith(_:cancellationToken:file:line:continuation:)-(_,_,_,_,(Error)->T)``,
    /// but the closure returns a task, which is unwrapped.
    @inlinable
    @discardableResult
    public func continueOnErrorWithTask(
        _ executor: Executor = .default,
        cancellationToken: CancellationToken? = nil,
        file: StaticString = #fileID,
        line: UInt = #line,
        continuation: @escaping @Sendable (any Error) throws -> Task<T>
    ) -> Task<T> {
        _continue(
            executor, cancellationToken, file: file, line: line,
            _OnErrorTypedTaskStep<T, any Error>(antecedent: self, body: continuation))
    }

    /// The typed form of ``continueOnErrorWithTask(_:cancellationToken:file:line:continuation:)``:
    /// errors that are not `E` pass through unchanged.
    @inlinable
    @discardableResult
    public func continueOnErrorWithTask<E: Error>(
        _ executor: Executor = .default,
        cancellationToken: CancellationToken? = nil,
        file: StaticString = #fileID,
        line: UInt = #line,
        continuation: @escaping @Sendable (E) throws -> Task<T>
    ) -> Task<T> {
        _continue(
            executor, cancellationToken, file: file, line: line,
            _OnErrorTypedTaskStep(antecedent: self, body: continuation))
    }

    // MARK: Machinery

    /// Creates the next task and arranges for `step` to run (on `executor`) once this task
    /// completes. `step` must complete the next task (directly or by following a returned
    /// task).
    ///
    /// No allocation besides the next task: `step` (this task and the caller's closure) and
    /// the executor are parked in the next task's payload while it waits, and the job
    /// record is embedded in the next task's core.
    @inlinable
    internal func _continue<U, Step: _ContinuationStep>(
        _ executor: Executor,
        _ token: CancellationToken?,
        file: StaticString,
        line: UInt,
        _ step: Step
    ) -> Task<U> where Step.Next == U {
        if let token {
            return _continue(executor, token: token, file: file, line: line, step)
        }
        let next = Task<U>(_pendingAt: file, line: line)
        if executor._runsInline, _isSettled {
            // Settled (complete, nothing still being dispatched) and inline: run now. Nothing
            // waits on `next` yet, so this cannot recurse into other continuations, and it
            // needs no job.
            step.perform(next)
            return next
        }
        next._await(self, executor, step)
        return next
    }
}
