// The standard library's default-executor factory (`ExecutorFactory`, `_createExecutors`)
// is behind this SPI in Swift 6.3; see `_InstalledPoolExecutorFactory`.
@_spi(ExperimentalCustomExecutors) import _Concurrency
import CBoltsRuntime
import Synchronization

extension ThreadPool {
    /// Makes this pool Swift Concurrency's global executor for the whole process.
    ///
    /// From the call on, every job that Swift Concurrency would give its default global
    /// executor runs on this pool's workers instead: unstructured `Task.detached {}` (and
    /// `Task {}` started outside an actor), task-group children, `async let`, nonisolated
    /// async functions, and the resumption of a task after an `await`. A task that sleeps
    /// (`Task.sleep`) waits in the pool's timer thread and then runs on the pool. The pool
    /// also becomes the standard library's default executor object, which
    /// `globalConcurrentExecutor` names and `Task.yield()` hands its continuation to. Actors
    /// keep their executors (default actors run on the global executor, so on this pool), the
    /// main actor keeps Dispatch's main queue, and a task with an executor preference keeps it.
    /// The article <doc:GlobalExecutor> tells the whole story.
    ///
    /// Call it once, as the first statement of `main`, before anything starts a Swift task.
    /// An async `main` (`@main` with `static func main() async`, as servers start) works as
    /// well as a synchronous one: its body runs on the main actor, whose executor the pool
    /// does not replace, so the tasks it starts after the call run on the pool.
    ///
    /// ```swift
    /// @main
    /// struct Server {
    ///     static func main() async throws {
    ///         guard ThreadPool.shared.unsafeTryInstallAsConcurrencyGlobalExecutor() else {
    ///             fatalError("the pool could not become the global executor")
    ///         }
    ///         // Start the server: its tasks run on ThreadPool.shared.
    ///     }
    /// }
    /// ```
    ///
    /// It returns false and changes nothing in these cases, and only in them:
    /// - A global executor is already installed, by this method (a second call returns
    ///   false, whichever pool it is called on) or by other code that sets the runtime's
    ///   hooks, such as SwiftNIO's
    ///   `NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()`.
    ///   Two executors cannot both receive the process's jobs.
    /// - It is too late: Swift's default executor may already hold jobs, because Dispatch,
    ///   where it runs them, has started threads for its queues (or is about to: a task
    ///   started an instant before the call counts). The runtime's hooks only route jobs
    ///   enqueued after them and cannot move those, which would keep running on Dispatch
    ///   beside the pool. A call after any Swift task has started gives this, and so does
    ///   a call after an async `main` has suspended once (Dispatch then serves the main
    ///   queue from a thread of its own) or after anything used Dispatch's queues. Being
    ///   called from inside a Swift task, such as an async `main`'s own, is not a reason.
    /// - The pool is shut down: it could not run the jobs.
    /// - The Swift runtime has no such hooks (they are looked up by name).
    ///
    /// No job is ever lost: a job already given to Swift's default executor runs there,
    /// whether or not the pool is installed after it.
    ///
    /// Caveats, as with SwiftNIO's take-over, which uses the same runtime hooks: the hooks,
    /// and the standard library's experimental executor factory that names the default
    /// executor object, are not a public, stable API of Swift; installing cannot be undone;
    /// the pool must stay open for the rest of the process, so ``shutdown(wait:)`` traps
    /// on it (and it is never deinitialized). The pool does not order jobs by priority:
    /// its queues are first in, first out and idle workers steal. A job's priority stays
    /// on the job, where Swift reads it (`Task.currentPriority`, a child's inheritance).
    /// A worker that blocks inside async code (in ``Task/waitUntilCompleted()``, for
    /// example) is compensated as for any job, so the other tasks keep running; blocking
    /// in other ways (a semaphore, a lock held long) takes a worker away from every task
    /// in the process, exactly as it would from Swift's default executor.
    ///
    /// - Returns: Whether this pool is now the global executor. Not discardable: a caller
    ///   that goes on as if it were installed when it is not would run its tasks on
    ///   Dispatch without knowing.
    public func unsafeTryInstallAsConcurrencyGlobalExecutor() -> Bool {
        guard !isShutDown else { return false }
        guard bolts_concurrency_install(_pool) == BOLTS_CONCURRENCY_INSTALLED else { return false }
        // The pool lives for the rest of the process: the hooks hold its C pool.
        _ = Unmanaged.passRetained(self)
        _InstalledPoolExecutorFactory.makeDefault(self)
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

/// Makes the installed pool the standard library's default executor object too.
///
/// Since Swift 6.2 the standard library hands some jobs straight to that object
/// (`Task.defaultExecutor`, Dispatch's global queues unless replaced) instead of to the
/// global executor's hooks: the continuation of `Task.yield()`; a sleeping task's, when
/// the object can schedule jobs for later as Dispatch's can (the pool cannot, so sleeps
/// fall back to the delay hooks and wait in the pool's timer); and every job of a task
/// that prefers `globalConcurrentExecutor`, which is that object. The hooks alone would
/// leave those on Dispatch, beside the pool. The main executor stays the one Swift made.
///
/// Only ``ThreadPool/unsafeTryInstallAsConcurrencyGlobalExecutor()`` calls it, once its
/// checks found that no Swift job has reached the default executor: no task but the
/// caller's runs yet to read the object that this replaces, which `_createExecutors` writes
/// without synchronization.
private enum _InstalledPoolExecutorFactory: ExecutorFactory {
    /// The pool that `makeDefault` names; set once, before `_createExecutors` reads it.
    private static let pool = Mutex<ThreadPool?>(nil)

    static func makeDefault(_ pool: ThreadPool) {
        Self.pool.withLock { $0 = pool }
        _createExecutors(factory: Self.self)
    }

    /// The main executor Swift already has (created on first use): unchanged.
    static var mainExecutor: any MainExecutor { MainActor.executor }

    static var defaultExecutor: any TaskExecutor {
        guard let pool = pool.withLock({ $0 }) else {
            preconditionFailure("the installed pool is named before the default executor is made")
        }
        return pool
    }
}
