import BenchmarkStatistics
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The progress line on standard error. On a terminal it is one line rewritten in place;
/// otherwise (CI logs) one line per comparison, so logs stay readable.
final class Progress {
    private let isTerminal = isatty(STDERR_FILENO) != 0
    private var position = 0
    private var total = 0
    private var started = now()
    private let budget: Budget?

    /// `budget`, when given, puts the time left on every line.
    init(budget: Budget?) { self.budget = budget }

    func begin(total: Int) {
        self.total = total
        started = now()
    }

    /// Moves to the next comparison.
    func next(_ title: String) {
        position += 1
        let left = budget?.secondsLeft.map { " (\(Int($0.rounded())) s of the budget left)" } ?? ""
        log("[\(position)/\(total)] \(title)\(left)")
    }

    /// Rewrites the line (terminal only).
    func update(_ text: String) {
        guard isTerminal else { return }
        let seconds = Double(now() &- started) / 1e9
        var line = "[\(position)/\(total) \(String(format1: seconds))s] \(text)"
        if line.count > 150 { line = String(line.prefix(147)) + "..." }
        writeError("\r\u{1B}[2K" + line)
    }

    /// A line for logs only (not on a terminal, where the progress line is rewritten).
    func log(_ text: String) {
        if !isTerminal { writeError(text + "\n") }
    }

    /// Logs each verdict of a comparison that just ended, one line each (not on a terminal).
    func log(verdicts rows: [VerdictRow]) {
        for row in rows where !row.isAA {
            log(
                "  \(row.subject) vs \(row.baseline), \(row.metric): \(row.formattedRatioAndInterval) "
                    + "\(row.verdict.rawValue) (\(row.rounds) rounds, noise \(row.formattedThreshold))")
        }
    }

    /// Clears the line before the results are printed.
    func finish() {
        if isTerminal { writeError("\r\u{1B}[2K") }
    }
}

/// Ends the process when a scenario stops making progress (a lost wake-up in an executor
/// would otherwise hang CI until its time limit): the runner beats before every sample, and
/// if no beat comes for `limit` seconds the watchdog prints what was running and exits 2.
final class Watchdog: Sendable {
    private let lastBeat = Atomic<UInt64>(now())
    private let current = Mutex<String>("start-up")
    private let limitNanoseconds: UInt64

    init(limitSeconds: Double) {
        limitNanoseconds = UInt64(limitSeconds * 1e9)
        let thread = Thread { [self] in watch() }
        thread.name = "benchmark-watchdog"
        thread.start()
    }

    /// Records progress; `what` names the sample about to run.
    func beat(_ what: String) {
        current.withLock { $0 = what }
        // Relaxed: a timestamp read by the watchdog only to compare with the clock.
        lastBeat.store(now(), ordering: .relaxed)
    }

    private func watch() {
        while true {
            sleep(1)
            let silent = now() &- lastBeat.load(ordering: .relaxed)
            if silent > limitNanoseconds {
                let what = current.withLock { $0 }
                writeError("\nerror: no progress for \(silent / 1_000_000_000) s while running: \(what)\n")
                exit(2)
            }
        }
    }
}

/// Writes `text` to standard error, unbuffered.
func writeError(_ text: String) {
    var text = text
    text.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(STDERR_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }
}
