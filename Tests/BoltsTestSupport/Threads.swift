import Dispatch
import Foundation

/// An identity of the calling thread that can be compared across threads.
package func currentThreadID() -> UInt { UInt(pthread_self()) }

/// Whether the long stress runs were asked for (`BOLTS_STRESS=1`); CI runs the short form.
package let stressIsLong = ProcessInfo.processInfo.environment["BOLTS_STRESS"] == "1"

/// Stress sizes: CI-sized by default (1), much larger with `BOLTS_STRESS=1` (20).
package let stressScale = stressIsLong ? 20 : 1

/// Runs `body` on a new thread with the given stack size and waits for it.
package func runOnThread(stackSize: Int, _ body: @escaping @Sendable () -> Void) {
    runOnThreads(1, stackSize: stackSize) { _ in body() }
}

/// Runs `body(index)` on `count` new threads, released together once all have started (so
/// that they race), and returns when all of them returned.
///
/// - Parameter stackSize: Each thread's stack in bytes, or nil for Foundation's default.
package func runOnThreads(_ count: Int, stackSize: Int? = nil, _ body: @escaping @Sendable (Int) -> Void) {
    let done = DispatchSemaphore(value: 0)
    let start = DispatchSemaphore(value: 0)
    for index in 0..<count {
        let thread = Thread {
            start.wait()
            body(index)
            done.signal()
        }
        if let stackSize { thread.stackSize = stackSize }
        thread.start()
    }
    for _ in 0..<count { start.signal() }
    for _ in 0..<count { done.wait() }
}

/// Seconds elapsed since `start` (monotonic clock).
package func secondsElapsed(since start: DispatchTime) -> Double {
    Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
}

/// The names of this process's threads that serve Dispatch's global queues, where Swift's
/// default executor runs its jobs: names that end in "-qos" (the kernel keeps a name's
/// last 15 bytes). The thread that serves the main queue once an async `main` has
/// suspended belongs to an ".overcommit" queue and is not among them.
package func dispatchGlobalQueueThreadNames() -> [String] {
    let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return threads.compactMap { thread in
        let name = (try? String(contentsOfFile: "/proc/self/task/\(thread)/comm", encoding: .utf8)) ?? ""
        let trimmed = name.trimmingCharacters(in: .newlines)
        return trimmed.hasSuffix("-qos") ? trimmed : nil
    }
}
