import CBoltsRuntime
internal import CBoltsTuning

extension ThreadPool {
    /// What every thread of a pool was doing at one moment (``ThreadPool/snapshot()``).
    public struct Snapshot: Sendable, CustomStringConvertible {
        /// What a worker is doing.
        public enum State: Sendable, Equatable {
            /// Running a job.
            case running
            /// Awake between jobs, looking for the next one.
            case searching
            /// Asleep until a job comes.
            case parked
            /// In a job and counted as blocked: in a wait the pool sees (such as
            /// ``Task/waitUntilCompleted()``), or found blocked where it cannot see (see
            /// ``ThreadPool/StallReport``).
            case blocked
            /// An extra thread out of service, kept for the next blocked worker until it
            /// has been idle for `BOLTS_POOL_SPARE_IDLE_NS` (10 s).
            case spare
        }

        /// One thread of the pool.
        public struct Worker: Sendable {
            /// Its index: below ``ThreadPool/threadCount`` for a worker, above for an extra
            /// thread.
            public var index: Int
            /// Its thread's name ("bolts-3").
            public var threadName: String
            /// What it was doing.
            public var state: State
            /// How long it had been in its current job (known to within the monitor's
            /// interval); nil when not in a job.
            public var inJobFor: Duration?
            /// The innermost frame of its job's own code, when the thread was asleep in the
            /// job (a running thread is not stopped to look).
            public var job: String?
            /// The system call it was asleep in, if any.
            public var systemCall: String?
        }

        /// Every thread, workers first, in index order.
        public var workers: [Worker]
        /// Jobs waiting in the queues.
        public var queuedJobs: Int
        /// Extra threads in service beside the pool's workers.
        public var extraThreads: Int
        /// The pool's name, for ``description``.
        public var poolName: String

        /// A line for the pool, then one line per thread, like Go's `schedtrace`:
        /// `bolts-3 blocked 62 ms in read, in MyServer.loadReport() -> ()`.
        public var description: String {
            var lines = [
                "\(poolName): \(workers.count) threads, \(extraThreads) extra, \(queuedJobs) job\(queuedJobs == 1 ? "" : "s") queued"
            ]
            for worker in workers {
                var line = "  \(worker.threadName) \(worker.state)"
                if let inJobFor = worker.inJobFor { line += " " + StallReport.format(inJobFor) }
                if let systemCall = worker.systemCall { line += " in \(systemCall)" }
                if let job = worker.job { line += ", in \(job)" }
                lines.append(line)
            }
            return lines.joined(separator: "\n")
        }
    }

    /// What every thread of the pool is doing now: each worker's state, how long it has
    /// been in its job, and, for one asleep in a job, the job's innermost frame.
    ///
    /// Any thread, any time. The states are read one thread after another while the pool
    /// runs (not a consistent cut); each thread asleep in a job is captured without being
    /// stopped, at a few tens of microseconds each.
    public func snapshot() -> Snapshot {
        let capacity = threadCount + Int(BOLTS_POOL_MAX_EXTRA_THREADS)
        var raw = [bolts_pool_worker_snapshot_t](repeating: bolts_pool_worker_snapshot_t(), count: capacity)
        var queued: UInt64 = 0
        var extra: UInt32 = 0
        let count = raw.withUnsafeMutableBufferPointer { buffer in
            Int(bolts_pool_snapshot(_pool, buffer.baseAddress!, UInt32(buffer.count), &queued, &extra))
        }
        let workers = raw.prefix(count).map { w -> Snapshot.Worker in
            let state: Snapshot.State
            switch Int(w.state) {
            case Int(BOLTS_WORKER_RUNNING): state = .running
            case Int(BOLTS_WORKER_SEARCHING): state = .searching
            case Int(BOLTS_WORKER_PARKED): state = .parked
            case Int(BOLTS_WORKER_BLOCKED): state = .blocked
            default: state = .spare
            }
            let frames = w.capture.system_call >= -1 ? CapturedFrames(w.capture) : nil
            return Snapshot.Worker(
                index: Int(w.index),
                threadName: String(fixedCString: w.thread_name),
                state: state,
                inJobFor: w.in_job_ns >= 0 ? .nanoseconds(w.in_job_ns) : nil,
                job: frames?.userFrame,
                systemCall: frames?.systemCall
            )
        }
        return Snapshot(workers: workers, queuedJobs: Int(queued), extraThreads: Int(extra), poolName: name)
    }
}
