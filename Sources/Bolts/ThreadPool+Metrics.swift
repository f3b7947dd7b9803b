import CBoltsRuntime

extension ThreadPool {
    /// Counters of a ``ThreadPool``, cheap enough to leave on: each is a per-worker
    /// counter written by its owner (or a statistic on a cache line the operation writes
    /// anyway), summed when read.
    ///
    /// A snapshot is not a consistent cut: counters are read one after another while the
    /// pool runs, so ``queueDepth`` may be off by the jobs in flight.
    public struct Metrics: Sendable, Equatable, CustomStringConvertible {
        /// Jobs accepted into the pool's queues.
        public var submitted: UInt64
        /// Jobs that have run (on workers, or swept after a shutdown race).
        public var executed: UInt64
        /// Jobs a worker took from another worker's queue.
        public var stolen: UInt64
        /// Times a worker went to sleep on its futex.
        public var parks: UInt64
        /// Submissions refused because the pool was shut down.
        public var rejected: UInt64
        /// Times a thread outside the pool gave up its time slice on submitting because
        /// more than `BOLTS_POOL_BACKLOG_PER_WORKER` jobs per worker were queued
        /// (backpressure; it never blocks; see ``ThreadPool``).
        public var backpressureYields: UInt64
        /// Threads started or woken because a worker blocked: in a wait the pool sees (such
        /// as ``Task/waitUntilCompleted()``), or in a job where it cannot (see ``stalls``).
        public var compensations: UInt64
        /// Times the pool found a worker blocked in a job where it could not see the wait (a
        /// system call, a lock, a foreign `.wait()`): the job had held its worker for
        /// `BOLTS_POOL_BLOCKED_NS` (1 ms), mostly asleep, while other jobs waited. Each time
        /// the pool counted that worker as blocked and, if too few others were left running,
        /// brought in a compensating thread (``compensations``).
        public var stalls: UInt64
        /// Jobs accepted but not started yet.
        public var queueDepth: UInt64
        /// Worker threads alive, including spares kept for the next blocking worker.
        public var threads: Int
        /// Workers counted as blocked right now: in a wait, or in a job (``stalled``).
        public var blocked: Int
        /// Of ``blocked``, the workers found blocked in a job where the pool cannot see the
        /// wait (see ``stalls``); each is counted again as running once its job ends.
        public var stalled: Int
        /// Stall reports not delivered to the observer (``ThreadPool/observeStalls(_:)``):
        /// over the rate limit, or made while its queue was full.
        public var stallReportsDropped: UInt64
        /// Extra threads that exited after waiting unused as spares for
        /// `BOLTS_POOL_SPARE_IDLE_NS` (10 s).
        public var sparesExited: UInt64
        /// Times the pool left a blocked worker uncompensated because the extra threads it
        /// had already brought in did not raise the rate at which jobs complete (a lock
        /// convoy, say: see ``ThreadPool``).
        public var growthRefused: UInt64

        /// One line with every counter.
        public var description: String {
            "submitted \(submitted), executed \(executed), stolen \(stolen), parks \(parks), rejected \(rejected), "
                + "backpressure yields \(backpressureYields), compensations \(compensations), stalls \(stalls), queue depth \(queueDepth), threads \(threads), blocked \(blocked), stalled \(stalled), "
                + "stall reports dropped \(stallReportsDropped), spares exited \(sparesExited), growth refused \(growthRefused)"
        }
    }

    /// A snapshot of the pool's counters; any thread, any time.
    public var metrics: Metrics {
        var raw = bolts_pool_metrics_t()
        bolts_pool_get_metrics(_pool, &raw)
        return Metrics(
            submitted: raw.submitted,
            executed: raw.executed,
            stolen: raw.stolen,
            parks: raw.parks,
            rejected: raw.rejected,
            backpressureYields: raw.backpressure_yields,
            compensations: raw.compensations,
            stalls: raw.stalls,
            queueDepth: raw.queue_depth,
            threads: Int(raw.threads),
            blocked: Int(raw.blocked),
            stalled: Int(raw.stalled),
            stallReportsDropped: raw.stall_reports_dropped,
            sparesExited: raw.spares_exited,
            growthRefused: raw.growth_refused
        )
    }
}
