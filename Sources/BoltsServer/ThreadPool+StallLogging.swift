import Bolts
import CoreMetrics
import Dispatch
import Logging

#if canImport(Glibc)
import Glibc
#endif

extension ThreadPool {
    /// Logs every ``/Bolts/ThreadPool/StallReport`` of this pool through `logger`, one line each,
    /// and records how long each blocked job held its worker in a swift-metrics `Timer`.
    ///
    /// A found report is logged at `level` (default `.warning`) with the stack in the
    /// metadata (`stack`, frames separated by " <- "), an ended one at `.info`; each ended
    /// report's ``/Bolts/ThreadPool/StallReport/heldFor`` goes to the timer `timerLabel`
    /// (dimension `("pool", name)`). It replaces any observer set with
    /// ``/Bolts/ThreadPool/observeStalls(_:)``, and runs on the pool's reporter thread, so a slow
    /// log handler delays only later reports.
    ///
    /// A line as a person reads it:
    ///
    /// ```
    /// warning bolts : pool=bolts stack=usleep <- MyServer.loadReport() -> () <- … stall found: bolts-1 (worker 1) blocked 1.6 ms in clock_nanosleep, in MyServer.loadReport() -> (), 3 jobs queued
    /// ```
    public func logStalls(
        to logger: Logger,
        level: Logger.Level = .warning,
        timerLabel: String = "bolts_pool_stall_duration",
        factory: any MetricsFactory = MetricsSystem.factory
    ) {
        let timer = Timer(label: timerLabel, dimensions: [("pool", name)], factory: factory)
        let poolName = name
        observeStalls { report in
            var metadata: Logger.Metadata = ["pool": "\(poolName)"]
            switch report.phase {
            case .found:
                metadata["stack"] = "\(report.stack.joined(separator: " <- "))"
                logger.log(level: level, "\(report.description)", metadata: metadata)
            case .ended:
                timer.recordNanoseconds(report.heldFor.wholeNanoseconds)
                logger.info("\(report.description)", metadata: metadata)
            }
        }
    }

    /// Logs ``/Bolts/ThreadPool/snapshot()`` through `logger` each time the process receives `signal` (for
    /// example `SIGUSR1`: `kill -USR1 <pid>` shows what every worker is doing, as Go's
    /// `schedtrace` does). The signal's default action is turned off for as long as the
    /// returned source lives; cancel it to stop.
    ///
    /// - Returns: The dispatch source that listens; keep it, and call `cancel()` to stop.
    public func logSnapshot(onSignal signal: Int32, to logger: Logger) -> any DispatchSourceSignal {
        #if canImport(Glibc)
        Glibc.signal(signal, SIG_IGN)
        #endif
        let source = DispatchSource.makeSignalSource(signal: signal, queue: .global())
        source.setEventHandler { [self] in
            logger.notice("\(self.snapshot().description)", metadata: ["pool": "\(self.name)"])
        }
        source.resume()
        return source
    }
}

extension Duration {
    /// The duration in whole nanoseconds (what swift-metrics' `Timer` and `Counter` take),
    /// the fraction dropped.
    var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
