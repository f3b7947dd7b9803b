import BenchmarkStatistics
import Foundation

/// "Swift Concurrency on the Bolts pool": the workloads of `ConcurrencyWorkloads`, each
/// measured in child processes of this benchmark of two configurations, A: Swift's default
/// global executor, and B: `ThreadPool.shared` installed as the global executor. The process
/// is where the variance lives (one process's medians can sit 1.5× above another's for the
/// same workload), so the process is the unit: each round runs three children one after the
/// other, two of A and one of B, in an order drawn at random, while this process idles. Each
/// child reports its median per workload; a round's ratio is the two A children's geometric
/// mean over the B child's, and the two A children against each other are the A/A.
enum ConcurrencyOnPool {
    static let group = "Swift Concurrency on the Bolts pool"

    struct Row: Codable {
        /// The workload's identifier (`ConcurrencyWorkloads.Workload.id`).
        var id: String
        var name: String
        var unit: String
        /// Geometric mean over the rounds of each child's median ns per operation, with Swift's
        /// default global executor.
        var defaultExecutorNanoseconds: Double?
        /// The same with the Bolts pool installed as the global executor.
        var poolInstalledNanoseconds: Double?
        /// Every child's median, per configuration.
        var defaultExecutorSamples: [Double]
        var poolInstalledSamples: [Double]
    }

    struct Outcome: Codable {
        var rows: [Row]
        var verdicts: [VerdictRow]
        var goals: [GoalCheck]
        var noise: [RoundNoise]
        /// How each child sized its samples: "full", "budget" (a quarter of the full
        /// operations) or "quick" (a tenth).
        var childMode: String
        var error: String?
    }

    /// Whether `filter` (as given to --filter) selects this section.
    static func isSelected(by filter: String?) -> Bool {
        guard let filter = filter?.lowercased(), !filter.isEmpty else { return true }
        return group.lowercased().contains(filter)
            || ConcurrencyWorkloads.all.contains { $0.name.lowercased().contains(filter) }
    }

    /// The child's arguments for `childMode`.
    static func childArguments(installed: Bool, childMode: String, repetitions: Int) -> [String] {
        (installed ? ChildKind.concurrencyOnPoolInstalled : .concurrencyOnDefaultExecutor).arguments
            + ["--repetitions", "\(repetitions)", "--concurrency-scale", childMode]
    }

    static func run(
        childMode: String,
        repetitions: Int,
        stopping: StoppingRule,
        budget: Budget,
        weight: Double,
        seed: UInt64,
        progress: Progress,
        watchdog: Watchdog
    ) -> Outcome {
        let scheduler = RoundScheduler(
            budget: budget, stopping: stopping, seed: seed, progress: progress, watchdog: watchdog
        )
        // The default executor's child is the reference: its twin is the round's second one.
        let paired = scheduler.run(
            group, arms: [Child.defaultExecutor, .poolInstalled], reference: .defaultExecutor, weight: weight,
            title: { $0 == .poolInstalled ? "child with the pool installed" : "child on the default executor" },
            measure: { (draw: RoundDraw<Child>) -> [String: Double]? in
                let installed = draw.arm == .poolInstalled
                let data = try runBenchmarkChild(
                    childArguments(installed: installed, childMode: childMode, repetitions: repetitions)
                )
                let result = try JSONDecoder().decode(ConcurrencyWorkloads.Measured.self, from: data)
                return result.samples.compactMapValues { median($0) }
            },
            widestInterval: { sofar in
                Self.verdicts(medians(sofar), sofar.noise).filter { !$0.isAA && $0.key?.arm == installedArm }
                    .compactMap { $0.estimate?.relativeHalfWidth }.max()
            }
        )
        let noise = paired.noise
        if let failure = paired.failure {
            return Outcome(rows: [], verdicts: [], goals: [], noise: noise, childMode: childMode, error: "\(failure)")
        }
        let rounds = medians(paired)
        let rows = ConcurrencyWorkloads.all.map { workload in
            let d = rounds.flatMap { [$0.first[workload.name], $0.second[workload.name]].compactMap { $0 } }
            let i = rounds.compactMap { $0.installed[workload.name] }
            return Row(
                id: workload.id,
                name: workload.name,
                unit: workload.unit,
                defaultExecutorNanoseconds: geometricMean(d),
                poolInstalledNanoseconds: geometricMean(i),
                defaultExecutorSamples: d,
                poolInstalledSamples: i
            )
        }
        let verdicts = verdicts(rounds, noise)
        return Outcome(rows: rows, verdicts: verdicts, goals: goals(verdicts), noise: noise, childMode: childMode, error: nil)
    }

