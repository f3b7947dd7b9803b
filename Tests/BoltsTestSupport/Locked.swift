import Foundation

/// A value behind a lock. NSLock (a pthread mutex) rather than Synchronization.Mutex:
/// ThreadSanitizer intercepts pthread mutexes, while `Mutex`'s contended path waits in code the
/// sanitizer does not see (two appends that met there were once reported as a race in
/// `.ci/run`'s TSan stage).
//
// @unchecked Sendable: `value` is read and written only while `lock` is held.
package final class LockedValue<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// Creates the box holding `value`.
    package init(_ value: Value) { self.value = value }

    /// Runs `body` on the value with the lock held.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// A thread-safe list that records what happened, in the order it was appended (behind an
/// NSLock, see ``LockedValue``).
package final class Recorder<Element: Sendable>: Sendable {
    private let entries = LockedValue<[Element]>([])

    /// Creates an empty recorder.
    package init() {}

    /// Appends `element`.
    package func append(_ element: Element) { entries.withLock { $0.append(element) } }

    /// What was appended so far, oldest first.
    package var values: [Element] { entries.withLock { $0 } }
}
