import Bolts
import Dispatch
import Foundation
import NIOCore
import NIOPosix

/// The executors compared under contention. Each is used the way its own users submit work.
enum ExecutorKind: String, CaseIterable, Sendable {
    case boltsPool
    case boltsImmediate
    case dispatchGlobal
    case dispatchSerial
    case operationQueue
    case nioEventLoopGroup
    case concurrencyTask

    /// How a job is submitted, for names, tables and the chart legend.
    var title: String { traits.title }
    /// A short label for the chart.
    var shortTitle: String { traits.shortTitle }
    var subject: Subject { traits.subject }
    /// Expected allocations per job by the executor itself. The job closure adds the same for
    /// every executor: nothing when it captures only the shared counter (saturated jobs that
    /// are not sampled), one context when it also carries a timestamp (sampled and paced jobs).
    var expectedAllocations: String { traits.allocations }

    private var traits: (title: String, shortTitle: String, subject: Subject, allocations: String) {
        switch self {
        case .boltsPool:
            (
                "Bolts Executor.pool(ThreadPool).execute", "Bolts pool", .bolts,
                "~1-2: the pool's job record (+ a box for the closure)"
            )
        case .boltsImmediate:
            ("Bolts Executor.immediate.execute (runs inline)", "Bolts .immediate", .bolts, "0: the job runs inline")
        case .dispatchGlobal:
            ("DispatchQueue.global().async", "Dispatch global", .dispatch, "~1-2: Dispatch continuation (+ block copy)")
        case .dispatchSerial:
            ("serial DispatchQueue.async", "Dispatch serial", .dispatch, "~1-2: Dispatch continuation (+ block copy)")
        case .operationQueue:
            (
                "OperationQueue.addOperation", "OperationQueue", .foundation,
                "~10+: BlockOperation, its block array, queue bookkeeping"
            )
        case .nioEventLoopGroup:
            ("NIO MultiThreadedEventLoopGroup next().execute", "NIO event loops", .nio, "~0-1: NIO's task queue node")
        case .concurrencyTask:
            (
                "Swift Concurrency Task { } (global executor)", "Swift Task {}", .concurrency,
                "~2-4: task, its closure context"
            )
        }
    }

    /// Starts the executor's threads (outside any measurement).
    func start() -> RunningExecutor {
        switch self {
        case .boltsPool:
            let pool = ThreadPool(threadCount: System.coreCount)
            let executor = Executor.pool(pool)
            return RunningExecutor(submit: { executor.execute($0) }, stop: { pool.shutdown() })
        case .boltsImmediate:
            let executor = Executor.immediate
            return RunningExecutor(submit: { executor.execute($0) }, stop: {})
        case .dispatchGlobal:
            let queue = DispatchQueue.global()
            return RunningExecutor(submit: { queue.async(execute: $0) }, stop: {})
        case .dispatchSerial:
            let queue = DispatchQueue(label: "benchmarks.serial")
            return RunningExecutor(submit: { queue.async(execute: $0) }, stop: {})
        case .operationQueue:
            let queue = OperationQueue()
            return RunningExecutor(
                submit: { queue.addOperation($0) }, stop: { queue.waitUntilAllOperationsAreFinished() })
        case .nioEventLoopGroup:
            let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
            return RunningExecutor(submit: { group.next().execute($0) }, stop: { try? group.syncShutdownGracefully() })
        case .concurrencyTask:
            return RunningExecutor(submit: { job in _Concurrency.Task { job() } }, stop: {})
        }
    }
}

/// A started executor: how to submit a job to it, and how to stop it.
struct RunningExecutor: Sendable {
    let submit: @Sendable (@escaping @Sendable () -> Void) -> Void
    let stop: @Sendable () -> Void
}
