import BenchmarkStatistics
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A framework the benchmark measures a server of: its name, its section and its nested
/// package (`Benchmarks/<Name>Server`), whose `<Name>Server` executable serves the routes of
/// `Benchmarks/ServerSupport` under the command line, port line and lifetime that
/// `FrameworkServerProcess` speaks.
enum Framework: String, Codable, CaseIterable, Sendable {
    case hummingbird
    case vapor

    /// "Hummingbird", "Vapor".
    var name: String {
        switch self {
        case .hummingbird: return "Hummingbird"
        case .vapor: return "Vapor"
        }
    }

    /// The name with the major version measured: "Hummingbird 2", "Vapor 4".
    var versionedName: String {
        switch self {
        case .hummingbird: return "Hummingbird 2"
        case .vapor: return "Vapor 4"
        }
    }

    /// The section's heading, and the group of its verdicts.
    var group: String { "Inside a \(name) server" }

    /// The section its verdict rows carry ("hummingbird server", "vapor server").
    var section: Section { Section(rawValue: "\(rawValue) server") }

    /// The nested package, relative to the root package.
    var packageDirectory: String { "Benchmarks/\(product)" }

    /// The server executable.
    var product: String { "\(name)Server" }
}

/// The section "Inside a <framework> server": a framework's server (a nested package, built by
/// `FrameworkServerBuild`) under wrk, once per executor choice (`Arm`): Swift's default
/// executor, SwiftNIO's event loops taking over as the global executor, `ThreadPool.shared`
/// installed as the global executor, and (with `--full`) the default executor with every route
/// preferring the pool as its task executor.
///
/// Each round starts one child process per arm (and a second one of the default executor, its
/// twin, for the A/A), in an order drawn at random, through the benchmark's shared round loop
/// (`RoundScheduler`). In each child: a short wrk warm-up, one wrk run per route
/// (1 thread, 32 connections), each with the child's CPU time (`/proc/<pid>/stat`) before and
/// after; then (not in the twin) the blocking-handler run: `/plain` alone once more, then a
/// second wrk sends 4 connections to `/block` (20 ms of `usleep` per request) while the first
/// loads `/plain`, and a sampler reads the child's thread count (`/proc/<pid>/status`) meanwhile;
/// where the handlers run on the pool, the child's `/stalls` before and after the `/block` load
/// gives the pool's stall reports over it (`StallReports`). The child is stopped before the next
/// arm starts, so each arm has the machine to itself and threads started for one run stay in its
/// own process. Every address is 127.0.0.1.
///
/// Verdicts, paired by round: each route's requests/s, CPU per request and p99 for the pool
/// installed (and preferred, and NIO's take-over) against the default executor, and for the pool
/// installed against NIO's take-over; each metric with its A/A (the default executor against its
/// twin), whose threshold judges that metric's rows. The blocking metric is, per arm, `/plain`'s
/// requests/s beside the blocking handlers ÷ alone just before, in the same child.
struct FrameworkBenchmark {
    /// An executor choice: the child's first argument (`rawValue`).
    enum Arm: String, Codable, CaseIterable, Sendable {
        case defaultExecutor = "default"
        case nio
        case bolts
        case boltsPreferred = "bolts-preferred"

        var title: String {
            switch self {
            case .defaultExecutor: return "Swift's default executor"
            case .nio: return "SwiftNIO's event loops as the global executor"
            case .bolts: return "Bolts pool installed as the global executor"
            case .boltsPreferred: return "Bolts pool as the routes' task executor preference"
            }
        }

        var shortTitle: String {
            switch self {
            case .defaultExecutor: return "default executor"
            case .nio: return "NIO take-over"
            case .bolts: return "Bolts installed"
            case .boltsPreferred: return "Bolts preferred"
            }
        }
    }

    /// A route measured alone under wrk (`/block` is measured only beside `/plain`).
    enum Route: String, Codable, CaseIterable, Sendable {
        case plain
        case json
        case fanout
        case inline
        case executeall
        case bolts

        var path: String { rawValue }

