import BenchmarkStatistics
import Foundation

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
    /// How the children size their samples ("quick", "budget" or "full"), and how many times
    /// each runs every workload.
    private let childMode: String
    private let repetitions: Int
    private let stopping: StoppingRule

    /// `filter` (as given to --filter) selects the section by its heading or a workload's name.
    init(filter: String?, childMode: String, repetitions: Int, stopping: StoppingRule) {
        let filter = filter?.lowercased() ?? ""
        isSelected =
            filter.isEmpty || ConcurrencyOnPool.group.lowercased().contains(filter)
            || ConcurrencyWorkloads.all.contains { $0.name.lowercased().contains(filter) }
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
        let scheduler = context.scheduler(stopping, seedOffset: 1)
        let outcome = ConcurrencyOnPool.run(childMode: childMode, repetitions: repetitions, scheduler: scheduler)
        context.progress.log(verdicts: outcome.verdicts)
        return SectionOutcome(
            verdicts: outcome.verdicts, noise: outcome.noise, goals: outcome.goals,
            markdown: ConcurrencyOnPool.render(outcome) + Report.goals(outcome.goals, title: "Swift Concurrency"),
            failed: outcome.error != nil, json: [("concurrency", outcome)])
    }
}

/// "Swift Concurrency on the Bolts pool": the workloads of `ConcurrencyWorkloads` in child
/// processes on Swift's default global executor (A) and with `ThreadPool.shared` installed as
/// the global executor (B). The process is where the variance lives (one process's medians can
/// sit 1.5× above another's), so each round runs three children one after the other, two of A
/// and one of B, in an order drawn at random, while this process idles. A round's ratio is the
/// A children's geometric mean over B's, and the two A children against each other are the A/A.
enum ConcurrencyOnPool {
    static let group = "Swift Concurrency on the Bolts pool"

    struct Row: Codable {
        /// The workload's identifier (`ConcurrencyWorkloads.Workload.id`).
        var id: String
        var name: String
        var unit: String
        /// Geometric means over the rounds of each child's median ns per operation, on Swift's
        /// default global executor and with the pool installed; every child's median.
        var defaultExecutorNanoseconds: Double?
        var poolInstalledNanoseconds: Double?
        var defaultExecutorSamples: [Double]
        var poolInstalledSamples: [Double]
    }

    struct Outcome: Codable {
        var rows: [Row] = []
        var verdicts: [VerdictRow] = []
        var goals: [GoalCheck] = []
        var noise: [RoundNoise]
        /// How each child sized its samples (`ConcurrencyWorkloads.divisor(forScale:)`).
        var childMode: String
        var error: String?
    }

    /// One round's medians per workload: in the default child, its twin, and the installed one
    /// (empty where a child gave none).
    typealias Round = (first: [String: Double], second: [String: Double], installed: [String: Double])

    /// Runs the section's rounds: each arm a child process (`ChildKind`) that reports each
    /// workload's median; the default executor's child is the reference.
    static func run(childMode: String, repetitions: Int, scheduler: RoundScheduler) -> Outcome {
        let (reference, installed) = (ChildKind.concurrencyOnDefaultExecutor, ChildKind.concurrencyOnPoolInstalled)
        let paired = scheduler.run(
            group, arms: [reference, installed], reference: reference, weight: ConcurrencySection.weight,
            title: { $0 == installed ? "child with the pool installed" : "child on the default executor" },
            measure: { draw -> [String: Double]? in
                let data = try runBenchmarkChild(
                    draw.arm.arguments + ["--repetitions", "\(repetitions)", "--concurrency-scale", childMode])
                return try JSONDecoder().decode(ConcurrencyWorkloads.Measured.self, from: data).samples
                    .compactMapValues { median($0) }
            },
            widestInterval: { sofar in
                Self.verdicts(medians(sofar), sofar.noise).filter { !$0.isAA && $0.key?.arm == installedArm }
                    .compactMap { $0.estimate?.relativeHalfWidth }.max()
            }
        )
        if let failure = paired.failure {
            return Outcome(noise: paired.noise, childMode: childMode, error: "\(failure)")
        }
        let rounds = medians(paired)
        let rows = ConcurrencyWorkloads.all.map { workload in
            let d = rounds.flatMap { [$0.first[workload.name], $0.second[workload.name]].compactMap { $0 } }
            let i = rounds.compactMap { $0.installed[workload.name] }
            return Row(
                id: workload.id, name: workload.name, unit: workload.unit, defaultExecutorNanoseconds: geometricMean(d),
                poolInstalledNanoseconds: geometricMean(i), defaultExecutorSamples: d, poolInstalledSamples: i)
        }
        let verdicts = verdicts(rounds, paired.noise)
        return Outcome(
            rows: rows, verdicts: verdicts, goals: goalList.map { Goals.judge($0, in: verdicts) }, noise: paired.noise,
            childMode: childMode)
    }

