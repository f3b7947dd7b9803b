import Foundation

/// A framework the benchmark measures a server of: its nested package `Benchmarks/<Name>Server`,
/// whose `<Name>Server` executable serves the routes of `Benchmarks/ServerSupport` under the
/// protocol `FrameworkServerProcess` speaks.
enum Framework: String, Codable, CaseIterable, Sendable {
    case hummingbird
    case vapor

    /// "Hummingbird", "Vapor".
    var name: String { rawValue.capitalized }

    /// The name with the major version measured: "Hummingbird 2", "Vapor 4".
    var versionedName: String { "\(name) \(self == .hummingbird ? 2 : 4)" }

    /// The section's heading, and the group of its verdicts.
    var group: String { "Inside a \(name) server" }

    /// The section its verdict rows carry ("hummingbird server", "vapor server").
    var section: Section { Section(rawValue: "\(rawValue) server") }

    /// The nested package, relative to the root package.
    var packageDirectory: String { "Benchmarks/\(product)" }

    /// The server executable.
    var product: String { "\(name)Server" }

    /// What its section adds to the run's seed (`SectionContext.seed`): distinct from the other
    /// sections' offsets, so that each replays alone.
    var seedOffset: UInt64 { self == .hummingbird ? 4 : 5 }
}

/// The section "Inside a <framework> server": a framework's server under wrk, once per executor
/// choice (`Arm`): Swift's default executor, SwiftNIO's event loops taking over as the global
/// executor, `ThreadPool.shared` installed as the global executor, and (with `--full`) the
/// default executor with every route preferring the pool as its task executor.
///
/// Each round starts one child process per arm, and the default executor's twin for the A/A, in
/// an order drawn at random (`RoundScheduler`); the child is stopped before the next starts, so
/// each arm has the machine to itself. In each child: a short wrk warm-up, one wrk run per route
/// (1 thread, 32 connections) with the child's CPU time around it, then (not in the twin) the
/// blocking-handler run (`BlockingRun`). Every address is 127.0.0.1.
///
/// Verdicts, paired by round: each route's requests/s, CPU per request and p99 for every arm
/// against the default executor, with the A/A whose threshold judges that metric's rows, and
/// the pool installed against NIO's take-over; the blocking metric is, per arm, `/plain`'s
/// requests/s beside the blocking handlers ÷ alone just before, in the same child.
struct FrameworkBenchmark {
    /// An executor choice: the child's first argument (`rawValue`).
    enum Arm: String, Codable, CaseIterable, Sendable {
        case defaultExecutor = "default"
        case nio
        case bolts
        case boltsPreferred = "bolts-preferred"

        /// Its name in the verdicts, and the short one of tables and the progress line.
        private var titles: (long: String, short: String) {
            switch self {
            case .defaultExecutor: return ("Swift's default executor", "default executor")
            case .nio: return ("SwiftNIO's event loops as the global executor", "NIO take-over")
            case .bolts: return ("Bolts pool installed as the global executor", "Bolts installed")
            case .boltsPreferred: return ("Bolts pool as the routes' task executor preference", "Bolts preferred")
            }
        }

        var title: String { titles.long }
        var shortTitle: String { titles.short }

        /// Whether the child's handlers run on `ThreadPool.shared` (installed, or preferred): its
        /// `/thread` should say `onPool=true`, and its `/stalls` counts the pool's stall reports.
        var runsHandlersOnPool: Bool { self == .bolts || self == .boltsPreferred }
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

    /// How the section loads its servers; `/plain` is always among `routes`, in the order each
    /// child runs them (the blocking ratio's denominator).
    struct Settings: Codable {
        var arms: [Arm]
        var routes: [Route]
        /// Seconds of each wrk run, and of the warm-up run (`/fanout`) in each child.
        var seconds: Int
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

    /// Runs the section's paired rounds against the server at `executable` (`WrkRounds.run` with
    /// a `FrameworkHost`): one comparison of `weight`'s share of the budget, whose rounds stop
    /// as `stopping` says on the widest requests/s interval against the default executor.
    func run(
        executable: String, _ context: SectionContext, stopping: StoppingRule, weight: Double, seed: UInt64
    ) -> Outcome {
        var outcome = Outcome(settings: settings)
        guard let wrk = WrkLoadGenerator.find() else {
            outcome.skipped = WrkLoadGenerator.Failure.notFound.description
            writeError("warning: \(outcome.skipped!)\n")
            return outcome
        }
        func load(_ connections: Int) -> WrkLoadGenerator {
            WrkLoadGenerator(executable: wrk, threads: settings.wrkThreads, connections: connections)
        }
        let host = FrameworkHost(
            framework: framework, settings: settings, executable: executable, load: load(settings.connections),
            blockLoad: load(settings.blockConnections), watchdog: context.watchdog)
        let scheduler = RoundScheduler(
            budget: context.budget, stopping: stopping, seed: seed, progress: context.progress,
            watchdog: context.watchdog)
        let loads = settings.routes.map { route in
            WrkLoad<Arm>(key: route.rawValue, name: Self.name(route, framework), path: { _ in route.path })
        }
        let (rounds, verdicts) = WrkRounds.run(
            framework.rawValue, host: host, loads: loads, arms: settings.arms, reference: .defaultExecutor,
            section: framework.section, title: \.title, shortTitle: \.shortTitle, scheduler: scheduler,
            weight: weight, settings: settings.wrk, loadGenerator: host.load
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
/// with the draw's executor choice and stopped after it. Before the loads, the child says where
/// its handlers run (`/thread`) and gets a warm-up; after them, unless it is the twin, the
/// blocking-handler run (`BlockingRun.swift`).
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

    func release(_ child: FrameworkServerProcess) { child.stop() }
}
