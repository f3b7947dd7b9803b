import Dispatch
import Foundation
import Synchronization

/// Whether the long stress runs were asked for (`BOLTS_STRESS=1`); CI runs the short form.
let cancellationStressIsLong = ProcessInfo.processInfo.environment["BOLTS_STRESS"] == "1"

/// A thread-safe counter for test observations.
final class CancellationCounter: Sendable {
    private let storage = Atomic<Int>(0)

    var value: Int { storage.load(ordering: .acquiring) }

    @discardableResult
    func increment() -> Int {
        storage.add(1, ordering: .acquiringAndReleasing).newValue
    }
}

/// A thread-safe flag.
final class CancellationFlag: Sendable {
    private let storage = Atomic<Bool>(false)

    var isSet: Bool { storage.load(ordering: .acquiring) }

    func set() { storage.store(true, ordering: .releasing) }
}

/// A value behind a lock. NSLock (a pthread mutex) rather than Synchronization.Mutex, so
/// that ThreadSanitizer runs see the synchronization.
//
// @unchecked Sendable: `value` is read and written only while `lock` is held.
final class CancellationLocked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// A thread-safe append-only log of integers (for ordering checks).
final class CancellationLog: Sendable {
    private let entries = CancellationLocked<[Int]>([])

    func append(_ value: Int) { entries.withLock { $0.append(value) } }

    var values: [Int] { entries.withLock { $0 } }
}

/// An object that records its own deallocation: capture it in a closure to observe when
/// the closure (and everything it captured) is released.
final class CancellationLifetimeTracker: Sendable {
    let released: CancellationFlag

    init(_ released: CancellationFlag) { self.released = released }

    deinit { released.set() }

    /// Uses the tracker, so that a closure capturing it keeps it.
    func touch() {}
}

/// Runs `body(index)` on `count` new threads at once and returns when all returned.
func onCancellationTestThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let done = DispatchSemaphore(value: 0)
    let start = DispatchSemaphore(value: 0)
    for index in 0..<count {
        let thread = Thread {
            start.wait()
            body(index)
            done.signal()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    for _ in 0..<count { start.signal() }
    for _ in 0..<count { done.wait() }
}

/// Polls `condition` until it is true or `seconds` pass; returns its last value.
func cancellationEventually(within seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(1_000)
    }
    return condition()
}

/// Seconds elapsed since `start` (monotonic clock).
func cancellationSeconds(since start: DispatchTime) -> Double {
    Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
}

/// An identity of the calling thread that can be compared across threads.
func cancellationCurrentThreadID() -> UInt {
    UInt(pthread_self())
}
