import Bolts
import Logging
import ServiceLifecycle

/// A ``/Bolts/ThreadPool`` as a swift-service-lifecycle `Service`: the pool serves until the
/// service group shuts down gracefully, then stops taking jobs, runs every job it holds,
/// and ends.
///
/// ```swift
/// let pool = ThreadPool(threadCount: 4, name: "work")
/// let group = ServiceGroup(
///     services: [try ThreadPoolService(pool: pool), server],   // `server` submits to `pool`
///     gracefulShutdownSignals: [.sigterm],
///     logger: logger
/// )
/// try await group.run()
/// ```
///
/// A service group starts its services in order and shuts them down in reverse order, so
/// list the pool **before** the services that hand it work: they stop first, and the pool
/// then drains what they left.
///
/// What ``run()`` does, by what ends it:
///
/// | event | the pool | `run()` |
/// | --- | --- | --- |
/// | graceful shutdown | ``/Bolts/ThreadPool/shutdown(wait:)``: other threads' jobs are refused (``/Bolts/ThreadPool/execute(_:)`` runs them on the submitting thread, ``/Bolts/ThreadPool/tryExecute(_:)`` throws); every queued job runs, and so does the work those jobs hand to the pool | returns once every worker has exited |
/// | cancellation before that | shut down the same way, and drains in the background | throws `CancellationError` at once |
/// | cancellation while draining | goes on draining in the background | throws `CancellationError` at once |
///
/// No job is dropped in any case. Jobs of a ``/Bolts/SerialPoolExecutor`` on the pool
/// (an actor's, for one) are pool jobs and drain with it, in order; a serial executor has
/// no lifecycle of its own, so it needs no service.
///
/// With a ``ThreadPoolMetricsReporter``, the service samples the pool's metrics every
/// ``ThreadPoolMetricsReporter/interval`` while it runs, and once more when it ends, so the
/// last sample counts the drained jobs.
///
/// The drain is awaited without blocking a thread of Swift Concurrency: the service
/// checks whether the workers have exited with a pause that doubles from 1 ms to 20 ms,
/// so `run()` returns at most 20 ms after the pool has drained.
public struct ThreadPoolService: Service, CustomStringConvertible {
    /// The pool this service runs and shuts down.
    public let pool: ThreadPool

    /// The reporter sampled while the service runs, if any.
    public let metrics: ThreadPoolMetricsReporter?

    private let logger: Logger?

    /// Makes a service for `pool`.
    ///
    /// - Parameters:
    ///   - pool: A pool of your own. The service shuts it down when it ends.
    ///   - metrics: A reporter for `pool` to run while the service runs (see
    ///     ``ThreadPoolMetricsReporter``); none by default.
    ///   - logger: Where the service writes, at `debug` level, when the pool stops taking
    ///     jobs and when it has drained; none by default.
    /// - Throws: ``ThreadPoolServiceError/sharedPool`` for ``/Bolts/ThreadPool/shared``, which
    ///   is never shut down and so cannot end with a service group.
    /// - Precondition: `metrics`, if given, reports on `pool`.
    public init(
        pool: ThreadPool,
        metrics: ThreadPoolMetricsReporter? = nil,
        logger: Logger? = nil
    ) throws(ThreadPoolServiceError) {
        guard !pool.isShared else { throw .sharedPool }
        if let metrics {
            precondition(
                metrics.pool === pool,
                "ThreadPoolService: the metrics reporter reports on pool '\(metrics.pool.name)', not on '\(pool.name)'"
            )
        }
        self.pool = pool
        self.metrics = metrics
        self.logger = logger
    }

    /// Runs until the service group's graceful shutdown (or the task's cancellation), then
    /// shuts the pool down and waits for it to drain; see the table on
    /// ``ThreadPoolService``.
    ///
    /// - Throws: `CancellationError` if cancelled (the pool still drains, in the
    ///   background); ``ThreadPoolServiceError/alreadyShutDown(name:)`` at once if the pool
    ///   was shut down before the service started.
    public func run() async throws {
        guard !pool.isShutDown else { throw ThreadPoolServiceError.alreadyShutDown(name: pool.name) }
        try await withThrowingDiscardingTaskGroup { group in
            if let metrics {
                group.addTask { await metrics.run() }
            }
            // Ends the sampler, which then reports its last sample, whichever way this
            // scope is left (the group waits for it).
            defer { group.cancelAll() }

            var cancelled = false
            do {
                try await gracefulShutdown()
            } catch {
                cancelled = true  // gracefulShutdown() throws only CancellationError
            }
            pool.shutdown(wait: false)
            logger?.debug(
                "Thread pool stopped taking jobs; draining",
                metadata: ["pool": "\(pool.name)", "pool.queue_depth": "\(pool.metrics.queueDepth)"]
            )
            if cancelled { throw CancellationError() }
            try await awaitTermination()
            logger?.debug("Thread pool drained", metadata: ["pool": "\(pool.name)"])
        }
    }

    /// Returns once every worker of the (shut down) pool has exited, without blocking.
    private func awaitTermination() async throws {
        var pause = Duration.milliseconds(1)
        while !pool.awaitTermination(timeout: 0) {
            try await _Concurrency.Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(20))
        }
    }

    /// `ThreadPoolService(<pool name>)`, as the service group's log names it.
    public var description: String { "ThreadPoolService(\(pool.name))" }
}

/// Why a ``ThreadPoolService`` cannot run a pool.
public enum ThreadPoolServiceError: Error, Equatable, CustomStringConvertible {
    /// The pool is ``/Bolts/ThreadPool/shared``, which is never shut down.
    case sharedPool
    /// The pool had been shut down before the service started.
    case alreadyShutDown(name: String)

    /// A sentence saying what is wrong and what to do instead.
    public var description: String {
        switch self {
        case .sharedPool:
            return "ThreadPool.shared cannot run as a service: it is never shut down, so a service group "
                + "could not drain it. Make a pool of your own, ThreadPool(threadCount:name:), for the service."
        case .alreadyShutDown(let name):
            return "ThreadPool '\(name)' was shut down before its service started; a pool runs as a service once."
        }
    }
}
