import CBoltsRuntime

// Continuations. Every form creates one new task, waits with that task's own job record
// (no node allocation), and captures the caller's closure and the executor in one closure
// context: a continuation whose closure captures nothing costs the new task object and
// that context. Thrown `CancelledError`/`CancellationError` cancels the new task; any other
// thrown error faults it; a returned task is unwrapped (the new task ends as it ends).
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
        _continue(executor, cancellationToken, file: file, line: line, continuation) { antecedent, next, continuation in
            antecedent._markObservedIfFaulted()
            next._complete { try continuation(antecedent) }
        }
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
        _continue(executor, cancellationToken, file: file, line: line, continuation) { antecedent, next, continuation in
            antecedent._markObservedIfFaulted()
            do {
                next._follow(try continuation(antecedent))
            } catch {
                next._trySet(thrown: error)
            }
        }
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
        _continue(executor, cancellationToken, file: file, line: line, continuation) { antecedent, next, continuation in
            switch antecedent._outcome {
            case BOLTS_SUCCESS: next._complete { try continuation(antecedent._successValue) }
            case BOLTS_ERROR: next._trySet(error: antecedent._takeError())
            default: next._tryCancel()
            }
        }
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
        _continue(executor, cancellationToken, file: file, line: line, continuation) { antecedent, next, continuation in
            switch antecedent._outcome {
            case BOLTS_SUCCESS:
                do {
                    next._follow(try continuation(antecedent._successValue))
                } catch {
                    next._trySet(thrown: error)
                }
            case BOLTS_ERROR: next._trySet(error: antecedent._takeError())
            default: next._tryCancel()
            }
        }
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
        _continue(executor, cancellationToken, file: file, line: line, continuation) { antecedent, next, continuation in
            switch antecedent._outcome {
            case BOLTS_SUCCESS: next._trySet(value: antecedent._successValue)
            case BOLTS_ERROR:
                let error = antecedent._takeError()
                next._complete { try continuation(error) }
            default: next._tryCancel()
            }
        }
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
        _continue(executor, cancellationToken, file: file, line: line, continuation) { antecedent, next, continuation in
            switch antecedent._outcome {
            case BOLTS_SUCCESS: next._trySet(value: antecedent._successValue)
            case BOLTS_ERROR:
                let error = antecedent._takeError()
                if let typed = error as? E {
                    next._complete { try continuation(typed) }
                } else {
                    next._trySet(error: error)
                }
            default: next._tryCancel()
            }
        }
    }

    /// Like ``continueOnErrorWith(_:cancellationToken:file:line:continuation:)-(_,_,_,_,(any Error)->T)``,
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
        _continue(executor, cancellationToken, file: file, line: line, continuation) { antecedent, next, continuation in
            switch antecedent._outcome {
            case BOLTS_SUCCESS: next._trySet(value: antecedent._successValue)
            case BOLTS_ERROR:
                let error = antecedent._takeError()
                do { next._follow(try continuation(error)) } catch { next._trySet(thrown: error) }
            default: next._tryCancel()
            }
        }
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
        _continue(executor, cancellationToken, file: file, line: line, continuation) { antecedent, next, continuation in
            switch antecedent._outcome {
            case BOLTS_SUCCESS: next._trySet(value: antecedent._successValue)
            case BOLTS_ERROR:
                let error = antecedent._takeError()
                if let typed = error as? E {
                    do { next._follow(try continuation(typed)) } catch { next._trySet(thrown: error) }
                } else {
                    next._trySet(error: error)
                }
            default: next._tryCancel()
            }
        }
    }

    // MARK: Machinery

    /// Creates the next task and arranges for `step` to run (on `executor`) with this task
    /// and the next one once this task completes. `step` must complete `next` (directly or
    /// by following a returned task).
    ///
    /// `step` captures nothing (it receives the caller's closure as `body`), so the only
    /// closure context allocated here is the one that holds this task, the executor,
    /// `body` and `step` until the continuation runs.
    @inlinable
    internal func _continue<U, Body: Sendable>(
        _ executor: Executor,
        _ token: CancellationToken?,
        file: StaticString,
        line: UInt,
        _ body: Body,
        _ step: @escaping @Sendable (Task<T>, Task<U>, Body) -> Void
    ) -> Task<U> {
        if let token {
            return _continue(executor, token: token, file: file, line: line) { step($0, $1, body) }
        }
        let next = Task<U>(_pendingAt: file, line: line)
        if executor._tag.rawValue <= Executor._Tag.inlineImmediate.rawValue, completed {
            // Already complete and inline: run now. Nothing waits on `next` yet, so this
            // cannot recurse into other continuations, and it needs neither a job nor a
            // closure context.
            step(self, next, body)
            return next
        }
        next._await(self, on: executor._cPool) { [self] base in
            let next = unsafeDowncast(base, to: Task<U>.self)
            if executor._runsInPlace {
                step(self, next, body)
            } else {
                executor.execute { step(self, next, body) }
            }
        }
        return next
    }

    /// Marks the error observed (it is being handed to a continuation).
    @inlinable
    internal func _markObservedIfFaulted() {
        if _outcome == BOLTS_ERROR { bolts_task_mark_observed(_core) }
    }

    /// The error of a faulted task, marked observed: the caller now owns it.
    @inlinable
    internal func _takeError() -> any Error {
        bolts_task_mark_observed(_core)
        return _error.unsafelyUnwrapped
    }
}
