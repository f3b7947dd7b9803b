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
    var title: String {
        switch self {
        case .boltsPool: return "Bolts Executor.pool(ThreadPool).execute"
        case .boltsImmediate: return "Bolts Executor.immediate.execute (runs inline)"
        case .dispatchGlobal: return "DispatchQueue.global().async"
        case .dispatchSerial: return "serial DispatchQueue.async"
        case .operationQueue: return "OperationQueue.addOperation"
        case .nioEventLoopGroup: return "NIO MultiThreadedEventLoopGroup next().execute"
        case .concurrencyTask: return "Swift Concurrency Task { } (global executor)"
        }
    }

    /// A short label for the chart.
    var shortTitle: String {
        switch self {
        case .boltsPool: return "Bolts pool"
        case .boltsImmediate: return "Bolts .immediate"
        case .dispatchGlobal: return "Dispatch global"
        case .dispatchSerial: return "Dispatch serial"
        case .operationQueue: return "OperationQueue"
        case .nioEventLoopGroup: return "NIO event loops"
        case .concurrencyTask: return "Swift Task {}"
        }
    }

    var subject: Subject {
        switch self {
        case .boltsPool, .boltsImmediate: return .bolts
        case .dispatchGlobal, .dispatchSerial: return .dispatch
        case .operationQueue: return .foundation
        case .nioEventLoopGroup: return .nio
        case .concurrencyTask: return .concurrency
        }
    }

    /// Expected allocations per job by the executor itself. The job closure adds the same for
    /// every executor: nothing when it captures only the shared counter (saturated jobs that
    /// are not sampled), one context when it also carries a timestamp (sampled and paced jobs).
    var expectedAllocations: String {
        switch self {
        case .boltsPool: return "~1-2: the pool's job record (+ a box for the closure)"
        case .boltsImmediate: return "0: the job runs inline"
        case .dispatchGlobal, .dispatchSerial: return "~1-2: Dispatch continuation (+ block copy)"
        case .operationQueue: return "~10+: BlockOperation, its block array, queue bookkeeping"
        case .nioEventLoopGroup: return "~0-1: NIO's task queue node"
        case .concurrencyTask: return "~2-4: task, its closure context"
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
                submit: { queue.addOperation($0) },
                stop: { queue.waitUntilAllOperationsAreFinished() }
            )
        case .nioEventLoopGroup:
            let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
            return RunningExecutor(
                submit: { group.next().execute($0) },
                stop: { try? group.syncShutdownGracefully() }
            )
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
