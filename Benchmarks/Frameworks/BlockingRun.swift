import BenchmarkStatistics
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The blocking-handler run: `/plain` under wrk alone, then again while a second wrk loads
/// `/block` (20 ms of `usleep` per request).
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
    /// The child's threads just before the run, and the most seen during it (every 20 ms).
    var threadsBefore: Int
    var peakThreads: Int
    /// The pool's stall reports over the `/block` load, for an arm whose handlers run on the
    /// pool (`Arm.runsHandlersOnPool`); nil for the others.
    var stalls: FrameworkBenchmark.StallReports?

    /// `/plain`'s requests/s beside the blocking handlers ÷ alone, just before.
    var keptFraction: Double { plainRequestsPerSecond / max(plainAloneRequestsPerSecond, 1e-9) }

    /// Its figures on one line, for the progress log.
    var description: String {
        "beside /block: /plain kept \(keptFraction.fixed(2)), p99 \((plain.p99 / 1_000).formattedMilliseconds), /block "
            + "\(blockRequestsPerSecond.formattedPlain)/s, threads \(threadsBefore) → \(peakThreads)"
            + (stalls.map { ", stall reports \($0.formattedCell)" } ?? "")
    }
}

extension FrameworkHost {
    /// What the blocking run's threads share. Relaxed atomics suffice: each semaphore orders what
    /// its thread wrote before the reader reads it, and the sampler need only see the stop soon.
    private final class Shared: Sendable {
        let block = Mutex<Result<WrkLoadGenerator.Run, any Error>?>(nil)
        let blockDone = DispatchSemaphore(value: 0)
        let peakThreads = Atomic<Int>(0)
        let stopSampling = Atomic<Bool>(false)
        let samplingDone = DispatchSemaphore(value: 0)
    }

    /// The blocking-handler run after a draw's loads: `/plain` alone, then again while `blockLoad`
    /// loads `/block` from a thread of its own, starting first and running a second longer; a
    /// third thread samples the child's thread count. Where the handlers run on the pool, it
    /// keeps the change in the child's `/stalls` over the `/block` load.
    func finish(_ child: FrameworkServerProcess, _ draw: RoundDraw<FrameworkBenchmark.Arm>) throws -> BlockingRun? {
        watchdog.beat("\(framework.rawValue): /plain beside /block, \(draw.label)")
        let (shared, pid, seconds, blockLoad) = (Shared(), child.pid, settings.seconds, blockLoad)
        let threadsBefore = threadCount(pid: pid) ?? 0
        let plainURL = child.url(FrameworkBenchmark.Route.plain.path)
        // The denominator is measured next to the run it divides, not taken from the child's
        // first route run: two adjacent seconds of one child vary less than two further apart.
        let alone = try load.run(url: plainURL, seconds: seconds)
        let blockURL = child.url("block")
        let stallsBefore = try child.stallReports()
        Thread.detachNewThread {
            let result = Result { try blockLoad.run(url: blockURL, seconds: seconds + 1) }
            shared.block.withLock { $0 = result }
            shared.blockDone.signal()
        }
        Thread.detachNewThread {
            while !shared.stopSampling.load(ordering: .relaxed) {
                if let threads = threadCount(pid: pid) { shared.peakThreads.max(threads, ordering: .relaxed) }
                usleep(20_000)
            }
            shared.samplingDone.signal()
        }
        // The /block connections are open and their handlers blocking before /plain is loaded.
        // (The lag also keeps the two wrk runs' Lua script, one file per process that each run
        // writes and deletes, in place until the /block run's wrk has read it.)
        usleep(300_000)
        let plain = Result { try load.run(url: plainURL, seconds: seconds) }
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
            plainAlone: alone, plainAloneRequestsPerSecond: Double(alone.requests) / alone.seconds,
            plain: plainRun, block: blockRun, plainRequestsPerSecond: Double(plainRun.requests) / plainRun.seconds,
            blockRequestsPerSecond: Double(blockRun.requests) / blockRun.seconds, threadsBefore: threadsBefore,
            peakThreads: max(shared.peakThreads.load(ordering: .relaxed), threadsBefore), stalls: stalls)
    }
}

