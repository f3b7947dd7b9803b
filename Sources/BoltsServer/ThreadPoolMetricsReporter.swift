import Bolts
import CoreMetrics
import Synchronization

/// Exports a ``/Bolts/ThreadPool``'s counters (``/Bolts/ThreadPool/Metrics``) through
/// swift-metrics, sampled on an interval.
///
/// The pool keeps its counters whatever happens (per-worker words, summed when read); the
/// reporter reads them from its own task every ``interval`` and hands them to the metrics
/// backend. Nothing is added to the pool's submit or run paths.
///
/// | `ThreadPool.Metrics` | swift-metrics | label (with the default prefix) |
/// | --- | --- | --- |
/// | `submitted` | `Counter` | `bolts_pool_jobs_submitted_total` |
/// | `executed` | `Counter` | `bolts_pool_jobs_executed_total` |
/// | `stolen` | `Counter` | `bolts_pool_jobs_stolen_total` |
/// | `rejected` | `Counter` | `bolts_pool_jobs_rejected_total` |
/// | `parks` | `Counter` | `bolts_pool_parks_total` |
/// | `backpressureYields` | `Counter` | `bolts_pool_backpressure_yields_total` |
/// | `compensations` | `Counter` | `bolts_pool_compensations_total` |
/// | `stalls` | `Counter` | `bolts_pool_stalls_total` |
/// | `stallReportsDropped` | `Counter` | `bolts_pool_stall_reports_dropped_total` |
/// | `sparesExited` | `Counter` | `bolts_pool_spares_exited_total` |
/// | `growthRefused` | `Counter` | `bolts_pool_growth_refused_total` |
/// | `queueDepth` | `Gauge` | `bolts_pool_queue_depth` |
/// | `threads` | `Gauge` | `bolts_pool_threads` |
/// | `blocked` | `Gauge` | `bolts_pool_blocked_workers` |
/// | `stalled` | `Gauge` | `bolts_pool_stalled_workers` |
/// | `schedulerHealth.runTimes` | `Timer` | `bolts_pool_job_run_duration` |
/// | `schedulerHealth.startDelays` | `Timer` | `bolts_pool_job_start_delay` |
/// | `schedulerHealth.workerBusy` | `Counter` per thread (`worker` dimension) | `bolts_pool_worker_busy_nanoseconds_total` |
///
/// Every metric carries the dimension `("pool", pool.name)` and the dimensions given at
/// creation. A counter is incremented by what its pool counter gained since the previous
/// sample (the first sample reports everything since the pool started); a gauge records
/// the value read. A counter that gained nothing is not touched. The two timers receive the
/// pool's samples (one job in 16 timed for its run, about one submission in 64 for its
/// start delay: ``/Bolts/ThreadPool/SchedulerHealth``), each at the geometric middle of
/// its power-of-two bucket, so their quantiles are within a factor of 1.5 of the truth.
///
/// Run one reporter per pool: two reporters with the same labels count every job twice.
///
/// ```swift
/// let reporter = ThreadPoolMetricsReporter(pool: pool, interval: .seconds(10))
/// let sampling = Task { await reporter.run() }   // until cancelled
/// ```
///
/// In a `ServiceGroup`, hand it to ``ThreadPoolService`` instead, which samples while the
/// pool runs and once more after it has drained.
public final class ThreadPoolMetricsReporter: Sendable {
    /// The pool whose counters are reported.
    public let pool: ThreadPool

    /// The time between two samples in ``run()``.
    public let interval: Duration

    private let submitted: Counter
    private let executed: Counter
    private let stolen: Counter
    private let rejected: Counter
    private let parks: Counter
    private let backpressureYields: Counter
    private let compensations: Counter
    private let stalls: Counter
    private let stallReportsDropped: Counter
    private let sparesExited: Counter
    private let growthRefused: Counter
    private let queueDepth: Gauge
    private let threads: Gauge
    private let blocked: Gauge
    private let stalled: Gauge

    /// The counters as last reported, or nil before the first sample. Held while a sample
    /// is reported, so that two concurrent samples cannot report the same gain twice.
    private let runTime: Timer
    private let startDelay: Timer
    private let busyLabel: String
    private let dimensions: [(String, String)]
    private let factory: any MetricsFactory

    private let previous = Mutex<ThreadPool.Metrics?>(nil)
    private let previousHealth = Mutex<(ThreadPool.SchedulerHealth, [Int: Counter])?>(nil)

