extension Section {
    static let hummingbird = Section(rawValue: "hummingbird server")
}

/// "Inside a Hummingbird server" as a section of the run (`HummingbirdBenchmark`). Its server
/// is a nested package, built by `prepare` (before the budget starts); without wrk or a
/// server it weighs nothing and its outcome says why it was skipped. The settings come from
/// the command's options (`BenchmarksCommand+Hummingbird.swift`).
final class HummingbirdSection: BenchmarkSection {
    static let weight = 27.0

    private let command: BenchmarksCommand
    /// The server `prepare` built, or why the section is skipped; nil when `--filter` leaves
    /// the section out.
    private var prepared: Result<HummingbirdServerBuild.Built, HummingbirdServerBuild.Failure>?

    init(command: BenchmarksCommand) { self.command = command }

    var listing: [String] { command.hummingbirdListing }

    func prepare() { prepared = command.prepareHummingbird() }

    private var runs: Bool { (try? prepared?.get()) != nil }

    var weight: Double { runs ? Self.weight : 0 }

    var progressSteps: Int { runs ? 1 : 0 }

    func run(_ context: SectionContext) -> SectionOutcome? {
        guard let prepared else { return nil }
        if runs { context.progress.next("\(HummingbirdBenchmark.group): Hummingbird 2 under wrk (child processes)") }
        let outcome = command.runHummingbird(
            prepared, budget: context.budget, seed: context.seed &+ 4, progress: context.progress,
            watchdog: context.watchdog)
        context.progress.log(verdicts: outcome.verdicts)
        return SectionOutcome(
            verdicts: outcome.verdicts,
            noise: outcome.noise,
            goals: outcome.goals,
            markdown: HummingbirdReport.render(outcome),
            json: [("hummingbird", outcome)]
        )
    }
}
