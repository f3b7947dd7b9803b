import BoltsTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

@testable import Bolts

/// The closures handed to `Task.execute`, `ThreadPool.execute` and `Executor.execute` are
/// taken owned and moved into the job; aggregates visit their inputs borrowed and their
/// countdown is borrowed by each arrival. These tests hold every closure and every input
/// to account: each is released exactly once (never leaked, never released twice, which
/// would crash or make the counts go negative), on every executor kind.
@Suite(.serialized) struct OwnershipTests {
    /// Seconds to wait for a count to settle: a worker releases a job's closure just after
    /// running it, so the count may lag the task's completion by a moment.
    private static let releaseGrace = 10.0

    @Test(arguments: ["pool", "custom pool", "queue", "inline", "escaping closure"])
    func executeReleasesItsClosureOnceOnEveryExecutor(_ kind: String) {
        let pool = ThreadPool(threadCount: 2, name: "own")
        defer { pool.shutdown(wait: true) }
        let executor: Executor
        switch kind {
        case "pool": executor = .pool(.shared)
        case "custom pool": executor = .pool(pool)
        case "queue": executor = .queue(DispatchQueue(label: "own"))
        case "inline": executor = .immediate
        default: executor = .escapingClosure { job in DispatchQueue.global().async(execute: job) }
        }
        let tracker = LifetimeTracker()
        var tasks: [Task<Int>] = []
        for index in 0..<200 {
            let token = tracker.track()
            tasks.append(
                Task.execute(executor) {
                    _ = token
                    return index
                })
        }
        let all = Task.whenAllResult(tasks)
        #expect(all.waitUntilCompleted(timeout: 60))
        #expect(all.result == Array(0..<200))
        // The tasks are still alive; their closures are gone (or going).
        #expect(eventually(within: Self.releaseGrace) { tracker.alive == 0 })
        #expect(tracker.alive == 0)
    }

    @Test func executeOnAPoolFreesItsTaskOnceNothingHoldsIt() {
        weak var weakTask: Task<Int>?
        do {
            let task = Task.execute(.pool(.shared)) { 42 }
            weakTask = task
            #expect(task.waitUntilCompleted(timeout: 60))
            #expect(task.result == 42)
        }
        // The worker drops the job's reference right after completing the task.
        #expect(eventually(within: Self.releaseGrace) { weakTask == nil })
    }

    @Test func poolAndExecutorJobsReleaseTheirClosuresOnce() {
        let tracker = LifetimeTracker()
        let ran = Counter()
        let done = DispatchSemaphore(value: 0)
        let count = 500
        for index in 0..<count {
            let token = tracker.track()
            let job: @Sendable () -> Void = {
                _ = token
                if ran.increment() == count { done.signal() }
            }
            if index % 2 == 0 {
                ThreadPool.shared.execute(job)
            } else {
                Executor.pool(.shared).execute(job)
            }
        }
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(eventually(within: Self.releaseGrace) { tracker.alive == 0 })
        #expect(ran.value == count)
    }

    @Test func aRejectedPoolJobStillRunsOnceAndReleasesItsClosure() {
        let pool = ThreadPool(threadCount: 1, name: "shut")
        pool.shutdown(wait: true)
        let tracker = LifetimeTracker()
        let ran = Counter()
        do {
            let token = tracker.track()
            pool.execute {
                _ = token
                ran.increment()
            }
            let other = tracker.track()
            #expect(throws: ThreadPoolError.self) {
                try pool.tryExecute {
                    _ = other
                    ran.increment()
                }
            }
        }
        #expect(ran.value == 1)  // the rejected `execute` ran here; `tryExecute` ran nothing
        #expect(tracker.alive == 0)
    }

    @Test func aggregatesFreeEveryInputAndValueOnce() {
        final class Value: Sendable {
            let tracker: LifetimeTracker.Token
            init(_ tracker: LifetimeTracker) { self.tracker = tracker.track() }
        }
        let tracker = LifetimeTracker()
        var weakInputs: [Weak] = []
        do {
            var tasks: [Task<Value>] = []
            for _ in 0..<64 { tasks.append(Task.execute(.pool(.shared)) { Value(tracker) }) }
            weakInputs = tasks.map { Weak($0) }
            let all = Task.whenAllResult(tasks)
            let none = Task.whenAll(tasks)
            #expect(all.waitUntilCompleted(timeout: 60))
            #expect(none.waitUntilCompleted(timeout: 60))
            #expect(all.result?.count == 64)
            #expect(tracker.alive == 64)
        }
        #expect(eventually(within: Self.releaseGrace) { weakInputs.allSatisfy { $0.object == nil } })
        #expect(eventually(within: Self.releaseGrace) { tracker.alive == 0 })
    }

    @Test func aggregatesOfErrorsKeepInputOrderWhenInputsFailConcurrently() {
        for round in 0..<50 {
            var tasks: [Task<Int>] = []
            for index in 0..<16 {
                tasks.append(
                    Task.execute(.pool(.shared)) {
                        if index % 5 == round % 5 { throw TestError(index) }
                        return index
                    })
            }
            let all = Task.whenAllResult(tasks)
            #expect(all.waitUntilCompleted(timeout: 60))
            let expected = (0..<16).filter { $0 % 5 == round % 5 }.map { TestError($0) }
            let errors = (all.error as? AggregateError)?.errors.compactMap { $0 as? TestError }
            if expected.count == 1 {
                #expect((all.error as? TestError) == expected[0])
            } else {
                #expect(errors == expected)
            }
        }
    }
}

/// A weak reference to a task, for checking that it was freed.
private final class Weak {
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
}
