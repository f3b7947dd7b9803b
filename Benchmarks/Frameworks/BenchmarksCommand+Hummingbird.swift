import Foundation

extension BenchmarksCommand {
    /// The "Inside a Hummingbird server" section's settings from the options. `jobRounds` is
    /// calibrated here (in this process, like the server scenario's jobs), so call it only when
    /// the section runs. `--quick`: three choices (no task-executor preference) and four routes;
    /// otherwise every choice and route.
    func hummingbirdSettings(jobRounds: Int) -> HummingbirdBenchmark.Settings {
        .init(
            arms: quick ? [.defaultExecutor, .nio, .bolts] : HummingbirdBenchmark.Arm.allCases,
            routes: quick ? [.plain, .fanout, .inline, .bolts] : HummingbirdBenchmark.Route.allCases,
            seconds: serverSeconds ?? (full ? 2 : 1),
            warmUpSeconds: 1,
            wrkThreads: 1,
            connections: 32,
            blockConnections: 4,
            jobNanoseconds: 3_000,
            jobRounds: jobRounds
        )
    }

    /// When the section's rounds stop. A round starts a child per choice and the default
    /// executor's twin, each for a warm-up and one wrk run per route and the blocking run (about
    /// 40 s a round by default), so the rounds are few: 2 with `--quick`, 3 to 4 by default
    /// (within the section's share of the budget), 5 to 10 with `--full`; `--rounds` fixes them.
    var hummingbirdStopping: StoppingRule {
        var rule: StoppingRule
        switch (quick, full) {
        case (true, _): rule = StoppingRule(minimumRounds: 2, maximumRounds: 2)
        case (_, true): rule = StoppingRule(minimumRounds: 5, maximumRounds: 10)
        default: rule = StoppingRule(minimumRounds: 3, maximumRounds: 4)
        }
        rule.fixedRounds = rounds
        return rule
    }

    /// Builds the section's server when `filter` selects the section: nil when it does not, else
    /// the executable or why the section is skipped (no wrk, the build failed). Runs before the
    /// budget starts, so the build neither eats a share nor overlaps a measurement.
    func prepareHummingbird() -> Result<HummingbirdServerBuild.Built, HummingbirdServerBuild.Failure>? {
        guard HummingbirdBenchmark.isSelected(by: filter) else { return nil }
        guard WrkLoadGenerator.find() != nil else {
            return .failure(.init(description: WrkLoadGenerator.Failure.notFound.description))
        }
        do {
            return .success(try HummingbirdServerBuild.build())
        } catch {
            let failure = error as? HummingbirdServerBuild.Failure ?? .init(description: "\(error)")
            writeError("warning: the Hummingbird section is skipped: \(failure)\n")
            return .failure(failure)
        }
    }

    /// Runs the section with the server `prepareHummingbird` gave, or records why it is skipped.
    func runHummingbird(
        _ prepared: Result<HummingbirdServerBuild.Built, HummingbirdServerBuild.Failure>,
        budget: Budget,
        seed: UInt64,
        progress: Progress,
        watchdog: Watchdog
    ) -> HummingbirdBenchmark.Outcome {
        switch prepared {
        case .failure(let failure):
            var outcome = HummingbirdBenchmark.Outcome(settings: hummingbirdSettings(jobRounds: 0))
            outcome.skipped = failure.description
            return outcome
        case .success(let built):
            let benchmark = HummingbirdBenchmark(
                settings: hummingbirdSettings(jobRounds: serverJobRounds(forNanoseconds: 3_000)))
            var outcome = benchmark.run(
                executable: built.executable, budget: budget, stopping: hummingbirdStopping,
                weight: HummingbirdSection.weight, seed: seed, progress: progress, watchdog: watchdog
            )
            outcome.buildSeconds = built.seconds
            return outcome
        }
    }

    /// The section's lines in `--list`.
    var hummingbirdListing: [String] {
        guard HummingbirdBenchmark.isSelected(by: filter) else { return [] }
        let settings = hummingbirdSettings(jobRounds: 0)
        return ["\(HummingbirdBenchmark.group): routes \(settings.routes.map { "/" + $0.path }), /plain beside /block"]
            + settings.arms.map { "  \($0 == .defaultExecutor ? "[reference] " : "")\($0.title) (\($0.rawValue))" }
    }
}
