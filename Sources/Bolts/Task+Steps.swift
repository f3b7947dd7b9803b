import CBoltsRuntime

// What a continuation does once its antecedent has completed, one small value type per
// `continue…` form. A step holds the antecedent and the caller's closure (three words).
// While the next task waits, the step and its executor are parked in that task's payload
// (which holds nothing until the task completes), and only the step's metatype is kept in
// the task's header: no allocation, and no existential to copy, clear or destroy.
//
// The six `continue…` steps below are near-duplicates on purpose: one concrete type per
// form lets each be specialised for its closure's shape; keep their outcome handling in step.

/// A continuation's work, run once with the (completed) antecedent and the next task.
@usableFromInline
internal protocol _ContinuationStep: Sendable {
    /// The value type of the task the step completes.
    associatedtype Next: Sendable

    /// Completes `next` from the antecedent's outcome, running the caller's closure where
    /// the form says so.
    func perform(_ next: Task<Next>)

    /// Moves the step parked in `task`'s payload out and runs it on the parked executor.
    static func _runParked(on task: _AnyTask)

    /// Destroys the step and executor parked in `task`'s payload (the task never ran it).
    static func _discardParked(from task: _TaskRef)
}

/// Payload layout while a step is parked: the executor at offset 0, then the step (or, if
/// it does not fit, a pointer to a heap copy of it) at `_parkedStepOffset`: the executor's
/// size rounded up to 16, so that a step aligned to 16 or less starts aligned. Derived from
/// the layout, so that an `Executor` that grows moves the step instead of overlapping it (a
/// constant after optimization).
@inlinable
internal var _parkedStepOffset: Int { (MemoryLayout<Executor>.size + 15) & ~15 }

extension _ContinuationStep {
    /// Whether the step fits in the payload after the executor.
    @inlinable
    internal static var _parksInline: Bool {
        MemoryLayout<Self>.size <= Int(BOLTS_TASK_PAYLOAD_SIZE) - _parkedStepOffset
            && MemoryLayout<Self>.alignment <= 16
    }

    /// Parks `executor` and `step` in `task`'s payload, which must be free (the task is
    /// pending and nothing is parked). The step is consumed: its references (the caller's
    /// closure context, the antecedent) move into the payload without a retain here and a
    /// release in the caller, two atomic operations on lines that other threads may be
    /// writing (small heap objects share cache lines with their neighbours).
    @inlinable
    internal static func _park(_ executor: Executor, _ step: consuming Self, in task: _TaskRef) {
        let raw = bolts_task_payload(task.core)
        raw.initializeMemory(as: Executor.self, repeating: executor, count: 1)
        let slot = raw + _parkedStepOffset
        if _parksInline {
            slot.bindMemory(to: Self.self, capacity: 1).initialize(to: step)
        } else {
            let box = UnsafeMutablePointer<Self>.allocate(capacity: 1)
            box.initialize(to: step)
            slot.storeBytes(of: box, as: UnsafeMutablePointer<Self>.self)
        }
    }

    /// Moves the parked executor and step out of `task`'s payload, leaving it free.
    @inlinable
    internal static func _unpark(from task: _TaskRef) -> (Executor, Self) {
        let raw = bolts_task_payload(task.core)
        let executor = raw.assumingMemoryBound(to: Executor.self).move()
        let slot = raw + _parkedStepOffset
        if _parksInline { return (executor, slot.assumingMemoryBound(to: Self.self).move()) }
        let box = slot.load(as: UnsafeMutablePointer<Self>.self)
        let step = box.move()
        box.deallocate()
        return (executor, step)
    }

    @inlinable
    internal static func _runParked(on task: _AnyTask) {
        let next = unsafeDowncast(task, to: Task<Next>.self)
        let (executor, step) = _unpark(from: next._ref)
        if executor._runsInPlace {
            step.perform(next)
        } else {
            executor.execute { step.perform(next) }
        }
    }

    @inlinable
    internal static func _discardParked(from task: _TaskRef) {
        _ = _unpark(from: task)
    }
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

    @usableFromInline typealias Next = U

    @inlinable
    func perform(_ next: Task<U>) {
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

    @usableFromInline typealias Next = U

    @inlinable
    func perform(_ next: Task<U>) {
        antecedent._markObservedIfFaulted()
        // Follow-or-fail, written out in each of its four places on purpose (specialised per step).
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

    @usableFromInline typealias Next = U

    @inlinable
    func perform(_ next: Task<U>) {
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

    @usableFromInline typealias Next = U

    @inlinable
    func perform(_ next: Task<U>) {
        switch antecedent._outcome {
        case BOLTS_SUCCESS:
            // Follow-or-fail, written out in each of its four places on purpose (specialised per step).
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

    @usableFromInline typealias Next = T

    @inlinable
    func perform(_ next: Task<T>) {
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

    @usableFromInline typealias Next = T

    @inlinable
    func perform(_ next: Task<T>) {
        switch antecedent._outcome {
        case BOLTS_SUCCESS: next._trySet(value: antecedent._successValue)
        case BOLTS_ERROR:
            let error = antecedent._takeError()
            if let typed = error as? E {
                // Follow-or-fail, written out in each of its four places on purpose (specialised per step).
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

    @usableFromInline typealias Next = T

    @inlinable
    func perform(_ next: Task<T>) {
        next._trySet(outcomeOf: inner)
    }
}
