import Bolts
import Dispatch
import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// Swift Concurrency workloads, each timed in a detached Swift task of a child process
/// (`ConcurrencyOnPool`) on Swift's default global executor or with `ThreadPool.shared`
/// installed (process-wide, before the first task: so a fresh process per configuration).
enum ConcurrencyWorkloads {
    struct Workload: Sendable {
        /// Its identifier in verdict keys (`VerdictKey.comparison` and `.arm`).
        var id: String
        /// Stable name, which pairs the two processes' results.
        var name: String
        /// Operations per sample in the full mode (fewer at other scales: `divisor(forScale:)`).
        var iterations = 100_000
        /// What one operation is.
        var unit: String
        /// Whether its shape is its size (all spawned at once): every mode runs `iterations`.
        var isFixedSize = false
        var body: @Sendable (Int) async throws -> Void
    }

    /// The identifier of the workload called `name` (which must exist).
    static func id(of name: String) -> String {
        if let workload = all.first(where: { $0.name == name }) { return workload.id }
        preconditionFailure("no Swift Concurrency workload is called \(name)")
    }

    static let all: [Workload] = [
        Workload(id: "task-batches", name: "Task {} (batches of 256)", unit: "task") { n in
            await Batch.run(n) { batch in _Concurrency.Task { batch.done() } }
        },
        Workload(id: "task-spawn-at-once", name: "Task {} (100,000 spawned at once)", unit: "task", isFixedSize: true) { n in
            let counter = Counter()
            for _ in 0..<n { _Concurrency.Task { counter.add() } }
            while counter.value < n { await _Concurrency.Task.yield() }
        },
        Workload(id: "group-child", name: "task-group child (1,000 per group)", unit: "child") { n in
            blackHole(await groupsOfAThousandChildren(n))
        },
        Workload(id: "async-let", name: "async let, two children awaited", iterations: 50_000, unit: "pair") { n in
            var sum = 0
            for i in 0..<n {
                async let a = i
                async let b = i &+ 1
                sum &+= await a &+ b
            }
            blackHole(sum)
        },
        Workload(id: "round-trip", name: "Task { } + await value (round trip)", unit: "round trip") { n in
            var sum = 0
            for i in 0..<n { sum &+= await _Concurrency.Task { i }.value }
            blackHole(sum)
        },
        // The floor under Bolts' `value`: a value that a `Task {}` hands its awaiter through a
        // continuation, with no Bolts task; then the same inside a cancellation handler, which
        // `value` needs to return at once when the awaiting task is cancelled.
        Workload(id: "continuation-resume", name: "a Task {} resumes a continuation (no Bolts task)", unit: "round trip") { n in
            var sum = 0
            for i in 0..<n { sum &+= await handedOverByATask(i) }
            blackHole(sum)
        },
        Workload(id: "continuation-resume-cancellation-handler", name: "the same inside withTaskCancellationHandler", unit: "round trip") { n in
            var sum = 0
            for i in 0..<n { sum &+= await withTaskCancellationHandler { await handedOverByATask(i) } onCancel: {} }
            blackHole(sum)
        },
        Workload(id: "actor-ping-pong", name: "actor ping-pong (a call to another actor and back)", unit: "call") { n in
            let ping = Ping(pong: Pong())
            blackHole(await ping.run(n))
        },
        Workload(id: "serial-pool-actor", name: "actor on a SerialPoolExecutor, called from a task", unit: "call") { n in
            let actor = PoolActor(executor: SerialPoolExecutor(pool: .shared))
            var sum = 0
            for _ in 0..<n { sum &+= await actor.next() }
            blackHole(sum)
        },
        Workload(id: "preferred-task-batches", name: "Task(executorPreference: pool) {} (batches of 256)", unit: "task") { n in
            await preferredPoolBatches(n)
        },
        Workload(id: "preferred-task-batches-from-pool", name: "Task(executorPreference: pool) {} from a task on the pool (batches of 256)", unit: "task") { n in
            await withTaskExecutorPreference(ThreadPool.shared) { await preferredPoolBatches(n) }
        },
        Workload(id: "preferred-group-child", name: "task-group child under withTaskExecutorPreference(pool)", unit: "child") { n in
            blackHole(await withTaskExecutorPreference(ThreadPool.shared) { await groupsOfAThousandChildren(n) })
        },
        Workload(id: "preferred-round-trip-from-pool", name: "round trip through a preferred pool, caller on the pool too", unit: "round trip") { n in
            let pool = ThreadPool.shared
            blackHole(await withTaskExecutorPreference(pool) { await preferredRoundTrips(n, pool) })
        },
        Workload(id: "preferred-round-trip-from-global", name: "round trip through a preferred pool, caller on the global executor", iterations: 10_000, unit: "round trip") { n in
            blackHole(await preferredRoundTrips(n, ThreadPool.shared))
        },
        // The same hop from a default-executor task into other executors and back: into
        // SwiftNIO's event loop as a task executor, and into an executor whose thread never
        // sleeps (never woken, at the price of a CPU). Neither makes the caller wait for the
        // hop, so the caller's resumption wakes a Dispatch thread whenever it suspended first.
        Workload(id: "preferred-event-loop-round-trip", name: "round trip through a preferred SwiftNIO event loop, caller on the global executor", iterations: 10_000, unit: "round trip") { n in
            blackHole(await preferredRoundTrips(n, EventLoopTaskExecutor.shared))
        },
        Workload(id: "preferred-spinning-executor-round-trip", name: "round trip through a preferred executor that never sleeps, caller on the global executor", iterations: 10_000, unit: "round trip") { n in
            let executor = NeverSleepingExecutor()
            blackHole(await preferredRoundTrips(n, executor))
            executor.stop()
        },
        Workload(id: "bolts-execute-await", name: "Bolts Task.execute(.pool) + try await value", unit: "round trip") { n in
            var sum = 0
            for i in 0..<n { sum &+= try await Task<Int>.execute(.pool(.shared)) { i }.value }
            blackHole(sum)
        },
        Workload(id: "bolts-from-async-await", name: "Bolts Task.fromAsync {} + try await value", unit: "round trip") { n in
            var sum = 0
            for i in 0..<n { sum &+= try await Task<Int>.fromAsync { i }.value }
            blackHole(sum)
        },
    ]

