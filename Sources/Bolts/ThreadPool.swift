import CBoltsRuntime
internal import CBoltsTuning

// @unchecked Sendable: every stored property is immutable after `init`; `_pool` points to
// a C pool whose every entry point may be called from any thread (bolts_pool.h).
/// A pool of worker threads with lock-free run queues, implemented in the C core.
///
/// Each worker owns a wait-free queue (liburcu's `wfcqueue`); a job submitted from a
/// worker goes on that worker's queue, a job submitted from any other thread goes on the
/// queue of the CPU that thread runs on, and a worker whose queue is empty steals from the
/// others (a busy worker's only queued job is left to it for up to
/// `BOLTS_POOL_STEAL_GRACE_NS`, so a job a worker hands itself as its current job ends, such
/// as the next step of an `await`, runs there; and short jobs a worker hands itself, such
/// as a burst of tiny Swift tasks, stay with it while it keeps making progress, the idle
/// worker parking meanwhile for `BOLTS_POOL_RESTRAIN_NS` at first, then for twice as long
/// after each such park while the owner moves, up to `BOLTS_POOL_RESTRAIN_PARK_MAX_NS`
/// (1.6 ms; a stalled owner's jobs are taken within it): jobs from other threads
/// and jobs longer than `BOLTS_POOL_SHORT_JOB_NS` are never held back so). Submitting takes
/// no lock and, for ``execute(_:)``, allocates one block
/// (`BOLTS_POOL_BLOCK_SIZE` bytes) from a cache that is built for "producers allocate,
/// workers free". Idle workers spin for `BOLTS_POOL_SPIN_NS` nanoseconds and then park on
/// a futex; after `BOLTS_POOL_SPIN_EAGER_NS` of it they scan the queues less often, so that a
/// spinning worker does not keep pulling the cache lines a busy one writes. Built with
/// `-Xcc -DBOLTS_POOL_SPIN_YIELD=1` (off by default: it lowers CPU per request beside event
/// loops a little and raises the hand-off tail under many producers), an idle worker also
/// gives its CPU once there to any thread waiting for it, except while threads off the
/// pools await pool tasks with `try await`, whose brief spin counts on a worker that kept
/// its CPU (`BOLTS_POOL_SPIN_YIELD_AWAITED_NS`). A submission wakes a worker only when it
/// finds a queue empty and no worker searching, and a worker that steals from a backlog wakes another. After
/// `BOLTS_POOL_FAIR_INTERVAL` jobs in a row from its own queue, a worker looks at the
/// others first and serves any whose own worker has run nothing since the last such look,
/// so no queue is left behind while a worker runs, whatever its own worker is doing.
///
/// Backpressure: while more than `BOLTS_POOL_BACKLOG_PER_WORKER` jobs per worker are
/// queued, a thread that is not one of the pool's workers gives up its time slice
/// (`sched_yield`) on each submission (the backlog is sampled once every
/// `BOLTS_POOL_BACKLOG_SAMPLE` submissions until it is first found over the bound). It is
/// never blocked and no job is refused; submitters that outnumber the cores simply cannot
/// starve the workers of CPU time (``Metrics/backpressureYields`` counts it).
///
/// The constants in capitals are the C core's, defined once in its `bolts_tuning.h` (the
/// invariants they belong to are in its `bolts_pool.h`) and adjustable at build time.
///
/// Use it directly, as a Bolts executor (``Executor/pool(_:)``: continuations are handed
/// to the pool by the C core, with no Swift closure in between), as a Swift Concurrency
/// `TaskExecutor` (`withTaskExecutorPreference(pool) { … }`), or under a
/// ``SerialPoolExecutor`` (an actor's executor).
///
/// A job may block (for example in ``Task/waitUntilCompleted()``): the pool then brings
/// another thread into service, so the other jobs keep running and a pool whose every
/// worker waits cannot deadlock. It does so too for a wait it cannot see — a synchronous
/// driver's socket read, a file read, a lock, a foreign `.wait()` — without the job's help:
/// a monitor thread per pool finds a worker that has held one job for
/// `BOLTS_POOL_BLOCKED_NS` (1 ms) while running for less than half of that time and asleep
/// now, with other jobs queued, and counts it as blocked until its job ends
/// (``Metrics/stalls``, ``Metrics/stalled``), and says so: ``observeStalls(_:)`` receives a
/// ``StallReport`` naming the thread, the system call, the job's function and how long it
/// blocked, and ``snapshot()`` describes every worker on demand. A job that computes,
/// however long, or that waits for a CPU, adds no thread. The extra threads are bounded by
/// `BOLTS_POOL_MAX_EXTRA_THREADS`, and grow past a handful only while they raise the rate
/// at which jobs complete (so a lock convoy does not grow the pool); each retires once the
/// worker it stood in for is back, and exits after `BOLTS_POOL_SPARE_IDLE_NS` (10 s)
/// unused. The monitor looks every half millisecond while a job it has not judged outlasts
/// a look or while a blocked worker has jobs queued behind it, every few milliseconds
/// otherwise (also while a job it has found blocked lasts with nothing queued),
/// and sleeps while every worker is parked.
///
/// Shutting down never drops a job: see ``shutdown(wait:)``.
public final class ThreadPool: @unchecked Sendable {
    /// The C pool (`bolts_pool_t *`). Executors hand continuation jobs to it directly.
    @usableFromInline
    internal let _pool: OpaquePointer

