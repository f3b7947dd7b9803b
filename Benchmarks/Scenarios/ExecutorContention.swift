import CBenchmarkSupport
import Dispatch
import Foundation
import Histogram
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// P producer threads submit `iterations` tiny jobs between them to one executor; each job
/// records its hand-off latency (from just before its submission to the start of its body)
/// if it is sampled, and increments a shared counter. Allocations per job: the executor's own
/// (`ExecutorKind.expectedAllocations`), plus a closure context for a job that carries a
/// timestamp; a job that captures only the counter needs none.
///
/// Saturated (throughput): the producers submit as fast as they can; the time runs from the
/// first producer starting to the last job finishing (end to end, so work still queued
/// counts). Every 64th job is sampled; its latency is mostly time queued behind other jobs.
///
/// Paced hand-off: each producer submits one job and waits (blocked) until it has run, so
/// nothing queues up and the latency is the executor's own hand-off (including waking an
/// idle worker). Every job is sampled. Time per job is the full round trip (submit, run,
/// wake the producer) divided by P running at once.
final class ExecutorJobs: Scenario, LatencyRecording {
    let name: String
    let unit = "job"
    let kind: ExecutorKind
    let producers: Int
    /// Paced hand-off rather than saturated throughput.
    let paced: Bool
    private var running: RunningExecutor?
    /// The hand-off latencies of the measured samples; made (about 400 KiB) on first use, so
    /// that filtered-out scenarios cost nothing.
    private var histogram: Histogram<UInt64>?

    init(_ kind: ExecutorKind, producers: Int, paced: Bool) {
        self.kind = kind
        self.producers = producers
        self.paced = paced
        name =
            "\(kind.title): \(producers) producer thread\(producers == 1 ? "" : "s")"
            + (paced ? ", each submits one job and waits for it (paced hand-off)" : " submit tiny jobs until all ran")
    }

    var subject: Subject { kind.subject }
    var expectedAllocations: String { kind.expectedAllocations }
    var initialIterations: Int { paced ? 64 : 4096 }

    func setUp() { running = kind.start() }

    func tearDown() {
        running?.stop()
        running = nil
    }

    func resetLatencies() { histogram = nil }

    func latencySummary() -> LatencySummary? { histogram.map(LatencySummary.init) }

    func run(iterations: Int) throws -> Sample {
        guard let running else { throw BenchmarkError.wrongResult("executor not started") }
        let sampled = paced ? iterations : (iterations + JobCounter.sampleEvery - 1) / JobCounter.sampleEvery
        let jobs = JobCounter(total: iterations, latencySlots: sampled)
        let gang = producerGang(iterations, jobs, running)
        gang.waitUntilReady()
        let allocationsBefore = bench_allocation_count()
        gang.start()
        // Saturated, the sample ends when the last job has run; paced, when every producer has
        // seen its last job run.
        if paced { gang.waitUntilFinished() } else { jobs.waitUntilAllRan() }
        let allocationsAfter = bench_allocation_count()
        if !paced { gang.waitUntilFinished() }
        guard jobs.ranCount == iterations else {
            throw BenchmarkError.wrongResult("\(jobs.ranCount) of \(iterations) jobs ran")
        }
        return Sample(
            iterations: iterations,
            nanoseconds: (paced ? gang.lastFinish : jobs.finishedAt) &- gang.firstStart,
            allocations: allocationsAfter &- allocationsBefore,
            latency: record(jobs.latencies)
        )
    }

    /// Adds `latencies` to `histogram` and returns the percentiles of these alone (the sample's).
    private func record(_ latencies: UnsafeBufferPointer<UInt64>) -> LatencySummary? {
        guard !latencies.isEmpty else { return nil }
        func empty() -> Histogram<UInt64> {
            Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
        }
        var all = histogram ?? empty()
        var sample = empty()
        for latency in latencies {
            all.record(latency)
            sample.record(latency)
        }
        histogram = all
        return LatencySummary(sample)
    }

    /// The producers of `jobs`, saturating or paced, waiting at their gate.
    private func producerGang(_ iterations: Int, _ jobs: JobCounter, _ running: RunningExecutor) -> ProducerGang {
        let submit = running.submit
        let producerCount = producers
        guard paced else {
            return ProducerGang(producers: producerCount) { producer in
                var index = producer
                while index < iterations {
                    let jobIndex = index
                    if jobIndex % JobCounter.sampleEvery == 0 {
                        let submittedAt = now()
                        submit { jobs.ran(latencySlot: jobIndex / JobCounter.sampleEvery, submittedAt: submittedAt) }
                    } else {
                        submit { jobs.ran(latencySlot: -1, submittedAt: 0) }
                    }
                    index += producerCount
                }
            }
        }
        let wakeUps = (0..<producerCount).map { _ in DispatchSemaphore(value: 0) }
        return ProducerGang(producers: producerCount) { producer in
            let wakeUp = wakeUps[producer]
            var index = producer
            while index < iterations {
                let jobIndex = index
                let submittedAt = now()
                submit {
                    jobs.ran(latencySlot: jobIndex, submittedAt: submittedAt)
                    wakeUp.signal()
                }
                wakeUp.wait()
                index += producerCount
            }
        }
    }
}