    /// How many times fewer operations than the full mode a sample takes at `scale`: "full",
    /// "budget" (the default run, within its time budget) or "quick".
    static func divisor(forScale scale: String) -> Int { ["full": 1, "quick": 10][scale] ?? 4 }

    /// One configuration's results: nanoseconds per operation, every sample.
    struct Measured: Codable {
        var installed: Bool
        var samples: [String: [Double]]
    }

    /// The child's main: installs the pool if asked (first thing), runs every workload (that
    /// `filter`, given by hand to profile one, names) `repetitions` times after a warm-up run,
    /// and prints the results as one JSON line.
    static func runChild(installed: Bool, scale: String, repetitions: Int, filter: String? = nil) throws -> Never {
        if installed, !ThreadPool.shared.unsafeTryInstallAsConcurrencyGlobalExecutor() {
            writeError("the child could not install the pool as the global executor\n")
            exit(2)
        }
        var samples: [String: [Double]] = [:]
        for workload in all where filter.map({ workload.name.lowercased().contains($0.lowercased()) }) ?? true {
            let n = workload.isFixedSize ? workload.iterations : max(100, workload.iterations / divisor(forScale: scale))
            _ = try time(workload, n)  // warm-up
            samples[workload.name] = try (0..<repetitions).map { _ in try time(workload, n) / Double(n) }
        }
        let data = try JSONEncoder().encode(Measured(installed: installed, samples: samples))
        print(String(decoding: data, as: UTF8.self))
        exit(0)
    }

    /// Nanoseconds that `workload` took for `n` operations, timed in a detached Swift task
    /// (`runAsync`).
    private static func time(_ workload: Workload, _ n: Int) throws -> Double {
        let sample = try runAsync {
            let start = DispatchTime.now().uptimeNanoseconds
            try await workload.body(n)
            return Sample(iterations: n, nanoseconds: DispatchTime.now().uptimeNanoseconds - start, allocations: 0)
        }
        return Double(sample.nanoseconds)
    }
}

/// A batch of `size` tasks of the batched spawn workloads: the spawner suspends until its last
/// task has called `done()`, a steady state rather than a heap of task objects whose page faults
/// dominate.
///
/// `@unchecked Sendable`: `continuation` is written once, before any task of the batch is
/// spawned (spawning publishes it to them), and read only by the task whose decrement
/// took `remaining` to zero.
private final class Batch: @unchecked Sendable {
    static let size = 256
    private let remaining = Atomic<Int>(Batch.size)
    private var continuation: UnsafeContinuation<Void, Never>?