        /// The route and what its handler does (the verdicts' names).
        var title: String {
            switch self {
            case .plain: return "/plain: plain text"
            case .json: return "/json: a small Codable value"
            case .fanout: return "/fanout: task group of 16 jobs of ~3 µs"
            case .inline: return "/inline: /fanout's 16 jobs in the handler, one after another (no tasks)"
            case .executeall: return "/executeall: Task.executeAll(.pool(.shared), count: 16) of ~3 µs"
            case .bolts: return "/bolts: one Bolts pool task of ~3 µs, awaited"
            }
        }
    }

    struct Settings: Codable {
        var arms: [Arm]
        /// The routes measured alone, in the order each child runs them; `/plain` is always one
        /// (the blocking ratio's denominator).
        var routes: [Route]
        /// Seconds of each wrk run.
        var seconds: Int
        /// Seconds of the warm-up run (`/fanout`) in each child.
        var warmUpSeconds: Int
        var wrkThreads: Int
        var connections: Int
        /// Connections of the second wrk, to `/block`, during the blocking-handler run.
        var blockConnections: Int
        /// The target duration of one job, and the rounds of the server's xorshift work that
        /// take about that long here (`serverJobRounds`, calibrated in this process).
        var jobNanoseconds: Int
        var jobRounds: Int
    }

    /// One wrk run of one route alone.
    struct RouteRun: Codable {
        var route: Route
        var wrk: WrkLoadGenerator.Run
        var requestsPerSecond: Double
        /// The child's CPU (user + system, every thread) over the run ÷ requests.
        var cpuMicrosecondsPerRequest: Double
    }

    /// The blocking-handler run: `/plain` under wrk alone, then again while a second wrk loads
    /// `/block`.
    struct BlockingRun: Codable {
        /// `/plain` alone, just before the `/block` load starts: the kept ratio's denominator.
        var plainAlone: WrkLoadGenerator.Run
        var plainAloneRequestsPerSecond: Double
        var plain: WrkLoadGenerator.Run
        var block: WrkLoadGenerator.Run
        var plainRequestsPerSecond: Double
        /// Over the whole `/block` run, which starts 0.3 s before the `/plain` run and ends about
        /// a second after it: how many blocking handlers the executor keeps going at once.
        var blockRequestsPerSecond: Double
        /// The child's threads just before the run, and the most seen during it (sampled every
        /// 20 ms).
        var threadsBefore: Int
        var peakThreads: Int
        /// The pool's stall reports over the `/block` load, for an arm whose handlers run on the
        /// pool (`Arm.runsHandlersOnPool`); nil for the others.
        var stalls: StallReports?
    }

    /// One child process of one arm in one round.
    struct RunResult: Codable {
        var arm: Arm
        var round: Int
        /// Whether this is the default executor's second child in its round (for the A/A).
        var isTwin: Bool
        /// Where the child's handlers run: its `/thread` answer ("<thread name> onPool=<bool>"),
        /// asked once before the warm-up.
        var handlerThread: String
        var routes: [RouteRun]
        /// Nil for the twin: no verdict reads its blocking run, so it has none.
        var blocking: BlockingRun?

        func route(_ route: Route) -> RouteRun? { routes.first { $0.route == route } }

        /// `/plain`'s requests/s beside the blocking handlers ÷ alone, just before.
        var keptFraction: Double? {
            blocking.map { $0.plainRequestsPerSecond / max($0.plainAloneRequestsPerSecond, 1e-9) }
        }
    }

    /// An arm's figures for one route: medians over its rounds, and the worst max.
    struct RouteSummary: Codable {
        var route: Route
        var requestsPerSecond: Double
        var cpuMicrosecondsPerRequest: Double
        var p50: Double
        var p99: Double
        var max: Double
        var errors: Int
    }

    /// An arm's figures: medians over its rounds (twins left out).
    struct ArmSummary: Codable {
        var arm: Arm
        var rounds: Int
        /// The children's `/thread` answers, each once.
        var handlerThreads: [String]
        var routes: [RouteSummary]
        var plainAloneRequestsPerSecond: Double
        var plainBesideBlockRequestsPerSecond: Double
        var keptFraction: Double
        /// `/plain`'s p99 beside the blocking handlers, in µs.
        var plainBesideBlockP99: Double
        var blockRequestsPerSecond: Double
        var threadsBefore: Int
        /// The most threads seen in any round's blocking run.
        var peakThreads: Int
        var blockingErrors: Int
        /// The pool's stall reports in the blocking runs (`StallReports.median(of:)`); nil for an
        /// arm whose handlers do not run on the pool.
        var stalls: StallReports?
    }