    /// The section's arms: a child process of each configuration, which reports each
    /// workload's median.
    private enum Child: Hashable {
        case defaultExecutor
        case poolInstalled
    }

    /// Each round's medians per workload: in the default child, its twin, and the installed one
    /// (empty where a child gave none).
    private static func medians(
        _ paired: PairedRounds<Child, [String: Double]>
    ) -> [(first: [String: Double], second: [String: Double], installed: [String: Double])] {
        (0..<paired.count).map { round in
            (
                paired.value(of: .defaultExecutor, inRound: round) ?? [:],
                paired.value(of: .defaultExecutor, twin: true, inRound: round) ?? [:],
                paired.value(of: .poolInstalled, inRound: round) ?? [:]
            )
        }
    }

    static let installedSubject = "pool installed"
    static let defaultPeer = "default executor"
    /// The configurations' identifiers in verdict keys (`VerdictKey.arm`, `.baseline`).
    static let installedArm = "pool-installed"
    static let defaultArm = "default-executor"

    /// The key of one of the section's rows (one metric: time per operation). A workload's
    /// row is `key(workload, installedArm, defaultArm)`; a comparison within the children of
    /// one configuration is `inProcessKey`.
    static func key(_ comparison: String, _ arm: String, _ baseline: String) -> VerdictKey {
        VerdictKey(section: .swiftConcurrency, comparison: comparison, arm: arm, baseline: baseline, metric: "time")
    }

    /// The key of `mine` against `theirs` (workload names) within the children of one
    /// configuration: the comparison names both and the configuration, the arms are the two
    /// workloads.
    static func inProcessKey(_ mine: String, _ theirs: String, installed: Bool) -> VerdictKey {
        let (m, t) = (ConcurrencyWorkloads.id(of: mine), ConcurrencyWorkloads.id(of: theirs))
        return key("\(m)-vs-\(t)-\(installed ? installedArm : defaultArm)", m, t)
    }

    private static func metric(_ unit: String) -> Metric {
        Metric(title: "time per \(unit)", unit: "ns", lowerIsBetter: true)
    }

    /// The section's verdicts from its rounds so far:
    /// - every workload, pool installed against the default executor (the two default
    ///   children are the peer and its twin);
    /// - in the default children, the pool as a task executor against the default executor's
    ///   own workload (`preferred`), and Bolts' awaits against Swift's round trip: the two
    ///   children's in-process ratios averaged per round, their reference workload in the two
    ///   children as the A/A;
    /// - in the installed child, Bolts' awaits against Swift's round trip, judged with the
    ///   threshold of the default children's A/A of that round trip (one installed child a
    ///   round has no twin).
    static func verdicts(
        _ rounds: [(first: [String: Double], second: [String: Double], installed: [String: Double])],
        _ noise: [RoundNoise]
    ) -> [VerdictRow] {
        var rows: [VerdictRow] = []
        for workload in ConcurrencyWorkloads.all {
            var values = PairedValues()
            for (index, round) in rounds.enumerated() {
                guard let i = round.installed[workload.name], let a = round.first[workload.name],
                    let b = round.second[workload.name]
                else { continue }
                values.append(round: index, subject: i, peer: a, twin: b)
            }
            values.markContaminated(noise)
            let (row, aa) = Verdicts.pair(
                section: .swiftConcurrency, name: workload.name, subject: installedSubject, peer: defaultPeer,
                metric: metric(workload.unit), values, key: key(workload.id, installedArm, defaultArm)
            )
            if let aa { rows.append(aa) }
            rows.append(row)
        }
        /// `mine` against `theirs`, both measured in the same child, in the default children
        /// (`installed` false) or the installed one.
        func inProcess(_ mine: String, _ theirs: String, installed: Bool, name: String, threshold: Double?) -> [VerdictRow] {
            var values = PairedValues()
            for (index, round) in rounds.enumerated() {
                if installed {
                    guard let m = round.installed[mine], let t = round.installed[theirs] else { continue }
                    values.append(round: index, subject: m, peer: t, twin: nil)
                } else {
                    guard let m1 = round.first[mine], let m2 = round.second[mine], let t1 = round.first[theirs],
                        let t2 = round.second[theirs]
                    else { continue }
                    // The geometric mean of the two children's own values: the round's log ratio
                    // is then the mean of the two in-process log ratios.
                    values.append(round: index, subject: (m1 * m2).squareRoot(), peer: t1, twin: t2)
                }
            }
            values.markContaminated(noise)
            let configuration = installed ? installedSubject : defaultPeer
            if installed {
                return [Verdicts.row(
                    section: .swiftConcurrency, name: name, subject: "\(mine) (\(configuration))",
                    peer: "\(theirs) (\(configuration))", metric: metric("operation"), values, threshold: threshold,
                    key: inProcessKey(mine, theirs, installed: true)
                )]
            }
            let (row, aa) = Verdicts.pair(
                section: .swiftConcurrency, name: name, subject: "\(mine) (\(configuration))",
                peer: "\(theirs) (\(configuration))", metric: metric("operation"), values,
                key: inProcessKey(mine, theirs, installed: false)
            )
            return (aa.map { [$0] } ?? []) + [row]
        }
        for (mine, theirs) in preferredPairs {
            rows += inProcess(mine, theirs, installed: false, name: "preferred pool: \(mine)", threshold: nil)
        }
        for (mine, theirs) in hopBounds {
            rows += inProcess(mine, theirs, installed: false, name: "hop bound: \(mine)", threshold: nil)
        }
        for mine in boltsAwaits {
            let defaultRows = inProcess(mine, swiftRoundTrip, installed: false, name: "\(mine) vs Swift's round trip", threshold: nil)
            rows += defaultRows
            let threshold = defaultRows.first(where: \.isAA)?.noiseThreshold
            rows += inProcess(mine, swiftRoundTrip, installed: true, name: "\(mine) vs Swift's round trip", threshold: threshold)
        }
        return rows
    }

