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
        let record = bolts_pool_job_alloc { context in
            let base = context.unsafelyUnwrapped
            let payload = base + MemoryLayout<bolts_job_t>.stride
            let job = payload.load(as: UnownedJob.self)
            let executor = payload.load(fromByteOffset: MemoryLayout<UnownedJob>.stride, as: UnownedTaskExecutor.self)
            bolts_pool_block_free(base)
            job.runSynchronously(on: executor)
        }
        let payload = UnsafeMutableRawPointer(record) + MemoryLayout<bolts_job_t>.stride
        payload.storeBytes(of: UnownedJob(job), as: UnownedJob.self)
        payload.storeBytes(
            of: asUnownedTaskExecutor(), toByteOffset: MemoryLayout<UnownedJob>.stride, as: UnownedTaskExecutor.self)
        bolts_pool_submit(_pool, record)
    }

    /// The pool as an unowned task executor reference (no retain).
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}
