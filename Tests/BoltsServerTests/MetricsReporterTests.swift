import Bolts
import BoltsTestSupport
import BoltsServer
import CoreMetrics
import Glibc
import MetricsTestKit
import Synchronization
import Testing

@Suite struct MetricsReporterTests {
    /// Every pool counter as the label the reporter gives it (default prefix).
    static var counters: [(String, KeyPath<ThreadPool.Metrics, UInt64>)] {
        [
            ("bolts_pool_jobs_submitted_total", \.submitted),
            ("bolts_pool_jobs_executed_total", \.executed),
            ("bolts_pool_jobs_stolen_total", \.stolen),
            ("bolts_pool_jobs_rejected_total", \.rejected),
            ("bolts_pool_parks_total", \.parks),
            ("bolts_pool_backpressure_yields_total", \.backpressureYields),
            ("bolts_pool_compensations_total", \.compensations),
            ("bolts_pool_stalls_total", \.stalls),
        ]
    }

    @Test func countersReportGainsSinceTheLastSampleAndGaugesTheValues() async throws {
        let pool = ThreadPool(threadCount: 2, name: "metrics-a")
        let metrics = TestMetrics()
        let reporter = ThreadPoolMetricsReporter(pool: pool, factory: metrics)
        let dimensions = [("pool", "metrics-a")]
        let ran = Atomic<Int>(0)

        for _ in 0..<1000 { pool.execute { ran.add(1, ordering: .relaxed) } }
        #expect(await eventually { ran.load(ordering: .relaxed) == 1000 })
        #expect(await eventually { pool.metrics.executed == 1000 })
        reporter.report()
        let submitted = try metrics.expectCounter("bolts_pool_jobs_submitted_total", dimensions)
        let executed = try metrics.expectCounter("bolts_pool_jobs_executed_total", dimensions)
        #expect(submitted.totalValue == 1000)
        #expect(executed.totalValue == 1000)
        #expect(try metrics.expectGauge("bolts_pool_queue_depth", dimensions).lastValue == 0)
        #expect(try metrics.expectGauge("bolts_pool_threads", dimensions).lastValue ?? 0 >= 2)
        #expect(try metrics.expectGauge("bolts_pool_blocked_workers", dimensions).lastValue == 0)

        // A second sample adds only what the pool gained since the first.
        for _ in 0..<500 { pool.execute { ran.add(1, ordering: .relaxed) } }
        #expect(await eventually { pool.metrics.executed == 1500 })
        reporter.report()
        #expect(submitted.values.last == 500)
        #expect(submitted.totalValue == 1500)
        #expect(executed.totalValue == 1500)

        // Once the pool is shut down its counters stand still: each reported counter
        // must then equal the pool's own, and the rejected submission must show.
        pool.shutdown()
        pool.execute { ran.add(1, ordering: .relaxed) }  // refused: runs here, counted as rejected
        reporter.report()
        let final = pool.metrics
        #expect(final.rejected == 1)
        for (label, field) in Self.counters {
            let reported = metrics.counters(label: label, dimensions: dimensions).first?.totalValue ?? 0
            #expect(reported == Int64(final[keyPath: field]), "\(label)")
        }
        #expect(try metrics.expectGauge("bolts_pool_threads", dimensions).lastValue == 0)
        #expect(ran.load(ordering: .relaxed) == 1501)
    }

    @Test func aBlockedWorkerShowsInTheGaugeAndTheCompensationCounter() async throws {
        let pool = ThreadPool(threadCount: 1, name: "metrics-b")
        defer { pool.shutdown() }
        let metrics = TestMetrics()
        let reporter = ThreadPoolMetricsReporter(pool: pool, factory: metrics)
        let dimensions = [("pool", "metrics-b")]
        let gate = TaskCompletionSource<Void>()

        pool.execute { gate.task.waitUntilCompleted() }
        // The blocked count rises before the compensating thread is counted: wait for both.
        #expect(await eventually { pool.metrics.blocked == 1 && pool.metrics.compensations >= 1 })
        reporter.report()
        #expect(try metrics.expectGauge("bolts_pool_blocked_workers", dimensions).lastValue == 1)
        let compensations = try metrics.expectCounter("bolts_pool_compensations_total", dimensions)
        #expect(compensations.totalValue >= 1)

        gate.set(result: ())
        #expect(await eventually { pool.metrics.blocked == 0 })
        reporter.report()
        #expect(try metrics.expectGauge("bolts_pool_blocked_workers", dimensions).lastValue == 0)
    }

