import CBoltsRuntime

extension ThreadPool: TaskExecutor {
    /// Runs a Swift Concurrency job on one of the pool's workers, with the pool as the
    /// job's task executor: `withTaskExecutorPreference(pool) { … }` (or
    /// `_Concurrency.Task(executorPreference: pool) { … }`) runs the nonisolated async
    /// code in it on this pool.
    ///
    /// After ``shutdown(wait:)`` the job runs on the calling thread instead (it is never
    /// dropped), and ``Metrics/rejected`` counts it.
    ///
    /// A job enqueued from a thread that is not one of this pool's workers (a task hopping
    /// here from another executor) usually ends by handing work back there: the awaiting
    /// task resumes on its own executor, which wakes a thread for it. So the enqueuing
    /// thread waits a few microseconds for such a job to end before it returns: a task that
    /// awaits the hopped task's value right after finds it completed and does not suspend.
    /// Each thread measures, over runs of its hops, whether waiting saves it time or costs
    /// it (a loop that starts many tasks without awaiting each), and waits only while it
    /// saves.
    public func enqueue(_ job: consuming ExecutorJob) {
        // The pool is unretained: it outlives its queued jobs (`deinit` drains them first).
        let payload = _ExecutorJobPayload(job: UnownedJob(job), executor: Unmanaged.passUnretained(self))
        let record: UnsafeMutablePointer<bolts_job_t>
        if bolts_pool_current() == _pool {
            // From a worker of this pool (a task group's child, a resumption on the pool):
            // its work stays on the pool.
            record = _PoolJobRecord.make(payload) { context in ThreadPool._runExecutorJob(from: context) }
        } else {
            // From off the pool: a hop (see above).
            record = _PoolJobRecord.make(payload) { context in
                ThreadPool._runExecutorJob(from: context)
                bolts_pool_hop_finished()
            }
            _ = bolts_pool_submit_hop(_pool, record)
            return
        }
        bolts_pool_submit(_pool, record)
    }

    /// Runs the Swift Concurrency job in `context`, a record made by ``enqueue(_:)``, and
    /// frees the record first.
    @inline(__always)
    private static func _runExecutorJob(from context: UnsafeMutableRawPointer?) {
        let payload = _PoolJobRecord.take(_ExecutorJobPayload<ThreadPool>.self, from: context)
        payload.executor._withUnsafeGuaranteedRef { payload.job.runSynchronously(on: $0.asUnownedTaskExecutor()) }
    }

    /// The pool as an unowned task executor reference (no retain).
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}
