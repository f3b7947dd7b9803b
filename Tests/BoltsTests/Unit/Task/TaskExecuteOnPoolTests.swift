import Bolts
import Foundation
import Synchronization
import Testing

/// `Task.execute(.pool(…))` hands the closure to a worker through the new task's own job
/// record (no closure box); these check that path's outcomes, thread and shutdown.
@Suite struct TaskExecuteOnPoolTests {
    @Test func executeOnAPoolRunsOnAWorkerAndEndsWithTheValue() throws {
        let pool = ThreadPool(threadCount: 2, name: "exec")
        defer { pool.shutdown() }
        let tasks = (0..<1_000).map { i in
            Task<(Int, Bool)>.execute(.pool(pool)) { (i * 2, pool.isCurrent) }
        }
        let all = Task.whenAllResult(tasks)
        #expect(all.waitUntilCompleted(timeout: 30))
        let values = try #require(all.result)
        #expect(values.map(\.0) == (0..<1_000).map { $0 * 2 })
        #expect(values.allSatisfy { $0.1 })
    }

    @Test func executeOnAPoolFaultsAndCancelsAsTheClosureSays() {
        struct Oops: Error {}
        let pool = ThreadPool(threadCount: 1, name: "exec")
        defer { pool.shutdown() }
        let failed = Task<Int>.execute(.pool(pool)) { throw Oops() }
        let cancelled = Task<Int>.execute(.pool(pool)) { throw CancelledError() }
        #expect(failed.waitUntilCompleted(timeout: 30))
        #expect(cancelled.waitUntilCompleted(timeout: 30))
        #expect(failed.error is Oops)
        #expect(cancelled.isCancelled)
    }

    @Test func executeOnASharedPoolExecutorMadeOnceStillNamesThePool() {
        #expect(Executor.pool(.shared).description == "ThreadPool Executor: bolts")
        let task = Task<Bool>.execute(.pool(.shared)) { ThreadPool.shared.isCurrent }
        #expect(task.waitUntilCompleted(timeout: 30))
        #expect(task.result == true)
    }

    @Test func executeOnAShutDownPoolRunsOnTheCallingThread() {
        let pool = ThreadPool(threadCount: 1, name: "exec")
        pool.shutdown()
        let caller = pthread_self()
        let task = Task<Bool>.execute(.pool(pool)) { pthread_equal(pthread_self(), caller) != 0 }
        #expect(task.isCompleted)
        #expect(task.result == true)
        #expect(pool.metrics.rejected == 1)
    }

    @Test func manyThreadsExecuteOnOnePoolAndEveryTaskEndsOnce() {
        let pool = ThreadPool(threadCount: 2, name: "exec")
        defer { pool.shutdown() }
        let hits = ThreadPoolHitCounters(count: 8 * 2_000)
        DispatchQueue.concurrentPerform(iterations: 8) { producer in
            let tasks = (0..<2_000).map { i in
                Task<Void>.execute(.pool(pool)) { hits.hit(producer * 2_000 + i) }
            }
            #expect(Task.whenAll(tasks).waitUntilCompleted(timeout: 60))
        }
        #expect(hits.wrong().isEmpty)
    }
}
