import Foundation

/// A value guarded by a lock, shared between threads.
///
/// Safety (why `@unchecked Sendable` holds):
/// 1. `value` is private and is read or written only inside `withLock`, which holds `lock` for the whole access.
/// 2. `lock` is an `NSLock`, which is itself thread-safe, and is never replaced.
/// 3. `T` is `Sendable`, so values that leave the closure may cross threads.
/// Together these make every access to the stored value mutually exclusive.
final class Locked<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T

    init(_ value: T) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value. Never call back into the same instance from `body`.
    func withLock<R>(_ body: (inout T) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// A snapshot of the current value.
    var current: T {
        withLock { $0 }
    }
}
