import Bolts
import Logging

extension TaskDiagnostics {
    /// Logs every unobserved task error to `logger`: installs a handler with
    /// ``/Bolts/TaskDiagnostics/setUnobservedErrorHandler(_:)``, replacing the one set
    /// before (call `setUnobservedErrorHandler(nil)` to stop).
    ///
    /// Each faulted task that is deallocated without anyone reading its error becomes one
    /// log entry at `level`:
    ///
    /// | part of the entry | value |
    /// | --- | --- |
    /// | message | `Task failed and its error was never observed: <error>` |
    /// | `error` (swift-log's error field) | the error itself |
    /// | file, line | where the task was created (`#fileID` and line), not where it was released |
    /// | source | the module that created the task (derived from the file, as swift-log does) |
    /// | metadata `task.file`, `task.line` | the same place, for handlers that print metadata but not the location |
    /// | metadata `error.type` | the error's type, fully qualified |
    ///
    /// The entry is written on the thread that released the last reference to the task,
    /// inside the task's deinitialization, as for any unobserved-error handler.
    ///
    /// - Parameters:
    ///   - logger: Where the entries go; its log level filters them as usual.
    ///   - level: The level of each entry (default `.error`).
    public static func logUnobservedErrors(to logger: Logger, level: Logger.Level = .error) {
        setUnobservedErrorHandler { report in
            logger.log(
                level: level,
                "Task failed and its error was never observed: \(String(describing: report.error))",
                error: report.error,
                metadata: [
                    "task.file": "\(report.file)",
                    "task.line": "\(report.line)",
                    "error.type": "\(String(reflecting: type(of: report.error)))",
                ],
                file: report.file,
                function: "",
                line: UInt(clamping: report.line)
            )
        }
    }
}
