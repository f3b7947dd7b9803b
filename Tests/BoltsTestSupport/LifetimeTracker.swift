import Synchronization

/// Counts live objects, to catch leaks (as swift-collections' lifetime trackers do): ``track()``
/// returns a token whose deinit decrements ``alive``. Capture a token in a closure to see when
/// the closure (and everything it captured) is released.
package final class LifetimeTracker: Sendable {
    /// One tracked object.
    package final class Token: Sendable {
        private let tracker: LifetimeTracker

        fileprivate init(_ tracker: LifetimeTracker) {
            self.tracker = tracker
            tracker.live.add(1, ordering: .relaxed)
        }

        deinit { tracker.live.subtract(1, ordering: .releasing) }

        /// Uses the token, so that a closure that calls it captures (and keeps) it.
        package func touch() {}
    }

    fileprivate let live = Atomic<Int>(0)

    /// Creates a tracker with nothing alive.
    package init() {}

    /// A new tracked object.
    package func track() -> Token { Token(self) }

    /// How many tokens are alive. Acquire: a test that sees a token gone also sees what its
    /// releasing thread did before.
    package var alive: Int { live.load(ordering: .acquiring) }
}