    /// Swift's own round trip, the reference of Bolts' awaits.
    static let swiftRoundTrip = "Task { } + await value (round trip)"
    /// Bolts' awaits, each against `swiftRoundTrip` in the same child.
    static let boltsAwaits = [
        "Bolts Task.execute(.pool) + try await value", "Bolts Task.fromAsync {} + try await value",
    ]
    /// The pool as a task executor (the subject) and the default executor's same workload.
    static let preferredPairs = [
        ("Task(executorPreference: pool) {} (batches of 256)", "Task {} (batches of 256)"),
        ("Task(executorPreference: pool) {} from a task on the pool (batches of 256)", "Task {} (batches of 256)"),
        ("task-group child under withTaskExecutorPreference(pool)", "task-group child (1,000 per group)"),
        ("round trip through a preferred pool, caller on the pool too", swiftRoundTrip),
        ("round trip through a preferred pool, caller on the global executor", swiftRoundTrip),
    ]
    /// The last of `preferredPairs` into other executors: the same hop into SwiftNIO's event
    /// loop, and into an executor whose thread never sleeps, each against the default
    /// executor's own round trip.
    static let hopBounds = [
        ("round trip through a preferred SwiftNIO event loop, caller on the global executor", swiftRoundTrip),
        ("round trip through a preferred executor that never sleeps, caller on the global executor", swiftRoundTrip),
    ]

    private static func goals(_ verdicts: [VerdictRow]) -> [GoalCheck] {
        goalList.map { Goals.judge($0, in: verdicts) }
    }

    /// The section's goals, each on rows found by key.
    static var goalList: [Goal] {
        func installed(_ text: String, _ workload: String, atLeast bound: Double) -> Goal {
            let id = ConcurrencyWorkloads.id(of: workload)
            return Goal(text: text, rows: [GoalRow(key: key(id, installedArm, defaultArm))], bound: bound, isAtLeast: true)
        }
        func inProcess(_ text: String, _ mine: String, _ theirs: String, installed: Bool, atLeast bound: Double) -> Goal {
            Goal(text: text, rows: [GoalRow(key: inProcessKey(mine, theirs, installed: installed))], bound: bound, isAtLeast: true)
        }
        var goals: [Goal] = [
            installed("pool installed: unstructured Task {} ≥ 2× as fast as the default executor",
                      "Task {} (batches of 256)", atLeast: 2),
            installed("pool installed: 100,000 Task {} spawned at once ≥ 1.5× as fast",
                      "Task {} (100,000 spawned at once)", atLeast: 1.5),
            installed("pool installed: task-group children at least as fast (≥ 1.0×)",
                      "task-group child (1,000 per group)", atLeast: 1),
            installed("pool installed: an await round trip at least as fast (≥ 1.0×)", swiftRoundTrip, atLeast: 1),
        ]
        let preferred = [
            ("preferred pool: unstructured tasks ≥ 1.5× as fast as the default executor's", 0, 1.5),
            ("preferred pool: unstructured tasks spawned by a task on the pool ≥ 1.5× as fast as the default executor's", 1, 1.5),
            ("preferred pool: task-group children at least as fast as the default executor's (≥ 1.0×)", 2, 1.0),
            ("preferred pool: a round trip with the caller on the pool at least as fast as the default executor's own", 3, 1.0),
            ("preferred pool: a round trip from a default-executor task ≥ 0.25× the default executor's own (≤ 4× its time)", 4, 0.25),
        ]
        for (statement, index, bound) in preferred {
            let (mine, theirs) = preferredPairs[index]
            goals.append(inProcess(statement, mine, theirs, installed: false, atLeast: bound))
        }
        for (mine, what) in zip(boltsAwaits, ["Task.execute(.pool) + try await value", "Task.fromAsync + try await value"]) {
            for installed in [false, true] {
                goals.append(
                    inProcess(
                        "\(installed ? "pool installed" : "default executor"): \(what) ≤ 1.0× the time of Swift's Task {} + await value",
                        mine, swiftRoundTrip, installed: installed, atLeast: 1
                    )
                )
            }
        }
        return goals
    }