    struct Outcome: Codable {
        var settings: Settings
        /// Why the section did not run (no wrk, the server did not build, …).
        var skipped: String?
        /// Seconds the nested package's release build took in this run.
        var buildSeconds: Double?
        var runs: [RunResult] = []
        var summaries: [ArmSummary] = []
        var verdicts: [VerdictRow] = []
        var goals: [GoalCheck] = []
        var noise: [RoundNoise] = []
    }

    let framework: Framework
    let settings: Settings

    /// Whether `filter` selects `framework`'s section: none, or one contained in its heading, or
    /// one naming the framework.
    static func isSelected(_ framework: Framework, by filter: String?) -> Bool {
        guard let filter = filter?.lowercased(), !filter.isEmpty else { return true }
        return framework.group.lowercased().contains(filter) || filter.contains(framework.rawValue)
    }

    /// Runs the section's paired rounds against the server at `executable` through the shared
    /// round loop: one comparison of `weight`'s share of `budget`, whose rounds stop as
    /// `stopping` says on the widest requests/s interval against the default executor.
    /// `watchdog` is told before each child and each wrk run.
    func run(
        executable: String,
        budget: Budget,
        stopping: StoppingRule,
        weight: Double,
        seed: UInt64,
        progress: Progress,
        watchdog: Watchdog
    ) -> Outcome {
        var outcome = Outcome(settings: settings)
        guard let wrk = WrkLoadGenerator.find() else {
            outcome.skipped = WrkLoadGenerator.Failure.notFound.description
            writeError("warning: \(outcome.skipped!)\n")
            return outcome
        }
        let load = WrkLoadGenerator(executable: wrk, threads: settings.wrkThreads, connections: settings.connections)
        let blockLoad = WrkLoadGenerator(
            executable: wrk, threads: settings.wrkThreads, connections: settings.blockConnections)
        let scheduler = RoundScheduler(
            budget: budget, stopping: stopping, seed: seed, progress: progress, watchdog: watchdog)
        let deciding = settings.routes.map { Self.metrics(for: $0)[0] }
        let rounds = scheduler.run(
            framework.rawValue, arms: settings.arms, reference: .defaultExecutor, weight: weight, title: \.shortTitle,
            measure: { draw in
                do {
                    let run = try measure(
                        draw.arm, round: draw.round, isTwin: draw.isTwin, executable: executable, load: load,
                        blockLoad: blockLoad, watchdog: watchdog, label: draw.label
                    )
                    progress.log("  \(draw.label): " + Self.describe(run))
                    return run
                } catch {
                    writeError("warning: \(framework.name) server run of \(draw.label) failed: \(error)\n")
                    return nil
                }
            },
            widestInterval: { rounds in deciding.compactMap { rounds.widestHalfWidth($0) }.max() }
        )
        outcome.runs = rounds.measurements.map(\.value)
        outcome.noise = rounds.noise
        outcome.verdicts = Self.verdicts(rounds, framework: framework, settings: settings)
        outcome.summaries = settings.arms.compactMap { arm in
            summarize(arm, outcome.runs.filter { $0.arm == arm && !$0.isTwin })
        }
        outcome.goals = Self.goals(outcome.verdicts, framework: framework, runs: outcome.runs)
        return outcome
    }

