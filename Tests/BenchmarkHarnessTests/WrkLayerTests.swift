import BenchmarkStatistics
import Foundation
import Testing

@testable import Benchmarks

/// What the wrk sections share decides without wrk: an arm's medians over its rounds, the
/// rows a goal reads, and each host's figures from its counters.
@Suite struct WrkLayerTests {
    private func run(_ load: String, requestsPerSecond: Double, p99: Double, max: Double, failed: Double = 0)
        -> WrkRun
    {
        let wrk = WrkLoadGenerator.Run(
            requests: Int(requestsPerSecond), seconds: 1, errors: 1, timeouts: 0, non2xx: 0, p50: p99 / 2,
            p90: p99 * 0.9, p99: p99, p999: p99 * 1.1, max: max, mean: p99 / 2)
        return WrkRun(
            load: load, wrk: wrk, requestsPerSecond: requestsPerSecond, cpuMicrosecondsPerRequest: 1e6 / requestsPerSecond,
            figures: ["failed": failed])
    }

    @Test func aSummaryTakesMediansOverTheRoundsAndLeavesTheTwinOut() throws {
        let draws = [
            WrkDraw(arm: "a", round: 0, isTwin: false, runs: [run("x", requestsPerSecond: 100, p99: 10, max: 50)]),
            WrkDraw(arm: "a", round: 0, isTwin: true, runs: [run("x", requestsPerSecond: 1, p99: 1, max: 9_999)]),
            WrkDraw(arm: "a", round: 1, isTwin: false, runs: [run("x", requestsPerSecond: 300, p99: 30, max: 20, failed: 2)]),
            WrkDraw(arm: "a", round: 2, isTwin: false, runs: [run("x", requestsPerSecond: 200, p99: 20, max: 40)]),
            WrkDraw(arm: "b", round: 0, isTwin: false, runs: [run("x", requestsPerSecond: 5, p99: 5, max: 5)]),
        ]
        let summary = try #require(WrkSummary(arm: "a", load: "x", draws: draws))
        #expect(summary.rounds == 3)
        #expect(summary.requestsPerSecond == 200)
        #expect(summary.p99 == 20)
        #expect(summary.max == 50, "the slowest request of any round but the twin's")
        #expect(summary.errors == 3 + 2, "wrk's errors of each round and the server's failures")
        #expect(WrkSummary(arm: "a", load: "other", draws: draws) == nil)
    }

    @Test func aGoalOnALowerIsBetterMetricReadsTheSubjectOverThePeer() {
        let key = VerdictKey(section: .server, comparison: "16x3000", arm: "a", baseline: "b", metric: "cpu")
        let row = VerdictRow(
            section: .server, name: "n", subject: "s", baseline: "b", metric: WrkMetrics.cpuPerRequest.title,
            ratio: 1.25, interval95: [1.6, 2.0], verdict: .better, rounds: 4, noiseThreshold: 0.05, key: key)
        // The peer's CPU ÷ the subject's is 1.6–2.0, so the subject's ÷ the peer's is 0.5–0.625.
        let cpu = Goals.judge(Goal(text: "≤ 0.9×", rows: [GoalRow(key: key)], bound: 0.9, isAtLeast: false, inverts: true), in: [row])
        #expect(cpu.verdict == .met)
        #expect(cpu.measured == "0.80× [0.50, 0.62]")
        let missing = VerdictKey(section: .server, comparison: "16x3000", arm: "c", baseline: "b", metric: "cpu")
        let absent = Goals.judge(Goal(text: "≥ 1×", rows: [GoalRow(key: missing)], bound: 1, isAtLeast: true), in: [row])
        #expect(absent.verdict == .undecided && absent.measured == "no interval")
    }

