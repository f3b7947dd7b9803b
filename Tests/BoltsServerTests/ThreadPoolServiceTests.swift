import Bolts
import BoltsTestSupport
import BoltsServer
import Logging
import MetricsTestKit
import ServiceLifecycle
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Counts the jobs a test hands to a pool and the jobs that ran.
final class JobLedger: Sendable {
    let submitted = Atomic<Int>(0)
    let ran = Atomic<Int>(0)
    let serialOrder = Mutex<[Int]>([])

    /// Submits a job that takes about `microseconds` of a worker's time.
    func submit(to pool: ThreadPool, microseconds: UInt32 = 0) {
        submitted.add(1, ordering: .relaxed)
        pool.execute {
            if microseconds > 0 { usleep(microseconds) }
            self.ran.add(1, ordering: .relaxed)
        }
    }
}

/// A second service that hands work to the pool while it runs and, when the group shuts
/// down, leaves jobs in flight: 400 pool jobs of 200 µs each, and 200 jobs on a serial
/// executor queued behind one that cannot finish before the pool has begun shutting down.
struct JobProducer: Service {
    let pool: ThreadPool
    let serial: SerialPoolExecutor
    let ledger: JobLedger
    let gate: TaskCompletionSource<Void>

    func run() async throws {
        for _ in 0..<100 { ledger.submit(to: pool) }
        try await gracefulShutdown()
        for _ in 0..<400 { ledger.submit(to: pool, microseconds: 200) }
        let gate = self.gate
        serial.execute { gate.task.waitUntilCompleted() }
        for index in 0..<200 {
            serial.execute { [ledger] in ledger.serialOrder.withLock { $0.append(index) } }
        }
    }
}

@Suite struct ThreadPoolServiceTests {
    @Test func gracefulShutdownWithJobsInFlightDrainsThePoolAndLosesNone() async throws {
        let pool = ThreadPool(threadCount: 2, name: "svc-drain")
        let serial = SerialPoolExecutor(pool: pool)
        let ledger = JobLedger()
        let gate = TaskCompletionSource<Void>()
        let metrics = TestMetrics()
        let reporter = ThreadPoolMetricsReporter(pool: pool, interval: .milliseconds(5), factory: metrics)
        let logs = InMemoryLogHandler.Store()
        let group = ServiceGroup(
            services: [
                try ThreadPoolService(pool: pool, metrics: reporter, logger: .inMemory(logs)),
                JobProducer(pool: pool, serial: serial, ledger: ledger, gate: gate),
            ],
            logger: Logger.inMemory(InMemoryLogHandler.Store(), label: "group")
        )

        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            // The gated serial job may finish only once the pool is shutting down, so the
            // 200 serial jobs behind it are certainly in flight when the pool's turn comes.
            tasks.addTask {
                #expect(await eventually { pool.isShutDown })
                #expect(ledger.serialOrder.withLock { $0.isEmpty })
                gate.set(result: ())
            }
            #expect(await eventually { ledger.submitted.load(ordering: .relaxed) == 100 })
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }

        // The group has returned, so the pool service has: every job has run by now.
        #expect(ledger.submitted.load(ordering: .relaxed) == 500)
        #expect(ledger.ran.load(ordering: .relaxed) == 500)
        #expect(ledger.serialOrder.withLock { $0 } == Array(0..<200))
        #expect(pool.isShutDown)
        #expect(pool.awaitTermination(timeout: 0))
        #expect(throws: ThreadPoolError.shutDown(name: "svc-drain")) { try pool.tryExecute {} }

        // The reporter's last sample came after the drain.
        let executed = metrics.counterTotal(
            label: "bolts_pool_jobs_executed_total", dimensions: [("pool", "svc-drain")])
        #expect(executed == Int64(pool.metrics.executed))
        #expect(executed >= 500)  // the serial jobs run inside drain jobs, counted as one each
        // The service said when the pool stopped taking jobs and when it had drained.
        let messages = logs.events.map { $0.message.description }
        #expect(messages.contains { $0.contains("stopped taking jobs") })
        #expect(messages.last?.contains("drained") == true)
    }

    @Test func theSharedPoolIsRefused() {
        #expect(throws: ThreadPoolServiceError.sharedPool) { try ThreadPoolService(pool: .shared) }
        #expect(ThreadPoolServiceError.sharedPool.description.contains("ThreadPool.shared"))
    }

    @Test func aPoolShutDownBeforeTheServiceStartsIsRefused() async throws {
        let pool = ThreadPool(threadCount: 1, name: "svc-late")
        let service = try ThreadPoolService(pool: pool)
        pool.shutdown()
        await #expect(throws: ThreadPoolServiceError.alreadyShutDown(name: "svc-late")) { try await service.run() }
    }

    @Test func cancellationShutsThePoolDownAndItStillDrains() async throws {
        let pool = ThreadPool(threadCount: 1, name: "svc-cancel")
        let service = try ThreadPoolService(pool: pool)
        let ledger = JobLedger()
        let running = _Concurrency.Task { try await service.run() }
        for _ in 0..<200 { ledger.submit(to: pool, microseconds: 100) }
        running.cancel()
        await #expect(throws: CancellationError.self) { try await running.value }
        #expect(pool.isShutDown)
        #expect(pool.awaitTermination(timeout: 10))
        #expect(ledger.ran.load(ordering: .relaxed) == 200)
    }

    @Test func descriptionNamesThePool() throws {
        let pool = ThreadPool(threadCount: 1, name: "svc-name")
        defer { pool.shutdown() }
        #expect(try ThreadPoolService(pool: pool).description == "ThreadPoolService(svc-name)")
    }
}