    /// One child of `arm`: warm-up, each route alone, then, unless it is the twin, the
    /// blocking-handler run.
    private func measure(
        _ arm: Arm,
        round: Int,
        isTwin: Bool,
        executable: String,
        load: WrkLoadGenerator,
        blockLoad: WrkLoadGenerator,
        watchdog: Watchdog,
        label: String
    ) throws -> RunResult {
        watchdog.beat("\(framework.rawValue): starting the \(label) child")
        let child = try FrameworkServerProcess(executable: executable, arm: arm, jobRounds: settings.jobRounds)
        defer { child.stop() }
        let handlerThread = try child.get("thread")
        if arm.runsHandlersOnPool != handlerThread.hasSuffix("onPool=true") {
            writeError("warning: the \(label) child's handlers run on \(handlerThread)\n")
        }
        // Warm-up: the executor's threads start and the caches fill before anything is measured.
        watchdog.beat("\(framework.rawValue): warm-up of \(label)")
        _ = try load.run(url: child.url(Route.fanout.path), seconds: settings.warmUpSeconds)
        var routes: [RouteRun] = []
        for route in settings.routes {
            watchdog.beat("\(framework.rawValue): \(route.path), \(label)")
            guard let before = child.cpuMicroseconds else { throw gone(arm) }
            let wrk = try load.run(url: child.url(route.path), seconds: settings.seconds)
            guard let after = child.cpuMicroseconds else { throw gone(arm) }
            routes.append(
                RouteRun(
                    route: route,
                    wrk: wrk,
                    requestsPerSecond: Double(wrk.requests) / wrk.seconds,
                    cpuMicrosecondsPerRequest: (after - before) / Double(max(wrk.requests, 1))
                )
            )
        }
        var blocking: BlockingRun?
        if !isTwin {
            watchdog.beat("\(framework.rawValue): /plain beside /block, \(label)")
            blocking = try measureBesideBlocking(child, load: load, blockLoad: blockLoad)
        }
        return RunResult(
            arm: arm, round: round, isTwin: isTwin, handlerThread: handlerThread, routes: routes, blocking: blocking)
    }

    private func gone(_ arm: Arm) -> BenchmarkChildFailed {
        BenchmarkChildFailed(description: "the \(arm.rawValue) \(framework.name) server is gone")
    }

    /// What the blocking-handler run's threads share: the `/block` wrk's outcome (under its
    /// mutex) and the sampler's peak. The atomics may be relaxed: each semaphore's signal and
    /// wait order what its thread wrote before the reader reads it, and the stop flag only has
    /// to be seen eventually (the sampler looks every 20 ms).
    private final class BesideBlocking: Sendable {
        let block = Mutex<Result<WrkLoadGenerator.Run, any Error>?>(nil)
        let blockDone = DispatchSemaphore(value: 0)
        let peakThreads = Atomic<Int>(0)
        let stopSampling = Atomic<Bool>(false)
        let samplingDone = DispatchSemaphore(value: 0)
    }

    /// `/plain` under `load` while `blockLoad` sends its connections to `/block`: the `/block`
    /// load starts first (on a thread of its own) and runs a second longer, so the `/plain` run
    /// is inside it from start to end; a third thread samples the child's thread count. For an
    /// arm whose handlers run on the pool, the child's `/stalls` is read just before the `/block`
    /// load starts and just after it ends (once its last handlers have returned and their ended
    /// reports been delivered), and the run keeps the difference.
    private func measureBesideBlocking(
        _ child: FrameworkServerProcess,
        load: WrkLoadGenerator,
        blockLoad: WrkLoadGenerator
    ) throws -> BlockingRun {
        let shared = BesideBlocking()
        let pid = child.pid
        let threadsBefore = FrameworkServerProcess.threads(pid: pid) ?? 0
        // The denominator is measured next to the run it divides, not taken from the child's
        // first route run: two adjacent seconds of one child vary less than two further apart.
        let alone = try load.run(url: child.url(Route.plain.path), seconds: settings.seconds)
        let blockURL = child.url("block")
        let blockSeconds = settings.seconds + 1
        let stallsBefore = try child.stallReports()
        Thread.detachNewThread {
            let result = Result { try blockLoad.run(url: blockURL, seconds: blockSeconds) }
            shared.block.withLock { $0 = result }
            shared.blockDone.signal()
        }
        Thread.detachNewThread {
            while !shared.stopSampling.load(ordering: .relaxed) {
                if let threads = FrameworkServerProcess.threads(pid: pid) {
                    shared.peakThreads.max(threads, ordering: .relaxed)
                }
                usleep(20_000)
            }
            shared.samplingDone.signal()
        }
        // The /block connections are open and their handlers blocking before /plain is loaded.
        // (This lag also keeps the two wrk runs' Lua script, one file per process that each run
        // writes and deletes, in place until the /block run's wrk has read it.)
        usleep(300_000)
        let plain = Result { try load.run(url: child.url(Route.plain.path), seconds: settings.seconds) }
        shared.blockDone.wait()
        shared.stopSampling.store(true, ordering: .relaxed)
        shared.samplingDone.wait()
        let plainRun = try plain.get()
        guard let blockRun = try shared.block.withLock({ $0 })?.get() else {
            throw BenchmarkChildFailed(description: "the /block load gave no outcome")
        }
        var stalls: StallReports?
        if let stallsBefore {
            // A handler started as wrk stopped returns within 20 ms; its ended report follows on
            // the pool's reporter thread.
            usleep(100_000)
            stalls = try child.stallReports()?.since(stallsBefore)
        }
        return BlockingRun(
            plainAlone: alone,
            plainAloneRequestsPerSecond: Double(alone.requests) / alone.seconds,
            plain: plainRun,
            block: blockRun,
            plainRequestsPerSecond: Double(plainRun.requests) / plainRun.seconds,
            blockRequestsPerSecond: Double(blockRun.requests) / blockRun.seconds,
            threadsBefore: threadsBefore,
            peakThreads: max(shared.peakThreads.load(ordering: .relaxed), threadsBefore),
            stalls: stalls
        )
    }

