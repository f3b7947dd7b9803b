import Bolts
import BoltsNIO
import CBenchmarkSupport
import Dispatch
import NIOCore
import NIOPosix
import Synchronization

/// One way a request handler fans its jobs out and joins them; every peer does the same work per
/// request and answers through the same promise of the connection's event loop.
enum ServerPeer: String, CaseIterable, Codable, Sendable {
    case boltsTasks = "bolts-tasks"
    case boltsExecuteAll = "bolts-execute-all"
    case boltsPool = "bolts-pool"
    case dispatchGroup = "dispatch-group"
    case nioFutures = "nio-futures"
    case nioThreadPool = "nio-thread-pool"
    case concurrencyTaskGroup = "concurrency-task-group"
    case inlineOnLoop = "inline"

    /// Its name in tables and the chart, a short label, and the style of its line in the chart.
    private var names: (title: String, shortTitle: String, style: (color: String, width: Double, dashed: Bool)) {
        switch self {
        case .boltsTasks:
            ("Bolts tasks: Task.execute(.pool) + whenAllResult + eventLoopFuture(on:)", "Bolts tasks",
             ("#d62728", 3.5, false))
        case .boltsExecuteAll:
            ("Bolts fan-out: Task.executeAll(.pool, count:) + eventLoopFuture(on:)", "Bolts executeAll",
             ("#8c564b", 3, false))
        case .boltsPool: ("Bolts pool: ThreadPool.execute + atomic join", "Bolts pool", ("#f28e2b", 2.5, false))
        case .dispatchGroup:
            ("Dispatch: DispatchGroup on DispatchQueue.global()", "DispatchGroup", ("#1f77b4", 3, false))
        case .nioFutures:
            ("SwiftNIO: EventLoopGroup.next().submit + whenAllSucceed", "NIO loop futures", ("#2ca02c", 2, false))
        case .nioThreadPool:
            ("SwiftNIO: NIOThreadPool.runIfActive + whenAllSucceed", "NIOThreadPool", ("#98df8a", 2, true))
        case .concurrencyTaskGroup:
            ("Swift Concurrency: withTaskGroup in completeWithTask", "Concurrency group", ("#9467bd", 2, false))
        case .inlineOnLoop: ("inline on the event loop (the floor)", "inline on loop", ("#7f7f7f", 1.5, true))
        }
    }

    var title: String { names.title }
    var shortTitle: String { names.shortTitle }
    /// Its line in the latency chart (`ServerReport.chart`).
    var chartStyle: (color: String, width: Double, dashed: Bool) { names.style }
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

    func shutdown() { try? nioThreadPool.syncShutdownGracefully() }

    /// Completes `promise` from the joined values of a handler (Bolts' or SwiftNIO's futures).
    private static func answer(_ result: Result<[UInt64], any Error>, _ promise: EventLoopPromise<Void>) {
        if case .success(let values) = result { bench_sink_u64(values.last ?? 0) }
        promise.completeWith(result.map { _ in () })
    }

    /// Fans `fanOut` jobs of `rounds` out the way `peer` does and completes `promise` (on
    /// `loop`, the connection's event loop, where this is called) once they have all run.
    func handle(_ peer: ServerPeer, fanOut: Int, rounds: Int, loop: any EventLoop, promise: EventLoopPromise<Void>) {
        switch peer {
        case .boltsTasks:
            let tasks = (0..<fanOut).map { index in
                BoltsTask.execute(.pool(.shared)) { serverJobWork(rounds: rounds, seed: UInt64(index)) }
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
            let futures = (0..<fanOut).map { index in
                group.next().submit { serverJobWork(rounds: rounds, seed: UInt64(index)) }
            }
            EventLoopFuture.whenAllSucceed(futures, on: loop).whenComplete { Self.answer($0, promise) }

        case .nioThreadPool:
            let futures = (0..<fanOut).map { index in
                nioThreadPool.runIfActive(eventLoop: loop) { serverJobWork(rounds: rounds, seed: UInt64(index)) }
            }
            EventLoopFuture.whenAllSucceed(futures, on: loop).whenComplete { Self.answer($0, promise) }

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
