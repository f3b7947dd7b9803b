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

        var wrk: WrkSettings { WrkSettings(seconds: seconds, wrkThreads: wrkThreads, connections: connections) }
    }

    typealias Outcome = WrkOutcome<Arm, Settings>

    let framework: Framework
    let settings: Settings

    /// Whether `filter` selects `framework`'s section: none, or one contained in its heading, or
    /// one naming the framework.
    static func isSelected(_ framework: Framework, by filter: String?) -> Bool {
        guard let filter = filter?.lowercased(), !filter.isEmpty else { return true }
        return framework.group.lowercased().contains(filter) || filter.contains(framework.rawValue)
    }

    /// Runs the section's paired rounds against the server at `executable` through the shared
    /// round loop (`WrkRounds.run` with a `FrameworkHost`): one comparison of `weight`'s share of
    /// `budget`, whose rounds stop as `stopping` says on the widest requests/s interval against
    /// the default executor.
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
        let host = FrameworkHost(
            framework: framework, settings: settings, executable: executable, load: load,
            blockLoad: WrkLoadGenerator(
                executable: wrk, threads: settings.wrkThreads, connections: settings.blockConnections),
            watchdog: watchdog)
        let scheduler = RoundScheduler(
            budget: budget, stopping: stopping, seed: seed, progress: progress, watchdog: watchdog)
        let loads = settings.routes.map { route in
            WrkLoad<Arm>(key: route.rawValue, name: Self.name(route, framework), path: { _ in route.path })
        }
        let (rounds, verdicts) = WrkRounds.run(
            framework.rawValue, host: host, loads: loads, arms: settings.arms, reference: .defaultExecutor,
            section: framework.section, title: \.title, shortTitle: \.shortTitle, scheduler: scheduler,
            weight: weight, settings: settings.wrk, loadGenerator: load
        )
        outcome.draws = rounds.measurements.map(\.value)
        outcome.noise = [rounds.noise]
        outcome.verdicts = verdicts + Self.verdicts(rounds, verdicts, framework: framework, settings: settings)
        outcome.summaries = settings.arms.flatMap { arm in
            settings.routes.compactMap { WrkSummary(arm: arm, load: $0.rawValue, draws: outcome.draws) }
        }
        outcome.goals = Self.goals(outcome, framework: framework)
        return outcome
    }
}

/// A framework section's servers: a child process (`FrameworkServerProcess`) per draw, started
/// with the draw's executor choice and stopped after it, so each arm has the machine to itself
/// and threads started for one run stay in its own process. Before the loads, the child says
/// where its handlers run (`/thread`) and gets a warm-up; after them, unless it is the twin, the
/// blocking-handler run.
struct FrameworkHost: WrkHost {
    let framework: Framework
    let settings: FrameworkBenchmark.Settings
    let executable: String
    let load: WrkLoadGenerator
    let blockLoad: WrkLoadGenerator
    let watchdog: Watchdog

    func server(for draw: RoundDraw<FrameworkBenchmark.Arm>) throws -> FrameworkServerProcess {
        watchdog.beat("\(framework.rawValue): starting the \(draw.label) child")
        return try FrameworkServerProcess(executable: executable, arm: draw.arm, jobRounds: settings.jobRounds)
    }

    func prepare(_ child: FrameworkServerProcess, _ draw: RoundDraw<FrameworkBenchmark.Arm>) throws -> String? {
        let handlerThread = try child.get("thread")
        if draw.arm.runsHandlersOnPool != handlerThread.hasSuffix("onPool=true") {
            writeError("warning: the \(draw.label) child's handlers run on \(handlerThread)\n")
        }
        // Warm-up: the executor's threads start and the caches fill before anything is measured.
        watchdog.beat("\(framework.rawValue): warm-up of \(draw.label)")
        _ = try load.run(url: child.url(FrameworkBenchmark.Route.fanout.path), seconds: settings.warmUpSeconds)
        return handlerThread
    }

    func finish(_ child: FrameworkServerProcess, _ draw: RoundDraw<FrameworkBenchmark.Arm>) throws -> BlockingRun? {
        watchdog.beat("\(framework.rawValue): /plain beside /block, \(draw.label)")
        return try BlockingRun.measure(child, load: load, blockLoad: blockLoad, seconds: settings.seconds)
    }

    func release(_ child: FrameworkServerProcess) { child.stop() }
}

extension FrameworkServerProcess: WrkServer {
    func reading() -> WrkReading? { cpuMicroseconds.map { WrkReading(cpuMicroseconds: $0) } }

    /// The thread count of process `pid` (`Threads:` of `/proc/<pid>/status`); nil once it is gone.
    static func threads(pid: pid_t) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") })
        else { return nil }
        return Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces))
    }
}
