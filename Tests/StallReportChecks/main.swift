// The stall reports of a blocked-worker monitor, end to end, written against the names of
// DESIGN.md §5 alone (ThreadPool.StallReport, observeStalls, snapshot()). Two modes, each in
// a process of its own (installing a global executor is process-wide):
//
//   StallReportChecks pool        two jobs on a pool of 2 sleep 60 ms (nanosleep) in a named
//                                 function while a third waits
//   StallReportChecks installed   the pool installed as the global executor; two Swift tasks
//                                 block 60 ms in a named function (a read on a pipe)
//
// Each checks that every report names the function and its system call, that each ended
// report's duration is within [0.6, 1.25] of the block, and that a snapshot taken during
// the block names the function. Exits 0 when every check passed, 1 otherwise.
import Bolts
import Foundation

#if canImport(Glibc)
import Glibc
#endif

let blockLength = Duration.milliseconds(60)
nonisolated(unsafe) var failures = 0  // touched by the main thread alone

func check(_ condition: Bool, _ what: @autoclosure () -> String) {
    if !condition {
        failures += 1
        print("FAIL: \(what())")
    }
}

/// Collects reports from the observer's thread.
final class Reports: @unchecked Sendable {
    // @unchecked Sendable: `all` is read and written only under `lock`.
    private let lock = NSLock()
    private var all: [ThreadPool.StallReport] = []
    func add(_ report: ThreadPool.StallReport) { lock.withLock { all.append(report) } }
    var reports: [ThreadPool.StallReport] { lock.withLock { all } }
}

/// When each blocker began, from the pool's threads.
final class Starts: @unchecked Sendable {
    // @unchecked Sendable: `times` is read and written only under `lock`.
    private let lock = NSLock()
    private var times: [ContinuousClock.Instant] = []
    func add(_ time: ContinuousClock.Instant) { lock.withLock { times.append(time) } }
    var all: [ContinuousClock.Instant] { lock.withLock { times } }
}

@inline(never)
func sleepInsideLoadReportSynchronously() {
    var request = timespec(tv_sec: 0, tv_nsec: 60_000_000)
    var left = timespec()
    while nanosleep(&request, &left) != 0 { request = left }
}

@inline(never)
func readInsideFetchRowsSynchronously(_ fd: Int32) {
    var byte: UInt8 = 0
    _ = read(fd, &byte, 1)
}

func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}

/// Checks the reports of `count` blocks in `function`, made in `systemCalls`, each of which
/// lasted `block` (the nominal length, or what the blocks were measured to last).
func judge(
    _ reports: [ThreadPool.StallReport], count: Int, function: String, systemCalls: Set<String>,
    block: ClosedRange<Duration> = blockLength...blockLength
) {
    let found = reports.filter { $0.phase == .found }
    let ended = reports.filter { $0.phase == .ended }
    print("\(found.count) found, \(ended.count) ended")
    for report in reports { print("  \(report)") }
    check(found.count >= 1 && found.count <= count, "1 to \(count) found reports, not \(found.count)")
    check(ended.count == found.count, "an ended report for each found one: \(ended.count)")
    for report in reports {
        check(report.stack.contains { $0.contains(function) }, "the stack names \(function): \(report.stack)")
        check(report.description.contains(function), "the line names \(function): \(report)")
        check(report.systemCall.map(systemCalls.contains) ?? false, "a system call of \(systemCalls): \(report)")
    }
    for report in ended {
        let low = seconds(report.heldFor) / seconds(block.upperBound)
        let high = seconds(report.heldFor) / seconds(block.lowerBound)
        check(low >= 0.6 && high <= 1.25, "ended after \(low)–\(high)× the block (\(block)): \(report)")
    }
}

/// Takes a snapshot 35 ms into the block and checks that it names `function`.
func snapshotDuringBlock(_ pool: ThreadPool, function: String) {
    usleep(35_000)
    let snapshot = pool.snapshot()
    print(snapshot)
    check(snapshot.workers.contains { $0.job?.contains(function) ?? false }, "the snapshot names \(function)")
    check(snapshot.description.contains(function), "the snapshot's description names \(function)")
}

func waitForReports(_ reports: Reports, _ count: Int) {
    let deadline = Date().addingTimeInterval(5)
    while reports.reports.count < count && Date() < deadline { usleep(5_000) }
    usleep(50_000)  // nothing more should come
}

func poolMode() {
    let pool = ThreadPool(threadCount: 2, name: "stall")
    let reports = Reports()
    pool.observeStalls { reports.add($0) }
    let done = DispatchGroup()
    for _ in 0..<2 {
        done.enter()
        pool.execute {
            sleepInsideLoadReportSynchronously()
            done.leave()
        }
    }
    done.enter()
    pool.execute { done.leave() }  // the third job, queued behind the two
    snapshotDuringBlock(pool, function: "sleepInsideLoadReportSynchronously")
    done.wait()
    waitForReports(reports, 4)
    judge(
        reports.reports, count: 2, function: "sleepInsideLoadReportSynchronously",
        systemCalls: ["clock_nanosleep", "nanosleep"]
    )
    pool.shutdown()
}

/// Run on the main thread, which is not one of the pool's: only the two blockers (and the
/// task queued behind them) run on the pool.
func installedMode() {
    let reports = Reports()
    ThreadPool.shared.observeStalls { reports.add($0) }
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { return check(false, "a pipe") }
    let reader = fds[0], writer = fds[1]
    let done = DispatchSemaphore(value: 0)
    let starts = Starts()
    for _ in 0..<2 {
        _Concurrency.Task {
            starts.add(ContinuousClock.now)
            readInsideFetchRowsSynchronously(reader)
            done.signal()
        }
    }
    usleep(2_000)
    _Concurrency.Task { done.signal() }  // queued behind the two
    snapshotDuringBlock(ThreadPool.shared, function: "readInsideFetchRowsSynchronously")
    // The blocks last 60 ms from the first one's start, or as long as the snapshot took
    // (under a sanitizer it is slow): what they lasted is measured.
    let firstStart = starts.all.min() ?? ContinuousClock.now
    let end = firstStart + blockLength
    if end > ContinuousClock.now { usleep(UInt32(seconds(end - ContinuousClock.now) * 1e6)) }
    var bytes: [UInt8] = [1, 2]
    _ = write(writer, &bytes, 2)
    let written = ContinuousClock.now
    for _ in 0..<3 { done.wait() }
    waitForReports(reports, 4)
    let all = reports.reports
    let lengths = starts.all.map { written - $0 }
    judge(
        all, count: 2, function: "readInsideFetchRowsSynchronously", systemCalls: ["read"],
        block: (lengths.min() ?? blockLength)...(lengths.max() ?? blockLength)
    )
    check(all.allSatisfy { $0.taskID != nil }, "each report names its Swift task")
}

switch CommandLine.arguments.dropFirst().first {
case "pool":
    poolMode()
case "installed":
    guard ThreadPool.shared.unsafeTryInstallAsConcurrencyGlobalExecutor() else {
        print("FAIL: the pool could not be installed")
        exit(1)
    }
    installedMode()
default:
    print("usage: StallReportChecks pool|installed")
    exit(2)
}
print(failures == 0 ? "PASS" : "\(failures) checks failed")
exit(failures == 0 ? 0 : 1)
