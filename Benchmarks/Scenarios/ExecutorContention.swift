import CBenchmarkSupport
import Dispatch
import Foundation
import Histogram
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// P producer threads submit `iterations` tiny jobs between them to one executor; each job
/// records its hand-off latency if it is sampled and increments a shared counter. The time
/// runs from the first producer starting to the last job finishing (end to end, so queued
/// work counts). Every 64th job is sampled for latency: the time from just before its
/// submission to the start of its body.
///
/// Expected allocations per job: see `ExecutorKind.expectedAllocations` (one of them is the
/// job's closure context, the same for every executor).
final class ExecutorContention: Scenario, LatencyRecording {
    let name: String
    let subject: Subject
    let unit = "job"
    let expectedAllocations: String
    let initialIterations = 4096
    let kind: ExecutorKind
    let producers: Int
    private var running: RunningExecutor?
    private var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)

    init(kind: ExecutorKind, producers: Int) {
        self.kind = kind
        self.producers = producers
        subject = kind.subject
        expectedAllocations = kind.expectedAllocations
        name = "\(kind.title): \(producers) producer thread\(producers == 1 ? "" : "s") submit tiny jobs until all ran"
    }

    func setUp() {
        running = kind.start()
    }

    func tearDown() {
        running?.stop()
        running = nil
    }

    func resetLatencies() {
        histogram.reset()
    }

    func latencySummary() -> LatencySummary? {
        histogram.totalCount == 0 ? nil : LatencySummary(histogram)
    }

    func run(iterations: Int) throws -> Sample {
        guard let running else { throw BenchmarkError.wrongResult("executor not started") }
        let run = JobRun(total: iterations, producers: producers)
        let submit = running.submit
        let producerCount = producers
        var threads: [Thread] = []
        for producer in 0..<producerCount {
            let thread = Thread {
                run.producerReady()
                let start = now()
                var index = producer
                while index < iterations {
                    let submittedAt = index % JobRun.sampleEvery == 0 ? now() : 0
                    let jobIndex = index
                    submit { run.jobRan(index: jobIndex, submittedAt: submittedAt) }
                    index += producerCount
                }
                run.producerFinished(producer, startedAt: start)
            }
            thread.stackSize = 1 << 20
            threads.append(thread)
        }
        for thread in threads { thread.start() }
        run.waitUntilProducersAreReady()
        let allocationsBefore = bench_allocation_count()
        run.openGate()
        run.waitUntilJobsRan()
        let allocationsAfter = bench_allocation_count()
        run.waitUntilProducersReturned()
        guard run.completedJobs == iterations else {
            throw BenchmarkError.wrongResult("\(run.completedJobs) of \(iterations) jobs ran")
        }
        var summary = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
        for latency in run.latencies {
            histogram.record(latency)
            summary.record(latency)
        }
        return Sample(
            iterations: iterations,
            nanoseconds: run.finishedAt &- run.firstProducerStart,
            allocations: allocationsAfter &- allocationsBefore,
            latency: LatencySummary(summary)
        )
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

/// The shared state of one executor sample.
//
// @unchecked Sendable, proven by these invariants:
//  1. `latencySlots[k]` is written only by the job whose index is `k * sampleEvery` (each
//     index is submitted exactly once), and read by the measuring thread only after
//     `waitUntilJobsRan` returned, which happens after every job's `completed` increment
//     (acquire-release RMW; the last job's increment is followed by its semaphore signal,
//     and the wait pairs with that signal).
//  2. `startTimes[p]` is written only by producer `p`, before it signals `producersDone`,
//     and read only after the measuring thread waited for that signal `producers` times
//     (`waitUntilProducersReturned`).
//  3. `finishedAt` is written only by the job that brings `completed` to `total`, before it
//     signals `done`; it is read only after `done` was waited for.
//  4. The gate is an atomic (`open`, release store / acquire load) and `ready` is an
//     atomic counter; neither publishes anything else.
final class JobRun: @unchecked Sendable {
    static let sampleEvery = 64

    let total: Int
    let producers: Int
    private let completed = Atomic<Int>(0)
    private let ready = Atomic<Int>(0)
    private let open = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private let producersDone = DispatchSemaphore(value: 0)
    private let latencySlots: UnsafeMutablePointer<UInt64>
    private let latencySlotCount: Int
    private let startTimes: UnsafeMutablePointer<UInt64>
    private(set) var finishedAt: UInt64 = 0

    init(total: Int, producers: Int) {
        self.total = total
        self.producers = producers
        latencySlotCount = (total + JobRun.sampleEvery - 1) / JobRun.sampleEvery
        latencySlots = .allocate(capacity: max(latencySlotCount, 1))
        latencySlots.initialize(repeating: 0, count: max(latencySlotCount, 1))
        startTimes = .allocate(capacity: producers)
        startTimes.initialize(repeating: .max, count: producers)
    }

    deinit {
        latencySlots.deallocate()
        startTimes.deallocate()
    }

    /// Called by a producer thread: announces it is ready, then waits (spinning, yielding the
    /// CPU) until the gate opens, so that all producers start together.
    func producerReady() {
        ready.add(1, ordering: .relaxed)
        while !open.load(ordering: .acquiring) { sched_yield() }
    }

    /// Returns once every producer waits at the gate.
    func waitUntilProducersAreReady() {
        while ready.load(ordering: .relaxed) < producers { sched_yield() }
    }

    func openGate() {
        open.store(true, ordering: .releasing)
    }

    func producerFinished(_ producer: Int, startedAt: UInt64) {
        startTimes[producer] = startedAt
        producersDone.signal()
    }

    /// The body of every job.
    @inline(__always)
    func jobRan(index: Int, submittedAt: UInt64) {
        if submittedAt != 0 {
            latencySlots[index / JobRun.sampleEvery] = now() &- submittedAt
        }
        if completed.add(1, ordering: .acquiringAndReleasing).newValue == total {
            finishedAt = now()
            done.signal()
        }
    }

    /// Blocks until every job ran.
    func waitUntilJobsRan() {
        done.wait()
    }

    /// Blocks until every producer returned (after `waitUntilJobsRan`).
    func waitUntilProducersReturned() {
        for _ in 0..<producers { producersDone.wait() }
    }

    var completedJobs: Int { completed.load(ordering: .acquiring) }

    var firstProducerStart: UInt64 {
        (0..<producers).map { startTimes[$0] }.min() ?? finishedAt
    }

    var latencies: UnsafeBufferPointer<UInt64> {
        UnsafeBufferPointer(start: latencySlots, count: latencySlotCount)
    }
}
