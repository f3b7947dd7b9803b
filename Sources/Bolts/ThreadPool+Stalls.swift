import CBoltsRuntime
import Foundation

extension ThreadPool {
    /// A job the pool found blocked where it cannot see the wait: a system call, a lock, a
    /// foreign `.wait()` (see ``Metrics/stalls``).
    ///
    /// The pool makes one when its monitor finds the job blocked (``Phase/found``), and one
    /// when that job ends (``Phase/ended``), whose ``heldFor`` is then the block's whole
    /// length. Both name the thread, the system call it slept in and the stack it slept
    /// with, captured without stopping the thread (a blocked `nanosleep`, `poll` or `read`
    /// is never cut short).
    public struct StallReport: Sendable, CustomStringConvertible {
        /// When in the block the report was made.
        public enum Phase: Sendable, Equatable {
            /// The monitor has just found the job blocked.
            case found
            /// The job has ended (or entered a wait the pool sees, which compensates by
            /// itself).
            case ended
        }

        /// When in the block the report was made.
        public var phase: Phase
        /// The worker's index in the pool: below ``ThreadPool/threadCount`` for one of its
        /// workers, above for an extra thread.
        public var worker: Int
        /// The worker thread's name, as `top -H` and debuggers show it ("bolts-3").
        public var threadName: String
        /// How long the job has held its worker, from the job's start as the pool knows it
        /// (within half the monitor's interval: the pool does not read a clock on a job's
        /// path). In an ``Phase/ended`` report, the whole block.
        public var heldFor: Duration
        /// The system call the thread slept in ("futex", "read", "clock_nanosleep"), or
        /// nil if it was not in one.
        public var systemCall: String?
        /// The thread's stack when it was found: demangled frames, innermost first, the
        /// pool's own left out. Found by scanning the stack for return addresses, so it can
        /// hold a stale frame; it misses none above the blocking call.
        public var stack: [String]
        /// The Swift task whose job blocked, for Swift Concurrency on the pool installed as
        /// the global executor; nil for other jobs.
        public var taskID: UInt64?
        /// Jobs waiting in the pool's queues when the worker was found.
        public var queuedJobs: Int
        /// The innermost frame of the job's own code (not the C library's, the Swift
        /// runtime's or the pool's), if the stack holds one.
        public var userFrame: String?

        /// One line: the phase, thread, duration, system call and the job's own function,
        /// for example `stall found: bolts-1 (worker 1) blocked 1.2 ms in clock_nanosleep,
        /// in MyServer.loadReport() -> (), 3 jobs queued`.
        public var description: String {
            var line = phase == .found ? "stall found: " : "stall ended: "
            line += "\(threadName) (worker \(worker)) "
            line += phase == .found ? "blocked " : "held its worker "
            line += Self.format(heldFor)
            if let systemCall { line += " in \(systemCall)" }
            if let userFrame { line += ", in \(userFrame)" }
            if let taskID { line += ", task \(taskID)" }
            if phase == .found { line += ", \(queuedJobs) job\(queuedJobs == 1 ? "" : "s") queued" }
            return line
        }

        static func format(_ duration: Duration) -> String {
            let (seconds, attoseconds) = duration.components
            let ms = Double(seconds) * 1e3 + Double(attoseconds) / 1e15
            if ms >= 1000 { return String(format: "%.2f s", ms / 1000) }
            if ms >= 10 { return String(format: "%.0f ms", ms) }
            return String(format: "%.1f ms", ms)
        }
    }

    /// Calls `observer` with every ``StallReport`` the pool makes from now on; `nil` stops
    /// the reports. One observer per pool: a later call replaces the earlier one.
    ///
    /// The observer runs on a thread of the pool's own that is neither a worker nor the
    /// monitor, one report at a time, in the order they were made. It may block (to write a
    /// log line, say) without delaying detection or compensation: reports made meanwhile
    /// wait in a bounded queue. Reports are limited to `BOLTS_POOL_STALL_REPORTS_PER_S` per
    /// second; those over it, or made while the queue is full, are dropped and counted in
    /// ``Metrics/stallReportsDropped``.
    public func observeStalls(_ observer: (@Sendable (StallReport) -> Void)?) {
        _stallObserver.set(observer, pool: _pool)
    }
}

/// The observer of one pool's stall reports, shared with the C core's reporter thread.
// @unchecked Sendable: `observer` and `isRegistered` are read and written only under
// `lock`; `found` is touched only by the reporter thread (the C core calls `deliver` from
// that one thread), never concurrently.
final class _StallObserver: @unchecked Sendable {
    private let lock = NSLock()
    private var observer: (@Sendable (ThreadPool.StallReport) -> Void)?
    private var isRegistered = false
    /// The last found report of each worker, for the ended report that follows it.
    private var found: [Int: ThreadPool.StallReport] = [:]

    func set(_ observer: (@Sendable (ThreadPool.StallReport) -> Void)?, pool: OpaquePointer) {
        lock.lock()
        defer { lock.unlock() }
        self.observer = observer
        guard observer != nil, !isRegistered else { return }
        let context = Unmanaged.passRetained(self).toOpaque()
        isRegistered = bolts_pool_observe_stalls(
            pool,
            { context, record in
                Unmanaged<_StallObserver>.fromOpaque(context!).takeUnretainedValue().deliver(record.pointee)
            },
            { context in Unmanaged<_StallObserver>.fromOpaque(context!).release() },
            context
        )
        if !isRegistered { Unmanaged<_StallObserver>.fromOpaque(context).release() }
    }

    private func deliver(_ record: bolts_stall_record_t) {
        lock.lock()
        let observer = self.observer
        lock.unlock()
        let worker = Int(record.worker)
        let report: ThreadPool.StallReport
        if record.phase == BOLTS_STALL_FOUND {
            let frames = CapturedFrames(record.capture)
            report = ThreadPool.StallReport(
                phase: .found,
                worker: worker,
                threadName: String(fixedCString: record.thread_name),
                heldFor: .nanoseconds(record.held_ns),
                systemCall: frames.systemCall,
                stack: frames.stack,
                taskID: record.task_id != 0 ? record.task_id : nil,
                queuedJobs: Int(record.queued),
                userFrame: frames.userFrame
            )
            found[worker] = report
        } else {
            var ended = found.removeValue(forKey: worker)
                ?? ThreadPool.StallReport(
                    phase: .ended, worker: worker, threadName: String(fixedCString: record.thread_name),
                    heldFor: .zero, systemCall: nil, stack: [], taskID: nil, queuedJobs: 0, userFrame: nil
                )
            ended.phase = .ended
            ended.heldFor = .nanoseconds(record.held_ns)
            report = ended
        }
        observer?(report)
    }
}
