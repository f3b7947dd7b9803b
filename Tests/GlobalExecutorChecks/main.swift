// A process with a Bolts pool installed as Swift Concurrency's global executor, for the
// tests in Tests/GlobalExecutorTests (installing is process-wide, so it cannot happen in
// the test runner's process). `GlobalExecutorChecks <mode>`:
//   installed   installs ThreadPool.shared first thing, then runs every check below
//   too-late    runs a Swift task first, then tries to install (must be refused)
//   just-after-a-task  starts Swift tasks and installs at once, before their threads run
//               (must be refused, and each of those tasks must run)
//   shutdown    installs a new pool, then shuts it down (must trap, with a message)
//   default-thread-count   prints "defaultThreadCount <n>" (ThreadPool.defaultThreadCount as
//               this process sees it; for the cgroup CPU quota test in Tests/BoltsTests)
// Prints one "ok <check>" line per check that held; exits 1 at the first that did not.
import Bolts
import BoltsTestSupport
import Dispatch
import Foundation
import Synchronization

func fail(_ message: String) -> Never {
    print("FAILED: \(message)")
    fflush(nil)
    exit(1)
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fail(message()) }
}

/// Runs `body` in a detached Swift task and blocks the main thread until it returns, or
/// fails after `seconds` (a hang is a failure, not a stuck test).
func runChecked(_ name: String, seconds: Double = 20, _ body: @escaping @Sendable () async throws -> Void) {
    let done = DispatchSemaphore(value: 0)
    let failure = Mutex<String?>(nil)
    _Concurrency.Task.detached {
        do { try await body() } catch { failure.withLock { $0 = "\(name): threw \(error)" } }
        done.signal()
    }
    if done.wait(timeout: .now() + seconds) == .timedOut { fail("\(name): did not finish in \(seconds) s") }
    if let message = failure.withLock({ $0 }) { fail(message) }
    print("ok \(name)")
}

/// Shared state for the checks' child tasks.
final class Record: Sendable {
    /// Behind an NSLock, which ThreadSanitizer sees (see `Recorder`).
    let order = Recorder<Int>()
    let count = Atomic<Int>(0)
}

enum Values {
    @TaskLocal static var requestID: Int = 0
}

actor Tally {
    var count = 0
    var offPool = 0
    func add() {
        count += 1
        if !ThreadPool.shared.isCurrent { offPool += 1 }
    }
}

nonisolated func hop(_ value: Int) async -> (Int, Bool) {
    await _Concurrency.Task.yield()
    return (value, ThreadPool.shared.isCurrent)
}

func elapsedMilliseconds(since start: ContinuousClock.Instant) -> Double {
    let d = ContinuousClock.now - start
    return Double(d.components.seconds) * 1e3 + Double(d.components.attoseconds) / 1e15
}