    /// `n` tasks (at least one batch) that `spawn` starts, in batches, from the calling task.
    static func run(_ n: Int, _ spawn: (Batch) -> Void) async {
        for _ in 0..<max(1, n / size) {
            let batch = Batch()
            await withUnsafeContinuation { continuation in
                batch.continuation = continuation
                for _ in 0..<size { spawn(batch) }
            }
        }
    }

    func done() {
        if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            continuation.unsafelyUnwrapped.resume()
        }
    }
}

private final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

private actor Pong {
    private var hits = 0
    func hit() -> Int {
        hits &+= 1
        return hits
    }
}

private actor Ping {
    let pong: Pong
    init(pong: Pong) { self.pong = pong }
    func run(_ n: Int) async -> Int {
        var last = 0
        for _ in 0..<n { last = await pong.hit() }
        return last
    }
}

private actor PoolActor {
    private let executor: SerialPoolExecutor
    private var count = 0
    init(executor: SerialPoolExecutor) { self.executor = executor }
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    func next() -> Int {
        count &+= 1
        return count
    }
}

/// SwiftNIO's event loop as a task executor, adapted the way an application would (SwiftNIO
/// ships no such conformance): each job runs on the loop's thread, which sleeps in
/// `epoll_wait` when idle and is woken through its eventfd.
private final class EventLoopTaskExecutor: TaskExecutor {
    /// One loop for the child's life.
    static let shared = EventLoopTaskExecutor()
    private let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1).next()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        loop.execute { job.runSynchronously(on: executor) }
    }
}

/// A task executor whose one thread polls its queue without ever sleeping (a CPU burnt until
/// `stop()`): a round trip through it costs the hop and the caller's resumption, no wake-up.
private final class NeverSleepingExecutor: TaskExecutor {
    private let queue = Mutex<[UnownedJob]>([])
    /// Jobs in `queue`; read by the polling thread without the lock.
    private let queued = Atomic<Int>(0)
    private let isStopped = Atomic<Bool>(false)
    private let exited = DispatchSemaphore(value: 0)

    init() {
        let thread = Thread { [self] in
            var jobs: [UnownedJob] = []
            while !isStopped.load(ordering: .relaxed) {
                // Acquiring: pairs with the enqueuer's releasing add, so that its job is in
                // `queue` when the count says so.
                guard queued.load(ordering: .acquiring) > 0 else { continue }
                queue.withLock { swap(&$0, &jobs) }
                queued.subtract(jobs.count, ordering: .relaxed)
                for job in jobs { job.runSynchronously(on: asUnownedTaskExecutor()) }
                jobs.removeAll(keepingCapacity: true)
            }
            exited.signal()
        }
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.withLock { $0.append(job) }
        queued.add(1, ordering: .releasing)
    }

    /// Ends the polling thread; call it once no job is queued or running.
    func stop() {
        isStopped.store(true, ordering: .relaxed)
        exited.wait()
    }
}

/// `value`, handed back by a new `Task {}` through a continuation the caller suspends on.
private func handedOverByATask(_ value: Int) async -> Int {
    await withUnsafeContinuation { continuation in
        _Concurrency.Task { continuation.resume(returning: value) }
    }
}

/// `n` unstructured tasks (at least one batch) that prefer `ThreadPool.shared`, in batches (`Batch`).
private func preferredPoolBatches(_ n: Int) async {
    let pool = ThreadPool.shared
    await Batch.run(n) { batch in _Concurrency.Task(executorPreference: pool) { batch.done() } }
}

/// `n` round trips from the calling task through `executor`: each a task that prefers it,
/// whose value the caller awaits; the sum of their values.
private func preferredRoundTrips(_ n: Int, _ executor: some TaskExecutor) async -> Int {
    var sum = 0
    for i in 0..<n { sum &+= await _Concurrency.Task(executorPreference: executor) { i }.value }
    return sum
}

/// `n` task-group children (at least 1,000), in groups of 1,000; the sum of their values.
private func groupsOfAThousandChildren(_ n: Int) async -> Int {
    var sum = 0
    for _ in 0..<max(1, n / 1000) {
        sum &+= await withTaskGroup(of: Int.self) { group in
            for i in 0..<1000 { group.addTask { i } }
            var total = 0
            for await value in group { total &+= value }
            return total
        }
    }
    return sum
}

@inline(never) private func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }
