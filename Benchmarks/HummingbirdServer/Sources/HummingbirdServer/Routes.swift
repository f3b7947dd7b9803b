import Bolts
import Foundation
import Hummingbird

#if canImport(Glibc)
    import Glibc
#endif

/// The server's routes (`HummingbirdServer` lists them). A body that depends on the jobs'
/// results keeps the optimizer from dropping the jobs.
enum Routes {
    /// The jobs per request of `/fanout` and `/executeall`.
    static let fanOut = 16

    static func add(to router: Router<BasicRequestContext>) {
        router.get("plain") { _, _ in "Hello, World!" }
        router.get("json") { _, _ in Greeting(message: "Hello, World!", id: 42, tags: ["bolts", "hummingbird"]) }
        router.get("fanout") { _, _ in
            let folded = await withTaskGroup(of: UInt64.self) { group in
                for index in 0..<fanOut {
                    group.addTask { Job.work(seed: UInt64(index)) }
                }
                return await group.reduce(0, &+)
            }
            return "\(folded & 0xff)"
        }
        router.get("inline") { _, _ in
            // `/fanout` without the executor's part: the same jobs, one after another in the
            // handler, so what `/fanout` costs beyond this is the task group's.
            var folded: UInt64 = 0
            for index in 0..<fanOut { folded &+= Job.work(seed: UInt64(index)) }
            return "\(folded & 0xff)"
        }
        router.get("executeall") { _, _ in
            let values = try await BoltsTask<UInt64>.executeAll(.pool(.shared), count: fanOut) { index in
                Job.work(seed: UInt64(index))
            }.value
            return "\(values.reduce(0, &+) & 0xff)"
        }
        router.get("bolts") { _, _ in
            let value = try await BoltsTask<UInt64>.execute(.pool(.shared)) { Job.work(seed: 7) }.value
            return "\(value & 0xff)"
        }
        router.get("block") { _, _ in
            // The thread sleeps in the kernel, as in a synchronous database driver's call; the
            // executor does not know and cannot run anything else on it meanwhile.
            usleep(20_000)
            return "blocked"
        }
        router.get("thread") { _, _ in
            let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
            return "\(name.trimmingCharacters(in: .newlines)) onPool=\(ThreadPool.shared.isCurrent)"
        }
    }
}

/// The body of `/json`.
struct Greeting: ResponseCodable {
    var message: String
    var id: Int
    var tags: [String]
}

/// The CPU work of one job: `rounds` steps of a xorshift generator, which the optimizer cannot
/// fold (each step depends on the last) and which touches no memory; the same work as the
/// benchmark's own server jobs, so that `--job-rounds` from its calibration means ~3 µs here.
enum Job {
    /// Set once in `main`, before the server starts (so before any handler reads it).
    nonisolated(unsafe) static var rounds = 1_000

    @inline(never)
    static func work(seed: UInt64) -> UInt64 {
        var x = seed | 1
        for _ in 0..<rounds {
            x ^= x << 13
            x ^= x >> 7
            x ^= x << 17
        }
        return x
    }
}

/// Runs every route inside `withTaskExecutorPreference(ThreadPool.shared)`: the handler, its
/// task-group children and its resumptions after an await run on the pool, while Swift's
/// default executor stays the global one (the `bolts-preferred` choice).
struct PoolPreferenceMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        try await withTaskExecutorPreference(ThreadPool.shared) {
            try await next(request, context)
        }
    }
}
