// A process started the way Swift servers start (Hummingbird, Vapor, swift-service-lifecycle):
// an async `main`, whose first statement installs ThreadPool.shared as Swift Concurrency's
// global executor. Run by Tests/GlobalExecutorTests (installing is process-wide, so it cannot
// happen in the test runner's process). It checks that the install is accepted there, that a
// detached task, task-group children and `async let` then run on the pool's workers while
// `main` itself stays on the main actor, that yields and `globalConcurrentExecutor` lead to
// the pool too, and that a second install is refused.
// Prints one "ok <check>" line per check that held; exits 1 at the first that did not.
import Bolts
import BoltsTestSupport
import Foundation

func fail(_ message: String) -> Never {
    print("FAILED: \(message)")
    fflush(nil)
    exit(1)
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fail(message()) }
}

/// Where the code that reads it runs: on a worker of ThreadPool.shared or not, and the
/// thread's name (for the failure messages: "-qos" names are Dispatch's, that is Swift's
/// default executor).
struct Placement: Sendable, CustomStringConvertible {
    let onPool: Bool
    let thread: String

    static var here: Placement {
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
        return Placement(onPool: ThreadPool.shared.isCurrent, thread: name.trimmingCharacters(in: .newlines))
    }

    var description: String { "\(onPool ? "a pool worker" : "a thread off the pool") ('\(thread)')" }
}

/// A nonisolated async function: it runs on the global executor, and so does its
/// resumption after the yield.
nonisolated func placementAfterSuspending() async -> Placement {
    await _Concurrency.Task.yield()
    return .here
}

/// Fails the process if the checks have not finished after `seconds` (a hang is a
/// failure, not a stuck test). A thread of its own, so that it fires whatever the
/// executors are doing.
func startWatchdog(seconds: Double) {
    Thread.detachNewThread {
        Thread.sleep(forTimeInterval: seconds)
        fail("the checks did not finish in \(seconds) s")
    }
}

@main
struct AsyncMainChecks {
    static func main() async {
        // The first statement, as a server's `main` has it.
        let installed = ThreadPool.shared.unsafeTryInstallAsConcurrencyGlobalExecutor()
        check(installed, "installing from the first statement of an async main was refused")
        check(ThreadPool.shared.isConcurrencyGlobalExecutor, "isConcurrencyGlobalExecutor is false after installing")
        print("ok install from the first statement of an async main")
        startWatchdog(seconds: 30)

        let detached = await _Concurrency.Task.detached { Placement.here }.value
        check(detached.onPool, "a detached task ran on \(detached)")
        let resumed = await _Concurrency.Task.detached { await placementAfterSuspending() }.value
        check(resumed.onPool, "a detached task resumed after a yield on \(resumed)")
        print("ok a detached task runs on the pool")

        let children = 1000
        let offPool = await withTaskGroup(of: Placement.self) { group in
            for _ in 0..<children { group.addTask { .here } }
            var offPool: [Placement] = []
            for await placement in group where !placement.onPool { offPool.append(placement) }
            return offPool
        }
        check(
            offPool.isEmpty,
            "\(offPool.count) of \(children) task-group children ran off the pool: \(offPool.prefix(3))")
        print("ok task-group children run on the pool")

        async let first = Placement.here
        async let second = placementAfterSuspending()
        let (a, b) = await (first, second)
        check(a.onPool, "an async let child ran on \(a)")
        check(b.onPool, "an async let child that suspended resumed on \(b)")
        print("ok async let runs on the pool")

        // Yields (above) and tasks that prefer `globalConcurrentExecutor` reach the pool
        // through Swift's default executor object, not the hook: no job may have gone to
        // Dispatch's global queues, so no thread of theirs may exist (the one that serves
        // the main queue once `main` has suspended does not count).
        check((globalConcurrentExecutor as AnyObject) === ThreadPool.shared, "globalConcurrentExecutor is not the pool")
        let preferred = await _Concurrency.Task(executorPreference: globalConcurrentExecutor) { Placement.here }.value
        check(preferred.onPool, "a task that prefers globalConcurrentExecutor ran on \(preferred)")
        let dispatchThreads = dispatchGlobalQueueThreadNames()
        check(dispatchThreads.isEmpty, "threads of Dispatch's global queues run: \(dispatchThreads)")
        print("ok Swift's default executor is the pool")

        // `main` is isolated to the main actor, whose executor (Dispatch's main queue) the
        // pool does not replace: every resumption above came back there.
        MainActor.preconditionIsolated("main resumed off the main actor")
        let mainPlacement = Placement.here
        check(!mainPlacement.onPool, "main, on the main actor, resumed on \(mainPlacement)")
        print("ok main stays on the main actor")

        check(!ThreadPool.shared.unsafeTryInstallAsConcurrencyGlobalExecutor(), "a second install was accepted")
        let other = ThreadPool(threadCount: 1, name: "other")
        check(!other.unsafeTryInstallAsConcurrencyGlobalExecutor(), "a second pool was installed over the first")
        check(ThreadPool.shared.isConcurrencyGlobalExecutor, "a refused install changed the global executor")
        other.shutdown()
        print("ok a second install is refused")
        fflush(nil)
    }
}
