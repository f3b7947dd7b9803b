import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

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
