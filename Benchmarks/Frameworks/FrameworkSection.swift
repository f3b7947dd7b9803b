/// "Inside a <framework> server" as a section of the run (`FrameworkBenchmark`). Its server
/// is a nested package, built by `prepare` (before the budget starts); without wrk or a
/// server it weighs nothing and its outcome says why it was skipped. The settings come from
/// the command's options (`BenchmarksCommand+Frameworks.swift`).
final class FrameworkSection: BenchmarkSection {
    /// Its share of the budget while it runs: about a quarter of a default run.
    static let weight = 25.0

    let framework: Framework
    private let command: BenchmarksCommand
    /// The server `prepare` built, or why the section is skipped; nil when the command leaves
    /// the section out.
    private var prepared: Result<FrameworkServerBuild.Built, FrameworkServerBuild.Failure>?

    init(_ framework: Framework, command: BenchmarksCommand) {
        self.framework = framework
        self.command = command
    }

    var listing: [String] { command.frameworkListing(framework) }

    func prepare() { prepared = command.prepareFrameworkServer(framework) }

    private var runs: Bool { (try? prepared?.get()) != nil }

    var weight: Double { runs ? Self.weight : 0 }

    var progressSteps: Int { runs ? 1 : 0 }

    func run(_ context: SectionContext) -> SectionOutcome? {
        guard let prepared else { return nil }
        if runs {
            context.progress.next("\(framework.group): \(framework.versionedName) under wrk (child processes)")
        }
        let outcome = command.runFrameworkServer(
            framework, prepared, budget: context.budget, seed: context.seed &+ framework.seedOffset,
            progress: context.progress, watchdog: context.watchdog)
        context.progress.log(verdicts: outcome.verdicts)
        return SectionOutcome(
            verdicts: outcome.verdicts,
            noise: outcome.noise.flatMap { $0 },
            goals: outcome.goals,
            markdown: FrameworkReport.render(outcome, framework: framework),
            json: [(framework.rawValue, outcome)]
        )
    }
}

extension Framework {
    /// What its section adds to the run's seed (`SectionContext.seed`): distinct from the other
    /// sections' offsets, so that each replays alone.
    var seedOffset: UInt64 {
        switch self {
        case .hummingbird: return 4
        case .vapor: return 5
        }
    }
}
