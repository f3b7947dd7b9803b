/// The product's goals, judged from this run's numbers only. A goal whose numbers are
/// missing (filtered out, failed) is reported as not judged, never as met.
struct GoalCheck: Codable {
    var goal: String
    var measured: String
    var met: Bool?
}

enum Goals {
    static func check(_ results: [ComparisonResult]) -> [GoalCheck] {
        var checks: [GoalCheck] = []
        let ops = results.filter { $0.group == Catalog.taskOperationsGroup }

        func find(_ operationPrefix: String, _ entryPrefix: String) -> (ComparisonResult, EntryResult)? {
            for comparison in ops where comparison.operation.hasPrefix(operationPrefix) {
                if let entry = comparison.entries.first(where: { $0.name.hasPrefix(entryPrefix) && !$0.samples.isEmpty }
                ) {
                    return (comparison, entry)
                }
            }
            return nil
        }

        func ratioCheck(_ goal: String, _ operation: String, _ entryPrefix: String, atMost bar: Double, aimNs: Double) {
            guard let (comparison, entry) = find(operation, entryPrefix), let ratio = comparison.timeRatio(entry),
                let ns = entry.medianNanosecondsPerOperation
            else {
                checks.append(GoalCheck(goal: goal, measured: "not measured in this run", met: nil))
                return
            }
            let aim = ns <= aimNs ? "aim ≤\(Int(aimNs)) ns reached" : "aim ≤\(Int(aimNs)) ns not reached"
            checks.append(
                GoalCheck(
                    goal: goal,
                    measured:
                        "\(ns.formattedNanoseconds) vs \(comparison.reference?.medianNanosecondsPerOperation?.formattedNanoseconds ?? "?") = \(ratio.formattedRatio) (\(aim))",
                    met: ratio <= bar
                )
            )
        }

        ratioCheck(
            "continueWith on a completed task ≤ 0.5× SwiftNIO map on its loop",
            "continueWith on a completed task",
            "Bolts continueWith",
            atMost: 0.5,
            aimNs: 50
        )
        ratioCheck(
            "promise + one continuation + complete ≤ 0.5× SwiftNIO",
            "promise + one waiting continuation",
            "Bolts",
            atMost: 0.5,
            aimNs: 60
        )

        // Chain link against Bolts' own promise + one continuation + complete.
        if let (_, chain) = find("chain of", "Bolts"), let link = chain.medianNanosecondsPerOperation,
            let (_, single) = find("promise + one waiting continuation", "Bolts"),
            let once = single.medianNanosecondsPerOperation
        {
            checks.append(
                GoalCheck(
                    goal: "chain link ≤ 1.5× Bolts' promise + one continuation + complete",
                    measured:
                        "\(link.formattedNanoseconds) per link vs \(once.formattedNanoseconds) = \((link / once).formattedRatio)",
                    met: link <= 1.5 * once
                )
            )
        } else {
            checks.append(
                GoalCheck(
                    goal: "chain link ≤ 1.5× Bolts' promise + one continuation + complete",
                    measured: "not measured in this run",
                    met: nil
                )
            )
        }

        // Pool throughput against Dispatch global, at every producer count.
        let executorResults = results.filter { $0.group == Catalog.executorsGroup }
        var perCount: [String] = []
        var allMet: Bool? = executorResults.isEmpty ? nil : true
        for comparison in executorResults {
            guard let pool = comparison.entries.first(where: { $0.name.hasPrefix(ExecutorKind.boltsPool.title) }),
                comparison.reference?.name.hasPrefix(ExecutorKind.dispatchGlobal.title) == true,
                let ratio = comparison.timeRatio(pool)
            else {
                allMet = nil
                continue
            }
            let speedup = 1 / ratio
            perCount.append("P=\(comparison.producers ?? 0): \(speedup.formattedRatio)")
            if speedup < 2 { allMet = allMet.map { _ in false } }
        }
        checks.append(
            GoalCheck(
                goal: "Bolts pool throughput ≥ 2× DispatchQueue.global() at every producer count",
                measured: perCount.isEmpty ? "not measured in this run" : perCount.joined(separator: ", "),
                met: perCount.isEmpty ? nil : allMet
            )
        )
        // Pool throughput against the other executors with threads of their own.
        var peerLines: [String] = []
        var peersMet: Bool? = executorResults.isEmpty ? nil : true
        for comparison in executorResults {
            guard let pool = comparison.entries.first(where: { $0.name.hasPrefix(ExecutorKind.boltsPool.title) }),
                let poolNs = pool.medianNanosecondsPerOperation
            else {
                peersMet = nil
                continue
            }
            var worst: (String, Double)?
            for kind in [ExecutorKind.nioEventLoopGroup, .concurrencyTask] {
                guard let peer = comparison.entries.first(where: { $0.name.hasPrefix(kind.title) }),
                    let peerNs = peer.medianNanosecondsPerOperation
                else { continue }
                let speedup = peerNs / poolNs
                if worst == nil || speedup < worst!.1 { worst = (kind.shortTitle, speedup) }
            }
            guard let (name, speedup) = worst else { continue }
            peerLines.append("P=\(comparison.producers ?? 0): \(speedup.formattedRatio) \(name)")
            if speedup < 1 { peersMet = peersMet.map { _ in false } }
        }
        checks.append(
            GoalCheck(
                goal:
                    "Bolts pool throughput ≥ SwiftNIO's event-loop group and Swift Concurrency at every producer count",
                measured: peerLines.isEmpty
                    ? "not measured in this run" : "closest peer: " + peerLines.joined(separator: ", "),
                met: peerLines.isEmpty ? nil : peersMet
            )
        )

        // Paced hand-off p99 against Dispatch global, at every producer count.
        let handOffResults = results.filter { $0.group == Catalog.handOffGroup }
        var latencyLines: [String] = []
        var latencyMet: Bool? = handOffResults.isEmpty ? nil : true
        for comparison in handOffResults {
            guard let pool = comparison.entries.first(where: { $0.name.hasPrefix(ExecutorKind.boltsPool.title) }),
                let mine = pool.latency?.p99,
                let reference = comparison.reference, reference.name.hasPrefix(ExecutorKind.dispatchGlobal.title),
                let theirs = reference.latency?.p99
            else {
                latencyMet = nil
                continue
            }
            latencyLines.append(
                "P=\(comparison.producers ?? 0): \(Double(mine).formattedNanoseconds) vs \(Double(theirs).formattedNanoseconds)"
            )
            if mine > theirs { latencyMet = latencyMet.map { _ in false } }
        }
        checks.append(
            GoalCheck(
                goal: "Bolts pool paced hand-off p99 ≤ DispatchQueue.global()'s at every producer count",
                measured: latencyLines.isEmpty ? "not measured in this run" : latencyLines.joined(separator: ", "),
                met: latencyLines.isEmpty ? nil : latencyMet
            )
        )

        if let poolNs = executorResults.compactMap({ comparison in
            comparison.entries.first(where: { $0.name.hasPrefix(ExecutorKind.boltsPool.title) })?
                .medianNanosecondsPerOperation
        }).max() {
            checks.append(
                GoalCheck(
                    goal: "aim: ≤ 100 ns per tiny job on the Bolts pool",
                    measured: "worst producer count: \(poolNs.formattedNanoseconds) per job",
                    met: poolNs <= 100
                )
            )
        }

        // Allocations per continuation whose closure captures nothing.
        if let (_, entry) = find("continueWith on a completed task", "Bolts continueWith"),
            let allocations = entry.medianAllocationsPerOperation
        {
            checks.append(
                GoalCheck(
                    goal:
                        "≤ 1 allocation per continuation (closure captures nothing): continueWith on a completed task",
                    measured: "\(allocations.formattedAllocations) per continuation",
                    met: allocations <= 1.005
                )
            )
        }
        if let (_, eight) = find("promise + 8 waiting continuations", "Bolts"),
            let (_, bare) = find("promise create + complete", "Bolts"),
            let withWaiters = eight.medianAllocationsPerOperation, let base = bare.medianAllocationsPerOperation
        {
            let perContinuation = (withWaiters - base) / 8
            checks.append(
                GoalCheck(
                    goal: "≤ 1 allocation per continuation (closure captures nothing): waiting on a pending task",
                    measured:
                        "(\(withWaiters.formattedAllocations) with 8 waiters − \(base.formattedAllocations) without) / 8 = \(perContinuation.formattedAllocations)",
                    met: perContinuation <= 1.005
                )
            )
        }
        if let (_, chain) = find("chain of", "Bolts"), let allocations = chain.medianAllocationsPerOperation {
            checks.append(
                GoalCheck(
                    goal: "≤ 1 allocation per continuation (closure captures nothing): chain link",
                    measured: "\(allocations.formattedAllocations) per link",
                    met: allocations <= 1.005
                )
            )
        }
        return checks
    }
}
