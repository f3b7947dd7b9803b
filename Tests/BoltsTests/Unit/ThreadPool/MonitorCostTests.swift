@testable import Bolts
import BoltsTestSupport
import CBoltsRuntime
import CBoltsTuning
import Dispatch
import Foundation
import Testing

/// Runs `StallReportChecks` (built with the tests, next to the test runner) in a child
/// process and returns its exit status and output.
private func runStallReportChecks(_ mode: String) throws -> (status: Int32, output: String) {
    let program = testRunnerExecutable.deletingLastPathComponent().appendingPathComponent("StallReportChecks")
    var environment = ProcessInfo.processInfo.environment
    environment["BOLTS_POOL_THREADS"] = "2"  // the shared pool, in the installed mode
    let (status, _, output) = try runChildProcess(program, [mode], environment: environment)
    return (status, output)
}

/// The kernel's count of context switches of the pool's monitor thread (named
/// "<pool name>-mon"): each of its wake-ups is one voluntary switch.
private func monitorSwitches(poolName: String) -> Int? {
    let name = String(poolName.prefix(8)) + "-mon"
    guard let tids = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return nil }
    for tid in tids {
        guard let comm = try? String(contentsOfFile: "/proc/self/task/\(tid)/comm", encoding: .utf8),
            comm.trimmingCharacters(in: .whitespacesAndNewlines) == name,
            let status = try? String(contentsOfFile: "/proc/self/task/\(tid)/status", encoding: .utf8)
        else { continue }
        for line in status.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches:") {
            return Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces))
        }
    }
    return nil
}

