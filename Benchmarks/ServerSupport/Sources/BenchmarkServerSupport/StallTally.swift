import Bolts
import Synchronization

/// What `ThreadPool.shared`'s stall reports (`ThreadPool.observeStalls`) have said so far, in a
/// server whose handlers run on the pool: the body of `/stalls`, which the benchmark asks
/// before and after its blocking-handler run and subtracts. It counts from the server's start
/// and resets nothing, so two readers never disturb each other.
///
/// The observer is the one a user would install: it runs on the pool's reporter thread, one
/// report at a time, and only takes the mutex for a few additions (no allocation but the first
/// found report's line). The pool makes at most `BOLTS_POOL_STALL_REPORTS_PER_S` found reports
/// a second and drops the rest; the body says how many it dropped beside how many stalls its
/// monitor found (`ThreadPool.Metrics`), so a reader sees what the reports leave out.
public final class StallTally: Sendable {
    /// The tally of `ThreadPool.shared`, which `startServer` starts for the choices whose
    /// handlers run on the pool.
    public static let shared = StallTally()

    private struct State {
        var observing = false
        var found = 0
        var ended = 0
        var longestEnded: Duration = .zero
        /// The first found report's `description`.
        var example: String?
    }

    private let state = Mutex(State())

    private init() {}

    /// Installs the tally as `ThreadPool.shared`'s stall observer (replacing any other).
    func observe() {
        state.withLock { $0.observing = true }
        ThreadPool.shared.observeStalls { [self] report in
            state.withLock { tally in
                switch report.phase {
                case .found:
                    tally.found += 1
                    if tally.example == nil { tally.example = report.description }
                case .ended:
                    tally.ended += 1
                    tally.longestEnded = max(tally.longestEnded, report.heldFor)
                }
            }
        }
    }

    /// One `key=value` a line, `example` last (its value is the rest of its line):
    /// `observing=false` alone when the tally was never started (the pool then makes no report,
    /// and asking its metrics would create it); else `observing=true`, `found=<found reports>`,
    /// `ended=<ended reports>`, `longest_ended_ns=<the largest heldFor of an ended report>`,
    /// `stalls=<ThreadPool.Metrics.stalls>`, `reports_dropped=<…stallReportsDropped>` and, once a
    /// report was found, `example=<its description>`.
    public var body: String {
        let state = state.withLock { $0 }
        guard state.observing else { return "observing=false\n" }
        let metrics = ThreadPool.shared.metrics
        let (seconds, attoseconds) = state.longestEnded.components
        var lines = [
            "observing=true",
            "found=\(state.found)",
            "ended=\(state.ended)",
            "longest_ended_ns=\(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)",
            "stalls=\(metrics.stalls)",
            "reports_dropped=\(metrics.stallReportsDropped)",
        ]
        if let example = state.example { lines.append("example=\(example)") }
        return lines.joined(separator: "\n") + "\n"
    }
}
