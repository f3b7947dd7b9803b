@testable import Bolts
import BoltsTestSupport
import CBoltsRuntime
import CBoltsTuning
import Dispatch
import Foundation
import Synchronization
import Testing

/// The restraint of the pool's invariant I11: short jobs that a worker submits to its own
/// queue stay on that worker while it makes progress, and a worker that stops making
/// progress (blocked where the pool cannot see it) has them taken by another worker
/// within the bound.
@Suite(.serialized)
struct ThreadPoolRestraintTests {
    /// Runs `body` as a job of `pool` and waits for it.
    private static func onWorker(_ pool: ThreadPool, _ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        pool.execute {
            body()
            done.signal()
        }
        done.wait()
    }

    /// What the jobs of one round count.
    private final class Counters: Sendable {
        let sameThread = Atomic<Int>(0)
        let ranEarly = Atomic<Int>(0)
        let blockEnded = Atomic<Bool>(false)
        let done = ThreadPoolCountdown()

        /// The body of each job of a round submitted from the thread `submitter`, after
        /// `work` ns of busy work.
        func job(submitter: UInt, work: UInt64 = 0) {
            if work > 0 { busy(nanoseconds: work) }
            if currentThreadID() == submitter { sameThread.add(1, ordering: .relaxed) }
            if !blockEnded.load(ordering: .acquiring) { ranEarly.add(1, ordering: .relaxed) }
            done.add()
        }
    }