func installedChecks() {
    let pool = ThreadPool.shared
    check(pool.unsafeTryInstallAsConcurrencyGlobalExecutor(), "the first install was refused")
    check(pool.isConcurrencyGlobalExecutor, "isConcurrencyGlobalExecutor is false after installing")
    check(!pool.unsafeTryInstallAsConcurrencyGlobalExecutor(), "a second install was accepted")
    let other = ThreadPool(threadCount: 1, name: "other")
    check(!other.unsafeTryInstallAsConcurrencyGlobalExecutor(), "a second pool was installed over the first")
    check(!other.isConcurrencyGlobalExecutor, "the refused pool says it is the global executor")
    other.shutdown()
    print("ok install")

    runChecked("unstructured tasks run on the pool") {
        check(ThreadPool.shared.isCurrent, "a detached task is not on the pool")
        let onPool = await _Concurrency.Task { ThreadPool.shared.isCurrent }.value
        check(onPool, "Task {} did not run on the pool")
        let before = ThreadPool.shared.metrics.executed
        let results = await withTaskGroup(of: Int.self) { group in
            for i in 0..<1000 { group.addTask { ThreadPool.shared.isCurrent ? i : -1 } }
            var sum = 0
            for await value in group {
                check(value >= 0, "a task-group child ran off the pool")
                sum += value
            }
            return sum
        }
        check(results == 999 * 1000 / 2, "task-group children returned \(results)")
        check(ThreadPool.shared.metrics.executed >= before + 1000, "the pool did not count the children")
    }

    runChecked("async let and nonisolated async functions run on the pool") {
        async let a = hop(1)
        async let b = hop(2)
        let (x, y) = await (a, b)
        check(x.0 + y.0 == 3 && x.1 && y.1, "async let children: \(x), \(y)")
        let after = await hop(3)
        check(after.1, "a nonisolated async function resumed off the pool")
    }

    runChecked("actors run on the pool") {
        let tally = Tally()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<200 { group.addTask { await tally.add() } }
        }
        let (count, offPool) = (await tally.count, await tally.offPool)
        check(count == 200 && offPool == 0, "actor: \(count) calls, \(offPool) off the pool")
    }

    runChecked("task-local values") {
        await Values.$requestID.withValue(42) {
            let child = await _Concurrency.Task { Values.requestID }.value
            check(child == 42, "an unstructured child read \(child)")
            let fromGroup = await withTaskGroup(of: Int.self) { group in
                group.addTask { Values.requestID }
                return await group.next() ?? -1
            }
            check(fromGroup == 42, "a group child read \(fromGroup)")
            let detached = await _Concurrency.Task.detached { Values.requestID }.value
            check(detached == 0, "a detached task inherited \(detached)")
        }
    }

    runChecked("Task.sleep waits on the pool's timer, for the time asked") {
        for milliseconds in [1, 20, 50] {
            let start = ContinuousClock.now
            try await _Concurrency.Task.sleep(nanoseconds: UInt64(milliseconds) * 1_000_000)
            let took = elapsedMilliseconds(since: start)
            check(took >= Double(milliseconds), "sleep(\(milliseconds) ms) returned after \(took) ms")
            check(took < Double(milliseconds) + 500, "sleep(\(milliseconds) ms) took \(took) ms")
            check(ThreadPool.shared.isCurrent, "resumed off the pool after sleeping")
        }
        // Both forms of sleep wait in the pool's timer (not in Dispatch's, which would
        // then run the resumption's first job on a thread of its own).
        for form in ["sleep(nanoseconds:)", "sleep(for:)"] {
            let sleeper = _Concurrency.Task {
                if form == "sleep(for:)" {
                    try await _Concurrency.Task.sleep(for: .milliseconds(200))
                } else {
                    try await _Concurrency.Task.sleep(nanoseconds: 200_000_000)
                }
            }
            var held = false
            for _ in 0..<100 where !held {
                usleep(1000)
                held = bolts_delayed_jobs() > 0
            }
            check(held, "a task in \(form) is not held by the pool's timer")
            try await sleeper.value
        }
        for clockName in ["continuous", "suspending"] {
            let start = ContinuousClock.now
            if clockName == "continuous" {
                try await ContinuousClock().sleep(until: .now + .milliseconds(30))
            } else {
                try await SuspendingClock().sleep(until: .now + .milliseconds(30))
            }
            let took = elapsedMilliseconds(since: start)
            check(took >= 29 && took < 530, "\(clockName) clock: a 30 ms deadline came after \(took) ms")
        }
        // Many sleepers: each wakes no earlier than its own time, in order of due time.
        let record = Record()
        await withThrowingTaskGroup(of: Void.self) { group in
            for i in (0..<50).reversed() {
                group.addTask {
                    try await _Concurrency.Task.sleep(nanoseconds: UInt64(i) * 2_000_000)
                    record.order.append(i)
                }
            }
        }
        let woke = record.order.values
        check(woke.count == 50, "\(woke.count) of 50 sleepers woke")
        let inversions = zip(woke, woke.dropFirst()).filter { $0 > $1 + 5 }.count
        check(inversions == 0, "sleepers woke far out of order: \(woke)")
        check(bolts_delayed_jobs() == 0, "the timer still holds \(bolts_delayed_jobs()) jobs")
    }

    runChecked("cancellation") {
        let sleeper = _Concurrency.Task { try await _Concurrency.Task.sleep(nanoseconds: 30_000_000_000) }
        let start = ContinuousClock.now
        sleeper.cancel()
        do {
            try await sleeper.value
            fail("a cancelled sleep returned normally")
        } catch is CancellationError {}
        check(elapsedMilliseconds(since: start) < 1000, "a cancelled 30 s sleep took \(elapsedMilliseconds(since: start)) ms")
        let group = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                try? await _Concurrency.Task.sleep(nanoseconds: 30_000_000_000)
                return _Concurrency.Task.isCancelled
            }
            group.cancelAll()
            return await group.next() ?? false
        }
        check(group, "a cancelled group child did not see its cancellation")
    }

    runChecked("Swift's default executor is the pool: yields, globalConcurrentExecutor") {
        // Since Swift 6.2 the standard library hands some jobs to its default executor
        // object rather than to the global executor's hook: a yield's continuation, a task
        // that prefers `globalConcurrentExecutor`. Those must reach the pool too.
        check((globalConcurrentExecutor as AnyObject) === ThreadPool.shared, "globalConcurrentExecutor is not the pool")
        let preferred = await _Concurrency.Task(executorPreference: globalConcurrentExecutor) {
            ThreadPool.shared.isCurrent
        }.value
        check(preferred, "a task that prefers globalConcurrentExecutor ran off the pool")
        for _ in 0..<1000 { await _Concurrency.Task.yield() }
        check(ThreadPool.shared.isCurrent, "resumed off the pool after yielding")
        // Nothing so far used Dispatch's global queues, so no thread of theirs may exist:
        // a yield's continuation that Dispatch ran would have started one.
        let dispatchThreads = dispatchGlobalQueueThreadNames()
        check(dispatchThreads.isEmpty, "threads of Dispatch's global queues run, so jobs went there: \(dispatchThreads)")
    }

    runChecked("Bolts tasks awaited from async code") {
        let source = TaskCompletionSource<Int>()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.01) { source.set(result: 5) }
        let value = try await source.task.value
        check(value == 5, "a pending Bolts task gave \(value)")
        check(ThreadPool.shared.isCurrent, "resumed off the pool after awaiting a Bolts task")
        let bridged = try await Task<Int>.fromAsync { await hop(7).0 }.value
        check(bridged == 7, "Task.fromAsync gave \(bridged)")
        let pooled = try await Task<Int>.execute(.pool(.shared)) { 8 }.value
        check(pooled == 8, "Task.execute(.pool) gave \(pooled)")
        // A failed and a cancelled task throw; many awaiters of one pending task all resume.
        struct Failure: Error {}
        do {
            _ = try await Task<Int>(error: Failure()).value
            fail("awaiting a failed task returned")
        } catch is Failure {}
        do {
            _ = try await Task<Int>.cancelledTask().value
            fail("awaiting a cancelled task returned")
        } catch is CancellationError {}
        let shared = TaskCompletionSource<Int>()
        let total = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<100 { group.addTask { try await shared.task.value } }
            group.addTask {
                try await _Concurrency.Task.sleep(nanoseconds: 5_000_000)
                shared.set(result: 1)
                return 0
            }
            return try await group.reduce(0, +)
        }
        check(total == 100, "100 awaiters of one task summed to \(total)")
        // A cancelled awaiter returns at once, leaving the task to its other waiters.
        let never = TaskCompletionSource<Int>()
        let waiter = _Concurrency.Task { try await never.task.value }
        waiter.cancel()
        do {
            _ = try await waiter.value
            fail("a cancelled awaiter returned a value")
        } catch is CancellationError {}
        check(!never.task.isCompleted, "cancelling an awaiter touched the task")
        never.set(result: 0)
    }

    runChecked("an actor awaiting a pool task does not hold the actor while it waits") {
        // The pool task's closure calls back into the awaiting actor and waits for that
        // call. Were the actor held during the await (the closure run in the awaiter's place,
        // on the worker the actor runs on, without leaving the actor), the call could not run
        // and the wait would time out.
        let gate = Gate()
        let opened = try await gate.awaitAPoolTaskThatCallsBack()
        check(opened, "the pool task's call back into the awaiting actor waited 2 s: the await held the actor")
        // A completed task's value is read on the actor without leaving it.
        check(try await gate.valueOfACompletedTask() == 3, "a completed task's value, awaited on an actor")
    }

    runChecked("a worker blocked in async code is compensated") {
        // More tasks block than the pool has workers; each waits (blocking its thread) for
        // a Bolts task that only a later Swift task completes. Without compensation the
        // later tasks would never run.
        let blockers = ThreadPool.shared.threadCount + 2
        let sources = (0..<blockers).map { _ in TaskCompletionSource<Int>() }
        let tasks = sources.map { $0.task }
        let waited = Record()
        await withTaskGroup(of: Void.self) { group in
            for task in tasks {
                group.addTask {
                    blockUntilCompleted(task)
                    waited.count.add(1, ordering: .relaxed)
                }
            }
            group.addTask {
                try? await _Concurrency.Task.sleep(nanoseconds: 20_000_000)
                for (i, source) in sources.enumerated() { source.set(result: i) }
            }
        }
        let returned = waited.count.load(ordering: .relaxed)
        check(returned == blockers, "\(returned) of \(blockers) waits returned")
    }
}

