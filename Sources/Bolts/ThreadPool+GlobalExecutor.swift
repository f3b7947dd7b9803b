import CBoltsRuntime

extension ThreadPool {
    /// Makes this pool Swift Concurrency's global executor for the whole process.
    ///
    /// From the call on, every job that Swift Concurrency would give its default global
    /// executor runs on this pool's workers instead: unstructured `Task {}` and
    /// `Task.detached {}`, task-group children, `async let`, nonisolated async functions,
    /// and the resumption of a task after an `await`. A task that sleeps (`Task.sleep`)
    /// waits in the pool's timer thread and then runs on the pool. Actors keep their
    /// executors (default actors run on the global executor, so on this pool), the main
    /// actor keeps the main thread, and a task with an executor preference keeps it.
    ///
    /// Call it once, first thing in `main`, before anything starts a Swift task:
    ///
    /// ```swift
    /// guard ThreadPool.shared.unsafeTryInstallAsConcurrencyGlobalExecutor() else {
    ///     fatalError("called too late: a Swift task has already run")
    /// }
    /// ```
    ///
    /// It returns false and changes nothing when it cannot install:
    /// - it is too late: the calling thread runs a Swift task, or Dispatch's global
    ///   queues, where Swift's default executor runs jobs, have already started threads
    ///   (jobs may be queued there; a process that used those queues for anything else
    ///   is refused as well);
    /// - a global executor was already installed (by this method or by other code that
    ///   sets the runtime's hooks, such as SwiftNIO's event-loop take-over);
    /// - the Swift runtime has no such hooks.
    ///
    /// Caveats, as with SwiftNIO's `NIOSingletons` take-over, which uses the same
    /// runtime hooks: the hooks are not a public, stable API of the Swift runtime (they
    /// are looked up by name, and their absence is handled); installing cannot be undone;
    /// the pool must stay open for the rest of the process, so ``shutdown(wait:)`` traps
    /// on it (and it is never deinitialized). The pool does not order jobs by priority:
    /// its queues are first in, first out and idle workers steal. A job's priority stays
    /// on the job, where Swift reads it (`Task.currentPriority`, a child's inheritance).
    /// A worker that blocks inside async code (in ``Task/waitUntilCompleted()``, for
    /// example) is compensated as for any job, so the other tasks keep running; blocking
    /// in other ways (a semaphore, a lock held long) takes a worker away from every task
    /// in the process, exactly as it would from Swift's default executor.
    ///
    /// - Returns: Whether this pool is now the global executor.
    @discardableResult
    public func unsafeTryInstallAsConcurrencyGlobalExecutor() -> Bool {
        guard !isShutDown else { return false }
        guard bolts_concurrency_install(_pool) == BOLTS_CONCURRENCY_INSTALLED else { return false }
        // The pool lives for the rest of the process: the hooks hold its C pool.
        _ = Unmanaged.passRetained(self)
        return true
    }

    /// Whether this pool is Swift Concurrency's global executor (see
    /// ``unsafeTryInstallAsConcurrencyGlobalExecutor()``).
    public var isConcurrencyGlobalExecutor: Bool {
        bolts_concurrency_pool() == _pool
    }

    /// Delayed Swift Concurrency jobs (`Task.sleep`) that the global executor's timer
    /// holds until they are due (zero when no pool is installed).
    public static var concurrencyDelayedJobCount: UInt64 {
        bolts_concurrency_delayed_count()
    }
}
