import Bolts
import BoltsTestSupport
import Testing

/// Nonisolated async work, so that awaiting it may switch threads.
@concurrent
private func hop(_ value: Int) async -> Int {
    await _Concurrency.Task.yield()
    return value + 1
}

@Suite("ThreadPool as a TaskExecutor")
struct ThreadPoolTaskExecutorTests {
    @Test func withTaskExecutorPreferenceRunsAsyncCodeOnThePool() async {
        let pool = ThreadPool(threadCount: 2, name: "tx")
        let results = await withTaskExecutorPreference(pool) { () async -> [Bool] in
            var seen: [Bool] = [pool.isCurrent]
            for i in 0..<100 {
                let v = await hop(i)
                #expect(v == i + 1)
                seen.append(pool.isCurrent)
            }
            return seen
        }
        #expect(results.allSatisfy { $0 }, "every step ran on the pool's workers")
        #expect(pool.metrics.executed > 0)
        pool.shutdown()
    }

    @Test func childTasksInheritThePreference() async {
        let pool = ThreadPool(threadCount: 2, name: "txg")
        let onPool = await withTaskExecutorPreference(pool) {
            await withTaskGroup(of: Bool.self) { group in
                for i in 0..<200 {
                    group.addTask {
                        _ = await hop(i)
                        return pool.isCurrent
                    }
                }
                var all = true
                for await ok in group { all = all && ok }
                return all
            }
        }
        #expect(onPool)
        pool.shutdown()
    }

    /// A child task that blocks its worker (a synchronous Bolts wait inside async code) on
    /// a pool of one: only a compensating thread can run the child that unblocks it.
    @Test func aWorkerBlockedInAsyncCodeIsCompensated() async {
        let pool = ThreadPool(threadCount: 1, name: "txc")
        let source = TaskCompletionSource<Int>()
        let before = pool.metrics.compensations
        let sum = await withTaskExecutorPreference(pool) {
            await withTaskGroup(of: Int.self) { group in
                group.addTask { blockUntilCompleted(source.task) ?? -1 }
                group.addTask {
                    _ = await hop(0)
                    source.set(result: 41)
                    return 1
                }
                return await group.reduce(0, +)
            }
        }
        #expect(sum == 42)
        #expect(pool.metrics.compensations > before, "the blocked worker was compensated")
        pool.shutdown()
    }

    @Test func unstructuredTaskWithExecutorPreferenceRunsOnThePool() async {
        let pool = ThreadPool(threadCount: 1, name: "txu")
        let task = _Concurrency.Task(executorPreference: pool) { () async -> Bool in
            let before = pool.isCurrent
            _ = await hop(1)
            return before && pool.isCurrent
        }
        #expect(await task.value)
        pool.shutdown()
    }

    @Test func boltsTaskAwaitedFromThePoolsOwnAsyncCode() async throws {
        let pool = ThreadPool(threadCount: 1, name: "txb")
        let value = try await withTaskExecutorPreference(pool) {
            try await BoltsTask<Int>.execute(.pool(pool)) { 20 }
                .continueOnSuccessWith(.pool(pool)) { $0 + 1 }
                .value * 2
        }
        #expect(value == 42)
        pool.shutdown()
    }
}