    /// The name given at creation; worker threads are named after it.
    public let name: String

    /// The number of workers (compensating threads started while workers block come on
    /// top of it, and retire when they are no longer needed).
    public let threadCount: Int

    /// Whether this is ``shared``, the process-wide pool that is never shut down. Reading it
    /// does not start the shared pool.
    public let isShared: Bool

    /// The observer of the pool's stall reports (``observeStalls(_:)``).
    internal let _stallObserver = _StallObserver()

    /// A process-wide pool with ``defaultThreadCount`` workers, started on first use.
    /// It is never shut down.
    public static let shared = ThreadPool(threadCount: defaultThreadCount, name: "bolts", isShared: true)

    /// Starts a pool.
    ///
    /// - Parameters:
    ///   - threadCount: The number of workers; at least 1 (default: ``defaultThreadCount``, one per
    ///     CPU the process can use, its cgroup CPU quota included).
    ///   - name: A name for the pool and its threads (their names hold its first 8 bytes).
    /// - Precondition: the threads can be started (a failure traps with the error).
    public convenience init(threadCount: Int = ThreadPool.defaultThreadCount, name: String = "bolts-pool") {
        self.init(threadCount: threadCount, name: name, isShared: false)
    }

    private init(threadCount: Int, name: String, isShared: Bool) {
        let maximum = Int(BOLTS_POOL_MAX_THREADS)
        precondition(
            threadCount >= 1 && threadCount <= maximum,
            "ThreadPool needs 1...\(maximum) threads, not \(threadCount)"
        )
        guard let pool = bolts_pool_create(UInt32(threadCount), name) else {
            fatalError("ThreadPool could not start \(threadCount) threads")
        }
        self._pool = pool
        self.name = name
        self.threadCount = threadCount
        self.isShared = isShared
    }

    deinit {
        // Jobs still queued run before the pool goes. On one of its own workers the pool
        // cannot wait for itself: it drains in the background and frees itself.
        bolts_pool_shutdown(_pool, !(bolts_pool_current() == _pool))
        bolts_pool_release(_pool)
    }

    /// Runs `job` on one of the pool's workers.
    ///
    /// Any thread may call it; it takes no lock. Jobs submitted by one thread are not
    /// ordered with each other (workers steal); use a ``SerialPoolExecutor`` for order.
    /// After ``shutdown(wait:)`` the job is not dropped: it runs on the calling thread
    /// before this returns, and ``Metrics/rejected`` counts it. Use ``tryExecute(_:)`` to
    /// be told instead.
    @inlinable
    public func execute(_ job: consuming @escaping @Sendable () -> Void) {
        ThreadPool._submit(toCPool: _pool, job)
    }

    /// Runs `job` on one of the pool's workers, or throws ``ThreadPoolError/shutDown(name:)``
    /// without running it if the pool no longer accepts work.
    public func tryExecute(_ job: consuming @escaping @Sendable () -> Void) throws(ThreadPoolError) {
        let record = Self._makeClosureJob(job)
        guard bolts_pool_try_submit(_pool, record) else {
            Self.destroyClosureJob(record)
            throw .shutDown(name: name)
        }
    }