/// An actor whose method awaits a pool task that calls back into it.
actor Gate {
    private let opened = DispatchSemaphore(value: 0)

    func open() { opened.signal() }

    func awaitAPoolTaskThatCallsBack() async throws -> Bool {
        try await Task<Bool>.execute(.pool(.shared)) { [opened] in
            _Concurrency.Task { await self.open() }
            return opened.wait(timeout: .now() + 2) == .success
        }.value
    }

    func valueOfACompletedTask() async throws -> Int {
        try await Task(3).value
    }
}

func bolts_delayed_jobs() -> Int { Int(ThreadPool.concurrencyDelayedJobCount) }

switch CommandLine.arguments.dropFirst().first {
case "installed":
    installedChecks()
case "too-late":
    let ran = DispatchSemaphore(value: 0)
    _Concurrency.Task.detached { ran.signal() }
    ran.wait()
    check(!ThreadPool.shared.unsafeTryInstallAsConcurrencyGlobalExecutor(), "installing after a Swift task ran was accepted")
    check(!ThreadPool.shared.isConcurrencyGlobalExecutor, "a refused install changed the global executor")
    runChecked("the default executor still runs tasks") {
        let value = await _Concurrency.Task { 1 }.value
        check(value == 1 && !ThreadPool.shared.isCurrent, "a task ran on the pool after a refused install")
    }
    print("ok too-late")
case "just-after-a-task":
    // The jobs are on Swift's default executor, but Dispatch's threads for them may not
    // run (or carry their names) yet: the install must see them all the same.
    let started = 100
    let ran = DispatchSemaphore(value: 0)
    for _ in 0..<started { _Concurrency.Task.detached { ran.signal() } }
    check(
        !ThreadPool.shared.unsafeTryInstallAsConcurrencyGlobalExecutor(),
        "installing just after starting Swift tasks was accepted"
    )
    for i in 0..<started where ran.wait(timeout: .now() + 20) == .timedOut {
        fail("\(started - i) of \(started) tasks started before the refused install never ran")
    }
    runChecked("the default executor still runs tasks") {
        let onPool = await _Concurrency.Task.detached { ThreadPool.shared.isCurrent }.value
        check(!onPool, "a task ran on the pool after a refused install")
    }
    print("ok just-after-a-task")
case "shutdown":
    let pool = ThreadPool(threadCount: 1, name: "global")
    check(pool.unsafeTryInstallAsConcurrencyGlobalExecutor(), "install refused")
    print("ok installed, shutting down")
    fflush(nil)
    pool.shutdown()
    fail("shutdown of the global executor returned")
case "default-thread-count":
    print("defaultThreadCount \(ThreadPool.defaultThreadCount)")
default:
    fail("usage: GlobalExecutorChecks installed|too-late|just-after-a-task|shutdown|default-thread-count")
}
fflush(nil)
exit(0)
