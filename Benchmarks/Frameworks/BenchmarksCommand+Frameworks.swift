import Foundation

extension BenchmarksCommand {
    /// The framework sections' settings from the options (the same for each framework).
    /// `jobRounds` is calibrated here (in this process, like the server scenario's jobs), so call
    /// it only when a section runs. Three choices, without the pool as the routes' task-executor
    /// preference, which served no more than the default executor on any route and costs a fifth
    /// of each round (a child of its own): `--full` adds it. Four routes with `--quick`, else
    /// every route.
    func frameworkSettings(jobRounds: Int) -> FrameworkBenchmark.Settings {
        .init(
            arms: full ? FrameworkBenchmark.Arm.allCases : [.defaultExecutor, .nio, .bolts],
            routes: quick ? [.plain, .fanout, .inline, .bolts] : FrameworkBenchmark.Route.allCases,
            seconds: serverSeconds ?? (full ? 2 : 1),
            warmUpSeconds: 1,
            wrkThreads: 1,
            connections: 32,
            blockConnections: 4,
            jobNanoseconds: 3_000,
            jobRounds: jobRounds
        )
    }

    /// When a framework section's rounds stop. A round starts a child per choice and the default
    /// executor's twin, each for a warm-up and one wrk run per route, then, in all but the twin,
    /// the blocking run (about 45 s a round by default), so the rounds are few: 2 with `--quick`,
    /// 3 to 6 by default (as many as the section's share of the budget holds), 5 to 10 with
    /// `--full`; `--rounds` fixes them.
    var frameworkStopping: StoppingRule {
        var rule: StoppingRule
        switch (quick, full) {
        case (true, _): rule = StoppingRule(minimumRounds: 2, maximumRounds: 2)
        case (_, true): rule = StoppingRule(minimumRounds: 5, maximumRounds: 10)
        default: rule = StoppingRule(minimumRounds: 3, maximumRounds: 6)
        }
        rule.fixedRounds = rounds
        return rule
    }

    /// Whether the run has `framework`'s section: Hummingbird's whenever `filter` selects it;
    /// Vapor's only with `--full` or a `--filter` that names Vapor, since its first build takes
    /// about 13 minutes on 2 cores.
    func includes(_ framework: Framework) -> Bool {
        guard FrameworkBenchmark.isSelected(framework, by: filter) else { return false }
        switch framework {
        case .hummingbird: return true
        case .vapor: return full || filter?.lowercased().contains(framework.rawValue) == true
        }
    }

    /// Builds `framework`'s server when the run includes its section: nil when it does not, else
    /// the executable or why the section is skipped (no wrk, the build failed). Runs before the
    /// budget starts, so the build neither eats a share nor overlaps a measurement.
    func prepareFrameworkServer(
        _ framework: Framework
    ) -> Result<FrameworkServerBuild.Built, FrameworkServerBuild.Failure>? {
        guard includes(framework) else { return nil }
        guard WrkLoadGenerator.find() != nil else {
            return .failure(.init(description: WrkLoadGenerator.Failure.notFound.description))
        }
        do {
            return .success(try FrameworkServerBuild.build(framework))
        } catch {
            let failure = error as? FrameworkServerBuild.Failure ?? .init(description: "\(error)")
            writeError("warning: the \(framework.name) section is skipped: \(failure)\n")
            return .failure(failure)
        }
    }

    /// Runs `framework`'s section with the server `prepareFrameworkServer` gave, or records why
    /// it is skipped.
    func runFrameworkServer(
        _ framework: Framework,
        _ prepared: Result<FrameworkServerBuild.Built, FrameworkServerBuild.Failure>,
        budget: Budget,
        seed: UInt64,
        progress: Progress,
        watchdog: Watchdog
    ) -> FrameworkBenchmark.Outcome {
        switch prepared {
        case .failure(let failure):
            var outcome = FrameworkBenchmark.Outcome(settings: frameworkSettings(jobRounds: 0))
            outcome.skipped = failure.description
            return outcome
        case .success(let built):
            let benchmark = FrameworkBenchmark(
                framework: framework, settings: frameworkSettings(jobRounds: serverJobRounds(forNanoseconds: 3_000)))
            var outcome = benchmark.run(
                executable: built.executable, budget: budget, stopping: frameworkStopping,
                weight: FrameworkSection.weight, seed: seed, progress: progress, watchdog: watchdog
            )
            outcome.notes["buildSeconds"] = built.seconds.fixed(0)
            return outcome
        }
    }

    /// `framework`'s section's lines in `--list`.
    func frameworkListing(_ framework: Framework) -> [String] {
        guard includes(framework) else { return [] }
        let settings = frameworkSettings(jobRounds: 0)
        return ["\(framework.group): routes \(settings.routes.map { "/" + $0.path }), /plain beside /block"]
            + settings.arms.map { "  \($0 == .defaultExecutor ? "[reference] " : "")\($0.title) (\($0.rawValue))" }
    }
}
