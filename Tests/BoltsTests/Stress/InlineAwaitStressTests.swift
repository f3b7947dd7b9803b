import Bolts
import BoltsTestSupport
import Synchronization
import Testing

/// Which Swift task (if any) a Bolts task's closure ran inside: set around each await, so a
/// closure that reads it ran inline in that await; a worker that dequeued the job runs it
/// outside any Swift task and reads the default.
private enum Awaiting {
    @TaskLocal static var round: Int = -1
}

/// `try await task.value` on a worker of the pool a `Task.execute(.pool(…))` task was
/// submitted to may run the task's closure itself, before a worker dequeues it
/// (`_runOwnJobHere`, `bolts_task_begin_own_job`): that awaiter and the worker that
/// dequeues the job race for the one right to run it.
@Suite("Awaiting a queued pool task on the pool (inline run vs dequeue)")
struct InlineAwaitStressTests {
    /// Awaits from the pool's own workers, with a second worker stealing: every closure
    /// runs exactly once, on the pool, every value arrives, both paths are taken, and
    /// nothing the tasks held stays alive once the losers' jobs have been dequeued.
    @Test(arguments: [1, 2, 4])
    func eachClosureRunsOnceWhoeverWins(threadCount: Int) async throws {
        let pool = ThreadPool(threadCount: threadCount, name: "inl")
        let tracker = LifetimeTracker()
        let runs = Counter()
        let inline = Counter()
        let offPool = Counter()
        let rounds = 3_000
        let sum = try await withTaskExecutorPreference(pool) { () async throws -> Int in
            var sum = 0
            for i in 0..<rounds {
                let token = tracker.track()
                let task = BoltsTask<Int>.execute(.pool(pool)) {
                    withExtendedLifetime(token) {}
                    runs.increment()
                    if !pool.isCurrent { offPool.increment() }
                    if Awaiting.round == i { inline.increment() }
                    return i &* 3
                }
                let value = try await Awaiting.$round.withValue(i) { try await task.value }
                sum &+= value
            }
            return sum
        }
        var expected = 0
        for i in 0..<rounds { expected &+= i &* 3 }
        #expect(sum == expected)
        pool.shutdown(wait: true)  // every queued job, the losers' included, has run
        #expect(runs.value == rounds, "each closure ran exactly once")
        #expect(offPool.value == 0, "every closure ran on the pool")
        #expect(inline.value > 0, "the awaiter ran queued closures itself")
        #expect(tracker.alive == 0, "the jobs that lost released their tasks")
    }

    /// Errors and cancellation come through the inline run as through the queue.
    @Test func errorsAndCancellationComeThroughAnInlineRun() async throws {
        let pool = ThreadPool(threadCount: 2, name: "inle")
        let wrong = try await withTaskExecutorPreference(pool) { () async throws -> Int in
            var wrong = 0
            for i in 0..<500 {
                do {
                    _ = try await BoltsTask<Int>.execute(.pool(pool)) { throw TestError(i) }.value
                    wrong += 1
                } catch let error as TestError {
                    if error != TestError(i) { wrong += 1 }
                }
                do {
                    _ = try await BoltsTask<Int>.execute(.pool(pool)) { throw CancelledError() }.value
                    wrong += 1
                } catch is CancellationError {}
                let value = try await BoltsTask<Int>.execute(.pool(pool)) { i }.value
                if value != i { wrong += 1 }
            }
            return wrong
        }
        #expect(wrong == 0)
        pool.shutdown()
    }

