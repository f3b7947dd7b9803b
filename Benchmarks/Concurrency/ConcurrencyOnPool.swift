import Foundation

/// "Swift Concurrency on the Bolts pool": the workloads of `ConcurrencyWorkloads`, each
/// measured in child processes of this benchmark of two configurations: Swift's default
/// global executor, and `ThreadPool.shared` installed as the global executor. The
/// children run one after the other while this process idles. The full mode runs four of
/// each, in the order ABBAABBA, and takes the median over every sample of a
/// configuration's four processes. On this VM one process's medians can sit 1.5× above
/// another's for the same workload (three pairs run back to back put the speed-up of
/// `Task {}` batches at 1.64×, 2.00× and 2.56×), so more processes, alternated so that
/// drift favours neither, make the medians less a matter of which phase each child met.
/// `--quick` runs one of each.
enum ConcurrencyOnPool {
    static let group = "Swift Concurrency on the Bolts pool"

    struct Row: Codable {
        var name: String
        var unit: String
        /// Median ns per operation with Swift's default global executor.
        var defaultExecutorNanoseconds: Double?
        /// Median ns per operation with the Bolts pool installed as the global executor.
        var poolInstalledNanoseconds: Double?
        /// Default ÷ installed (above 1: the installed pool is faster).
        var speedUp: Double?
        var defaultExecutorSamples: [Double]
        var poolInstalledSamples: [Double]
    }

    /// A goal of the issue this section answers, judged on this run's medians.
    struct Goal: Codable {
        var statement: String
        var measured: String
        var met: Bool
    }

    struct Outcome: Codable {
        var rows: [Row]
        var goals: [Goal]
        var error: String?
    }

    /// Whether `filter` (as given to --filter) selects this section.
    static func isSelected(by filter: String?) -> Bool {
        guard let filter = filter?.lowercased(), !filter.isEmpty else { return true }
        return group.lowercased().contains(filter)
            || ConcurrencyWorkloads.all.contains { $0.name.lowercased().contains(filter) }
    }

    static func run(quick: Bool, repetitions: Int, progress: Progress, watchdog: Watchdog) -> Outcome {
        let order = quick ? [false, true] : [false, true, true, false, false, true, true, false]
        var measured: [Bool: [String: [Double]]] = [false: [:], true: [:]]
        for installed in order {
            let text = "\(group): child process, \(installed ? "pool installed" : "default executor")"
            watchdog.beat(text)
            progress.update(text)
            do {
                let result = try runChild(installed: installed, quick: quick, repetitions: repetitions)
                for (name, samples) in result.samples { measured[installed]![name, default: []] += samples }
            } catch {
                return Outcome(rows: [], goals: [], error: "\(error)")
            }
        }
        let rows = ConcurrencyWorkloads.all.map { workload in
            let d = measured[false]![workload.name] ?? []
            let i = measured[true]![workload.name] ?? []
            let dm = median(d)
            let im = median(i)
            return Row(
                name: workload.name,
                unit: workload.unit,
                defaultExecutorNanoseconds: dm,
                poolInstalledNanoseconds: im,
                speedUp: dm.flatMap { dm in im.map { dm / $0 } },
                defaultExecutorSamples: d,
                poolInstalledSamples: i
            )
        }
        return Outcome(rows: rows, goals: goals(rows), error: nil)
    }

    private static func runChild(installed: Bool, quick: Bool, repetitions: Int) throws
        -> ConcurrencyWorkloads.Measured
    {
        let data = try runBenchmarkChild(
            ["--concurrency-child", installed ? "installed" : "default", "--repetitions", "\(repetitions)"]
                + (quick ? ["--quick"] : [])
        )
        return try JSONDecoder().decode(ConcurrencyWorkloads.Measured.self, from: data)
    }

    private static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// The row whose workload name starts with `prefix`.
    private static func row(_ prefix: String, in rows: [Row]) -> Row? { rows.first { $0.name.hasPrefix(prefix) } }