    /// Stops the pool.
    ///
    /// From the call on, other threads' submissions are rejected (``execute(_:)`` runs
    /// them on the submitting thread, ``tryExecute(_:)`` throws), while the pool's own
    /// workers may still submit: every job already queued runs on the workers, and so
    /// does the work those jobs hand to the pool. When the queues are empty and every
    /// worker is idle, the workers exit. No job is ever dropped.
    ///
    /// - Parameter wait: Return only once every worker has exited (the default), or at
    ///   once. A pool's own worker cannot wait for the pool: called there with `wait`,
    ///   this traps. So does shutting down a pool that is Swift Concurrency's global
    ///   executor (``unsafeTryInstallAsConcurrencyGlobalExecutor()``).
    public func shutdown(wait: Bool = true) {
        precondition(!isShared, "ThreadPool.shared is never shut down")
        precondition(
            !isConcurrencyGlobalExecutor,
            "ThreadPool '\(name)' is Swift Concurrency's global executor and cannot be shut down"
        )
        let result = bolts_pool_shutdown(_pool, wait)
        precondition(result == 0, "ThreadPool.shutdown(wait: true) called on one of the pool's own workers")
    }

    /// Waits for the workers of a pool that is shutting down to exit.
    ///
    /// - Parameter timeout: Seconds to wait at most; nil (or `.infinity`, or any timeout
    ///   too large to count in nanoseconds) waits as long as it takes; 0 or a negative
    ///   timeout just checks.
    /// - Returns: Whether every worker has exited.
    /// - Precondition: `timeout` is not NaN.
    public func awaitTermination(timeout: Double? = nil) -> Bool {
        guard let timeout else { return bolts_pool_await_termination(_pool, -1) }
        precondition(!timeout.isNaN, "ThreadPool.awaitTermination(timeout:) with a NaN timeout")
        return bolts_pool_await_termination(_pool, _waitNanoseconds(max(timeout, 0)))
    }

    /// Waits at most `timeout` for the workers of a pool that is shutting down to exit: the
    /// `Double` form, to which it hands `timeout` converted to seconds (`timeout /
    /// .seconds(1)`, a `Double`: exact to the nanosecond up to about three weeks).
    ///
    /// - Parameter timeout: How long to wait at most; `.zero` or a negative duration just
    ///   checks, and one too large to count in nanoseconds waits as long as it takes.
    /// - Returns: Whether every worker has exited.
    public func awaitTermination(timeout: Duration) -> Bool {
        awaitTermination(timeout: timeout / .seconds(1))
    }

    /// Whether ``shutdown(wait:)`` has been called.
    public var isShutDown: Bool { bolts_pool_is_shut_down(_pool) }

    /// Whether the calling thread is one of this pool's workers.
    public var isCurrent: Bool { (bolts_pool_current() == _pool) }

    /// Runs `body(context)` on the calling thread, unless that thread is a worker of a pool
    /// of more than one worker whose own queue holds jobs: then `body(context)` is queued
    /// behind them, on that pool. For a completion that wakes another thread, such as the
    /// hop of a result to an event loop: a worker with work queued does that work first,
    /// so a busy pool wakes a sleeping loop once for several completions instead of once
    /// for each (each wake-up costs the loop a sleep and a worker a pre-emption when the
    /// CPUs are all busy). Whether the queue holds jobs is a hint (``ThreadPool`` reads it
    /// without a fence).
    ///
    /// A queued job that waits for `body` where the pool cannot see it (a semaphore,
    /// SwiftNIO's `EventLoopFuture.wait()`) holds it up until another worker takes it from
    /// the waiting worker's queue: an idle worker within `BOLTS_POOL_RESTRAIN_PARK_MAX_NS`
    /// (it may leave that worker's own short jobs to it until then), a busy one between two
    /// of its jobs once the waiting worker has run none for a millisecond (the pool's
    /// fairness turn). A pool of one runs `body` at once for that reason: nobody else
    /// would ever take it.
    ///
    /// `body` is meant to capture nothing (the context carries what it needs): run here,
    /// it then costs no allocation; only the queued case boxes `context`.
    ///
    /// Package access: for BoltsNIO's `eventLoopFuture(on:)`; not API (hence the underscore).
    @inlinable
    package static func _runNowOrBehindQueuedJobs<Context: Sendable>(
        _ context: Context, _ body: @escaping @Sendable (Context) -> Void
    ) {
        if let pool = bolts_pool_current_behind_queued_jobs() {
            _submit(toCPool: pool) { body(context) }
        } else {
            body(context)
        }
    }
}

/// Why a ``ThreadPool`` refused a job.
public enum ThreadPoolError: Error, Equatable, CustomStringConvertible {
    /// The pool was shut down; the job was not run.
    case shutDown(name: String)

    /// A sentence saying which pool refused the job and why.
    public var description: String {
        switch self {
        case .shutDown(let name): return "ThreadPool '\(name)' is shut down and accepts no more jobs"
        }
    }
}
