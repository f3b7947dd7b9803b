import Bolts
import BoltsNIO
import CBenchmarkSupport
import Dispatch
import NIOCore
import NIOPosix
import Synchronization

/// One way a request handler fans its jobs out and joins them; every peer of the server
/// scenario does the same work per request and answers through the same promise of the
/// connection's event loop.
enum ServerPeer: String, CaseIterable, Codable, Sendable {
    case boltsTasks = "bolts-tasks"
    case boltsExecuteAll = "bolts-execute-all"
    case boltsPool = "bolts-pool"
    case dispatchGroup = "dispatch-group"
    case nioFutures = "nio-futures"
    case nioThreadPool = "nio-thread-pool"
    case concurrencyTaskGroup = "concurrency-task-group"
    case inlineOnLoop = "inline"

    /// The name in tables and the chart.
    var title: String {
        switch self {
        case .boltsTasks: return "Bolts tasks: Task.execute(.pool) + whenAllResult + eventLoopFuture(on:)"
        case .boltsExecuteAll: return "Bolts fan-out: Task.executeAll(.pool, count:) + eventLoopFuture(on:)"
        case .boltsPool: return "Bolts pool: ThreadPool.execute + atomic join"
        case .dispatchGroup: return "Dispatch: DispatchGroup on DispatchQueue.global()"
        case .nioFutures: return "SwiftNIO: EventLoopGroup.next().submit + whenAllSucceed"
        case .nioThreadPool: return "SwiftNIO: NIOThreadPool.runIfActive + whenAllSucceed"
        case .concurrencyTaskGroup: return "Swift Concurrency: withTaskGroup in completeWithTask"
        case .inlineOnLoop: return "inline on the event loop (the floor)"
        }
    }

    /// A short label for the chart.
    var shortTitle: String {
        switch self {
        case .boltsTasks: return "Bolts tasks"
        case .boltsExecuteAll: return "Bolts executeAll"
        case .boltsPool: return "Bolts pool"
        case .dispatchGroup: return "DispatchGroup"
        case .nioFutures: return "NIO loop futures"
        case .nioThreadPool: return "NIOThreadPool"
        case .concurrencyTaskGroup: return "Concurrency group"
        case .inlineOnLoop: return "inline on loop"
        }
    }

    var subject: Subject {
        switch self {
        case .boltsTasks, .boltsExecuteAll, .boltsPool: return .bolts
        case .dispatchGroup: return .dispatch
        case .nioFutures, .nioThreadPool, .inlineOnLoop: return .nio
        case .concurrencyTaskGroup: return .concurrency
        }
    }
}

/// The CPU work of one job: `rounds` steps of a xorshift generator, which the optimizer
/// cannot fold (each step depends on the last) and which touches no memory.
@inline(never)
func serverJobWork(rounds: Int, seed: UInt64) -> UInt64 {
    var x = seed | 1
    for _ in 0..<rounds {
        x ^= x << 13
        x ^= x >> 7
        x ^= x << 17
    }
    return x
}

/// Rounds of `serverJobWork` that take about `nanoseconds` on this machine, measured
/// once at start-up (the median of several timings of a large count).
func serverJobRounds(forNanoseconds nanoseconds: Double) -> Int {
    let probe = 2_000_000
    var timings: [Double] = []
    for attempt in 0..<7 {
        let start = bench_now_ns()
        bench_sink_u64(serverJobWork(rounds: probe, seed: UInt64(attempt)))
        timings.append(Double(bench_now_ns() - start) / Double(probe))
    }
    let perRound = timings.sorted()[timings.count / 2]
    return max(1, Int((nanoseconds / perRound).rounded()))
}

/// A countdown shared by the jobs of one request (the raw pool's join).
final class FanOutJoin: Sendable {
    let remaining: Atomic<Int>
    let promise: EventLoopPromise<Void>

    init(count: Int, promise: EventLoopPromise<Void>) {
        remaining = Atomic(count)
        self.promise = promise
    }

    /// Called by each job once; the last one completes the promise (which hops to its loop).
    func jobDone() {
        // Acquiring and releasing: the last job's completion follows every job's work.
        if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            promise.succeed(())
        }
    }
}

/// The executors every handler may use, started once for the whole scenario.
final class ServerExecutors: Sendable {
    let nioThreadPool: NIOThreadPool
    let group: MultiThreadedEventLoopGroup

