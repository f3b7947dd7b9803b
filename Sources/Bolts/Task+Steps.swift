import CBoltsRuntime

// What a continuation does once its antecedent has completed, one small value type per
// `continue…` form. A step holds the antecedent and the caller's closure (three words), so
// as an existential it lives in the waiting task's inline buffer with no allocation; its
// `perform` is specialized for the caller's types.

/// A continuation's work, run once with the (completed) antecedent and the next task.
@usableFromInline
internal protocol _ContinuationStep: Sendable {
    /// Completes `next` (a `Task` of the step's result type) from the antecedent's outcome,
    /// running the caller's closure where the form says so.
    func perform(_ next: _BoltsTaskBase)
}

@usableFromInline
internal struct _ContinueWithStep<T: Sendable, U: Sendable>: _ContinuationStep {
    @usableFromInline let antecedent: Task<T>
    @usableFromInline let body: @Sendable (Task<T>) throws -> U

    @inlinable
    init(antecedent: Task<T>, body: @escaping @Sendable (Task<T>) throws -> U) {
        self.antecedent = antecedent
        self.body = body
    }

    @inlinable
    func perform(_ next: _BoltsTaskBase) {
        let next = unsafeDowncast(next, to: Task<U>.self)
        antecedent._markObservedIfFaulted()
        next._complete { try body(antecedent) }
    }
}

@usableFromInline
internal struct _ContinueWithTaskStep<T: Sendable, U: Sendable>: _ContinuationStep {
    @usableFromInline let antecedent: Task<T>
    @usableFromInline let body: @Sendable (Task<T>) throws -> Task<U>

    @inlinable
    init(antecedent: Task<T>, body: @escaping @Sendable (Task<T>) throws -> Task<U>) {
        self.antecedent = antecedent
        self.body = body
    }

    @inlinable
    func perform(_ next: _BoltsTaskBase) {
        let next = unsafeDowncast(next, to: Task<U>.self)
        antecedent._markObservedIfFaulted()
        do {
            next._follow(try body(antecedent))
        } catch {
            next._trySet(thrown: error)
        }
    }
}

@usableFromInline
internal struct _OnSuccessStep<T: Sendable, U: Sendable>: _ContinuationStep {
    @usableFromInline let antecedent: Task<T>
    @usableFromInline let body: @Sendable (T) throws -> U

    @inlinable
    init(antecedent: Task<T>, body: @escaping @Sendable (T) throws -> U) {
        self.antecedent = antecedent
        self.body = body
    }

    @inlinable
    func perform(_ next: _BoltsTaskBase) {
        let next = unsafeDowncast(next, to: Task<U>.self)
        switch antecedent._outcome {
        case BOLTS_SUCCESS: next._complete { try body(antecedent._successValue) }
        case BOLTS_ERROR: next._trySet(error: antecedent._takeError())
        default: next._tryCancel()
        }
    }
}

@usableFromInline
internal struct _OnSuccessTaskStep<T: Sendable, U: Sendable>: _ContinuationStep {
    @usableFromInline let antecedent: Task<T>
    @usableFromInline let body: @Sendable (T) throws -> Task<U>

    @inlinable
    init(antecedent: Task<T>, body: @escaping @Sendable (T) throws -> Task<U>) {
        self.antecedent = antecedent
        self.body = body
    }

    @inlinable
    func perform(_ next: _BoltsTaskBase) {
        let next = unsafeDowncast(next, to: Task<U>.self)
        switch antecedent._outcome {
        case BOLTS_SUCCESS:
            do {
                next._follow(try body(antecedent._successValue))
            } catch {
                next._trySet(thrown: error)
            }
        case BOLTS_ERROR: next._trySet(error: antecedent._takeError())
        default: next._tryCancel()
        }
    }
}

/// `continueOnErrorWith`: `E` is the closure's error type (`any Error` for the untyped form);
/// other errors pass through.
@usableFromInline
internal struct _OnErrorTypedStep<T: Sendable, E: Error>: _ContinuationStep {
    @usableFromInline let antecedent: Task<T>
    @usableFromInline let body: @Sendable (E) throws -> T

    @inlinable
    init(antecedent: Task<T>, body: @escaping @Sendable (E) throws -> T) {
        self.antecedent = antecedent
        self.body = body
    }

    @inlinable
    func perform(_ next: _BoltsTaskBase) {
        let next = unsafeDowncast(next, to: Task<T>.self)
        switch antecedent._outcome {
        case BOLTS_SUCCESS: next._trySet(value: antecedent._successValue)
        case BOLTS_ERROR:
            let error = antecedent._takeError()
            if let typed = error as? E {
                next._complete { try body(typed) }
            } else {
                next._trySet(error: error)
            }
        default: next._tryCancel()
        }
    }
}

/// `continueOnErrorWithTask`, typed like `_OnErrorTypedStep`.
@usableFromInline
internal struct _OnErrorTypedTaskStep<T: Sendable, E: Error>: _ContinuationStep {
    @usableFromInline let antecedent: Task<T>
    @usableFromInline let body: @Sendable (E) throws -> Task<T>

    @inlinable
    init(antecedent: Task<T>, body: @escaping @Sendable (E) throws -> Task<T>) {
        self.antecedent = antecedent
        self.body = body
    }

    @inlinable
    func perform(_ next: _BoltsTaskBase) {
        let next = unsafeDowncast(next, to: Task<T>.self)
        switch antecedent._outcome {
        case BOLTS_SUCCESS: next._trySet(value: antecedent._successValue)
        case BOLTS_ERROR:
            let error = antecedent._takeError()
            if let typed = error as? E {
                do { next._follow(try body(typed)) } catch { next._trySet(thrown: error) }
            } else {
                next._trySet(error: error)
            }
        default: next._tryCancel()
        }
    }
}

/// Ends the next task as `inner` ended (unwrapping a returned task).
@usableFromInline
internal struct _FollowStep<T: Sendable>: _ContinuationStep {
    @usableFromInline let inner: Task<T>

    @inlinable
    init(inner: Task<T>) { self.inner = inner }

    @inlinable
    func perform(_ next: _BoltsTaskBase) {
        unsafeDowncast(next, to: Task<T>.self)._trySet(outcomeOf: inner)
    }
}
