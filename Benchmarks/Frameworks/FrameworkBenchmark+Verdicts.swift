import BenchmarkStatistics
import Foundation

extension FrameworkBenchmark {
    /// `/plain`'s requests/s beside the blocking handlers ÷ alone just before, in the same child.
    static let keptMetric = Metric(
        title: "/plain requests/s beside /block ÷ alone", unit: "×", lowerIsBetter: false, id: "kept")

    /// The comparison of `/fanout`'s ceiling, and of the blocking run, in verdict keys; the
    /// blocking run's baseline.
    static let ceilingKey = "inline-vs-fanout"
    static let blockingKey = "block"
    static let aloneKey = "plain-alone"

    /// The comparisons on every route, in the report's order: (subject, peer).
    static let reportedPairs: [(Arm, Arm)] = [
        (.bolts, .defaultExecutor), (.bolts, .nio), (.boltsPreferred, .defaultExecutor), (.nio, .defaultExecutor),
    ]

    /// The name of a route's verdicts in `framework`'s section.
    static func name(_ route: Route, _ framework: Framework) -> String { "\(framework.name) \(route.title)" }

    /// The section's verdicts beyond each arm against the default executor on every route
    /// (`routeVerdicts`, with their A/A), each judged with a threshold of those A/A rows: the
    /// pool installed against NIO's take-over in the same rounds; `/fanout`'s ceiling, the pool
    /// installed serving `/inline` against the default executor serving `/fanout` (`/inline`
    /// runs the same jobs without tasks, so the pool cannot make `/fanout` gain more than this;
    /// `Benchmarks/Tools/executor-share.sh` splits the runtime's part from the executor's); then,
    /// for each arm, `/plain` beside the blocking handlers against `/plain` alone just before.
    static func verdicts(
        _ rounds: PairedRounds<Arm, WrkDraw<Arm>>, _ routeVerdicts: [VerdictRow], framework: Framework,
        settings: Settings
    ) -> [VerdictRow] {
        func row(
            _ name: String, _ subject: String, _ peer: String, _ metric: Metric, _ values: PairedValues,
            thresholdOf route: Route, thresholdMetric: Metric? = nil, _ key: VerdictKey
        ) -> VerdictRow {
            let aa = VerdictKey(
                framework.section, route.rawValue, Arm.defaultExecutor, Arm.defaultExecutor.rawValue,
                thresholdMetric ?? metric)
            return Verdicts.row(
                section: framework.section, name: "\(framework.name) \(name)", subject: subject, peer: peer,
                metric: metric, values, threshold: routeVerdicts.first { $0.key == aa }?.noiseThreshold, key: key)
        }
        func judged(_ route: Route) -> [JudgedMetric<WrkDraw<Arm>>] { WrkMetrics.judged(route.rawValue) }
        let (arms, routes) = (Set(settings.arms), Set(settings.routes))
        var rows: [VerdictRow] = []
        for route in settings.routes where arms.isSuperset(of: [.bolts, .nio]) {
            for judged in judged(route) {
                rows.append(
                    row(
                        route.title, Arm.bolts.title, Arm.nio.title, judged.metric,
                        rounds.paired(.bolts, judged.value, against: .nio, judged.value), thresholdOf: route,
                        VerdictKey(framework.section, route.rawValue, Arm.bolts, Arm.nio.rawValue, judged.metric)))
            }
        }
        if routes.isSuperset(of: [.inline, .fanout]), arms.isSuperset(of: [.bolts, .defaultExecutor]) {
            for (inline, fanout) in zip(judged(.inline), judged(.fanout)) {
                rows.append(
                    row(
                        "/fanout's ceiling: Bolts installed on /inline against the default on /fanout",
                        Arm.bolts.title + ", /inline", Arm.defaultExecutor.title + ", /fanout", inline.metric,
                        rounds.paired(.bolts, inline.value, against: .defaultExecutor, fanout.value),
                        thresholdOf: .fanout,
                        VerdictKey(
                            framework.section, ceilingKey, Arm.bolts, Arm.defaultExecutor.rawValue, inline.metric)))
            }
        }
        // A starved run counts as 0.01 req/s rather than dropping out of the estimate.
        for arm in settings.arms {
            rows.append(
                row(
                    "/plain beside handlers blocking 20 ms (/block)", arm.title,
                    "/plain alone just before, in the same child", keptMetric,
                    rounds.paired(
                        arm, { $0.blocking.map { max($0.plainRequestsPerSecond, 0.01) } },
                        against: arm, { $0.blocking.map { max($0.plainAloneRequestsPerSecond, 0.01) } }),
                    thresholdOf: .plain, thresholdMetric: WrkMetrics.requestsPerSecond,
                    VerdictKey(framework.section, blockingKey, arm, aloneKey, keptMetric)))
        }
        return rows
    }

