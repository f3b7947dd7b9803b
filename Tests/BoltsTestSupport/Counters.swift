import Synchronization

// Thread-safe observations for tests. Acquire/release orderings throughout, so that a test
// that reads a count or a flag also sees what the thread that bumped it did before.

/// A thread-safe counter.
package final class Counter: Sendable {
    private let storage = Atomic<Int>(0)

    /// Creates a counter at zero.
    package init() {}

    /// Adds one; returns the new count.
    @discardableResult
    package func increment() -> Int { storage.add(1, ordering: .acquiringAndReleasing).newValue }

    /// The count.
    package var value: Int { storage.load(ordering: .acquiring) }
}

/// A thread-safe flag that is set once and stays set.
package final class Flag: Sendable {
    private let storage = Atomic<Bool>(false)

    /// Creates a flag that is not set.
    package init() {}

    /// Whether ``set()`` was called.
    package var isSet: Bool { storage.load(ordering: .acquiring) }

    /// Sets the flag.
    package func set() { storage.store(true, ordering: .releasing) }
}
