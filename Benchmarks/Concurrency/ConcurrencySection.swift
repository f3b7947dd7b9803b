extension Section {
    static let swiftConcurrency = Section(rawValue: "swift concurrency")
}

/// "Swift Concurrency on the Bolts pool" as a section of the run (`ConcurrencyOnPool`): child
/// processes on Swift's default executor against children with the pool installed.
final class ConcurrencySection: BenchmarkSection {
    /// Its share of the budget: a fifth of a default run, for at least three rounds of its three
    /// children on 2 CPUs (its rows carry thirteen goals).
    static let weight = 20.0

    private let isSelected: Bool
    /// How the children size their samples: "quick", "budget" or "full".
    private let childMode: String
    /// Repetitions of each workload in a child.
    private let repetitions: Int
    private let stopping: StoppingRule

    init(filter: String?, childMode: String, repetitions: Int, stopping: StoppingRule) {
        isSelected = ConcurrencyOnPool.isSelected(by: filter)
        self.childMode = childMode
        self.repetitions = repetitions
        self.stopping = stopping
    }

    var listing: [String] {
        guard isSelected else { return [] }
        return ["\(ConcurrencyOnPool.group): default executor vs the pool installed"]
            + ConcurrencyWorkloads.all.map { "  \($0.name)" }
    }

    var weight: Double { isSelected ? Self.weight : 0 }

    var progressSteps: Int { isSelected ? 1 : 0 }

    var processIsTheUnit: String? { "Swift Concurrency" }

    func run(_ context: SectionContext) -> SectionOutcome? {
        guard isSelected else { return nil }
        context.progress.next("\(ConcurrencyOnPool.group): default executor vs the pool installed (child processes)")
        let outcome = ConcurrencyOnPool.run(
            childMode: childMode,
            repetitions: repetitions,
            stopping: stopping,
            budget: context.budget,
            weight: Self.weight,
            seed: context.seed &+ 1,
            progress: context.progress,
            watchdog: context.watchdog
        )
        context.progress.log(verdicts: outcome.verdicts)
        return SectionOutcome(
            verdicts: outcome.verdicts,
            noise: outcome.noise,
            goals: outcome.goals,
            markdown: ConcurrencyOnPool.render(outcome) + Report.goals(outcome.goals, title: "Swift Concurrency"),
            failed: outcome.error != nil,
            json: [("concurrency", outcome)]
        )
    }
}
