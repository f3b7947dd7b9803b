import CBoltsRuntime

// @unchecked Sendable: the stored properties are immutable; `_serial` points to a C
// serial executor whose submit and query functions may be called from any thread, and
// `pool` is itself Sendable.
/// An executor that runs its jobs one at a time, in the order they were submitted, on a
/// ``ThreadPool``'s workers; usable as an actor's executor.
///
/// Jobs wait in a lock-free queue (the C core's serial executor). The first job into an
/// empty queue schedules one drain job on the pool; the drain runs queued jobs in order,
/// up to a batch of `BOLTS_SERIAL_BATCH` (the C core's `bolts_tuning.h`) before it yields
/// its worker to other pool work, and stops only when the queue is empty. So jobs never
/// run concurrently with each other, a job submitted after another (by the same thread,
/// or after it observably returned) runs after it, and nothing is left behind when the
/// drain stops.
///
/// ```swift
/// actor Account {
///     private let executor = SerialPoolExecutor(pool: .shared)
///     nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
/// }
/// ```
///
/// Closures submitted with ``execute(_:)`` are ordered together with the actor's jobs.
public final class SerialPoolExecutor: SerialExecutor, @unchecked Sendable {
    /// The pool whose workers run this executor's jobs (kept alive by this executor).
    public let pool: ThreadPool

    /// The C serial executor (`bolts_serial_t *`).
    @usableFromInline
    internal let _serial: OpaquePointer

    /// Makes a serial executor that runs on `pool` (by default the shared pool).
    public init(pool: ThreadPool = .shared) {
        guard let serial = bolts_serial_create(pool._pool) else {
            fatalError("SerialPoolExecutor: out of memory")
        }
        self.pool = pool
        self._serial = serial
    }

    deinit {
        // Jobs still queued keep the C executor alive until they have run.
        bolts_serial_release(_serial)
    }

    /// Runs a Swift Concurrency job (an actor's partial task) after every job submitted
    /// before it, on one of the pool's workers, isolated to this executor.
    public func enqueue(_ job: consuming ExecutorJob) {
        // The executor is unretained: an actor keeps its executor alive while it has jobs.
        let record = _PoolJobRecord.make(
            _ExecutorJobPayload(job: UnownedJob(job), executor: Unmanaged.passUnretained(self))
        ) { context in
            let payload = _PoolJobRecord.take(_ExecutorJobPayload<SerialPoolExecutor>.self, from: context)
            payload.executor._withUnsafeGuaranteedRef { payload.job.runSynchronously(on: $0.asUnownedSerialExecutor()) }
        }
        bolts_serial_submit(_serial, record)
    }

    /// Runs `job` after every job submitted before it, on one of the pool's workers.
    /// If the pool has been shut down, the drain (and so the job) runs on the submitting
    /// thread instead; it is never dropped.
    public func execute(_ job: @escaping @Sendable () -> Void) {
        bolts_serial_submit(_serial, ThreadPool._makeClosureJob(job))
    }

    /// This executor as an unowned reference (no retain), for an actor's `unownedExecutor`.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Whether the calling thread is running one of this executor's jobs right now.
    public var isCurrent: Bool { bolts_serial_is_current(_serial) }

    /// Traps unless the calling thread is running one of this executor's jobs; Swift
    /// calls it for `assumeIsolated` and isolation checks.
    public func checkIsolated() {
        precondition(bolts_serial_is_current(_serial), "not running on this SerialPoolExecutor")
    }
}
