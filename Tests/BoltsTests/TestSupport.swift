import Foundation
import Synchronization
import Testing

@testable import Bolts

struct TestError: Error, Equatable, CustomStringConvertible {
    let code: Int
    init(_ code: Int = 0) { self.code = code }
    var description: String { "TestError(\(code))" }
}

/// A thread-safe counter for tests.
final class Counter: Sendable {
    private let storage = Atomic<Int>(0)
    @discardableResult
    func increment() -> Int { storage.add(1, ordering: .relaxed).newValue }
    var value: Int { storage.load(ordering: .relaxed) }
}

/// A thread-safe list that records what happened, in order.
final class Recorder<Element: Sendable>: Sendable {
    private let storage = Mutex<[Element]>([])
    func append(_ element: Element) { storage.withLock { $0.append(element) } }
    var values: [Element] { storage.withLock { $0 } }
}

/// Tracks object lifetimes: `track()` returns an object whose deinit decrements `alive`.
final class LifetimeTracker: Sendable {
    final class Token: Sendable {
        let tracker: LifetimeTracker
        init(_ tracker: LifetimeTracker) {
            self.tracker = tracker
            tracker.live.add(1, ordering: .relaxed)
        }
        deinit { tracker.live.subtract(1, ordering: .relaxed) }
    }
    fileprivate let live = Atomic<Int>(0)
    func track() -> Token { Token(self) }
    var alive: Int { live.load(ordering: .relaxed) }
}

/// Runs `body` on a new thread with the given stack size and waits for it.
func runOnThread(stackSize: Int, _ body: @escaping @Sendable () -> Void) {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        done.signal()
    }
    thread.stackSize = stackSize
    thread.start()
    done.wait()
}

/// An opaque identifier of the current thread.
func currentThreadID() -> UInt { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(pthread_self_ptr()))) }

private func pthread_self_ptr() -> UnsafeMutableRawPointer {
    UnsafeMutableRawPointer(bitPattern: UInt(pthread_self()))!
}

/// Stress sizes: CI-sized by default, much larger with BOLTS_STRESS=1.
let stressScale: Int = ProcessInfo.processInfo.environment["BOLTS_STRESS"] == "1" ? 20 : 1