extension LatencySummary {
    init(_ histogram: Histogram<UInt64>) {
        self.init(
            count: histogram.totalCount,
            p50: histogram.valueAtPercentile(50),
            p99: histogram.valueAtPercentile(99),
            p999: histogram.valueAtPercentile(99.9),
            max: histogram.max
        )
    }
}

/// Counts the jobs of one sample and holds their latency slots.
//
// @unchecked Sendable, proven by these invariants:
//  1. `latencySlots[k]` is written only by the one job given slot `k` (each job runs
//     exactly once), before that job's `ran` increments `completed` (acquire-release), and
//     it is read by the measuring thread only after every job has run: either after
//     `waitUntilAllRan` (the last increment is followed by the semaphore signal it pairs
//     with) or after joining every producer, each of which waited for its own jobs.
//  2. `finishedAt` is written only by the job whose increment reached `total`, before its
//     signal of `done`, and read only after `waitUntilAllRan`.
final class JobCounter: @unchecked Sendable {
    static let sampleEvery = 64

    let total: Int
    private let completed = Atomic<Int>(0)
    private let done = DispatchSemaphore(value: 0)
    private let latencySlots: UnsafeMutablePointer<UInt64>
    private let latencySlotCount: Int
    private(set) var finishedAt: UInt64 = 0

    init(total: Int, latencySlots: Int) {
        self.total = total
        latencySlotCount = latencySlots
        self.latencySlots = .allocate(capacity: max(latencySlots, 1))
        self.latencySlots.initialize(repeating: 0, count: max(latencySlots, 1))
    }

    deinit { latencySlots.deallocate() }

    /// The body of every job: records the latency (when `latencySlot` ≥ 0) and counts.
    @inline(__always)
    func ran(latencySlot: Int, submittedAt: UInt64) {
        if latencySlot >= 0 { latencySlots[latencySlot] = now() &- submittedAt }
        if completed.add(1, ordering: .acquiringAndReleasing).newValue == total {
            finishedAt = now()
            done.signal()
        }
    }

    func waitUntilAllRan() { done.wait() }

    var ranCount: Int { completed.load(ordering: .acquiring) }

    var latencies: UnsafeBufferPointer<UInt64> { UnsafeBufferPointer(start: latencySlots, count: latencySlotCount) }
}

/// P threads that each run `body(index)`, all released at once from a gate, so that they
/// contend from the first job on. Thread creation happens before the gate, outside what
/// is measured.
//
// @unchecked Sendable, proven by these invariants:
//  1. `startTimes[p]` and `finishTimes[p]` are written only by producer thread `p`, before
//     it signals `finished`; they are read only after `waitUntilFinished` waited for that
//     signal from every producer.
//  2. The gate is an atomic flag (release store, acquire load) and `ready` an atomic
//     counter; neither publishes anything else.
final class ProducerGang: @unchecked Sendable {
    let producers: Int
    private let ready = Atomic<Int>(0)
    private let open = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let startTimes: UnsafeMutablePointer<UInt64>
    private let finishTimes: UnsafeMutablePointer<UInt64>

    init(producers: Int, body: @escaping @Sendable (Int) -> Void) {
        self.producers = producers
        startTimes = .allocate(capacity: producers)
        startTimes.initialize(repeating: .max, count: producers)
        finishTimes = .allocate(capacity: producers)
        finishTimes.initialize(repeating: 0, count: producers)
        for producer in 0..<producers {
            let thread = Thread { [self] in
                ready.add(1, ordering: .relaxed)
                // Spin, yielding the CPU, until the gate opens: all producers start together.
                while !open.load(ordering: .acquiring) { sched_yield() }
                startTimes[producer] = now()
                body(producer)
                finishTimes[producer] = now()
                finished.signal()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    deinit {
        startTimes.deallocate()
        finishTimes.deallocate()
    }

    /// Returns once every producer waits at the gate.
    func waitUntilReady() {
        while ready.load(ordering: .relaxed) < producers { sched_yield() }
    }

    func start() { open.store(true, ordering: .releasing) }

    /// Blocks until every producer has returned from its body.
    func waitUntilFinished() {
        for _ in 0..<producers { finished.wait() }
    }

    var firstStart: UInt64 { (0..<producers).map { startTimes[$0] }.min() ?? 0 }
    var lastFinish: UInt64 { (0..<producers).map { finishTimes[$0] }.max() ?? 0 }
}