    /// Rounds in which every arm (and the reference's twin) measured every load, with values
    /// that differ from round to round, so that every verdict has an interval.
    private func rounds<Arm: Hashable>(_ arms: [Arm], reference: Arm, loads: [String], blocking: Bool = false)
        -> PairedRounds<Arm, WrkDraw<Arm>>
    {
        var rounds = PairedRounds<Arm, WrkDraw<Arm>>(arms: arms, reference: reference)
        let wrk = WrkLoadGenerator.Run(
            requests: 1_000, seconds: 1, errors: 0, timeouts: 0, non2xx: 0, p50: 500, p90: 900, p99: 2_000,
            p999: 3_000, max: 4_000, mean: 600)
        for round in 0..<4 {
            for (index, arm) in arms.enumerated() {
                for isTwin in arm == reference ? [false, true] : [false] {
                    let scale = 1 + 0.1 * Double((round * 7 + index * 3 + (isTwin ? 5 : 0)) % 5)
                    let runs = loads.map {
                        WrkRun(load: $0, wrk: wrk, requestsPerSecond: 1_000 * scale, cpuMicrosecondsPerRequest: 50 * scale)
                    }
                    let block = BlockingRun(
                        plainAlone: wrk, plainAloneRequestsPerSecond: 1_000, plain: wrk,
                        block: wrk, plainRequestsPerSecond: 900 * scale, blockRequestsPerSecond: 190 * scale,
                        threadsBefore: 4, peakThreads: 6, stalls: nil)
                    let draw = RoundDraw(arm: arm, isTwin: isTwin, round: round, label: "")
                    rounds.record(draw, WrkDraw(arm: arm, round: round, isTwin: isTwin, runs: runs, blocking: blocking ? block : nil))
                }
            }
            rounds.noise.append(
                RoundNoise(
                    seconds: 1, stealPercent: 0, otherProcessesCPUs: 0, cpuOverWall: 1, involuntarySwitchesPerSecond: 0,
                    loadAverage: 0, flags: []))
        }
        return rounds
    }

    /// Every goal of the server section finds its rows among those the section makes: renaming a
    /// handler's title or a configuration's cannot turn a goal into "not measured".
    @Test func everyServerGoalFindsItsRows() {
        let configurations = ServerBenchmark.Settings(
            fanOuts: [1, 16, 64], jobNanoseconds: [300, 3_000], rounds: 3, seconds: 1, eventLoops: 2, wrkThreads: 1,
            connections: 32
        ).configurations { _ in 1 }
        let loads = configurations.map { WrkLoad<ServerPeer>(key: $0.key, name: $0.title, path: $0.path) }
        var outcome = ServerBenchmark.Outcome(settings: .init(
            fanOuts: [], jobNanoseconds: [], rounds: 0, seconds: 1, eventLoops: 2, wrkThreads: 1, connections: 32))
        outcome.verdicts = WrkRounds.verdicts(
            rounds(ServerPeer.allCases, reference: .dispatchGroup, loads: configurations.map(\.key)), loads: loads,
            section: .server, title: \.title)
        let goals = ServerBenchmark.goalList(configurations)
        #expect(goals.count == 8)
        for goal in goals {
            for row in goal.rows {
                #expect(outcome.verdict(row.key) != nil, "\(goal.text): no row \(row.key)")
                if let beside = row.beside { #expect(outcome.verdict(beside.key) != nil, "\(goal.text): no row \(beside.key)") }
            }
        }
    }

    /// Every goal of a framework section finds its rows among those the section makes, the
    /// blocking run's bounds included.
    @Test func everyFrameworkGoalFindsItsRows() {
        let framework = Framework.hummingbird
        let settings = FrameworkBenchmark.Settings(
            arms: [.defaultExecutor, .nio, .bolts], routes: FrameworkBenchmark.Route.allCases, seconds: 1,
            warmUpSeconds: 1, wrkThreads: 1, connections: 32, blockConnections: 4, jobNanoseconds: 3_000, jobRounds: 1)
        let loads = settings.routes.map { route in
            WrkLoad<FrameworkBenchmark.Arm>(key: route.rawValue, name: route.title, path: { _ in route.path })
        }
        let rounds = rounds(settings.arms, reference: .defaultExecutor, loads: loads.map(\.key), blocking: true)
        var outcome = FrameworkBenchmark.Outcome(settings: settings)
        let routeVerdicts = WrkRounds.verdicts(rounds, loads: loads, section: framework.section, title: \.title)
        outcome.verdicts = routeVerdicts
            + FrameworkBenchmark.verdicts(rounds, routeVerdicts, framework: framework, settings: settings)
        outcome.draws = rounds.measurements.map(\.value)
        let checks = FrameworkBenchmark.goals(outcome, framework: framework)
        #expect(checks.count == FrameworkBenchmark.goalList(framework).count)
        for check in checks {
            #expect(!check.measured.contains("no interval"), "\(check.goal): \(check.measured)")
        }
    }

    @Test func aQuotaChildsFiguresAreItsThrottlingOverTheRun() {
        let figures = QuotaChildrenHost.throttling(
            ["periods": 20, "throttledPeriods": 5, "throttledNanoseconds": 300_000_000], seconds: 2)
        #expect(figures["throttledFraction"] == 0.25)
        #expect(figures["throttledMillisecondsPerSecond"] == 150)
        #expect(QuotaChildrenHost.throttling([:], seconds: 1)["throttledFraction"] == 0)
    }
}