    /// An awaiter that is not a worker of that pool (the default executor, or another
    /// pool's worker) never runs the closure: it waits for the pool.
    @Test func awaitersOffThePoolLeaveTheClosureToThePool() async throws {
        let pool = ThreadPool(threadCount: 2, name: "inlp")
        let other = ThreadPool(threadCount: 1, name: "inlo")
        let wrong = Counter()
        @Sendable func roundTrips() async throws {
            for i in 0..<300 {
                let task = BoltsTask<Int>.execute(.pool(pool)) {
                    if !pool.isCurrent || Awaiting.round == i { wrong.increment() }
                    return i
                }
                let value = try await Awaiting.$round.withValue(i) { try await task.value }
                if value != i { wrong.increment() }
            }
        }
        try await roundTrips()
        try await withTaskExecutorPreference(other) { try await roundTrips() }
        #expect(wrong.value == 0, "no closure ran in the awaiter or off its pool")
        other.shutdown()
        pool.shutdown()
    }

    /// Awaiting, on the pool, tasks whose own job is re-parked while the await looks at it
    /// (a `continueWithTask` task waits on its antecedent, then on the task its closure
    /// returns): the awaiter must read only the own job's state word, never the fields a
    /// worker is rewriting (ThreadSanitizer runs this suite), and never run such a step.
    @Test func awaitingTasksThatReParkTheirOwnJob() async throws {
        let pool = ThreadPool(threadCount: 2, name: "inlr")
        let wrong = try await withTaskExecutorPreference(pool) { () async throws -> Int in
            var wrong = 0
            for i in 0..<2_000 {
                let chained = BoltsTask<Int>.execute(.pool(pool)) { i }
                    .continueWithTask(.pool(pool)) { first in
                        BoltsTask<Int>.execute(.pool(pool)) { (first.result ?? -1) &+ 1 }
                    }
                if try await chained.value != i &+ 1 { wrong += 1 }
            }
            return wrong
        }
        #expect(wrong == 0)
        pool.shutdown()
    }

    /// `waitUntilCompleted()` on a worker, for a task still queued on that worker's pool,
    /// runs it there: a pool of one finishes nested waits without a compensating thread.
    @Test func aWorkerWaitingForAQueuedTaskOfItsPoolRunsIt() {
        let pool = ThreadPool(threadCount: 1, name: "inlw")
        let before = pool.metrics.compensations
        let outer = BoltsTask<Int>.execute(.pool(pool)) {
            var sum = 0
            for i in 0..<200 {
                let inner = BoltsTask<Int>.execute(.pool(pool)) { pool.isCurrent ? i : -1_000_000 }
                inner.waitUntilCompleted()
                sum += inner.result ?? -1_000_000
            }
            return sum
        }
        outer.waitUntilCompleted()
        #expect(outer.result == (0..<200).reduce(0, +))
        // No wait blocked (I6): any compensation came from the monitor (I12), which may take a
        // worker starved of CPU and descheduled in a lock (a sanitizer's) for a blocked one.
        let after = pool.metrics
        #expect(after.compensations - before <= after.stalls, "no worker blocked in a wait")
        pool.shutdown()
    }

    /// The same race without Swift Concurrency's scheduling in the way: a worker job
    /// submits a task to its own pool and a sibling job of another worker races to
    /// dequeue it while the first runs it inline. Many rounds on a pool of two.
    @Test func theRaceAgainstAStealingWorkerKeepsEveryOutcome() async throws {
        let pool = ThreadPool(threadCount: 2, name: "inls")
        let tracker = LifetimeTracker()
        let runs = Counter()
        let values = try await withTaskExecutorPreference(pool) { () async throws -> [Int] in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for g in 0..<4 {
                    group.addTask {
                        var sum = 0
                        for i in 0..<1_000 {
                            let token = tracker.track()
                            sum &+= try await BoltsTask<Int>.execute(.pool(pool)) {
                                withExtendedLifetime(token) {}
                                runs.increment()
                                return g &+ i
                            }.value
                        }
                        return sum
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        var expected = 0
        for g in 0..<4 { for i in 0..<1_000 { expected &+= g &+ i } }
        #expect(values.reduce(0, &+) == expected)
        pool.shutdown(wait: true)
        #expect(runs.value == 4_000)
        #expect(tracker.alive == 0)
    }
}
