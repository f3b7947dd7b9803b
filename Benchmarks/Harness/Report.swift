/// Renders results as Markdown: one table per comparison, an executor overview, the goals.
enum Report {
    static func render(
        _ results: [ComparisonResult],
        goals: [GoalCheck],
        machine: Machine,
        settings: RunSettings,
        countsAllocations: Bool
    ) -> String {
        var text = ""
        if isDebugBuild {
            text += "> **DEBUG BUILD: these numbers are meaningless. Run `swift run -c release Benchmarks`.**\n\n"
        }
        text += "Machine: \(machine.summary)\n\n"
        text += "Median of \(settings.repetitions) samples per scenario (each about "
        text += "\(Double(settings.sampleNanoseconds).formattedNanoseconds), after calibration and a warm-up sample); "
        text += "the implementations of one operation run interleaved in the same process. "
        text += "Ratios are to the **reference** peer of the same table, measured in the same run. "
        text +=
            countsAllocations
            ? "Allocations are counted by an interposed malloc on every thread of the process.\n"
            : "**Allocation counting is not working in this build: the allocation columns are meaningless.**\n"

        let ops = results.filter { $0.group == Catalog.taskOperationsGroup }
        if !ops.isEmpty {
            text += "\n## \(Catalog.taskOperationsGroup)\n\n"
            text += "Time ratio = median time per operation ÷ the reference's (below 1 is faster than the reference).\n"
            for comparison in ops { text += "\n" + taskOperationTable(comparison) }
        }
        let executors = results.filter { $0.group == Catalog.executorsGroup }
        if !executors.isEmpty {
            text += "\n## \(Catalog.executorsGroup)\n\n"
            text += "P producer threads submit tiny jobs (each increments a shared counter) as fast as they can; "
            text += "time runs from the first submission to the end of the last job. Throughput ratio = reference time "
            text += "÷ this time (above 1 is faster than `DispatchQueue.global()`). Queued latency: submit to job "
            text += "start of every 64th job, over all samples (HdrHistogram); under saturation it is mostly time "
            text += "spent queued behind other jobs.\n\n"
            text += executorOverview(executors)
            for comparison in executors { text += "\n" + executorTable(comparison) }
        }
        let handOffs = results.filter { $0.group == Catalog.handOffGroup }
        if !handOffs.isEmpty {
            text += "\n## \(Catalog.handOffGroup)\n\n"
            text += "P producer threads each submit one tiny job and wait until it has run before the next, so nothing "
            text += "queues: hand-off latency (submit to job start, every job, HdrHistogram over all samples) is the "
            text += "executor's own, including waking an idle worker. Round trip = elapsed time ÷ jobs (P at once); "
            text += "time ratio to `DispatchQueue.global()` (below 1 is faster).\n"
            for comparison in handOffs { text += "\n" + handOffTable(comparison) }
        }
        let judged = goals.filter { $0.met != nil }
        if !judged.isEmpty {
            text += "\n## Goals (judged from this run)\n\n" + goalsTable(goals)
        }
        let failures = results.flatMap { comparison in
            comparison.entries.compactMap { entry in entry.error.map { "- \(entry.name): \($0)" } }
        }
        if !failures.isEmpty {
            text += "\n## Failed scenarios\n\n" + failures.joined(separator: "\n") + "\n"
        }
        return text
    }

    /// Goals as a Markdown table: goal, what was measured, and the verdict.
    static func goalsTable(_ goals: [GoalCheck]) -> String {
        var table = MarkdownTable(headers: ["goal", "measured", "verdict"], alignments: [.left, .left, .left])
        for goal in goals {
            let verdict: String
            switch goal.met {
            case true?: verdict = "met"
            case false?: verdict = "**not met**"
            case nil: verdict = "not judged"
            }
            table.rows.append([goal.goal, goal.measured, verdict])
        }
        return table.render()
    }

