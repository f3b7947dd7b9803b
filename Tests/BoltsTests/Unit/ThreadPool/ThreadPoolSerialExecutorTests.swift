import Bolts
import BoltsTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

/// An actor whose jobs run on a `SerialPoolExecutor`.
private actor Ledger {
    let executor: SerialPoolExecutor
    private(set) var entries: [Int] = []
    /// Jobs inside the synchronous section right now: more than one means two jobs of
    /// this actor ran in parallel.
    private let inside = Atomic<Int>(0)

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    init(executor: SerialPoolExecutor) { self.executor = executor }

    /// Records `value`; says whether every step ran on the executor, alone.
    func record(_ value: Int) async -> (alone: Bool, onExecutor: Bool) {
        let onExecutorBefore = executor.isCurrent && executor.pool.isCurrent
        await _Concurrency.Task.yield()  // suspends: other calls may interleave here (reentrancy)
        let onExecutorAfter = executor.isCurrent && executor.pool.isCurrent
        let alone = inside.add(1, ordering: .acquiringAndReleasing).newValue == 1
        for _ in 0..<100 { entries.reserveCapacity(entries.count + 1) }  // widen the window
        entries.append(value)
        inside.subtract(1, ordering: .acquiringAndReleasing)
        return (alone, onExecutorBefore && onExecutorAfter)
    }

    func count() -> Int { entries.count }
}

/// Checks that closures on a serial executor never overlap and keep per-thread order.
private final class OrderChecker: @unchecked Sendable {
    // @unchecked Sendable: `last` is touched only by jobs of one serial executor, which
    // never run concurrently; `inside` (an atomic) is what checks that claim.
    let inside = Atomic<Int>(0)
    let violations = Atomic<Int>(0)
    let done = Atomic<Int>(0)
    var last: [Int]

    init(threads: Int) { last = Array(repeating: -1, count: threads) }

    func run(thread: Int, seq: Int, executor: SerialPoolExecutor) {
        if inside.add(1, ordering: .acquiringAndReleasing).newValue != 1 { violations.add(1, ordering: .relaxed) }
        if !executor.isCurrent { violations.add(1, ordering: .relaxed) }
        if last[thread] != seq - 1 { violations.add(1, ordering: .relaxed) }
        last[thread] = seq
        inside.subtract(1, ordering: .acquiringAndReleasing)
        done.add(1, ordering: .releasing)
    }
}

@Suite("SerialPoolExecutor")
struct ThreadPoolSerialExecutorTests {
    @Test func closuresFromEightThreadsRunOneAtATimeInEachThreadsOrder() {
        let pool = ThreadPool(threadCount: 4, name: "serial")
        let executor = SerialPoolExecutor(pool: pool)
        let threads = 8
        let perThread = 20_000
        let checker = OrderChecker(threads: threads)
        runOnThreads(threads) { t in
            for seq in 0..<perThread {
                executor.execute { checker.run(thread: t, seq: seq, executor: executor) }
            }
        }
        while checker.done.load(ordering: .acquiring) < threads * perThread { usleep(200) }
        #expect(checker.violations.load(ordering: .relaxed) == 0)
        #expect(checker.last == Array(repeating: perThread - 1, count: threads))
        #expect(!executor.isCurrent)
        pool.shutdown()
    }

    @Test func jobsFromOneThreadRunInSubmissionOrder() {
        let executor = SerialPoolExecutor(pool: .shared)
        let order = OrderChecker(threads: 1)
        for seq in 0..<50_000 {
            executor.execute { order.run(thread: 0, seq: seq, executor: executor) }
        }
        while order.done.load(ordering: .acquiring) < 50_000 { usleep(200) }
        #expect(order.violations.load(ordering: .relaxed) == 0)
    }

    @Test func anActorOnASerialPoolExecutorIsIsolatedAndRunsOnThePool() async {
        let pool = ThreadPool(threadCount: 2, name: "actor")
        let ledger = Ledger(executor: SerialPoolExecutor(pool: pool))
        let (alone, onExecutor) = await withTaskGroup(of: (alone: Bool, onExecutor: Bool).self) { group in
            for i in 0..<500 {
                group.addTask { await ledger.record(i) }
            }
            var alone = true
            var onExecutor = true
            for await result in group {
                alone = alone && result.alone
                onExecutor = onExecutor && result.onExecutor
            }
            return (alone, onExecutor)
        }
        #expect(alone, "no two jobs of the actor ran at the same time")
        #expect(onExecutor, "every step of the actor's methods ran on its executor, on the pool")
        #expect(await ledger.count() == 500)
        #expect(await Set(ledger.entries) == Set(0..<500))
        pool.shutdown()
    }

    @Test func assumeIsolatedWorksInsideTheExecutorsClosures() {
        let executor = SerialPoolExecutor(pool: .shared)
        let ledger = Ledger(executor: executor)
        let done = DispatchSemaphore(value: 0)
        executor.execute {
            // checkIsolated() says yes on this executor's thread.
            ledger.assumeIsolated { ledger in
                #expect(ledger.entries.isEmpty)
            }
            done.signal()
        }
        done.wait()
    }
}
