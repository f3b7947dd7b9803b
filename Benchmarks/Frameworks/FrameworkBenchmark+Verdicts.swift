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

    /// The key of `arm` against `baseline` on `metric` for `comparison` (a route's raw value,
    /// `ceilingKey` or `blockingKey`) in `framework`'s section.
    static func key(
        _ framework: Framework, _ comparison: String, _ arm: Arm, _ baseline: String, _ metric: Metric
    ) -> VerdictKey {
        VerdictKey(
            section: framework.section, comparison: comparison, arm: arm.rawValue, baseline: baseline,
            metric: metric.key)
    }

    /// The comparisons on every route, in the report's order: (subject, peer).
    static let reportedPairs: [(Arm, Arm)] = [
        (.bolts, .defaultExecutor), (.bolts, .nio), (.boltsPreferred, .defaultExecutor), (.nio, .defaultExecutor),
    ]

    /// The name of a route's verdicts in `framework`'s section.
    static func name(_ route: Route, _ framework: Framework) -> String { "\(framework.name) \(route.title)" }
    static func blockingName(_ framework: Framework) -> String {
        "\(framework.name) /plain beside handlers blocking 20 ms (/block)"
    }
    /// The ceiling of `/fanout`'s goals: the pool installed serving `/inline` against the
    /// default executor serving `/fanout`, in the same round. `/inline` runs the same jobs
    /// without tasks, so it is `/fanout` with its tasks costing nothing, the runtime's part and
    /// the executor's together: the pool installed cannot make `/fanout` gain more over the
    /// default executor than this (`Benchmarks/Tools/executor-share.sh` splits the two parts).
    static func ceilingName(_ framework: Framework) -> String {
        "\(framework.name) /fanout's ceiling: Bolts installed on /inline against the default on /fanout"
    }

    /// The section's verdicts beyond each arm against the default executor on every route
    /// (`routeVerdicts`, with their A/A): the pool installed against NIO's take-over in the same
    /// rounds, judged with the same A/A's threshold; `/fanout`'s ceiling (`ceilingName`), judged
    /// with `/fanout`'s thresholds; then, for each arm, `/plain` beside the blocking handlers
    /// against `/plain` alone just before it, judged with the threshold of `/plain`'s requests/s.
    static func verdicts(
        _ rounds: PairedRounds<Arm, WrkDraw<Arm>>, _ routeVerdicts: [VerdictRow], framework: Framework,
        settings: Settings
    ) -> [VerdictRow] {
        let section = framework.section
        func threshold(_ route: Route, _ metric: Metric) -> Double? {
            let aa = key(framework, route.rawValue, .defaultExecutor, Arm.defaultExecutor.rawValue, metric)
            return routeVerdicts.first { $0.key == aa }?.noiseThreshold
        }
        var rows: [VerdictRow] = []
        if settings.arms.contains(.bolts), settings.arms.contains(.nio) {
            for route in settings.routes {
                for judged in WrkMetrics.judged(route.rawValue) as [JudgedMetric<WrkDraw<Arm>>] {
                    rows.append(
                        Verdicts.row(
                            section: section, name: name(route, framework), subject: Arm.bolts.title,
                            peer: Arm.nio.title, metric: judged.metric,
                            rounds.paired(.bolts, judged.value, against: .nio, judged.value),
                            threshold: threshold(route, judged.metric),
                            key: key(framework, route.rawValue, .bolts, Arm.nio.rawValue, judged.metric)
                        )
                    )
                }
            }
        }
        if settings.routes.contains(.inline), settings.routes.contains(.fanout),
            settings.arms.contains(.bolts), settings.arms.contains(.defaultExecutor)
        {
            let inline: [JudgedMetric<WrkDraw<Arm>>] = WrkMetrics.judged(Route.inline.rawValue)
            let fanout: [JudgedMetric<WrkDraw<Arm>>] = WrkMetrics.judged(Route.fanout.rawValue)
            for (inline, fanout) in zip(inline, fanout) {
                rows.append(
                    Verdicts.row(
                        section: section, name: ceilingName(framework), subject: Arm.bolts.title + ", /inline",
                        peer: Arm.defaultExecutor.title + ", /fanout", metric: inline.metric,
                        rounds.paired(.bolts, inline.value, against: .defaultExecutor, fanout.value),
                        threshold: threshold(.fanout, inline.metric),
                        key: key(framework, ceilingKey, .bolts, Arm.defaultExecutor.rawValue, inline.metric)
                    )
                )
            }
        }
        // A starved run counts as 0.01 req/s rather than dropping out of the estimate.
        for arm in settings.arms {
            rows.append(
                Verdicts.row(
                    section: section, name: blockingName(framework), subject: arm.title,
                    peer: "/plain alone just before, in the same child", metric: keptMetric,
                    rounds.paired(
                        arm, { $0.blocking.map { max($0.plainRequestsPerSecond, 0.01) } },
                        against: arm, { $0.blocking.map { max($0.plainAloneRequestsPerSecond, 0.01) } }),
                    threshold: threshold(.plain, WrkMetrics.requestsPerSecond),
                    key: key(framework, blockingKey, arm, aloneKey, keptMetric)
                )
            )
        }
        return rows
    }

    /// The section's goals for the pool installed, judged on this run's intervals: on the
    /// task-group fan-out ≥ 1.25× the default executor's requests/s at ≤ 0.85× its CPU per
    /// request, each with the ceiling `/inline` sets beside it; on `/plain` ≥ 1.0× its
    /// requests/s at ≤ its CPU per request; every route but `/inline` (a yardstick, not a route
    /// of an application) ≥ NIO's take-over's requests/s; beside the blocking handlers, `/plain` keeps ≥ 0.7× its
    /// requests/s alone with p99 ≤ 10 ms, and `/block` is served at ≥ 180 req/s (4 connections
    /// of 20 ms requests allow at most 200).
    static func goals(_ outcome: Outcome, framework: Framework) -> [GoalCheck] {
        let bolts = outcome.draws.filter { $0.arm == .bolts && !$0.isTwin }.compactMap(\.blocking)
        let rows = outcome.verdicts + [
            boundRow(bolts.map(\.plain.p99), key(framework, blockingKey, .bolts, "10 ms", WrkMetrics.p99Latency), 10_000),
            boundRow(
                bolts.map(\.blockRequestsPerSecond), key(framework, blockingKey, .bolts, "180 req/s", WrkMetrics.requestsPerSecond), 180),
        ].compactMap { $0 }
        return goalList(framework).map { Goals.judge($0, in: rows) }
    }

    /// The section's goals as data, in the report's order.
    static func goalList(_ framework: Framework) -> [Goal] {
        let prefix = framework.rawValue
        let requests = WrkMetrics.requestsPerSecond
        let cpu = WrkMetrics.cpuPerRequest
        func row(_ route: Route, against peer: Arm, _ metric: Metric, label: String = "", ceiling: Bool = false) -> GoalRow {
            GoalRow(
                label: label, key: key(framework, route.rawValue, .bolts, peer.rawValue, metric),
                beside: ceiling
                    ? ("if its tasks cost nothing (/inline):", key(framework, ceilingKey, .bolts, Arm.defaultExecutor.rawValue, metric))
                    : nil)
        }
        return [
            Goal(
                text: "\(prefix): /fanout (task group), Bolts installed ≥ 1.25× the default executor's requests/s",
                rows: [row(.fanout, against: .defaultExecutor, requests, ceiling: true)], bound: 1.25, isAtLeast: true),
            Goal(
                text: "\(prefix): /fanout (task group), Bolts installed ≤ 0.85× the default executor's CPU per request",
                rows: [row(.fanout, against: .defaultExecutor, cpu, label: "CPU, Bolts ÷ default", ceiling: true)],
                bound: 0.85, isAtLeast: false, inverts: true),
            Goal(
                text: "\(prefix): /plain, Bolts installed ≥ 1.0× the default executor's requests/s",
                rows: [row(.plain, against: .defaultExecutor, requests)], bound: 1, isAtLeast: true),
            Goal(
                text: "\(prefix): /plain, Bolts installed ≤ 1.0× the default executor's CPU per request",
                rows: [row(.plain, against: .defaultExecutor, cpu, label: "CPU, Bolts ÷ default")], bound: 1,
                isAtLeast: false, inverts: true),
            Goal(
                text: "\(prefix): every route, Bolts installed ≥ SwiftNIO's take-over's requests/s",
                rows: Route.allCases.filter { $0 != .inline }.map { row($0, against: .nio, requests, label: "/\($0.path)") },
                bound: 1, isAtLeast: true),
            Goal(
                text: "\(prefix): beside handlers blocking 20 ms, /plain keeps ≥ 0.7× its requests/s alone (Bolts installed)",
                rows: [GoalRow(key: key(framework, blockingKey, .bolts, aloneKey, keptMetric))], bound: 0.7, isAtLeast: true),
            Goal(
                text: "\(prefix): beside handlers blocking 20 ms, /plain p99 ≤ 10 ms (Bolts installed)",
                rows: [GoalRow(label: "p99 ÷ 10 ms", key: key(framework, blockingKey, .bolts, "10 ms", WrkMetrics.p99Latency))],
                bound: 1, isAtLeast: false),
            Goal(
                text: "\(prefix): /block (4 connections, 20 ms each) served at ≥ 180 req/s (Bolts installed)",
                rows: [
                    GoalRow(
                        label: "req/s ÷ 180", key: key(framework, blockingKey, .bolts, "180 req/s", WrkMetrics.requestsPerSecond))
                ],
                bound: 1, isAtLeast: true),
        ]
    }

    /// The rounds' `values` ÷ `bound` as a row of `key` for a goal alone: the geometric mean and
    /// its t interval over the rounds (a value of 0 counts as a tiny one, so it is not left out).
    /// Nil without values.
    private static func boundRow(_ values: [Double], _ key: VerdictKey, _ bound: Double) -> VerdictRow? {
        guard !values.isEmpty else { return nil }
        let logs = values.map { log(max($0, 1e-3) / bound) }
        let estimate = PairedStatistics.estimate(logRatios: logs)
        return VerdictRow(
            section: key.section, name: key.comparison, subject: key.arm, baseline: key.baseline, metric: key.metric,
            ratio: estimate?.ratio ?? (logs.count == 1 ? exp(logs[0]) : nil),
            interval95: estimate.map { [$0.low, $0.high] }, verdict: .undecided, rounds: logs.count, noiseThreshold: nil,
            key: key, logRatios: logs)
    }
}
