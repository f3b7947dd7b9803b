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

    @Test func aGoalReadsALowerIsBetterRowAsTheSubjectOverThePeer() throws {
        let row = VerdictRow(
            section: .server, name: "n", subject: "s", baseline: "b", metric: WrkMetrics.cpuPerRequest.title,
            ratio: 1.25, interval95: [1.0, 2.0], verdict: .better, rounds: 4, noiseThreshold: 0.05)
        let cpu = try #require(WrkMetrics.asGoalReads(row, WrkMetrics.cpuPerRequest))
        #expect(cpu.ratio == 0.8)
        #expect(cpu.interval95 == [0.5, 1.0])
        let requests = try #require(WrkMetrics.asGoalReads(row, WrkMetrics.requestsPerSecond))
        #expect(requests.ratio == 1.25 && requests.interval95 == [1.0, 2.0])
    }

    @Test func anOutcomeFindsARowByNameMetricAndSubjectAndItsAA() {
        func row(_ subject: String, isAA: Bool) -> VerdictRow {
            var row = VerdictRow(
                section: .server, name: "n", subject: subject, baseline: "ref", metric: WrkMetrics.p99Latency.title,
                ratio: 1, interval95: [0.9, 1.1], verdict: .same, rounds: 3, noiseThreshold: 0.1)
            row.isAA = isAA
            return row
        }
        var outcome = WrkOutcome<String, Int>(settings: 0)
        outcome.verdicts = [row("ref", isAA: true), row("s", isAA: false)]
        #expect(outcome.verdict("n", WrkMetrics.p99Latency, subject: nil)?.isAA == true)
        #expect(outcome.verdict("n", WrkMetrics.p99Latency, subject: "s")?.subject == "s")
        #expect(outcome.verdict("n", WrkMetrics.p99Latency, subject: "s", baseline: "other") == nil)
        #expect(outcome.verdict("n", WrkMetrics.requestsPerSecond, subject: "s") == nil)
    }

    @Test func aQuotaChildsFiguresAreItsThrottlingOverTheRun() {
        let figures = QuotaChildrenHost.throttling(
            ["periods": 20, "throttledPeriods": 5, "throttledNanoseconds": 300_000_000], seconds: 2)
        #expect(figures["throttledFraction"] == 0.25)
        #expect(figures["throttledMillisecondsPerSecond"] == 150)
        #expect(QuotaChildrenHost.throttling([:], seconds: 1)["throttledFraction"] == 0)
    }
}