    /// What the two floor rows say against Swift's round trip: the least an await that
    /// keeps `value`'s cancellation contract can cost, before any Bolts task.
    private static func contractFloor(_ rows: [Row]) -> String? {
        func row(_ id: String) -> Row? { rows.first { $0.id == id } }
        guard let swift = row("round-trip"), let bare = row("continuation-resume"),
            let handled = row("continuation-resume-cancellation-handler")
        else { return nil }
        func ratio(_ a: Double?, _ b: Double?) -> String {
            guard let a, let b else { return "–" }
            return (a / b).fixed(2) + "×"
        }
        return "The floor under Bolts' `value`, against Swift's `Task {}` + `await value`: a `Task {}` that "
            + "resumes a continuation (no Bolts task) \(ratio(bare.defaultExecutorNanoseconds, swift.defaultExecutorNanoseconds)) "
            + "on the default executor and \(ratio(bare.poolInstalledNanoseconds, swift.poolInstalledNanoseconds)) installed; "
            + "inside `withTaskCancellationHandler`, which `value` needs to return at once when the awaiting task is "
            + "cancelled, \(ratio(handled.defaultExecutorNanoseconds, swift.defaultExecutorNanoseconds)) and "
            + "\(ratio(handled.poolInstalledNanoseconds, swift.poolInstalledNanoseconds))."
    }

    static func render(_ outcome: Outcome) -> String {
        var text = "\n## \(group)\n\n"
        if let error = outcome.error { return text + "Not measured: \(error)\n" }
        text += Report.method("Swift Concurrency on the Bolts pool", ["\(outcome.childMode) sizes"]) + "\n"
        var table = MarkdownTable(
            headers: ["workload", "default", "installed", "ratio [95% interval]", "verdict", "noise", "rounds"],
            alignments: [.left, .right, .right, .right, .left, .right, .right],
            uniform: ["noise", "rounds"]
        )
        for row in outcome.rows {
            let verdict = outcome.verdicts.first { $0.key == key(row.id, installedArm, defaultArm) }
            table.rows.append([
                "\(row.name) (per \(row.unit))",
                row.defaultExecutorNanoseconds?.formattedNanoseconds ?? "–",
                row.poolInstalledNanoseconds?.formattedNanoseconds ?? "–",
                verdict?.formattedRatioAndInterval ?? "–",
                verdict?.formattedVerdict ?? "–",
                verdict?.formattedThreshold ?? "–",
                verdict.map { String($0.rounds) } ?? "0",
            ])
        }
        text += table.render()
        let inProcess = outcome.verdicts.filter { !$0.isAA && $0.key.map { $0.arm != installedArm } ?? false }
        if !inProcess.isEmpty {
            text += "\nWithin one child (on the default executor unless marked):\n\n"
            var table = MarkdownTable(
                headers: ["comparison", "ratio [95% interval]", "verdict", "noise", "rounds"],
                alignments: [.left, .right, .left, .right, .right],
                uniform: ["noise", "rounds"]
            )
            for row in inProcess {
                let isInstalled = row.key?.comparison.hasSuffix("-\(installedArm)") ?? false
                table.rows.append([
                    row.name + (isInstalled ? " (\(installedSubject))" : ""), row.formattedRatioAndInterval,
                    row.formattedVerdict, row.formattedThreshold, Report.rounds(row),
                ])
            }
            text += table.render()
        }
        if let floor = contractFloor(outcome.rows) { text += "\n" + floor + "\n" }
        return text
    }
}
