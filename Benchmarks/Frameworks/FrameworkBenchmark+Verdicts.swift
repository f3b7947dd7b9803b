import BenchmarkStatistics
import Foundation

extension FrameworkBenchmark {
    /// `/plain`'s requests/s beside the blocking handlers ÷ alone just before, in the same child.
    static let keptMetric = Metric(title: "/plain requests/s beside /block ÷ alone", unit: "×", lowerIsBetter: false)

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
            routeVerdicts.first { $0.isAA && $0.name == name(route, framework) && $0.metric == metric.title }?
                .noiseThreshold
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
                            threshold: threshold(route, judged.metric)
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
                        threshold: threshold(.fanout, inline.metric)
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
                    threshold: threshold(.plain, WrkMetrics.requestsPerSecond)
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
        let bolts = Arm.bolts.title
        let prefix = framework.rawValue
        func row(_ route: Route, against peer: Arm, _ metric: Metric, label: String = "") -> [LabelledRow] {
            guard let row = outcome.verdict(name(route, framework), metric, subject: bolts, baseline: peer.title)
            else { return [] }
            return [LabelledRow(label: label, row: WrkMetrics.asGoalReads(row, metric))]
        }
        /// `check` with `/fanout`'s ceiling on `metric` appended to what it measured.
        func withCeiling(_ check: GoalCheck, _ metric: Metric) -> GoalCheck {
            guard let ceiling = outcome.verdicts.first(where: { $0.name == ceilingName(framework) && $0.metric == metric.title }),
                let reads = WrkMetrics.asGoalReads(ceiling, metric)
            else { return check }
            var check = check
            check.measured += "; if its tasks cost nothing (/inline): " + reads.formattedRatioAndInterval
            return check
        }
        let requests = WrkMetrics.requestsPerSecond
        let cpu = WrkMetrics.cpuPerRequest
        var checks: [GoalCheck] = [
            withCeiling(
                Goals.ratio(
                    "\(prefix): /fanout (task group), Bolts installed ≥ 1.25× the default executor's requests/s",
                    row(.fanout, against: .defaultExecutor, requests), atLeast: 1.25),
                requests),
            withCeiling(
                Goals.ratio(
                    "\(prefix): /fanout (task group), Bolts installed ≤ 0.85× the default executor's CPU per request",
                    row(.fanout, against: .defaultExecutor, cpu, label: "CPU, Bolts ÷ default"), atMost: 0.85),
                cpu),
            Goals.ratio(
                "\(prefix): /plain, Bolts installed ≥ 1.0× the default executor's requests/s",
                row(.plain, against: .defaultExecutor, requests), atLeast: 1),
            Goals.ratio(
                "\(prefix): /plain, Bolts installed ≤ 1.0× the default executor's CPU per request",
                row(.plain, against: .defaultExecutor, cpu, label: "CPU, Bolts ÷ default"), atMost: 1),
            Goals.ratio(
                "\(prefix): every route, Bolts installed ≥ SwiftNIO's take-over's requests/s",
                Route.allCases.filter { $0 != .inline }.flatMap {
                    row($0, against: .nio, requests, label: "/\($0.path)")
                }, atLeast: 1),
        ]
        let kept = outcome.verdicts.first { $0.name == blockingName(framework) && $0.subject == bolts }
        checks.append(
            Goals.ratio(
                "\(prefix): beside handlers blocking 20 ms, /plain keeps ≥ 0.7× its requests/s alone (Bolts installed)",
                kept.map { [LabelledRow(label: "", row: $0)] } ?? [], atLeast: 0.7)
        )
        let boltsRuns = outcome.draws.filter { $0.arm == .bolts && !$0.isTwin }
        checks.append(
            Goals.ratio(
                "\(prefix): beside handlers blocking 20 ms, /plain p99 ≤ 10 ms (Bolts installed)",
                boundRow(
                    boltsRuns.compactMap(\.blocking?.plain.p99), framework: framework, bound: 10_000, label: "p99 ÷ 10 ms"),
                atMost: 1)
        )
        checks.append(
            Goals.ratio(
                "\(prefix): /block (4 connections, 20 ms each) served at ≥ 180 req/s (Bolts installed)",
                boundRow(
                    boltsRuns.compactMap(\.blocking?.blockRequestsPerSecond), framework: framework, bound: 180,
                    label: "req/s ÷ 180"),
                atLeast: 1)
        )
        return checks
    }

    /// The rounds' `values` ÷ `bound` as a goal's row: the geometric mean and its t interval
    /// over the rounds (a value of 0 counts as a tiny one, so it is not left out). Empty
    /// without values.
    private static func boundRow(
        _ values: [Double], framework: Framework, bound: Double, label: String
    ) -> [LabelledRow] {
        guard !values.isEmpty else { return [] }
        let logs = values.map { log(max($0, 1e-3) / bound) }
        let estimate = PairedStatistics.estimate(logRatios: logs)
        let row = VerdictRow(
            section: framework.section,
            name: blockingName(framework),
            subject: Arm.bolts.title,
            baseline: label,
            metric: label,
            ratio: estimate?.ratio ?? (logs.count == 1 ? exp(logs[0]) : nil),
            interval95: estimate.map { [$0.low, $0.high] },
            verdict: .undecided,
            rounds: logs.count,
            noiseThreshold: nil,
            logRatios: logs
        )
        return [LabelledRow(label: label, row: row)]
    }
}