/// The thread count of process `pid` (`Threads:` of `/proc/<pid>/status`); nil once it is gone.
private func threadCount(pid: pid_t) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") })
    else { return nil }
    return Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces))
}

extension FrameworkBenchmark {
    /// The stall reports of `ThreadPool.shared` in a child whose handlers run on the pool, as its
    /// `/stalls` counts them with the observer a user would install (the servers' `StallTally`).
    struct StallReports: Codable {
        /// Found reports the observer was given: jobs the pool's monitor found blocked.
        var found: Int
        /// Ended reports: one for each found report, when its job ends.
        var ended: Int
        /// The largest `heldFor` of an ended report, in ms: the longest one blocked job held its
        /// worker (a maximum since the child started; its runs before `/block` block nothing).
        var longestMilliseconds: Double
        /// Times the monitor found a worker blocked (`ThreadPool.Metrics.stalls`), whether or
        /// not it made a report.
        var stalls: Int
        /// Found reports the pool did not make (`ThreadPool.Metrics.stallReportsDropped`): over
        /// its rate limit (`BOLTS_POOL_STALL_REPORTS_PER_S`) or with its queue full.
        var dropped: Int
        /// The first found report's line (`StallReport.description`), as a user's log shows it.
        var example: String?

        /// The counts, which `since` subtracts and `median(of:)` takes the median of.
        private static var counts: [WritableKeyPath<StallReports, Int>] { [\.found, \.ended, \.stalls, \.dropped] }

        /// The figures of a `/stalls` body (`StallTally.body`); nil when the child does not
        /// observe its pool (`observing=false`) or the body is not one.
        init?(body: String) {
            var fields: [Substring: Substring] = [:]
            for line in body.split(separator: "\n") {
                guard let equals = line.firstIndex(of: "=") else { return nil }
                fields[line[..<equals]] = line[line.index(after: equals)...]
            }
            func number(_ key: Substring) -> Int? { fields[key].flatMap { Int($0) } }
            guard fields["observing"] == "true", let found = number("found"), let ended = number("ended"),
                let longest = number("longest_ended_ns"), let stalls = number("stalls"),
                let dropped = number("reports_dropped")
            else { return nil }
            (self.found, self.ended, self.stalls, self.dropped) = (found, ended, stalls, dropped)
            longestMilliseconds = Double(longest) / 1e6
            example = fields["example"].map(String.init)
        }

        /// The counts since `earlier`, a reading of the same child; the longest and the example
        /// stay this reading's (see `longestMilliseconds`).
        func since(_ earlier: StallReports) -> StallReports {
            var counts = self
            for count in Self.counts { counts[keyPath: count] -= earlier[keyPath: count] }
            return counts
        }

        /// An arm's figures over its rounds' `runs`: the counts' medians, the longest of any
        /// round, the first round's example; nil without a run.
        static func median(of runs: [StallReports]) -> StallReports? {
            guard var summary = runs.first else { return nil }
            for count in counts {
                let middle = BenchmarkStatistics.median(runs.map { Double($0[keyPath: count]) }) ?? 0
                summary[keyPath: count] = Int(middle.rounded())
            }
            summary.longestMilliseconds = runs.map(\.longestMilliseconds).max()!
            summary.example = runs.lazy.compactMap(\.example).first
            return summary
        }

        /// "212 found, longest 21.4 ms": the report's cell and the progress log's words.
        var formattedCell: String { "\(found) found, longest \(longestMilliseconds.formattedMilliseconds)" }
    }
}

extension FrameworkServerProcess {
    /// The child's `/stalls`: nil when its handlers do not run on the pool, or (with a warning)
    /// when the answer is not a tally. Throws when the exchange fails.
    func stallReports() throws -> FrameworkBenchmark.StallReports? {
        guard arm.runsHandlersOnPool else { return nil }
        let body = try get("stalls")
        guard let reports = FrameworkBenchmark.StallReports(body: body) else {
            writeError("warning: the \(arm.rawValue) server's /stalls said \"\(body.prefix(80))\"\n")
            return nil
        }
        return reports
    }
}
