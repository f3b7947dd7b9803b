import CBoltsRuntime

/// The producer side of a ``Task``: whoever holds the source decides how its task ends.
///
/// Completion is thread-safe and happens exactly once. The `set…`/``cancel()`` forms trap
/// when the task has already ended (a programming error); the `trySet…`/``tryCancel()``
/// forms return `false` instead and keep the first outcome. Continuations waiting on the
/// task run on the thread that completes it (for inline executors), after this call has
/// made the outcome visible.
///
/// Complete every task you create: a task whose sources are all gone while it is pending
/// can never end, and continuations waiting on it (which hold it) wait forever with it.
///
/// A struct holding only the task (as SwiftNIO's promise does): copies share the task, and
/// making a source costs just the task.
public struct TaskCompletionSource<T: Sendable>: Sendable {
    /// The task this source completes.
    public let task: Task<T>

    /// Creates a source with a pending task. `file` and `line` are reported if the task
    /// fails and nobody observes the error.
    @inlinable
    public init(file: StaticString = #fileID, line: UInt = #line) {
        task = Task(_pendingAt: file, line: line)
    }

    /// Completes the task with `result`. Traps if the task has already ended.
    @inlinable
    public func set(result: T) {
        guard task._trySet(value: result) else { _completedTwice("set(result:)") }
    }

    /// Fails the task with `error`. Traps if the task has already ended.
    @inlinable
    public func set(error: any Error) {
        guard task._trySet(error: error) else { _completedTwice("set(error:)") }
    }

    /// Cancels the task. Traps if the task has already ended.
    @inlinable
    public func cancel() {
        guard task._tryCancel() else { _completedTwice("cancel()") }
    }

    /// Completes the task with `result` unless it has already ended; returns whether it did.
    @inlinable
    @discardableResult
    public func trySet(result: T) -> Bool { task._trySet(value: result) }

    /// Fails the task with `error` unless it has already ended; returns whether it did.
    @inlinable
    @discardableResult
    public func trySet(error: any Error) -> Bool { task._trySet(error: error) }

    /// Cancels the task unless it has already ended; returns whether it did.
    @inlinable
    @discardableResult
    public func tryCancel() -> Bool { task._tryCancel() }
}

@usableFromInline
internal func _completedTwice(_ what: StaticString, file: StaticString = #fileID, line: UInt = #line) -> Never {
    preconditionFailure("\(what) on a completed task", file: file, line: line)
}