    /// The section's goals for the pool installed, judged on this run's intervals, with the
    /// bounds of the blocking run (`boundRow`) among its rows.
    static func goals(_ outcome: Outcome, framework: Framework) -> [GoalCheck] {
        let bolts = outcome.draws.filter { $0.arm == .bolts && !$0.isTwin }.compactMap(\.blocking)
        let bounds = [
            boundRow(bolts.map(\.plain.p99), framework, "10 ms", WrkMetrics.p99Latency, 10_000),
            boundRow(bolts.map(\.blockRequestsPerSecond), framework, "180 req/s", WrkMetrics.requestsPerSecond, 180),
        ]
        let rows = outcome.verdicts + bounds.compactMap { $0 }
        return goalList(framework).map { Goals.judge($0, in: rows) }
    }

    /// The section's goals as data, in the report's order: on the task-group fan-out ≥ 1.25× the
    /// default executor's requests/s at ≤ 0.85× its CPU per request, each beside the ceiling
    /// `/inline` sets; on `/plain` ≥ 1.0× its requests/s at ≤ its CPU per request; every route
    /// but `/inline` (a yardstick, not an application's route) ≥ NIO's take-over's requests/s;
    /// beside the blocking handlers, `/plain` keeps ≥ 0.7× its requests/s alone with p99 ≤ 10 ms,
    /// and `/block` is served at ≥ 180 req/s (4 connections of 20 ms requests allow at most 200).
    static func goalList(_ framework: Framework) -> [Goal] {
        let (requests, cpu) = (WrkMetrics.requestsPerSecond, WrkMetrics.cpuPerRequest)
        func row(_ route: Route, _ peer: Arm, _ metric: Metric, _ label: String = "", ceiling: Bool = false)
            -> GoalRow
        {
            let beside = VerdictKey(framework.section, ceilingKey, Arm.bolts, Arm.defaultExecutor.rawValue, metric)
            return GoalRow(
                label: label, key: VerdictKey(framework.section, route.rawValue, Arm.bolts, peer.rawValue, metric),
                beside: ceiling ? ("if its tasks cost nothing (/inline):", beside) : nil)
        }
        func blocking(_ label: String, _ baseline: String, _ metric: Metric) -> [GoalRow] {
            [GoalRow(label: label, key: VerdictKey(framework.section, blockingKey, Arm.bolts, baseline, metric))]
        }
        func goal(_ text: String, _ rows: [GoalRow], _ bound: Double, atLeast: Bool = true, inverts: Bool = false)
            -> Goal
        {
            Goal(text: "\(framework.rawValue): " + text, rows: rows, bound: bound, isAtLeast: atLeast, inverts: inverts)
        }
        let cpuLabel = "CPU, Bolts ÷ default"
        let blocking20 = "beside handlers blocking 20 ms, /plain"
        return [
            goal("/fanout (task group), Bolts installed ≥ 1.25× the default executor's requests/s",
                [row(.fanout, .defaultExecutor, requests, ceiling: true)], 1.25),
            goal("/fanout (task group), Bolts installed ≤ 0.85× the default executor's CPU per request",
                [row(.fanout, .defaultExecutor, cpu, cpuLabel, ceiling: true)], 0.85, atLeast: false, inverts: true),
            goal("/plain, Bolts installed ≥ 1.0× the default executor's requests/s",
                [row(.plain, .defaultExecutor, requests)], 1),
            goal("/plain, Bolts installed ≤ 1.0× the default executor's CPU per request",
                [row(.plain, .defaultExecutor, cpu, cpuLabel)], 1, atLeast: false, inverts: true),
            goal("every route, Bolts installed ≥ SwiftNIO's take-over's requests/s",
                Route.allCases.filter { $0 != .inline }.map { row($0, .nio, requests, "/\($0.path)") }, 1),
            goal("\(blocking20) keeps ≥ 0.7× its requests/s alone (Bolts installed)",
                blocking("", aloneKey, keptMetric), 0.7),
            goal("\(blocking20) p99 ≤ 10 ms (Bolts installed)",
                blocking("p99 ÷ 10 ms", "10 ms", WrkMetrics.p99Latency), 1, atLeast: false),
            goal("/block (4 connections, 20 ms each) served at ≥ 180 req/s (Bolts installed)",
                blocking("req/s ÷ 180", "180 req/s", requests), 1),
        ]
    }

    /// The rounds' `values` ÷ `bound` as a row for a goal alone, of the blocking run against
    /// `baseline` (the bound's text): the geometric mean and its t interval over the rounds (a
    /// value of 0 counts as a tiny one, so it is not left out). Nil without values.
    private static func boundRow(
        _ values: [Double], _ framework: Framework, _ baseline: String, _ metric: Metric, _ bound: Double
    ) -> VerdictRow? {
        guard !values.isEmpty else { return nil }
        let key = VerdictKey(framework.section, blockingKey, Arm.bolts, baseline, metric)
        let logs = values.map { log(max($0, 1e-3) / bound) }
        let estimate = PairedStatistics.estimate(logRatios: logs)
        return VerdictRow(
            section: key.section, name: key.comparison, subject: key.arm, baseline: key.baseline, metric: key.metric,
            ratio: estimate?.ratio ?? (logs.count == 1 ? exp(logs[0]) : nil),
            interval95: estimate.map { [$0.low, $0.high] }, verdict: .undecided, rounds: logs.count,
            noiseThreshold: nil, key: key, logRatios: logs)
    }
}
