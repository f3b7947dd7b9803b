import Bolts
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The bodies of the framework servers' routes, which each server binds to the same paths:
///
/// - `/plain`: `plainText`.
/// - `/json`: a `Greeting`, encoded as JSON by the framework.
/// - `/fanout`: `fanOut()`, a task group of 16 child tasks, each one CPU job (`Job`).
/// - `/inline`: `inline()`, the same 16 jobs run in the handler, one after another: `/fanout`
///   without the executor's part.
/// - `/executeall`: `executeAll()`, `Task.executeAll(.pool(.shared), count: 16)` of the same
///   jobs, awaited.
/// - `/bolts`: `boltsTask()`, one Bolts task on `ThreadPool.shared` running one job, awaited.
/// - `/block`: `block()`, which blocks its thread for 20 ms with `usleep`, as a synchronous
///   driver would, with no cooperation with any executor.
/// - `/thread`: `threadDescription()`, where the handler runs (for checking each executor
///   choice, not measured).
/// - `/pool`: `poolCounters()`, `ThreadPool.shared`'s counters, so that a profile can divide
///   the jobs and parks of a load by its requests (not measured).
/// - `/stalls`: `stallReports()`, what the pool's stall reports have said so far
///   (`StallTally`), for the blocking-handler run's report (not measured).
///
/// A body that depends on the jobs' results keeps the optimizer from dropping the jobs.
public enum Handlers {
    /// The jobs per request of `/fanout`, `/inline` and `/executeall`.
    public static let fanOutWidth = 16

    /// The body of `/plain`.
    public static let plainText = "Hello, World!"

    /// `/fanout`: the jobs as a task group's children, their results folded.
    public static func fanOut() async -> String {
        let folded = await withTaskGroup(of: UInt64.self) { group in
            for index in 0..<fanOutWidth {
                group.addTask { Job.work(seed: UInt64(index)) }
            }
            return await group.reduce(0, &+)
        }
        return "\(folded & 0xff)"
    }

    /// `/inline`: the jobs one after another on the handler's own thread.
    public static func inline() -> String {
        var folded: UInt64 = 0
        for index in 0..<fanOutWidth { folded &+= Job.work(seed: UInt64(index)) }
        return "\(folded & 0xff)"
    }

    /// `/executeall`: the jobs as one Bolts `executeAll` on the shared pool, awaited.
    public static func executeAll() async throws -> String {
        let values = try await BoltsTask<UInt64>.executeAll(.pool(.shared), count: fanOutWidth) { index in
            Job.work(seed: UInt64(index))
        }.value
        return "\(values.reduce(0, &+) & 0xff)"
    }

    /// `/bolts`: one job as a Bolts task on the shared pool, awaited.
    public static func boltsTask() async throws -> String {
        let value = try await BoltsTask<UInt64>.execute(.pool(.shared)) { Job.work(seed: 7) }.value
        return "\(value & 0xff)"
    }

    /// Sleeps in the kernel for 20 ms, as in a synchronous database driver's call; the executor
    /// does not know and cannot run anything else on the thread meanwhile.
    public static func block() -> String {
        usleep(20_000)
        return "blocked"
    }

    /// "<thread name> onPool=<whether the thread is a worker of ThreadPool.shared>".
    public static func threadDescription() -> String {
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
        return "\(name.trimmingCharacters(in: .newlines)) onPool=\(ThreadPool.shared.isCurrent)"
    }

    /// "executed=<jobs run> parks=<times a worker parked> threads=<workers>" of
    /// `ThreadPool.shared` (which asking creates, when nothing has yet).
    public static func poolCounters() -> String {
        let metrics = ThreadPool.shared.metrics
        return "executed=\(metrics.executed) parks=\(metrics.parks) threads=\(metrics.threads)"
    }

    /// `StallTally.shared.body`: the stall reports of `ThreadPool.shared` so far, or
    /// `observing=false` for a choice whose handlers do not run on the pool.
    public static func stallReports() -> String { StallTally.shared.body }
}

/// The body of `/json`; each server makes it its framework's response type.
public struct Greeting: Codable, Sendable {
    /// A short text.
    public var message = "Hello, World!"
    /// A number.
    public var id = 42
    /// A few short strings.
    public var tags = ["bolts", "server"]

    /// The one greeting every request gets.
    public init() {}
}

/// The CPU work of one job: `rounds` steps of a xorshift generator, which the optimizer cannot
/// fold (each step depends on the last) and which touches no memory; the same work as the
/// benchmark's own server jobs, so that `--job-rounds` from its calibration means ~3 µs here.
public enum Job {
    /// Set once in `main`, before the server starts (so before any handler reads it).
    public nonisolated(unsafe) static var rounds = 1_000

    /// One job: the xorshift steps from `seed`, their last value returned.
    @inline(never)
    public static func work(seed: UInt64) -> UInt64 {
        var x = seed | 1
        for _ in 0..<rounds {
            x ^= x << 13
            x ^= x >> 7
            x ^= x << 17
        }
        return x
    }
}