    /// One child's figures on one line, for the progress log.
    private static func describe(_ run: RunResult) -> String {
        let routes = run.routes.map { "/\($0.route.path) \($0.requestsPerSecond.formattedPlain)/s" }
        guard let blocking = run.blocking, let kept = run.keptFraction else { return routes.joined(separator: ", ") }
        return routes.joined(separator: ", ")
            + "; beside /block: /plain kept \(kept.fixed(2))"
            + ", p99 \((blocking.plain.p99 / 1_000).formattedMilliseconds), /block "
            + "\(blocking.blockRequestsPerSecond.formattedPlain)/s, threads \(blocking.threadsBefore) → \(blocking.peakThreads)"
            + (blocking.stalls.map { ", stall reports \($0.formattedCell)" } ?? "")
    }

    private func summarize(_ arm: Arm, _ runs: [RunResult]) -> ArmSummary? {
        guard !runs.isEmpty else { return nil }
        func medianOrNaN(_ values: [Double]) -> Double { median(values) ?? .nan }
        let routes: [RouteSummary] = settings.routes.compactMap { route in
            let mine = runs.compactMap { $0.route(route) }
            guard !mine.isEmpty else { return nil }
            return RouteSummary(
                route: route,
                requestsPerSecond: medianOrNaN(mine.map(\.requestsPerSecond)),
                cpuMicrosecondsPerRequest: medianOrNaN(mine.map(\.cpuMicrosecondsPerRequest)),
                p50: medianOrNaN(mine.map(\.wrk.p50)),
                p99: medianOrNaN(mine.map(\.wrk.p99)),
                max: mine.map(\.wrk.max).max()!,
                errors: mine.reduce(0) { $0 + $1.wrk.errors + $1.wrk.timeouts + $1.wrk.non2xx }
            )
        }
        let blocking = runs.compactMap(\.blocking)
        return ArmSummary(
            arm: arm,
            rounds: runs.count,
            handlerThreads: Array(Set(runs.map(\.handlerThread))).sorted(),
            routes: routes,
            plainAloneRequestsPerSecond: medianOrNaN(blocking.map(\.plainAloneRequestsPerSecond)),
            plainBesideBlockRequestsPerSecond: medianOrNaN(blocking.map(\.plainRequestsPerSecond)),
            keptFraction: medianOrNaN(runs.compactMap(\.keptFraction)),
            plainBesideBlockP99: medianOrNaN(blocking.map(\.plain.p99)),
            blockRequestsPerSecond: medianOrNaN(blocking.map(\.blockRequestsPerSecond)),
            threadsBefore: Int(medianOrNaN(blocking.map { Double($0.threadsBefore) })),
            peakThreads: blocking.map(\.peakThreads).max() ?? 0,
            blockingErrors: blocking.reduce(0) {
                $0 + $1.plain.errors + $1.plain.timeouts + $1.plain.non2xx + $1.block.errors + $1.block.timeouts
                    + $1.block.non2xx
            },
            stalls: StallReports.median(of: blocking.compactMap(\.stalls))
        )
    }
}

extension FrameworkServerProcess {
    /// The thread count of process `pid` (`Threads:` of `/proc/<pid>/status`); nil once it is gone.
    static func threads(pid: pid_t) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") })
        else { return nil }
        return Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces))
    }
}
