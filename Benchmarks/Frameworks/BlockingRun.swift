import BenchmarkStatistics
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The blocking-handler run: `/plain` under wrk alone, then again while a second wrk loads
/// `/block`.
struct BlockingRun: Codable {
    /// `/plain` alone, just before the `/block` load starts: the kept ratio's denominator.
    var plainAlone: WrkLoadGenerator.Run
    var plainAloneRequestsPerSecond: Double
    var plain: WrkLoadGenerator.Run
    var block: WrkLoadGenerator.Run
    var plainRequestsPerSecond: Double
    /// Over the whole `/block` run, which starts 0.3 s before the `/plain` run and ends about
    /// a second after it: how many blocking handlers the executor keeps going at once.
    var blockRequestsPerSecond: Double
    /// The child's threads just before the run, and the most seen during it (sampled every
    /// 20 ms).
    var threadsBefore: Int
    var peakThreads: Int
    /// The pool's stall reports over the `/block` load, for an arm whose handlers run on the
    /// pool (`Arm.runsHandlersOnPool`); nil for the others.
    var stalls: FrameworkBenchmark.StallReports?
}

extension BlockingRun {
    /// What the blocking-handler run's threads share: the `/block` wrk's outcome (under its
    /// mutex) and the sampler's peak. The atomics may be relaxed: each semaphore's signal and
    /// wait order what its thread wrote before the reader reads it, and the stop flag only has
    /// to be seen eventually (the sampler looks every 20 ms).
    private final class Shared: Sendable {
        let block = Mutex<Result<WrkLoadGenerator.Run, any Error>?>(nil)
        let blockDone = DispatchSemaphore(value: 0)
        let peakThreads = Atomic<Int>(0)
        let stopSampling = Atomic<Bool>(false)
        let samplingDone = DispatchSemaphore(value: 0)
    }

    /// `/plain` under `load` while `blockLoad` sends its connections to `/block`: the `/block`
    /// load starts first (on a thread of its own) and runs a second longer, so the `/plain` run
    /// is inside it from start to end; a third thread samples the child's thread count. For an
    /// arm whose handlers run on the pool, the child's `/stalls` is read just before the `/block`
    /// load starts and just after it ends (once its last handlers have returned and their ended
    /// reports been delivered), and the run keeps the difference.
    static func measure(
        _ child: FrameworkServerProcess,
        load: WrkLoadGenerator,
        blockLoad: WrkLoadGenerator,
        seconds: Int
    ) throws -> BlockingRun {
        let shared = Shared()
        let pid = child.pid
        let threadsBefore = FrameworkServerProcess.threads(pid: pid) ?? 0
        // The denominator is measured next to the run it divides, not taken from the child's
        // first route run: two adjacent seconds of one child vary less than two further apart.
        let alone = try load.run(url: child.url(FrameworkBenchmark.Route.plain.path), seconds: seconds)
        let blockURL = child.url("block")
        let blockSeconds = seconds + 1
        let stallsBefore = try child.stallReports()
        Thread.detachNewThread {
            let result = Result { try blockLoad.run(url: blockURL, seconds: blockSeconds) }
            shared.block.withLock { $0 = result }
            shared.blockDone.signal()
        }
        Thread.detachNewThread {
            while !shared.stopSampling.load(ordering: .relaxed) {
                if let threads = FrameworkServerProcess.threads(pid: pid) {
                    shared.peakThreads.max(threads, ordering: .relaxed)
                }
                usleep(20_000)
            }
            shared.samplingDone.signal()
        }
        // The /block connections are open and their handlers blocking before /plain is loaded.
        // (This lag also keeps the two wrk runs' Lua script, one file per process that each run
        // writes and deletes, in place until the /block run's wrk has read it.)
        usleep(300_000)
        let plain = Result { try load.run(url: child.url(FrameworkBenchmark.Route.plain.path), seconds: seconds) }
        shared.blockDone.wait()
        shared.stopSampling.store(true, ordering: .relaxed)
        shared.samplingDone.wait()
        let plainRun = try plain.get()
        guard let blockRun = try shared.block.withLock({ $0 })?.get() else {
            throw BenchmarkChildFailed(description: "the /block load gave no outcome")
        }
        var stalls: FrameworkBenchmark.StallReports?
        if let stallsBefore {
            // A handler started as wrk stopped returns within 20 ms; its ended report follows on
            // the pool's reporter thread.
            usleep(100_000)
            stalls = try child.stallReports()?.since(stallsBefore)
        }
        return BlockingRun(
            plainAlone: alone,
            plainAloneRequestsPerSecond: Double(alone.requests) / alone.seconds,
            plain: plainRun,
            block: blockRun,
            plainRequestsPerSecond: Double(plainRun.requests) / plainRun.seconds,
            blockRequestsPerSecond: Double(blockRun.requests) / blockRun.seconds,
            threadsBefore: threadsBefore,
            peakThreads: max(shared.peakThreads.load(ordering: .relaxed), threadsBefore),
            stalls: stalls
        )
    }

    /// `/plain`'s requests/s beside the blocking handlers ÷ alone, just before.
    var keptFraction: Double { plainRequestsPerSecond / max(plainAloneRequestsPerSecond, 1e-9) }

    /// Its figures on one line, for the progress log.
    var description: String {
        "beside /block: /plain kept \(keptFraction.fixed(2)), p99 \((plain.p99 / 1_000).formattedMilliseconds), /block "
            + "\(blockRequestsPerSecond.formattedPlain)/s, threads \(threadsBefore) → \(peakThreads)"
            + (stalls.map { ", stall reports \($0.formattedCell)" } ?? "")
    }
}

/// An arm's blocking-handler runs: medians over its rounds.
struct BlockingSummary {
    var plainAloneRequestsPerSecond: Double
    var plainBesideBlockRequestsPerSecond: Double
    var keptFraction: Double
    /// `/plain`'s p99 beside the blocking handlers, in µs.
    var plainBesideBlockP99: Double
    var blockRequestsPerSecond: Double
    var threadsBefore: Int
    /// The most threads seen in any round's blocking run.
    var peakThreads: Int
    var errors: Int
    /// The pool's stall reports (`StallReports.median(of:)`); nil for an arm whose handlers do
    /// not run on the pool.
    var stalls: FrameworkBenchmark.StallReports?

    init?(_ runs: [BlockingRun]) {
        guard !runs.isEmpty else { return nil }
        func middle(_ value: (BlockingRun) -> Double) -> Double { median(runs.map(value)) ?? .nan }
        plainAloneRequestsPerSecond = middle(\.plainAloneRequestsPerSecond)
        plainBesideBlockRequestsPerSecond = middle(\.plainRequestsPerSecond)
        keptFraction = middle(\.keptFraction)
        plainBesideBlockP99 = middle(\.plain.p99)
        blockRequestsPerSecond = middle(\.blockRequestsPerSecond)
        threadsBefore = Int(middle { Double($0.threadsBefore) })
        peakThreads = runs.map(\.peakThreads).max()!
        errors = runs.reduce(0) {
            $0 + $1.plain.errors + $1.plain.timeouts + $1.plain.non2xx + $1.block.errors + $1.block.timeouts
                + $1.block.non2xx
        }
        stalls = FrameworkBenchmark.StallReports.median(of: runs.compactMap(\.stalls))
    }
}
