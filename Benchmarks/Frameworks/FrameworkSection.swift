import Foundation

/// "Inside a <framework> server" as a section of the run (`FrameworkBenchmark`), its settings
/// from the command's options. `prepare` builds its nested package before the budget starts;
/// without wrk or a server it weighs nothing and its outcome says why it was skipped.
final class FrameworkSection: BenchmarkSection {
    /// Its share of the budget while it runs: about a quarter of a default run.
    static let weight = 25.0

    let framework: Framework
    private let command: BenchmarksCommand
    /// The server `prepare` built, or why the section is skipped; nil when the run leaves it out.
    private var prepared: Result<(executable: String, seconds: Double, wrk: String), any Error>?

    init(_ framework: Framework, command: BenchmarksCommand) {
        self.framework = framework
        self.command = command
    }

    /// Whether the run has the section: Hummingbird's whenever `--filter` selects it (none, one
    /// contained in its heading, or one naming the framework); Vapor's only with `--full` or a
    /// filter that names Vapor, since its first build takes about 13 minutes on 2 cores.
    private var isIncluded: Bool {
        let filter = command.filter?.lowercased() ?? ""
        let names = filter.contains(framework.rawValue)
        guard filter.isEmpty || names || framework.group.lowercased().contains(filter) else { return false }
        return framework == .hummingbird || command.full || names
    }

    /// The settings; `jobRounds` is calibrated in this process, so only when the section runs.
    /// The pool as the routes' task-executor preference served no more than the default executor
    /// on any route and costs a fifth of each round, so only `--full` has it; `--quick` has four
    /// routes.
    private func settings(jobRounds: Int) -> FrameworkBenchmark.Settings {
        .init(
            arms: command.full ? FrameworkBenchmark.Arm.allCases : [.defaultExecutor, .nio, .bolts],
            routes: command.quick ? [.plain, .fanout, .inline, .bolts] : FrameworkBenchmark.Route.allCases,
            seconds: command.serverSeconds ?? (command.full ? 2 : 1), warmUpSeconds: 1, wrkThreads: 1,
            connections: 32, blockConnections: 4, jobNanoseconds: 3_000, jobRounds: jobRounds)
    }

    /// When the rounds stop: a round takes about 45 s by default, so they are few: 2 with
    /// `--quick`, 3 to 6 by default (as many as the share holds), 5 to 10 with `--full`;
    /// `--rounds` fixes them.
    private var stopping: StoppingRule {
        let (minimum, maximum) = command.quick ? (2, 2) : command.full ? (5, 10) : (3, 6)
        var rule = StoppingRule(minimumRounds: minimum, maximumRounds: maximum)
        rule.fixedRounds = command.rounds
        return rule
    }

    var listing: [String] {
        guard isIncluded else { return [] }
        let settings = settings(jobRounds: 0)
        return ["\(framework.group): routes \(settings.routes.map { "/" + $0.path }), /plain beside /block"]
            + settings.arms.map { "  \($0 == .defaultExecutor ? "[reference] " : "")\($0.title) (\($0.rawValue))" }
    }

    /// Builds the server, or records why the section is skipped (no wrk, the build failed).
    func prepare() {
        guard isIncluded else { return }
        prepared = Result {
            guard let wrk = WrkLoadGenerator.find() else { throw WrkLoadGenerator.Failure.notFound }
            let built = try FrameworkServerBuild.build(framework)
            return (built.executable, built.seconds, wrk)
        }
        if case .failure(let error) = prepared, !(error is WrkLoadGenerator.Failure) {
            writeError("warning: the \(framework.name) section is skipped: \(error)\n")
        }
    }

    private var runs: Bool { (try? prepared?.get()) != nil }

    var weight: Double { runs ? Self.weight : 0 }

    var progressSteps: Int { runs ? 1 : 0 }

    func run(_ context: SectionContext) -> SectionOutcome? {
        var outcome: FrameworkBenchmark.Outcome
        switch prepared {
        case nil: return nil
        case .failure(let error):
            outcome = .init(settings: settings(jobRounds: 0))
            outcome.skipped = "\(error)"
        case .success(let built):
            context.progress.next("\(framework.group): \(framework.versionedName) under wrk (child processes)")
            let settings = self.settings(jobRounds: serverJobRounds(forNanoseconds: 3_000))
            outcome = measure(built.executable, wrk: built.wrk, settings, context)
            outcome.notes["buildSeconds"] = built.seconds.fixed(0)
        }
        context.progress.log(verdicts: outcome.verdicts)
        return SectionOutcome(
            verdicts: outcome.verdicts, noise: outcome.noise.flatMap { $0 }, goals: outcome.goals,
            markdown: FrameworkReport.render(outcome, framework: framework), json: [(framework.rawValue, outcome)])
    }

    /// The section's paired rounds against the server at `executable` (`WrkRounds.run` with a
    /// `FrameworkHost`): one comparison, whose rounds stop on the widest requests/s interval
    /// against the default executor.
    private func measure(
        _ executable: String, wrk: String, _ settings: FrameworkBenchmark.Settings, _ context: SectionContext
    ) -> FrameworkBenchmark.Outcome {
        var outcome = FrameworkBenchmark.Outcome(settings: settings)
        func load(_ connections: Int) -> WrkLoadGenerator {
            WrkLoadGenerator(executable: wrk, threads: settings.wrkThreads, connections: connections)
        }
        let host = FrameworkHost(
            framework: framework, settings: settings, executable: executable, load: load(settings.connections),
            blockLoad: load(settings.blockConnections), watchdog: context.watchdog)
        let scheduler = context.scheduler(stopping, seedOffset: framework.seedOffset)
        let loads = settings.routes.map { route in
            WrkLoad<FrameworkBenchmark.Arm>(
                key: route.rawValue, name: FrameworkBenchmark.name(route, framework), path: { _ in route.path })
        }
        let (rounds, verdicts) = WrkRounds.run(
            framework.rawValue, host: host, loads: loads, arms: settings.arms, reference: .defaultExecutor,
            section: framework.section, title: \.title, shortTitle: \.shortTitle, scheduler: scheduler,
            weight: Self.weight, settings: settings.wrk, loadGenerator: host.load
        )
        outcome.draws = rounds.measurements.map(\.value)
        outcome.noise = [rounds.noise]
        outcome.verdicts =
            verdicts + FrameworkBenchmark.verdicts(rounds, verdicts, framework: framework, settings: settings)
        outcome.summaries = settings.arms.flatMap { arm in
            settings.routes.compactMap { WrkSummary(arm: arm, load: $0.rawValue, draws: outcome.draws) }
        }
        outcome.goals = FrameworkBenchmark.goals(outcome, framework: framework)
        return outcome
    }
}

/// A framework section's servers: a child process (`FrameworkServerProcess`) per draw, started
/// with the draw's executor choice and stopped after it. Before the loads, the child says where
/// its handlers run (`/thread`) and gets a warm-up; after them, unless it is the twin, the
/// blocking-handler run (`finish`, in `BlockingRun.swift`).
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
