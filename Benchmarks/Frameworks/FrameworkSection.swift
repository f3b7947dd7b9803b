import Foundation

/// "Inside a <framework> server" as a section of the run (`FrameworkBenchmark`), its settings
/// from the command's options. Its server is a nested package, built by `prepare` (before the
/// budget starts); without wrk or a server it weighs nothing and its outcome says why it was
/// skipped.
final class FrameworkSection: BenchmarkSection {
    /// Its share of the budget while it runs: about a quarter of a default run.
    static let weight = 25.0

    let framework: Framework
    private let command: BenchmarksCommand
    /// The server `prepare` built, or why the section is skipped; nil when the run leaves the
    /// section out.
    private var prepared: Result<FrameworkServerBuild.Built, FrameworkServerBuild.Failure>?

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

    /// The settings (the same for each framework). `jobRounds` is calibrated in this process, so
    /// pass it only when the section runs. Three executor choices: the pool as the routes' task
    /// executor preference, which served no more than the default executor on any route and
    /// costs a fifth of each round, only with `--full`. Four routes with `--quick`, else all.
    private func settings(jobRounds: Int) -> FrameworkBenchmark.Settings {
        .init(
            arms: command.full ? FrameworkBenchmark.Arm.allCases : [.defaultExecutor, .nio, .bolts],
            routes: command.quick ? [.plain, .fanout, .inline, .bolts] : FrameworkBenchmark.Route.allCases,
            seconds: command.serverSeconds ?? (command.full ? 2 : 1), warmUpSeconds: 1, wrkThreads: 1,
            connections: 32, blockConnections: 4, jobNanoseconds: 3_000, jobRounds: jobRounds)
    }

    /// When the rounds stop. A round is a child per choice and the default executor's twin, each
    /// for a warm-up and a wrk run per route, then, in all but the twin, the blocking run (about
    /// 45 s a round by default), so the rounds are few: 2 with `--quick`, 3 to 6 by default (as
    /// many as the share holds), 5 to 10 with `--full`; `--rounds` fixes them.
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
        guard WrkLoadGenerator.find() != nil else {
            prepared = .failure(.init(description: WrkLoadGenerator.Failure.notFound.description))
            return
        }
        do {
            prepared = .success(try FrameworkServerBuild.build(framework))
        } catch {
            let failure = error as? FrameworkServerBuild.Failure ?? .init(description: "\(error)")
            writeError("warning: the \(framework.name) section is skipped: \(failure)\n")
            prepared = .failure(failure)
        }
    }

    private var runs: Bool { (try? prepared?.get()) != nil }

    var weight: Double { runs ? Self.weight : 0 }

    var progressSteps: Int { runs ? 1 : 0 }

    func run(_ context: SectionContext) -> SectionOutcome? {
        var outcome: FrameworkBenchmark.Outcome
        switch prepared {
        case nil: return nil
        case .failure(let failure):
            outcome = .init(settings: settings(jobRounds: 0))
            outcome.skipped = failure.description
        case .success(let built):
            context.progress.next("\(framework.group): \(framework.versionedName) under wrk (child processes)")
            let benchmark = FrameworkBenchmark(
                framework: framework, settings: settings(jobRounds: serverJobRounds(forNanoseconds: 3_000)))
            outcome = benchmark.run(
                executable: built.executable, context, stopping: stopping, weight: Self.weight,
                seed: context.seed &+ framework.seedOffset)
            outcome.notes["buildSeconds"] = built.seconds.fixed(0)
        }
        context.progress.log(verdicts: outcome.verdicts)
        return SectionOutcome(
            verdicts: outcome.verdicts, noise: outcome.noise.flatMap { $0 }, goals: outcome.goals,
            markdown: FrameworkReport.render(outcome, framework: framework), json: [(framework.rawValue, outcome)])
    }
}
