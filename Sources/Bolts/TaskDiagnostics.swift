import Synchronization

/// An error that a faulted task held when it was deallocated without anyone reading it.
public struct UnobservedTaskError: Sendable {
    /// The error the task failed with.
    public let error: any Error
    /// The file that created the task (`#fileID`).
    public let file: String
    /// The line that created the task.
    public let line: Int
}

/// Process-wide diagnostics for tasks.
public enum TaskDiagnostics {
    private static let handler = Mutex<(@Sendable (UnobservedTaskError) -> Void)?>(nil)

    /// Sets the function called when a faulted task is deallocated and nobody observed its
    /// error (read ``Task/error``, awaited ``Task/value``, or passed the task to a
    /// continuation or an aggregate). `nil` (the default) ignores such errors.
    ///
    /// The handler runs on the thread that released the last reference to the task, inside
    /// its deinitialization: keep it short and do not touch the task.
    public static func setUnobservedErrorHandler(_ handler: (@Sendable (UnobservedTaskError) -> Void)?) {
        self.handler.withLock { $0 = handler }
    }

    internal static func _reportUnobserved(_ error: any Error, file: StaticString, line: UInt) {
        guard let handler = handler.withLock({ $0 }) else { return }
        handler(UnobservedTaskError(error: error, file: file.description, line: Int(line)))
    }
}
