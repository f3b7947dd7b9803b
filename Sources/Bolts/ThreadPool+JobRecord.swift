import CBoltsRuntime
internal import CBoltsTuning

// Job records for the C pool. Every Swift job the pool runs without a task (a closure, a
// Swift Concurrency job for the pool or for a serial executor) is a `bolts_job_t` in a pool
// block (`bolts_pool_job_alloc`) followed by a payload of at most BOLTS_POOL_JOB_PAYLOAD
// bytes. `_PoolJobRecord` is the one place that knows that layout: the others pack their
// payload with `make` and unpack it, in the job's C callback, with `take`.

/// Packs and unpacks the payload of a job record in a pool block.
internal enum _PoolJobRecord {
    /// Where the payload starts: right after the record (see `bolts_pool_job_alloc`).
    @inline(__always)
    private static var payloadOffset: Int { MemoryLayout<bolts_job_t>.stride }

    /// A job record that runs `fn` and carries `payload` (moved in, with no retain).
    /// `fn` receives the record as its context and must call ``take(_:from:)`` once.
    @inline(__always)
    static func make<Payload>(_ payload: consuming Payload, run fn: bolts_job_fn)
        -> UnsafeMutablePointer<bolts_job_t>
    {
        assert(
            MemoryLayout<Payload>.size <= Int(BOLTS_POOL_JOB_PAYLOAD) && MemoryLayout<Payload>.alignment <= 16,
            "a pool job's payload holds BOLTS_POOL_JOB_PAYLOAD bytes"
        )
        let record = bolts_pool_job_alloc(fn)
        (UnsafeMutableRawPointer(record) + payloadOffset).bindMemory(to: Payload.self, capacity: 1)
            .initialize(to: payload)
        return record
    }

    /// In the job's callback (on a worker, or after shutdown on the submitting thread):
    /// moves the payload out of the record `context` and gives the block back, so that
    /// the job runs with its block already free.
    @inline(__always)
    static func take<Payload>(_: Payload.Type, from context: UnsafeMutableRawPointer?) -> Payload {
        let base = context.unsafelyUnwrapped
        let payload = (base + payloadOffset).assumingMemoryBound(to: Payload.self).move()
        bolts_pool_block_free(base)
        return payload
    }

    /// Destroys the payload of a record made by `make` that never ran, and frees the block.
    static func destroy<Payload>(_ record: UnsafeMutablePointer<bolts_job_t>, carrying _: Payload.Type) {
        let base = UnsafeMutableRawPointer(record)
        (base + payloadOffset).assumingMemoryBound(to: Payload.self).deinitialize(count: 1)
        bolts_pool_block_free(base)
    }
}

/// The payload of a Swift Concurrency job for a pool or a serial executor: the job, and
/// the executor it runs on, unretained (whoever enqueues says why the executor outlives
/// the job).
internal struct _ExecutorJobPayload<Owner: AnyObject> {
    let job: UnownedJob
    let executor: Unmanaged<Owner>
}

extension ThreadPool {
    /// The payload of a closure job. The closure sits in a struct because a function
    /// value stored directly in generic memory (`UnsafeMutablePointer<() -> Void>`) is
    /// reabstracted, which allocates a thunk context per job; a struct field keeps the
    /// closure's own representation.
    internal struct _ClosurePayload {
        let body: @Sendable () -> Void

        /// Runs the closure and destroys the payload. Consuming, so that the call needs
        /// no retain of the closure's context: the payload's own reference is used for
        /// the call and released after it (one release per job, on the shared context
        /// that a job closure often captures).
        consuming func run() { body() }
    }

    /// Wraps `body` in a job record that frees itself when it runs. `body` is taken owned:
    /// the caller's reference moves into the record, with no retain of its context.
    internal static func _makeClosureJob(_ body: consuming @escaping @Sendable () -> Void)
        -> UnsafeMutablePointer<bolts_job_t>
    {
        _PoolJobRecord.make(_ClosurePayload(body: body)) { context in
            // Take the closure out, give the block back, then run it.
            _PoolJobRecord.take(_ClosurePayload.self, from: context).run()
        }
    }

    /// Runs `job` on the C pool `cPool` (a ``ThreadPool``'s `_pool`) without touching the
    /// Swift object, so without retaining it: the body of the inlinable fast paths of
    /// ``execute(_:)`` and `Executor.execute(_:)`. The closure is taken owned, so a caller
    /// that made it hands its reference over.
    @usableFromInline
    internal static func _submit(toCPool cPool: OpaquePointer, _ job: consuming @escaping @Sendable () -> Void) {
        bolts_pool_submit(cPool, _makeClosureJob(job))
    }

    /// Frees a job made by `_makeClosureJob` that was never run.
    internal static func destroyClosureJob(_ record: UnsafeMutablePointer<bolts_job_t>) {
        _PoolJobRecord.destroy(record, carrying: _ClosurePayload.self)
    }
}