    /// What one job of `round` costs run inline on this thread (the median of 9 timings of
    /// 256): what the pool's sampling would see, without its queues.
    private static func jobNanoseconds(work: UInt64 = 0) -> Double {
        let counters = Counters()
        let me = currentThreadID()
        var timings: [Double] = []
        for _ in 0..<9 {
            let start = DispatchTime.now().uptimeNanoseconds
            for _ in 0..<256 { counters.job(submitter: me, work: work) }
            timings.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 256)
        }
        return timings.sorted()[4]
    }

    /// A two-worker pool whose workers have timed enough short jobs (one in
    /// BOLTS_POOL_SAMPLE_INTERVAL; two short ones of the last three) to call theirs short.
    private static func warmedPool(_ name: String) -> ThreadPool {
        let pool = ThreadPool(threadCount: 2, name: name)
        for _ in 0..<4 { _ = round(pool, count: 256, spacing: 0) }
        return pool
    }

    /// Whether the pool can be expected to count jobs of ~0.5 µs of busy work as short: not
    /// under a sanitizer, and not where they take more than half the line inline.
    private static var halfMicrosecondJobsCountShort: Bool {
        !bolts_runtime_sanitized() && jobNanoseconds(work: 500) < Double(BOLTS_POOL_SHORT_JOB_NS) / 2
    }

    /// Runs `round` until `settled()` holds, for at least `minimum` rounds and then for up to
    /// 30 s in all: a stretch of seconds in which other suites hold both CPUs cannot take
    /// every round. Returns how many rounds ran.
    private static func roundsUntil(_ settled: () -> Bool, atLeast minimum: Int, _ round: () -> Void) -> Int {
        var rounds = 0
        let deadline = DispatchTime.now().uptimeNanoseconds + 30_000_000_000
        while !settled(), rounds < minimum || DispatchTime.now().uptimeNanoseconds < deadline {
            round()
            rounds += 1
        }
        return rounds
    }

    /// One round: a job of `pool` submits `count` short jobs (each `work` ns of busy work)
    /// to its own queue, spaced by `spacing` ns of busy work, then (if `blockFor` is set)
    /// blocks outside the pool's knowledge for that long. Returns how many of the jobs ran
    /// on the submitting thread, and how many ran before the submitter's block ended.
    private static func round(
        _ pool: ThreadPool,
        count: Int,
        spacing: UInt64,
        work: UInt64 = 0,
        blockFor: UInt64? = nil
    ) -> (onSubmitter: Int, beforeBlockEnded: Int) {
        let counters = Counters()
        onWorker(pool) {
            let me = currentThreadID()
            for _ in 0..<count {
                pool.execute { counters.job(submitter: me, work: work) }
                busy(nanoseconds: spacing)
            }
            if let blockFor {
                // A plain sleep: not a Bolts wait, so the restraint learns of it from the
                // owner's stalled activity (and the monitor, after BOLTS_POOL_BLOCKED_NS,
                // from the thread's state: I12).
                usleep(UInt32(blockFor / 1000))
                counters.blockEnded.store(true, ordering: .releasing)
            }
        }
        #expect(counters.done.wait(for: count, seconds: 30))
        return (counters.sameThread.load(ordering: .relaxed), counters.ranEarly.load(ordering: .relaxed))
    }

    @Test func shortJobsAWorkerHandsItselfRunOnThatWorker() {
        let pool = Self.warmedPool("restrain")
        defer { pool.shutdown() }
        // Under a sanitizer a job of this test takes microseconds: the pool then rightly
        // does not count the jobs as short, and there is no restraint to see.
        guard !bolts_runtime_sanitized(), Self.jobNanoseconds() < Double(BOLTS_POOL_SHORT_JOB_NS) / 2 else { return }
        var onSubmitter = 0
        let rounds = 20
        let count = 256
        for _ in 0..<rounds {
            // 300 ns between submissions: a spinning worker would take most jobs as they
            // come while the submitter is still busy submitting.
            onSubmitter += Self.round(pool, count: count, spacing: 300).onSubmitter
        }
        let share = Double(onSubmitter) / Double(rounds * count)
        // Without the restraint, none of them does (the idle worker takes each as it comes);
        // with it, all of them when the test has the CPUs to itself, and 60 % or more when
        // other suites compete for them (a submitter pre-empted for longer than
        // BOLTS_POOL_RESTRAIN_NS rightly has its jobs taken).
        #expect(share >= 0.25, "only \(Int(share * 100)) % of the short jobs ran on the worker that submitted them")
    }

    @Test func aBatchThatDrainsLongerThanTheBoundStaysOnItsWorker() {
        let pool = Self.warmedPool("batch")
        defer { pool.shutdown() }
        // Under a sanitizer these jobs come near the 2 µs line, and a sampled one that
        // crosses it rightly lets them be shared: nothing to see there. Timing the jobs
        // inline is not enough to tell: in `.ci/run`'s ThreadSanitizer stage they timed
        // under 1 µs here, yet beside the CPU-bound stress suites the pool's samples
        // crossed the line and at best 67 % stayed. So no sanitized build is judged.
        guard Self.halfMicrosecondJobsCountShort else { return }
        // The owner hands itself 4,096 jobs of ~0.5 µs at once and then runs them: ~2 ms,
        // many times BOLTS_POOL_RESTRAIN_NS after its last submission to itself (as a task
        // group drains its children), while it keeps making progress. They stay on it. A
        // restraint that ended once the owner had submitted nothing for the bound let the
        // idle worker take a share of the rest (at best 60-65 % stayed, over 40 rounds, in
        // three runs). Beside other suites the owner may lose its CPU for longer than the bound,
        // and then its jobs are rightly taken: one round with the CPUs to itself settles it.
        // Rounds go on for up to 30 s (at least 40) rather than a fixed count.
        let count = 4_096
        var best = 0.0
        let rounds = Self.roundsUntil({ best >= 0.9 }, atLeast: 40) {
            let onSubmitter = Self.round(pool, count: count, spacing: 0, work: 500).onSubmitter
            best = max(best, Double(onSubmitter) / Double(count))
        }
        #expect(best >= 0.9, "at best \(Int(best * 100)) % of a batch drained past the bound ran on the worker that made it, in \(rounds) rounds")
        #expect(Double(count) * 500 > 10 * Double(BOLTS_POOL_RESTRAIN_NS))
    }

    @Test func aRestrainedWorkersParksGrowWhileTheOwnerMoves() {
        let pool = Self.warmedPool("grow")
        defer { pool.shutdown() }
        // As in the batch test above: under a sanitizer the jobs are not short.
        guard Self.halfMicrosecondJobsCountShort else { return }
        // The owner hands itself 40,000 jobs of ~0.5 µs: ~20 ms of draining, while the other
        // worker parks under the restraint. With parks of BOLTS_POOL_RESTRAIN_NS each (built
        // with BOLTS_POOL_RESTRAIN_PARK_MAX_NS at that value) a round counted 142-258 parks;
        // with parks that double up to the maximum, 27-28, the owner's own parks between
        // rounds included. Only a round whose jobs stayed on the owner counts: a worker that
        // took jobs (the owner lost its CPU beside other suites) did not park.
        let count = 40_000
        var fewest = UInt64.max
        let rounds = Self.roundsUntil({ fewest <= 60 }, atLeast: 20) {
            let before = pool.metrics.parks
            let onSubmitter = Self.round(pool, count: count, spacing: 0, work: 500).onSubmitter
            let parks = pool.metrics.parks - before
            if Double(onSubmitter) >= 0.9 * Double(count) { fewest = min(fewest, parks) }
        }
        #expect(fewest <= 60, "a restrained worker parked \(fewest) times (at best) while its owner drained 20 ms of short jobs, in \(rounds) rounds")
        #expect(BOLTS_POOL_RESTRAIN_PARK_MAX_NS >= 8 * BOLTS_POOL_RESTRAIN_NS)
    }

    @Test func anOwnerThatStopsAfterMovingLongHasItsJobsTaken() {
        let pool = Self.warmedPool("stops")
        defer { pool.shutdown() }
        // The owner hands itself 20,000 jobs of ~0.5 µs; the one 64 before the last sleeps
        // for 200 ms outside the pool's knowledge. By then (~10 ms of draining) the other
        // worker's parks under the restraint have grown to BOLTS_POOL_RESTRAIN_PARK_MAX_NS,
        // so the 64 behind the sleeper wait for up to that long, not for the sleep: they
        // all run before it ends. (What this cannot see is a maximum between the sleep and
        // the ~10 ms the parks have to grow: the last expectation bounds it.)
        let count = 20_000
        let sleeper = count - 65
        for attempt in 0..<3 {
            let counters = Counters()
            let afterSleeper = Atomic<Int>(0)
            Self.onWorker(pool) {
                for i in 0..<count {
                    pool.execute {
                        busy(nanoseconds: 500)
                        if i == sleeper {
                            usleep(200_000)
                            counters.blockEnded.store(true, ordering: .releasing)
                        } else if i > sleeper, !counters.blockEnded.load(ordering: .acquiring) {
                            // Queued after the sleeper, so taken after it: run before its
                            // sleep ended means it did not wait for it.
                            afterSleeper.add(1, ordering: .relaxed)
                        }
                        counters.done.add()
                    }
                }
            }
            #expect(counters.done.wait(for: count, seconds: 30))
            #expect(afterSleeper.load(ordering: .relaxed) == 64, "attempt \(attempt): \(afterSleeper.load(ordering: .relaxed)) of the 64 jobs behind a sleeping owner ran while it slept")
        }
        #expect(BOLTS_POOL_RESTRAIN_PARK_MAX_NS < 20_000_000)
    }

    @Test func aStalledOwnersShortJobsAreTakenWithinTheBound() {
        let pool = Self.warmedPool("stalled")
        defer { pool.shutdown() }
        // The owner queues 64 short jobs and then sleeps for 200 ms. The other worker must
        // take them once it has seen the owner's activity stand still for
        // BOLTS_POOL_RESTRAIN_NS, long before the sleep ends.
        for attempt in 0..<5 {
            let outcome = Self.round(pool, count: 64, spacing: 0, blockFor: 200_000_000)
            #expect(outcome.beforeBlockEnded == 64, "attempt \(attempt): \(outcome.beforeBlockEnded) of 64 jobs ran while their owner slept")
        }
        #expect(BOLTS_POOL_RESTRAIN_NS < 20_000_000)
    }
}