    private static func goals(_ rows: [Row]) -> [Goal] {
        func row(_ prefix: String) -> Row? { Self.row(prefix, in: rows) }
        var goals: [Goal] = []
        func speedUp(_ prefix: String, atLeast bound: Double, _ statement: String) {
            guard let r = row(prefix), let s = r.speedUp else { return }
            goals.append(Goal(statement: statement, measured: String(format: "%.2f×", s), met: s >= bound))
        }
        speedUp("Task {} (batches", atLeast: 2, "pool installed: unstructured Task {} ≥ 2× faster than the default executor")
        speedUp("task-group child (1", atLeast: 1.5, "pool installed: task-group children ≥ 1.5× faster")
        speedUp("Task { } + await value", atLeast: 1, "pool installed: an await round trip no slower (≥ 1.0×)")
        // The pool as a task executor, against the default executor's same workload (both
        // measured in the default child).
        func versus(_ mine: String, _ theirs: String, atLeast bound: Double, _ statement: String) {
            guard let m = row(mine)?.defaultExecutorNanoseconds, let t = row(theirs)?.defaultExecutorNanoseconds else { return }
            let s = t / m
            goals.append(Goal(statement: statement, measured: String(format: "%.2f×", s), met: s >= bound))
        }
        versus("Task(executorPreference: pool) {} (batches", "Task {} (batches", atLeast: 1.5,
               "preferred pool: unstructured tasks ≥ 1.5× faster than the default executor's")
        versus("Task(executorPreference: pool) {} from a task on the pool", "Task {} (batches", atLeast: 1.5,
               "preferred pool: unstructured tasks spawned by a task on the pool ≥ 1.5× faster than the default executor's")
        versus("task-group child under", "task-group child (1", atLeast: 1.5,
               "preferred pool: task-group children ≥ 1.5× faster than the default executor's")
        versus("round trip through a preferred pool, caller on the pool", "Task { } + await value", atLeast: 1,
               "preferred pool: a round trip (caller on the pool) no slower than the default executor's")
        versus("round trip through a preferred pool, caller on the global", "Task { } + await value", atLeast: 1,
               "preferred pool: a round trip from the default executor no slower than the default executor's own")
        // Bolts' awaits against Swift's own round trip, in each configuration.
        for (prefix, what) in [("Bolts Task.execute", "Task.execute(.pool) + try await value"),
                               ("Bolts Task.fromAsync", "Task.fromAsync + try await value")] {
            guard let bolts = row(prefix), let swift = row("Task { } + await value") else { continue }
            for (installed, b, s) in [(false, bolts.defaultExecutorNanoseconds, swift.defaultExecutorNanoseconds),
                                      (true, bolts.poolInstalledNanoseconds, swift.poolInstalledNanoseconds)] {
                guard let b, let s else { continue }
                goals.append(Goal(
                    statement: "\(installed ? "pool installed" : "default executor"): \(what) ≤ 1.0× Swift's Task {} + await value",
                    measured: String(format: "%.2f×", b / s),
                    met: b <= s
                ))
            }
        }
        return goals
    }

    /// What the two floor rows say against Swift's round trip: the least an await that
    /// keeps `value`'s cancellation contract can cost, before any Bolts task.
    private static func contractFloor(_ rows: [Row]) -> String? {
        func row(_ prefix: String) -> Row? { Self.row(prefix, in: rows) }
        guard let swift = row("Task { } + await value"), let bare = row("a Task {} resumes a continuation"),
            let handled = row("the same inside withTaskCancellationHandler")
        else { return nil }
        func ratio(_ a: Double?, _ b: Double?) -> String {
            guard let a, let b else { return "–" }
            return String(format: "%.2f×", a / b)
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
        text += "Each workload runs in child processes of this benchmark, alternated (four of each, ABBAABBA; one "
        text += "of each with --quick): A with Swift's default global executor (Dispatch), B with "
        text += "`ThreadPool.shared.unsafeTryInstallAsConcurrencyGlobalExecutor()` called first thing. Median time per "
        text += "operation over every sample of a configuration's processes; speed-up = default ÷ installed (above 1: "
        text += "the installed pool is faster). The preferred-pool rows use `ThreadPool.shared` as a task executor in both.\n\n"
        text += "| workload | unit | default executor | pool installed | speed-up |\n"
        text += "|---|---|---:|---:|---:|\n"
        for row in outcome.rows {
            let d = row.defaultExecutorNanoseconds.map { $0.formattedNanoseconds } ?? "–"
            let i = row.poolInstalledNanoseconds.map { $0.formattedNanoseconds } ?? "–"
            let s = row.speedUp.map { String(format: "%.2f×", $0) } ?? "–"
            text += "| \(row.name) | \(row.unit) | \(d) | \(i) | \(s) |\n"
        }
        if !outcome.goals.isEmpty {
            text += "\n| goal | measured | met |\n|---|---:|:---:|\n"
            for goal in outcome.goals { text += "| \(goal.statement) | \(goal.measured) | \(goal.met ? "yes" : "**no**") |\n" }
        }
        if let floor = contractFloor(outcome.rows) { text += "\n" + floor + "\n" }
        return text
    }
}
