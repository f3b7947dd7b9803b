import CBoltsRuntime

extension ThreadPool: TaskExecutor {
    /// Runs a Swift Concurrency job on one of the pool's workers, with the pool as the
    /// job's task executor: `withTaskExecutorPreference(pool) { … }` (or
    /// `_Concurrency.Task(executorPreference: pool) { … }`) runs the nonisolated async
    /// code in it on this pool.
    ///
    /// After ``shutdown(wait:)`` the job runs on the calling thread instead (it is never
    /// dropped), and ``Metrics/rejected`` counts it.
    public func enqueue(_ job: consuming ExecutorJob) {
        // The pool is unretained: it outlives its queued jobs (`deinit` drains them first).
        let record = _PoolJobRecord.make(
            _ExecutorJobPayload(job: UnownedJob(job), executor: Unmanaged.passUnretained(self))
        ) { context in
            let payload = _PoolJobRecord.take(_ExecutorJobPayload<ThreadPool>.self, from: context)
            payload.executor._withUnsafeGuaranteedRef { payload.job.runSynchronously(on: $0.asUnownedTaskExecutor()) }
        }
        bolts_pool_submit(_pool, record)
    }

    /// The pool as an unowned task executor reference (no retain).
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}