    init(group: MultiThreadedEventLoopGroup) {
        self.group = group
        nioThreadPool = NIOThreadPool(numberOfThreads: System.coreCount)
        nioThreadPool.start()
    }

    func shutdown() {
        try? nioThreadPool.syncShutdownGracefully()
    }

    /// Completes `promise` from the joined values of a Bolts handler.
    private static func answer(_ result: Result<[UInt64], any Error>, _ promise: EventLoopPromise<Void>) {
        switch result {
        case .success(let values):
            bench_sink_u64(values.last ?? 0)
            promise.succeed(())
        case .failure(let error):
            promise.fail(error)
        }
    }

    /// Fans `fanOut` jobs of `rounds` out the way `peer` does and completes `promise` (on
    /// `loop`, the connection's event loop, where this is called) once they have all run.
    func handle(
        _ peer: ServerPeer,
        fanOut: Int,
        rounds: Int,
        loop: any EventLoop,
        promise: EventLoopPromise<Void>
    ) {
        switch peer {
        case .boltsTasks:
            var tasks: [BoltsTask<UInt64>] = []
            tasks.reserveCapacity(fanOut)
            for index in 0..<fanOut {
                tasks.append(
                    BoltsTask.execute(.pool(.shared)) { serverJobWork(rounds: rounds, seed: UInt64(index)) }
                )
            }
            BoltsTask.whenAllResult(tasks).eventLoopFuture(on: loop).whenComplete { Self.answer($0, promise) }

        case .boltsExecuteAll:
            BoltsTask.executeAll(.pool(.shared), count: fanOut) { index in
                serverJobWork(rounds: rounds, seed: UInt64(index))
            }.eventLoopFuture(on: loop).whenComplete { Self.answer($0, promise) }

        case .boltsPool:
            let join = FanOutJoin(count: fanOut, promise: promise)
            let pool = ThreadPool.shared
            for index in 0..<fanOut {
                pool.execute {
                    bench_sink_u64(serverJobWork(rounds: rounds, seed: UInt64(index)))
                    join.jobDone()
                }
            }

        case .dispatchGroup:
            let dispatchGroup = DispatchGroup()
            let queue = DispatchQueue.global()
            for index in 0..<fanOut {
                queue.async(group: dispatchGroup) {
                    bench_sink_u64(serverJobWork(rounds: rounds, seed: UInt64(index)))
                }
            }
            dispatchGroup.notify(queue: queue) { promise.succeed(()) }

        case .nioFutures:
            var futures: [EventLoopFuture<UInt64>] = []
            futures.reserveCapacity(fanOut)
            for index in 0..<fanOut {
                futures.append(group.next().submit { serverJobWork(rounds: rounds, seed: UInt64(index)) })
            }
            EventLoopFuture.whenAllSucceed(futures, on: loop).whenComplete { result in
                if case .success(let values) = result { bench_sink_u64(values.last ?? 0) }
                promise.completeWith(result.map { _ in () })
            }

        case .nioThreadPool:
            var futures: [EventLoopFuture<UInt64>] = []
            futures.reserveCapacity(fanOut)
            for index in 0..<fanOut {
                futures.append(
                    nioThreadPool.runIfActive(eventLoop: loop) { serverJobWork(rounds: rounds, seed: UInt64(index)) }
                )
            }
            EventLoopFuture.whenAllSucceed(futures, on: loop).whenComplete { result in
                if case .success(let values) = result { bench_sink_u64(values.last ?? 0) }
                promise.completeWith(result.map { _ in () })
            }

        case .concurrencyTaskGroup:
            promise.completeWithTask {
                let total = await withTaskGroup(of: UInt64.self) { taskGroup in
                    for index in 0..<fanOut {
                        taskGroup.addTask { serverJobWork(rounds: rounds, seed: UInt64(index)) }
                    }
                    var total: UInt64 = 0
                    for await value in taskGroup { total &+= value }
                    return total
                }
                bench_sink_u64(total)
            }

        case .inlineOnLoop:
            var total: UInt64 = 0
            for index in 0..<fanOut { total &+= serverJobWork(rounds: rounds, seed: UInt64(index)) }
            bench_sink_u64(total)
            promise.succeed(())
        }
    }
}