    /// Makes a reporter; nothing is reported until ``report()`` or ``run()``.
    ///
    /// - Parameters:
    ///   - pool: The pool to sample.
    ///   - interval: The time between two samples in ``run()``; more than zero.
    ///   - labelPrefix: The start of every metric's label (see the table above).
    ///   - dimensions: Dimensions added to every metric, after `("pool", pool.name)`.
    ///   - factory: The metrics backend; by default the one bootstrapped in `MetricsSystem`.
    public init(
        pool: ThreadPool,
        interval: Duration = .seconds(10),
        labelPrefix: String = "bolts_pool",
        dimensions: [(String, String)] = [],
        factory: any MetricsFactory = MetricsSystem.factory
    ) {
        precondition(interval > .zero, "ThreadPoolMetricsReporter needs an interval above zero, not \(interval)")
        self.pool = pool
        self.interval = interval
        let dimensions = [("pool", pool.name)] + dimensions
        func counter(_ name: String) -> Counter {
            Counter(label: "\(labelPrefix)_\(name)", dimensions: dimensions, factory: factory)
        }
        func gauge(_ name: String) -> Gauge {
            Gauge(label: "\(labelPrefix)_\(name)", dimensions: dimensions, factory: factory)
        }
        submitted = counter("jobs_submitted_total")
        executed = counter("jobs_executed_total")
        stolen = counter("jobs_stolen_total")
        rejected = counter("jobs_rejected_total")
        parks = counter("parks_total")
        backpressureYields = counter("backpressure_yields_total")
        compensations = counter("compensations_total")
        stalls = counter("stalls_total")
        stallReportsDropped = counter("stall_reports_dropped_total")
        sparesExited = counter("spares_exited_total")
        growthRefused = counter("growth_refused_total")
        queueDepth = gauge("queue_depth")
        threads = gauge("threads")
        blocked = gauge("blocked_workers")
        stalled = gauge("stalled_workers")
        runTime = Timer(label: "\(labelPrefix)_job_run_duration", dimensions: dimensions, factory: factory)
        startDelay = Timer(label: "\(labelPrefix)_job_start_delay", dimensions: dimensions, factory: factory)
        busyLabel = "\(labelPrefix)_worker_busy_nanoseconds_total"
        self.dimensions = dimensions
        self.factory = factory
    }

    /// Takes one sample now and reports it: counters by their gain since the previous
    /// sample, gauges by their value. Any thread, any time; it does not wait for the pool.
    public func report() {
        previous.withLock { previous in
            let now = pool.metrics
            let before = previous
            func add(_ counter: Counter, _ value: KeyPath<ThreadPool.Metrics, UInt64>) {
                let old = before?[keyPath: value] ?? 0
                let new = now[keyPath: value]
                // Each pool counter only grows; a snapshot is not a consistent cut, but each
                // counter read after another read of it is no smaller.
                guard new > old else { return }
                counter.increment(by: Int64(clamping: new - old))
            }
            add(submitted, \.submitted)
            add(executed, \.executed)
            add(stolen, \.stolen)
            add(rejected, \.rejected)
            add(parks, \.parks)
            add(backpressureYields, \.backpressureYields)
            add(compensations, \.compensations)
            add(stalls, \.stalls)
            add(stallReportsDropped, \.stallReportsDropped)
            add(sparesExited, \.sparesExited)
            add(growthRefused, \.growthRefused)
            queueDepth.record(Int64(clamping: now.queueDepth))
            threads.record(now.threads)
            blocked.record(now.blocked)
            stalled.record(now.stalled)
            previous = now
        }
        reportHealth()
    }

    /// The sampled histograms, as timers (each sample counted since the previous report is
    /// recorded once, at its bucket's geometric middle), and each thread's busy time.
    private func reportHealth() {
        previousHealth.withLock { state in
            let now = pool.schedulerHealth
            let before = state?.0
            var busyCounters = state?.1 ?? [:]
            func record(_ timer: Timer, _ histogram: ThreadPool.DurationHistogram, _ earlier: ThreadPool.DurationHistogram?) {
                let gained = earlier.map { histogram.subtracting($0) } ?? histogram
                for (bucket, count) in gained.counts.enumerated() where count > 0 {
                    let middle = Int64((Double(Int64(1) << Int64(bucket)) * 1.5).rounded())
                    for _ in 0..<count { timer.recordNanoseconds(middle) }
                }
            }
            record(runTime, now.runTimes, before?.runTimes)
            record(startDelay, now.startDelays, before?.startDelays)
            for (index, busy) in now.workerBusy.enumerated() {
                guard let busy else { continue }
                let nanoseconds = busy.wholeNanoseconds
                var old: Int64 = 0
                if let earlier = before?.workerBusy.indices.contains(index) == true ? before?.workerBusy[index] : nil {
                    old = earlier.wholeNanoseconds
                }
                // A slot whose thread exited and was started again counts from zero.
                let gain = nanoseconds >= old ? nanoseconds - old : nanoseconds
                guard gain > 0 else { continue }
                let counter = busyCounters[index]
                    ?? Counter(label: busyLabel, dimensions: dimensions + [("worker", "\(index)")], factory: factory)
                busyCounters[index] = counter
                counter.increment(by: gain)
            }
            state = (now, busyCounters)
        }
    }

    /// Reports a sample every ``interval`` until the calling Swift task is cancelled, then
    /// reports a last one and returns.
    ///
    /// The first sample is taken at once. Samples keep to the interval's rhythm; one that
    /// comes late (the process was descheduled) is followed by the next a full interval
    /// later, not by a burst. Runs on whatever executor the caller's task uses.
    public func run() async {
        let clock = ContinuousClock()
        var next = clock.now
        while !_Concurrency.Task.isCancelled {
            report()
            next = next.advanced(by: interval)
            let now = clock.now
            if next < now { next = now.advanced(by: interval) }
            do {
                try await _Concurrency.Task.sleep(until: next, clock: clock)
            } catch {
                break  // cancelled
            }
        }
        report()
    }
}