private func waitUntil(_ deadline: Duration, _ condition: () -> Bool) -> Bool {
    let end = ContinuousClock.now + deadline
    while ContinuousClock.now < end {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

@Suite("A block costs only while it lasts, and the pool says what blocked")
struct MonitorCostTests {
    @Test func stallReportsNameTheBlockingFunctionOnAPoolOfTwo() throws {
        let (status, output) = try runStallReportChecks("pool")
        #expect(status == 0, "\(output)")
    }

    @Test func stallReportsNameTheBlockingFunctionWithThePoolInstalled() throws {
        let (status, output) = try runStallReportChecks("installed")
        #expect(status == 0, "\(output)")
    }

    /// One job blocks (a sleep, where the pool cannot see it) with another queued: once the
    /// monitor has counted it, it wakes at most once per quiet tick, not every half
    /// millisecond for as long as the job lasts.
    @Test func theMonitorTicksCoarselyWhileACountedJobBlocks() throws {
        let pool = ThreadPool(threadCount: 2, name: "tick-test")
        defer { pool.shutdown() }
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        for _ in 0..<2 {
            pool.execute {
                release.wait()
                finished.signal()
            }
        }
        pool.execute { finished.signal() }
        #expect(waitUntil(.seconds(5)) { pool.metrics.stalls >= 1 })
        usleep(100_000)
        let before = monitorSwitches(poolName: pool.name)
        let start = ContinuousClock.now
        usleep(1_000_000)
        let after = monitorSwitches(poolName: pool.name)
        let elapsed = ContinuousClock.now - start
        release.signal()
        release.signal()
        for _ in 0..<3 { finished.wait() }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = Double((after ?? 0) - (before ?? 0)) / seconds
        #expect(before != nil && after != nil, "the monitor thread is found")
        // BOLTS_POOL_MONITOR_QUIET_NS apart: 1e9 / that per second, and a few more.
        let bound = 1e9 / Double(BOLTS_POOL_MONITOR_QUIET_NS) * 1.2
        #expect(rate <= bound, "the monitor woke \(rate) times a second while a counted job blocked")
    }

    /// After a burst of sleeping jobs has grown the pool, its extra threads exit once they
    /// have been spares for BOLTS_POOL_SPARE_IDLE_NS, and the scan range shrinks with them.
    @Test func extraThreadsExitAfterTheirIdleSpell() throws {
        let pool = ThreadPool(threadCount: 2, name: "burst-test")
        defer { pool.shutdown() }
        submitJobs(40, to: { pool.execute($0) }) { usleep(100_000) }.wait()
        let peak = pool.metrics.threads
        #expect(peak > 2, "the burst was compensated (\(pool.metrics))")
        let idle = Double(BOLTS_POOL_SPARE_IDLE_NS) / 1e9
        // An extra thread parks for the idle spell, then waits as a spare for another.
        let shrunk = waitUntil(.seconds(2 * idle + 10)) { pool.metrics.threads <= 2 }
        let metrics = pool.metrics
        #expect(shrunk, "threads after the idle spell: \(metrics.threads) (peak \(peak))")
        #expect(metrics.sparesExited > 0)
        // Counters stay whole across the fold of the retired slots.
        #expect(metrics.executed >= 40 && metrics.submitted == metrics.executed, "\(metrics)")
        // The pool still runs jobs, and compensates again from its reused slots.
        let again = submitJobs(8, to: { pool.execute($0) }) { usleep(20_000) }
        #expect(again.wait(timeout: .now() + 10) == .success)
    }

    /// A lock convoy: jobs serialized by one mutex, each holding it 10 ms. Threads brought in
    /// for the waiters only wait for the lock too, so the pool stops growing once they do
    /// not raise the rate at which jobs complete.
    @Test func aLockConvoyGrowsThePoolByAtMostEightThreads() throws {
        let pool = ThreadPool(threadCount: 2, name: "convoy")
        defer { pool.shutdown() }
        let lock = NSLock()
        let group = DispatchGroup()
        let jobs = 200
        let start = ContinuousClock.now
        for _ in 0..<jobs {
            group.enter()
            pool.execute {
                lock.lock()
                usleep(10_000)
                lock.unlock()
                group.leave()
            }
        }
        var peak = 0
        while group.wait(timeout: .now() + .milliseconds(20)) == .timedOut {
            peak = max(peak, pool.metrics.threads)
            if ContinuousClock.now - start > .seconds(60) { break }  // judged below
        }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        #expect(peak - 2 <= 2 * Int(BOLTS_POOL_GROWTH_FREE), "the convoy grew the pool to \(peak) threads")
        // 200 holds of 10 ms: 2 s however many threads wait; sleeps overshoot a little.
        #expect(seconds <= Double(jobs) * 0.010 * 1.1 + 0.1, "the convoy drained in \(seconds) s")
        #expect(pool.metrics.growthRefused > 0, "\(pool.metrics)")
    }

    @Test func aSnapshotDescribesEveryWorker() throws {
        let pool = ThreadPool(threadCount: 2, name: "snap")
        defer { pool.shutdown() }
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        pool.execute {
            started.signal()
            release.wait()
        }
        started.wait()
        usleep(20_000)
        let snapshot = pool.snapshot()
        release.signal()
        #expect(snapshot.workers.count == 2, "\(snapshot)")
        #expect(snapshot.workers.map(\.threadName).allSatisfy { $0.hasPrefix("snap-") }, "\(snapshot)")
        let busy = snapshot.workers.filter { $0.inJobFor != nil }
        #expect(busy.count == 1, "\(snapshot)")
        #expect(busy.first?.systemCall == "futex", "\(snapshot)")
        #expect(snapshot.description.split(separator: "\n").count == 3, "\(snapshot)")
    }
}

extension MonitorCostTests {
    /// Jobs that wait on a semaphore only a job queued behind them all signals: nothing
    /// completes until that job runs, so the growth rule keeps adding threads (one doubling
    /// per window) until one reaches it, as a pool without the rule would.
    @Test func waitersOnAJobQueuedBehindThemAreReachedWhateverTheirNumber() throws {
        let pool = ThreadPool(threadCount: 2, name: "waiters")
        defer { pool.shutdown() }
        let gate = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        let waiters = 40
        for _ in 0..<waiters {
            group.enter()
            pool.execute {
                gate.wait()
                group.leave()
            }
        }
        group.enter()
        pool.execute {
            for _ in 0..<waiters { gate.signal() }
            group.leave()
        }
        #expect(group.wait(timeout: .now() + 20) == .success, "\(pool.metrics)")
    }
}
