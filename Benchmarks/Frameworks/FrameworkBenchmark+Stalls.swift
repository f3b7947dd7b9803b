import BenchmarkStatistics
import Foundation

extension FrameworkBenchmark.Arm {
    /// Whether the child's handlers run on `ThreadPool.shared` (the pool installed, or preferred),
    /// so that its `/thread` should say `onPool=true` and its `/stalls` counts the pool's stall
    /// reports.
    var runsHandlersOnPool: Bool { self == .bolts || self == .boltsPreferred }
}

extension FrameworkBenchmark {
    /// The stall reports of `ThreadPool.shared` (`ThreadPool.observeStalls`) in a child whose
    /// handlers run on the pool, as its `/stalls` counts them with the observer a user would
    /// install (the servers' `StallTally`): over one blocking-handler run, from just before the
    /// `/block` load starts to just after it ends; in an arm's summary, medians over its rounds
    /// (`median(of:)`).
    struct StallReports: Codable {
        /// Found reports the observer was given: jobs the pool's monitor found blocked.
        var found: Int
        /// Ended reports: one for each found report, when its job ends.
        var ended: Int
        /// The largest `heldFor` of an ended report, in ms: the longest that one blocked job held
        /// its worker. The child's tally keeps one maximum from its start; its runs before the
        /// `/block` load block nothing (their reports, if any, would show in `found` of the
        /// reading before the run, which `since` subtracts).
        var longestMilliseconds: Double
        /// Times the monitor found a worker blocked (`ThreadPool.Metrics.stalls`), whether or
        /// not it made a report.
        var stalls: Int
        /// Found reports the pool did not make (`ThreadPool.Metrics.stallReportsDropped`): over
        /// its rate limit (`BOLTS_POOL_STALL_REPORTS_PER_S`) or with its queue full.
        var dropped: Int
        /// The first found report's line (`StallReport.description`), as a user's log shows it.
        var example: String?

        /// The figures of a `/stalls` body (`StallTally.body` in `Benchmarks/ServerSupport`); nil
        /// when the child does not observe its pool (`observing=false`) or the body is not one.
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
            self.found = found
            self.ended = ended
            longestMilliseconds = Double(longest) / 1e6
            self.stalls = stalls
            self.dropped = dropped
            example = fields["example"].map(String.init)
        }

        /// The counts since `earlier`, a reading of the same child; the longest and the example
        /// stay this reading's (see `longestMilliseconds`).
        func since(_ earlier: StallReports) -> StallReports {
            var counts = self
            counts.found -= earlier.found
            counts.ended -= earlier.ended
            counts.stalls -= earlier.stalls
            counts.dropped -= earlier.dropped
            return counts
        }

        /// An arm's figures over its rounds' `runs`: the counts' medians, the longest of any
        /// round, the first round's example; nil without a run.
        static func median(of runs: [StallReports]) -> StallReports? {
            guard var summary = runs.first else { return nil }
            func medianCount(_ count: KeyPath<StallReports, Int>) -> Int {
                Int((BenchmarkStatistics.median(runs.map { Double($0[keyPath: count]) }) ?? 0).rounded())
            }
            summary.found = medianCount(\.found)
            summary.ended = medianCount(\.ended)
            summary.stalls = medianCount(\.stalls)
            summary.dropped = medianCount(\.dropped)
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