    /// The rounds' medians (`Round`).
    private static func medians(_ paired: PairedRounds<ChildKind, [String: Double]>) -> [Round] {
        let (reference, installed) = (ChildKind.concurrencyOnDefaultExecutor, ChildKind.concurrencyOnPoolInstalled)
        return (0..<paired.count).map { round in
            let first = paired.value(of: reference, inRound: round) ?? [:]
            let second = paired.value(of: reference, twin: true, inRound: round) ?? [:]
            return (first, second, paired.value(of: installed, inRound: round) ?? [:])
        }
    }

    static let installedSubject = "pool installed"
    static let defaultPeer = "default executor"
    /// The configurations' identifiers in verdict keys (`VerdictKey.arm`, `.baseline`).
    static let installedArm = "pool-installed"
    static let defaultArm = "default-executor"

    /// The key of one of the section's rows (one metric: time per operation); a workload's row
    /// is `key(workload.id)`, the pool installed against the default executor.
    static func key(_ comparison: String, _ arm: String = installedArm, _ baseline: String = defaultArm) -> VerdictKey {
        VerdictKey(section: .swiftConcurrency, comparison: comparison, arm: arm, baseline: baseline, metric: "time")
    }

    /// The key of `mine` against `theirs` (workload names) within the children of one
    /// configuration: the comparison names both and the configuration.
    static func inProcessKey(_ mine: String, _ theirs: String, installed: Bool) -> VerdictKey {
        let (m, t) = (ConcurrencyWorkloads.id(of: mine), ConcurrencyWorkloads.id(of: theirs))
        return key("\(m)-vs-\(t)-\(installed ? installedArm : defaultArm)", m, t)
    }

