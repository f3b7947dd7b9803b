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
        // Payload (BOLTS_POOL_JOB_PAYLOAD = two words): the job, and this pool, unretained.
        // The pool outlives its queued jobs: `deinit` drains them first.
        let record = bolts_pool_job_alloc { context in
            let base = context.unsafelyUnwrapped
            let payload = base + MemoryLayout<bolts_job_t>.stride
            let job = payload.load(as: UnownedJob.self)
            let pool = Unmanaged<ThreadPool>.fromOpaque(
                payload.load(fromByteOffset: MemoryLayout<UnownedJob>.stride, as: UnsafeRawPointer.self))
            bolts_pool_block_free(base)
            pool._withUnsafeGuaranteedRef { job.runSynchronously(on: $0.asUnownedTaskExecutor()) }
        }
        let payload = UnsafeMutableRawPointer(record) + MemoryLayout<bolts_job_t>.stride
        payload.storeBytes(of: UnownedJob(job), as: UnownedJob.self)
        payload.storeBytes(
            of: UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()),
            toByteOffset: MemoryLayout<UnownedJob>.stride, as: UnsafeRawPointer.self)
        bolts_pool_submit(_pool, record)
    }

    /// The pool as an unowned task executor reference (no retain).
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}
