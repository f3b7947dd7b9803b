import BenchmarkStatistics
import Foundation
import Testing

@testable import Benchmarks

/// The executor, task-operation and Swift Concurrency goals find their rows among those
/// their sections' verdict code makes (keyed by each comparison's and arm's identifier).
@Suite struct CatalogGoalKeyTests {
    /// The keys of the rows `PairedRounds.verdicts` makes for `comparisons`, as `Runner` calls it.
    private func keys(_ comparisons: [Comparison]) -> Set<VerdictKey> {
        var keys: Set<VerdictKey> = []
        for comparison in comparisons {
            var rounds = PairedRounds<Int, Double>(arms: Array(comparison.entries.indices), reference: comparison.referenceIndex)
            for round in 0..<3 {
                for arm in comparison.entries.indices {
                    for isTwin in arm == comparison.referenceIndex ? [false, true] : [false] {
                        rounds.record(
                            RoundDraw(arm: arm, isTwin: isTwin, round: round, label: ""),
                            1 + Double((round * 5 + arm * 3 + (isTwin ? 1 : 0)) % 7) / 10)
                    }
                }
                rounds.noise.append(
                    RoundNoise(
                        seconds: 1, stealPercent: 0, otherProcessesCPUs: 0, cpuOverWall: 1,
                        involuntarySwitchesPerSecond: 0, loadAverage: 0, flags: []))
            }
            let metrics = comparison.metrics.map { judged in JudgedMetric<Double>(judged.metric) { $0 } }
            let rows = rounds.verdicts(
                section: comparison.section, name: comparison.operation, title: { "\($0)" }, metrics: metrics,
                comparison: comparison.id, id: { comparison.entries[$0].id })
            keys.formUnion(rows.compactMap(\.key))
        }
        return keys
    }

    private func expectRows(_ goals: [Goal], in keys: Set<VerdictKey>) {
        for goal in goals {
            for row in goal.rows {
                #expect(keys.contains(row.key), "\(goal.text): no row \(row.key)")
                if let over = row.over { #expect(keys.contains(over), "\(goal.text): no row \(over)") }
            }
        }
    }

    @Test func everyExecutorGoalFindsItsRows() {
        let producers = [1, 2, 4, 8]
        let goals = ExecutorsSection.goalList(producerCounts: producers, pacedProducerCounts: producers)
        #expect(goals.count == 3)
        expectRows(goals, in: keys(ExecutorsSection.comparisons(producerCounts: producers, filter: nil, withoutReference: false)))
    }

    @Test func everySwiftConcurrencyGoalFindsItsRows() {
        let names = ConcurrencyWorkloads.all.map(\.name)
        #expect(Set(ConcurrencyWorkloads.all.map(\.id)).count == names.count, "workload identifiers are unique")
        func medians(_ round: Int, _ child: Int) -> [String: Double] {
            Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, 100 + Double((round * 7 + child * 3 + $0) % 11)) })
        }
        let rounds = (0..<3).map { (first: medians($0, 0), second: medians($0, 1), installed: medians($0, 2)) }
        let noise = (0..<3).map { _ in
            RoundNoise(
                seconds: 1, stealPercent: 0, otherProcessesCPUs: 0, cpuOverWall: 1,
                involuntarySwitchesPerSecond: 0, loadAverage: 0, flags: [])
        }
        let rows = ConcurrencyOnPool.verdicts(rounds, noise)
        #expect(rows.allSatisfy { $0.key != nil }, "every row is keyed")
        let keys = Set(rows.compactMap(\.key))
        #expect(keys.count == rows.count, "keys are unique")
        #expect(ConcurrencyOnPool.goalList.count == 13)
        expectRows(ConcurrencyOnPool.goalList, in: keys)
    }

    @Test func everyTaskOperationRatioGoalFindsItsRows() {
        let environment = Environment()
        defer { environment.shutdown() }
        let comparisons = Catalog.taskOperations(environment)
        #expect(Set(comparisons.map(\.id)).count == comparisons.count, "comparison identifiers are unique")
        for comparison in comparisons {
            #expect(Set(comparison.entries.map(\.id)).count == comparison.entries.count, "\(comparison.id): entry identifiers are unique")
        }
        let keys = keys(comparisons)
        expectRows(TaskOperationsSection.ratioGoals, in: keys)
        // The goals that read samples or allocation counts find their rows by (comparison, arm).
        let rows = [
            TaskOperationsSection.chainRow, TaskOperationsSection.singleContinuationRow,
            TaskOperationsSection.continueWithRow, TaskOperationsSection.eightWaitersRow,
            TaskOperationsSection.noWaiterRow,
        ]
        for (comparison, arm) in rows {
            #expect(keys.contains { $0.comparison == comparison && $0.arm == arm }, "no row \(comparison) \(arm)")
        }
    }

    @Test func everyQuotedComparisonIsOneItsSectionMakes() {
        let environment = Environment()
        defer { environment.shutdown() }
        let producers = [1, 2, 4, 8]
        let serverSettings = ServerBenchmark.Settings(
            fanOuts: [1, 16, 64], jobNanoseconds: [300, 3_000], rounds: 3, seconds: 1, eventLoops: 2, wrkThreads: 1,
            connections: 32)
        let made: [Section: [String]] = [
            .taskOperations: Catalog.taskOperations(environment).map(\.id),
            .executors: Catalog.executors(producerCounts: producers).map(\.id),
            .server: serverSettings.configurations { _ in 0 }.map(\.key),
        ]
        #expect(Set(Quoted.comparisons.keys) == Set(made.keys))
        for (section, ids) in Quoted.comparisons {
            for id in ids { #expect(made[section]?.contains(id) == true, "\(section.rawValue): no comparison \(id)") }
        }
        #expect(Quoted.weight(1, .executors, "tiny-P8") == Quoted.factor && Quoted.weight(1, .executors, "tiny-P1") == 1)
        #expect(serverSettings.weight(perConfiguration: 4) == 4 * 5 + 4 * Quoted.factor)
    }
}