    /// The section's verdicts from its rounds so far: every workload, pool installed against
    /// the default executor (the two default children are the peer and its twin); in the default
    /// children, the pool as a task executor against the default executor's own workload, and
    /// Bolts' awaits against Swift's round trip (the two children's in-process ratios averaged,
    /// the reference workload in the two as the A/A); in the installed child, which has no twin,
    /// Bolts' awaits against Swift's round trip, with the default children's A/A threshold.
    static func verdicts(_ rounds: [Round], _ noise: [RoundNoise]) -> [VerdictRow] {
        /// The subject's row after the A/A row of the peer's twin, whose threshold judges it (where
        /// there is no twin, as in the installed child, `threshold` does), on each round's subject,
        /// peer and twin where `value` has them (the twin too unless not `twin`).
        func judged(
            _ name: String, _ subject: String, _ peer: String, unit: String = "operation", key: VerdictKey,
            twin: Bool = true, threshold: Double? = nil, _ value: (Round) -> (Double?, Double?, Double?)
        ) -> [VerdictRow] {
            var values = PairedValues()
            for (index, round) in rounds.enumerated() {
                let (subject, peer, other) = value(round)
                guard let subject, let peer, !twin || other != nil else { continue }
                values.append(round: index, subject: subject, peer: peer, twin: other)
            }
            values.markContaminated(noise)
            let metric = Metric(title: "time per \(unit)", unit: "ns", lowerIsBetter: true)
            var aaKey = key
            aaKey.arm = key.baseline
            let aa = Verdicts.aa(section: .swiftConcurrency, name: name, peer: peer, metric: metric, values, key: aaKey)
            let row = Verdicts.row(
                section: .swiftConcurrency, name: name, subject: subject, peer: peer, metric: metric, values,
                threshold: aa?.noiseThreshold ?? threshold, key: key)
            return (aa.map { [$0] } ?? []) + [row]
        }
        var rows = ConcurrencyWorkloads.all.flatMap { workload in
            let name = workload.name
            return judged(name, installedSubject, defaultPeer, unit: workload.unit, key: key(workload.id)) {
                ($0.installed[name], $0.first[name], $0.second[name])
            }
        }
        /// `mine` against `theirs`, both measured in the same child, in the default children
        /// (`installed` false) or the installed one.
        func inProcess(
            _ mine: String, _ theirs: String, name: String, installed: Bool = false, threshold: Double? = nil
        ) -> [VerdictRow] {
            let configuration = installed ? installedSubject : defaultPeer
            return judged(
                name, "\(mine) (\(configuration))", "\(theirs) (\(configuration))",
                key: inProcessKey(mine, theirs, installed: installed), twin: !installed, threshold: threshold
            ) { round in
                if installed { return (round.installed[mine], round.installed[theirs], nil) }
                // In the default children, the geometric mean of the two children's own values: the
                // round's log ratio is then the mean of the two in-process log ratios.
                let both = round.first[mine].flatMap { m in round.second[mine].map { (m * $0).squareRoot() } }
                return (both, round.first[theirs], round.second[theirs])
            }
        }
        for (mine, theirs) in preferredPairs { rows += inProcess(mine, theirs, name: "preferred pool: \(mine)") }
        for (mine, theirs) in hopBounds { rows += inProcess(mine, theirs, name: "hop bound: \(mine)") }
        for mine in boltsAwaits {
            let name = "\(mine) vs Swift's round trip"
            let defaultRows = inProcess(mine, swiftRoundTrip, name: name)
            let threshold = defaultRows.first(where: \.isAA)?.noiseThreshold
            rows += defaultRows + inProcess(mine, swiftRoundTrip, name: name, installed: true, threshold: threshold)
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

    /// The section's goals, each on rows found by key: the installed child's workloads against
    /// the default children's, then the preferred pool's and Bolts' awaits within one child.
    static var goalList: [Goal] {
        func goal(_ text: String, _ key: VerdictKey, atLeast bound: Double) -> Goal {
            Goal(text: text, rows: [GoalRow(key: key)], bound: bound, isAtLeast: true)
        }
        let installed = [
            ("pool installed: unstructured Task {} ≥ 2× as fast as the default executor", "task-batches", 2.0),
            ("pool installed: 100,000 Task {} spawned at once ≥ 1.5× as fast", "task-spawn-at-once", 1.5),
            ("pool installed: task-group children at least as fast (≥ 1.0×)", "group-child", 1),
            ("pool installed: an await round trip at least as fast (≥ 1.0×)", "round-trip", 1),
        ].map { goal($0, key($1), atLeast: $2) }
        let preferred = zip(preferredPairs, [
            ("preferred pool: unstructured tasks ≥ 1.5× as fast as the default executor's", 1.5),
            ("preferred pool: unstructured tasks spawned by a task on the pool ≥ 1.5× as fast as the default executor's", 1.5),
            ("preferred pool: task-group children at least as fast as the default executor's (≥ 1.0×)", 1.0),
            ("preferred pool: a round trip with the caller on the pool at least as fast as the default executor's own", 1.0),
            ("preferred pool: a round trip from a default-executor task ≥ 0.25× the default executor's own (≤ 4× its time)", 0.25),
        ]).map { pair, statement in
            goal(statement.0, inProcessKey(pair.0, pair.1, installed: false), atLeast: statement.1)
        }
        let awaits = zip(boltsAwaits, ["Task.execute(.pool) + try await value", "Task.fromAsync + try await value"])
            .flatMap { mine, what in
                [false, true].map { installed in
                    let configuration = installed ? installedSubject : defaultPeer
                    let text = "\(configuration): \(what) ≤ 1.0× the time of Swift's Task {} + await value"
                    return goal(text, inProcessKey(mine, swiftRoundTrip, installed: installed), atLeast: 1)
                }
            }
        return installed + preferred + awaits
    }

    /// What the two floor rows say against Swift's round trip: the least an await that
    /// keeps `value`'s cancellation contract can cost, before any Bolts task.
    private static func contractFloor(_ rows: [Row]) -> String? {
        func row(_ id: String) -> Row? { rows.first { $0.id == id } }
        guard let swift = row("round-trip"), let bare = row("continuation-resume"),
            let handled = row("continuation-resume-cancellation-handler")
        else { return nil }
        /// `row`'s time over Swift's round trip's, on the default executor or installed.
        func ratio(_ row: Row, _ time: KeyPath<Row, Double?>) -> String {
            guard let a = row[keyPath: time], let b = swift[keyPath: time] else { return "–" }
            return (a / b).fixed(2) + "×"
        }
        let (onDefault, installed) = (\Row.defaultExecutorNanoseconds, \Row.poolInstalledNanoseconds)
        return "The floor under Bolts' `value`, against Swift's `Task {}` + `await value`: a `Task {}` that "
            + "resumes a continuation (no Bolts task) \(ratio(bare, onDefault)) on the default executor and "
            + "\(ratio(bare, installed)) installed; inside `withTaskCancellationHandler`, which `value` needs to "
            + "return at once when the awaiting task is cancelled, \(ratio(handled, onDefault)) and "
            + "\(ratio(handled, installed))."
    }

    static func render(_ outcome: Outcome) -> String {
        var text = "\n## \(group)\n\n"
        if let error = outcome.error { return text + "Not measured: \(error)\n" }
        text += Report.method("Swift Concurrency on the Bolts pool", ["\(outcome.childMode) sizes"]) + "\n"
        var table = MarkdownTable(
            headers: ["workload", "default", "installed", "ratio [95% interval]", "verdict", "noise", "rounds"],
            alignments: [.left, .right, .right, .right, .left, .right, .right], uniform: ["noise", "rounds"])
        for row in outcome.rows {
            let verdict = outcome.verdicts.first { $0.key == key(row.id) }
            let times = [row.defaultExecutorNanoseconds, row.poolInstalledNanoseconds].map { $0?.formattedNanoseconds }
            let judged = [verdict?.formattedRatioAndInterval, verdict?.formattedVerdict, verdict?.formattedThreshold]
            let rounds = verdict.map { String($0.rounds) } ?? "0"
            table.rows.append(["\(row.name) (per \(row.unit))"] + (times + judged).map { $0 ?? "–" } + [rounds])
        }
        text += table.render()
        let inProcess = outcome.verdicts.filter { !$0.isAA && $0.key.map { $0.arm != installedArm } ?? false }
        if !inProcess.isEmpty {
            text += "\nWithin one child (on the default executor unless marked):\n\n"
            var table = MarkdownTable(
                headers: ["comparison", "ratio [95% interval]", "verdict", "noise", "rounds"],
                alignments: [.left, .right, .left, .right, .right], uniform: ["noise", "rounds"])
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
