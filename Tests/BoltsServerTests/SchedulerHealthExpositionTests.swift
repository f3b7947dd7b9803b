import Bolts
import BoltsServer
import BoltsTestSupport
import Dispatch
import Glibc
import Prometheus
import Testing

@Suite struct SchedulerHealthExpositionTests {
    /// The reporter's scheduler-health metrics reach a Prometheus exposition: the run-time
    /// and start-delay histograms with their samples, and each worker's busy time.
    @Test func runTimesStartDelaysAndBusyTimeAreExposed() async throws {
        let pool = ThreadPool(threadCount: 2, name: "health")
        defer { pool.shutdown() }
        let registry = PrometheusCollectorRegistry()
        let reporter = ThreadPoolMetricsReporter(pool: pool, factory: PrometheusMetricsFactory(registry: registry))
        submitJobs(2000, to: { pool.execute($0) }) { usleep(50) }.wait()
        reporter.report()
        let health = pool.schedulerHealth
        #expect(health.runTimes.count >= 2000 / 16 / 2, "sampled run times: \(health.runTimes.count)")
        #expect(health.startDelays.count >= 1, "sampled start delays")
        #expect(health.workerBusy.prefix(2).allSatisfy { ($0 ?? .zero) > .zero }, "\(health.workerBusy)")
        // A 50 us sleep takes at least 50 us: the median run time's bucket says so.
        #expect((health.runTimes.quantile(0.5) ?? .zero) >= .microseconds(50))

        let text = registry.emitToString()
        for name in ["bolts_pool_job_run_duration", "bolts_pool_job_start_delay"] {
            let count = text.split(separator: "\n").first { $0.hasPrefix("\(name)_count") }
            #expect(count != nil, "\(name) is exposed:\n\(text)")
            let value = count.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) } ?? 0
            #expect(value >= 1, "\(name) holds samples: \(count ?? "")")
        }
        #expect(text.contains("# TYPE bolts_pool_job_run_duration histogram"), "\(text)")
        #expect(text.contains(#"bolts_pool_worker_busy_nanoseconds_total{pool="health",worker="0"}"#), "\(text)")
    }
}
