/// The error of a task that aggregates several failures (`whenAll`, `whenAnySuccess`),
/// holding them in the order of the inputs.
public struct AggregateError: Error, CustomStringConvertible {
    /// The inputs' errors, in input order.
    public let errors: [any Error]

    /// Creates an aggregate of `errors`.
    public init(errors: [any Error]) { self.errors = errors }

    /// `"AggregateError(<n> errors: e1, e2, …)"`.
    public var description: String {
        "AggregateError(\(errors.count) errors: \(errors.map { String(describing: $0) }.joined(separator: ", ")))"
    }
}

/// Thrown from a continuation (or any closure whose outcome becomes a task's) to end that
/// task as cancelled rather than faulted. Swift's `CancellationError` has the same effect.
public struct CancelledError: Error, Equatable, CustomStringConvertible {
    /// Creates the error.
    public init() {}
    /// `"CancelledError"`.
    public var description: String { "CancelledError" }
}

/// The error of a task that did not finish in time (see
/// ``Task/timeout(after:cancelling:file:line:)-(Double,_,_,_)``).
public struct TimeoutError: Error, Equatable, CustomStringConvertible {
    /// The limit, in seconds, that was exceeded (a `Duration` limit converted to seconds).
    public let seconds: Double
    /// Creates the error for a limit of `seconds`.
    public init(seconds: Double = 0) { self.seconds = seconds }
    /// `"TimeoutError(after <seconds> s)"`.
    public var description: String { "TimeoutError(after \(seconds) s)" }
}
