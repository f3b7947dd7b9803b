import CBoltsRuntime
internal import CBoltsTuning

extension ThreadPool {
    /// A histogram of durations in powers of two: bucket `b` counts the durations in
    /// [2^b, 2^(b+1)) nanoseconds, the last bucket everything longer.
    public struct DurationHistogram: Sendable, Equatable {
        /// The count of each bucket.
        public var counts: [UInt64]

        /// The durations counted.
        public var count: UInt64 { counts.reduce(0, +) }

        /// The shortest duration bucket `bucket` counts (2^bucket nanoseconds).
        public static func lowerBound(ofBucket bucket: Int) -> Duration {
            .nanoseconds(Int64(1) << Int64(bucket))
        }

        /// The upper end of the bucket that holds the `quantile` (0...1) of the counted
        /// durations: an upper bound on that quantile, within a factor of two; nil when
        /// nothing was counted.
        public func quantile(_ quantile: Double) -> Duration? {
            let total = count
            guard total > 0 else { return nil }
            let rank = UInt64((Double(total) * min(max(quantile, 0), 1)).rounded(.up))
            var seen: UInt64 = 0
            for (bucket, n) in counts.enumerated() {
                seen += n
                if seen >= max(rank, 1) { return Self.lowerBound(ofBucket: bucket + 1) }
            }
            return Self.lowerBound(ofBucket: counts.count)
        }

        /// What this histogram counted since `earlier` (an earlier reading of the same pool).
        public func subtracting(_ earlier: DurationHistogram) -> DurationHistogram {
            DurationHistogram(
                counts: zip(counts, earlier.counts + Array(repeating: 0, count: max(0, counts.count - earlier.counts.count)))
                    .map { $0 > $1 ? $0 - $1 : 0 }
            )
        }
    }

    /// How the pool's scheduling is going, sampled so that reading it costs the pool
    /// nothing on a job's path (what Go's `/sched/latencies` and tokio-metrics report).
    public struct SchedulerHealth: Sendable {
        /// How long jobs ran: one job in `BOLTS_POOL_SAMPLE_INTERVAL` (16) that each worker
        /// runs, the jobs it times anyway to decide where jobs run (no clock read is added).
        public var runTimes: DurationHistogram
        /// How long jobs waited from submission to start: about one submission in
        /// `BOLTS_POOL_DELAY_SAMPLE` (64) of each thread, at most one such probe in flight per
        /// pool at a time.
        public var startDelays: DurationHistogram
        /// Each thread's busy time since it started (not parked, not waiting as a spare):
        /// workers first, then extra threads by index; nil for a slot without a thread.
        public var workerBusy: [Duration?]
    }

    /// The pool's sampled run times, start delays and busy times; any thread, any time
    /// (counters read one after another while the pool runs: not a consistent cut).
    public var schedulerHealth: SchedulerHealth {
        var raw = bolts_pool_histograms_t()
        bolts_pool_get_histograms(_pool, &raw)
        let buckets = Int(BOLTS_POOL_HISTOGRAM_BUCKETS)
        let run = withUnsafeBytes(of: raw.run) { Array($0.bindMemory(to: UInt64.self).prefix(buckets)) }
        let delay = withUnsafeBytes(of: raw.delay) { Array($0.bindMemory(to: UInt64.self).prefix(buckets)) }
        var busy = [Int64](repeating: -1, count: threadCount + Int(BOLTS_POOL_MAX_EXTRA_THREADS))
        let n = busy.withUnsafeMutableBufferPointer {
            Int(bolts_pool_worker_busy(_pool, $0.baseAddress!, UInt32($0.count)))
        }
        return SchedulerHealth(
            runTimes: DurationHistogram(counts: run),
            startDelays: DurationHistogram(counts: delay),
            workerBusy: busy.prefix(n).map { $0 >= 0 ? Duration.nanoseconds($0) : nil }
        )
    }
}