    private static func taskOperationTable(_ comparison: ComparisonResult) -> String {
        var text = "### \(comparison.operation)\n\n"
        var table = MarkdownTable(
            headers: ["implementation", "ns/\(comparison.unit)", "min–max", "allocs/\(comparison.unit)", "time ratio"],
            alignments: [.left, .right, .right, .right, .right]
        )
        for entry in comparison.entries {
            let name = entry.isReference ? "\(entry.name) **(reference)**" : entry.name
            guard let medianNs = entry.medianNanosecondsPerOperation else {
                table.rows.append([name, "failed", "", "", ""])
                continue
            }
            table.rows.append([
                name,
                medianNs.formattedPlain,
                "\(entry.minimumNanosecondsPerOperation!.formattedPlain)–\(entry.maximumNanosecondsPerOperation!.formattedPlain)",
                entry.medianAllocationsPerOperation!.formattedAllocations,
                comparison.timeRatio(entry)?.formattedRatio ?? "",
            ])
        }
        text += table.render()
        return text
    }

    private static func executorOverview(_ comparisons: [ComparisonResult]) -> String {
        let producerCounts = comparisons.compactMap(\.producers)
        var table = MarkdownTable(
            headers: ["jobs per second (median)"] + producerCounts.map { "P=\($0)" },
            alignments: [.left] + producerCounts.map { _ in .right }
        )
        for kind in ExecutorKind.allCases {
            var row = [kind.title]
            var any = false
            for comparison in comparisons {
                if let entry = comparison.entries.first(where: { $0.name.hasPrefix(kind.title + ":") }),
                    let ns = entry.medianNanosecondsPerOperation
                {
                    row.append((1e9 / ns).formattedRate)
                    any = true
                } else {
                    row.append("–")
                }
            }
            if any { table.rows.append(row) }
        }
        return table.render()
    }

    private static func executorTable(_ comparison: ComparisonResult) -> String {
        var text = "### \(comparison.operation) (reference: \(ExecutorKind.dispatchGlobal.title))\n\n"
        var table = MarkdownTable(
            headers: ["executor", "ns/job", "jobs/s", "allocs/job", "throughput ratio", "queued p50 / p99 / p99.9"],
            alignments: [.left, .right, .right, .right, .right, .right]
        )
        for entry in comparison.entries {
            let title = ExecutorKind.allCases.first { entry.name.hasPrefix($0.title + ":") }?.title ?? entry.name
            let name = entry.isReference ? "\(title) **(reference)**" : title
            guard let ns = entry.medianNanosecondsPerOperation else {
                table.rows.append([name, "failed", "", "", "", ""])
                continue
            }
            table.rows.append([
                name,
                ns.formattedPlain,
                (1e9 / ns).formattedRate,
                entry.medianAllocationsPerOperation!.formattedAllocations,
                comparison.timeRatio(entry).map { (1 / $0).formattedRatio } ?? "",
                entry.latency.map(percentiles) ?? "",
            ])
        }
        text += table.render()
        return text
    }

    private static func handOffTable(_ comparison: ComparisonResult) -> String {
        var text = "### \(comparison.operation) (reference: \(ExecutorKind.dispatchGlobal.title))\n\n"
        var table = MarkdownTable(
            headers: ["executor", "hand-off p50", "p99", "p99.9", "round trip ns/job", "allocs/job", "time ratio"],
            alignments: [.left, .right, .right, .right, .right, .right, .right]
        )
        for entry in comparison.entries {
            let title = ExecutorKind.allCases.first { entry.name.hasPrefix($0.title + ":") }?.title ?? entry.name
            let name = entry.isReference ? "\(title) **(reference)**" : title
            guard let ns = entry.medianNanosecondsPerOperation else {
                table.rows.append([name, "failed", "", "", "", "", ""])
                continue
            }
            table.rows.append([
                name,
                entry.latency?.p50.formattedNanoseconds ?? "",
                entry.latency?.p99.formattedNanoseconds ?? "",
                entry.latency?.p999.formattedNanoseconds ?? "",
                ns.formattedPlain,
                entry.medianAllocationsPerOperation!.formattedAllocations,
                comparison.timeRatio(entry)?.formattedRatio ?? "",
            ])
        }
        text += table.render()
        return text
    }

    private static func percentiles(_ latency: LatencySummary) -> String {
        "\(latency.p50.formattedNanoseconds) / \(latency.p99.formattedNanoseconds) / \(latency.p999.formattedNanoseconds)"
    }
}

#if DEBUG
    /// Whether this is a debug build (every number it measures is meaningless).
    let isDebugBuild = true
#else
    /// Whether this is a debug build (every number it measures is meaningless).
    let isDebugBuild = false
#endif