    @Test func aWorkerBlockedInAJobShowsInTheStallCounterAndGauge() async throws {
        let pool = ThreadPool(threadCount: 1, name: "metrics-s")
        defer { pool.shutdown() }
        let metrics = TestMetrics()
        let reporter = ThreadPoolMetricsReporter(pool: pool, factory: metrics)
        let dimensions = [("pool", "metrics-s")]
        let released = Atomic<Bool>(false)
        let ranBehind = Atomic<Bool>(false)

        // Asleep in a job, in a wait the pool cannot see, with a job queued behind it.
        pool.execute { while !released.load(ordering: .acquiring) { usleep(200) } }
        pool.execute { ranBehind.store(true, ordering: .releasing) }
        #expect(await eventually { ranBehind.load(ordering: .acquiring) && pool.metrics.stalled == 1 })
        reporter.report()
        #expect(try metrics.expectGauge("bolts_pool_stalled_workers", dimensions).lastValue == 1)
        #expect(try metrics.expectCounter("bolts_pool_stalls_total", dimensions).totalValue >= 1)

        released.store(true, ordering: .releasing)
        #expect(await eventually { pool.metrics.stalled == 0 && pool.metrics.blocked == 0 })
        reporter.report()
        #expect(try metrics.expectGauge("bolts_pool_stalled_workers", dimensions).lastValue == 0)
    }

    @Test func labelPrefixAndDimensionsAreUsed() throws {
        let pool = ThreadPool(threadCount: 1, name: "metrics-c")
        defer { pool.shutdown() }
        let metrics = TestMetrics()
        let reporter = ThreadPoolMetricsReporter(
            pool: pool, labelPrefix: "work", dimensions: [("region", "eu")], factory: metrics)
        reporter.report()
        let dimensions = [("pool", "metrics-c"), ("region", "eu")]
        #expect(throws: Never.self) { try metrics.expectGauge("work_threads", dimensions) }
        #expect(throws: Never.self) { try metrics.expectGauge("work_queue_depth", dimensions) }
        // A counter that gained nothing is not touched, so it has no value yet.
        #expect(try metrics.expectCounter("work_jobs_rejected_total", dimensions).values.isEmpty)
        #expect(metrics.counters(label: "bolts_pool_jobs_submitted_total").isEmpty)
    }

    @Test func runSamplesOnTheIntervalUntilCancelledAndThenOnceMore() async throws {
        let pool = ThreadPool(threadCount: 2, name: "metrics-d")
        defer { pool.shutdown() }
        let metrics = TestMetrics()
        let interval = Duration.milliseconds(10)
        let reporter = ThreadPoolMetricsReporter(pool: pool, interval: interval, factory: metrics)
        let dimensions = [("pool", "metrics-d")]

        let started = ContinuousClock.now
        let sampling = _Concurrency.Task { await reporter.run() }
        for _ in 0..<100 { pool.execute {} }
        // Nobody calls report(): the samples come from run().
        #expect(
            await eventually {
                metrics.counterTotal(label: "bolts_pool_jobs_executed_total", dimensions: dimensions) == 100
            })
        let threads = try metrics.expectGauge("bolts_pool_threads", dimensions)
        #expect(await eventually { threads.values.count >= 3 })
        sampling.cancel()
        await sampling.value
        let elapsed = ContinuousClock.now - started

        // Samples keep to the interval: never more than one per interval, plus the first
        // (taken at once) and the last (on cancellation).
        let samples = threads.values.count
        #expect(samples <= Int(elapsed / interval) + 2, "\(samples) samples in \(elapsed)")
        // After cancellation, no more samples.
        try await _Concurrency.Task.sleep(for: .milliseconds(50))
        #expect(threads.values.count == samples)
    }
}
