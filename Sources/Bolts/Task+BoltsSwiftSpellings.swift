// Bolts-Swift's names for the state of a task, kept so that code ported from it compiles.
// Each is deprecated with `renamed:`, so the compiler's warning names the replacement and
// offers it as a fix-it; each reads the same atomic state word as its replacement (an
// acquire load, see `Task`), so the two spellings never disagree.

extension Task {
    /// Bolts-Swift's name for ``isCompleted``: whether the task has ended.
    @available(*, deprecated, renamed: "isCompleted")
    @inlinable
    public var completed: Bool { isCompleted }

    /// Bolts-Swift's name for ``isFaulted``: whether the task ended with an error.
    @available(*, deprecated, renamed: "isFaulted")
    @inlinable
    public var faulted: Bool { isFaulted }

    /// Bolts-Swift's name for ``isCancelled-property``: whether the task was cancelled.
    @available(*, deprecated, renamed: "isCancelled")
    @inlinable
    public var cancelled: Bool { isCancelled }
}
