import BenchmarkStatistics

/// The server scenario: a SwiftNIO HTTP/1.1 server (`FanOutHTTPServer`) in this process
/// (`InProcessServerHost`) or one per peer under a CPU quota (`QuotaChildrenHost`), loaded by
/// wrk; each request is fanned out to CPU jobs by one peer. Each configuration (fan-out × job
/// size) runs every peer once per round in a random order; the ratios are to `DispatchGroup`.
struct ServerBenchmark {
    static let group = "Inside a server"

    struct Configuration: Codable, Hashable {
        var fanOut: Int
        /// The target duration of one job, in nanoseconds.
        var jobNanoseconds: Int
        /// Work rounds per job that take about `jobNanoseconds` here.
        var rounds: Int

        var title: String { "\(fanOut) job\(fanOut == 1 ? "" : "s") of ~\(size) per request" }

        /// "16 × 3 µs": a column's header.
        var header: String { "\(fanOut) × \(size)" }

        /// What its runs and summaries are filed under: "16x3000".
        var key: String { "\(fanOut)x\(jobNanoseconds)" }

        private var size: String { jobNanoseconds < 1_000 ? "0.3 µs" : "\(jobNanoseconds / 1_000) µs" }

        /// The path that `peer`'s handler serves this configuration on.
        func path(_ peer: ServerPeer) -> String { "\(peer.rawValue)?fan=\(fanOut)&rounds=\(rounds)" }
    }

    struct Settings: Codable {
        var fanOuts: [Int]
        var jobNanoseconds: [Int]
        var rounds: Int
        var seconds: Int
        var eventLoops: Int
        var wrkThreads: Int
        var connections: Int
        /// The CPUs of each handler's cgroup quota (`QuotaChildrenHost`); nil in this process.
        var cpus: Double? = nil

        /// Every fan-out × job length, in the order they run; `rounds` gives a job length's work.
        func configurations(rounds: (Int) -> Int) -> [Configuration] {
            fanOuts.flatMap { fanOut in
                jobNanoseconds.map { Configuration(fanOut: fanOut, jobNanoseconds: $0, rounds: rounds($0)) }
            }
        }

        /// The section its verdicts carry: the quota's, or the in-process server's.
        var section: Section { cpus == nil ? .server : .serverCPULimit }

        var wrk: WrkSettings { WrkSettings(seconds: seconds, wrkThreads: wrkThreads, connections: connections) }

        /// The budget weight of all configurations, `weight` each (`Quoted`'s twice).
        func weight(perConfiguration weight: Double) -> Double {
            configurations { _ in 0 }.map { Quoted.weight(weight, section, $0.key) }.reduce(0, +)
        }
    }

    typealias Outcome = WrkOutcome<ServerPeer, Settings>

    let settings: Settings
    let peers: [ServerPeer]

    /// The peers `filter` selects: all when it names the group (or is empty), else those
    /// whose name or title contains it, plus the reference unless `withoutReference` (for
    /// profiling one handler alone; there are no ratios then).
    static func peers(matching filter: String?, withoutReference: Bool = false) -> [ServerPeer] {
        let filter = filter?.lowercased() ?? ""
        if filter.isEmpty || "\(group) server".lowercased().contains(filter) { return ServerPeer.allCases }
        let named = ServerPeer.allCases.filter {
            $0.rawValue.contains(filter) || $0.title.lowercased().contains(filter)
        }
        if named.isEmpty { return [] }
        return ServerPeer.allCases.filter { ($0 == .dispatchGroup && !withoutReference) || named.contains($0) }
    }

    /// The configurations of `settings` in order, their jobs' work calibrated here (`serverJobRounds`).
    var configurations: [Configuration] { settings.configurations { serverJobRounds(forNanoseconds: Double($0)) } }

    /// The name of a configuration's verdicts: its title, and the quota when there is one.
    func name(_ configuration: Configuration) -> String {
        settings.cpus.map { "\(configuration.title), \($0.formattedCPUs) quota" } ?? configuration.title
    }

    /// Runs every configuration in paired rounds against `host`'s servers (`WrkRounds.run`), each
    /// of `weight` in `scheduler`'s budget (`Quoted`'s twice), after one warm-up run per peer: each round runs every
    /// peer once and `DispatchGroup` twice.
    func run<Host: WrkHost>(host: Host, scheduler: RoundScheduler, weight: Double) -> Outcome
    where Host.Arm == ServerPeer {
        let section = settings.section
        var outcome = Outcome(settings: settings)
        guard let wrk = WrkLoadGenerator.find() else {
            outcome.skipped = WrkLoadGenerator.Failure.notFound.description
            writeError("warning: \(outcome.skipped!)\n")
            return outcome
        }
        let loadGenerator = WrkLoadGenerator(
            executable: wrk, threads: settings.wrkThreads, connections: settings.connections)
        let configurations = configurations
        // So that no measured run pays for threads starting or caches filling.
        for peer in peers {
            scheduler.watchdog.beat("\(section.rawValue): warm-up of \(peer.shortTitle)")
            let draw = RoundDraw(arm: peer, isTwin: false, round: -1, label: "warm-up")
            if let server = try? host.server(for: draw) {
                _ = try? loadGenerator.run(url: server.url(configurations[0].path(peer)), seconds: 1)
                host.release(server)
            }
        }
        // A filtered run without the reference has neither twin nor verdicts.
        let reference: ServerPeer? = peers.contains(.dispatchGroup) ? .dispatchGroup : nil
        for configuration in configurations {
            let load = WrkLoad<ServerPeer>(key: configuration.key, name: name(configuration), path: configuration.path)
            let (rounds, verdicts) = WrkRounds.run(
                "\(section.rawValue): \(name(configuration))", host: host, loads: [load], arms: peers,
                reference: reference, section: section, title: \.title, shortTitle: \.shortTitle,
                scheduler: scheduler, weight: Quoted.weight(weight, section, configuration.key),
                settings: settings.wrk, loadGenerator: loadGenerator)
            outcome.verdicts += verdicts
            outcome.draws += rounds.measurements.map(\.value)
            outcome.noise.append(rounds.noise)
            outcome.summaries += peers.compactMap { WrkSummary(arm: $0, load: configuration.key, draws: outcome.draws) }
        }
        if settings.cpus == nil { outcome.goals = Self.goals(outcome, configurations: configurations) }
        return outcome
    }

    /// The server's ratio goals as data, in the report's order.
    static func goalList(_ configurations: [Configuration]) -> [Goal] {
        func rows(_ peer: ServerPeer, _ metric: Metric) -> [GoalRow] {
            let reference = ServerPeer.dispatchGroup.rawValue
            return configurations.map { configuration in
                let key = VerdictKey(.server, configuration.key, peer, reference, metric)
                let floor = VerdictKey(.server, configuration.key, ServerPeer.inlineOnLoop, reference, metric)
                return GoalRow(
                    label: "\(configuration.fanOut)×\(configuration.jobNanoseconds)ns", key: key,
                    beside: metric.lowerIsBetter ? nil : ("floor", floor))
            }
        }
        let (requests, cpu) = (WrkMetrics.requestsPerSecond, WrkMetrics.cpuPerRequest)
        let bounds: [(ServerPeer, Metric, String, Double)] =
            [ServerPeer.boltsTasks, .boltsExecuteAll].flatMap { peer in
                [
                    (peer, requests, "≥ 1.0× DispatchGroup requests/s", 1),
                    (peer, cpu, "≤ 0.9× DispatchGroup CPU per request", 0.9),
                ]
            } + [(.boltsPool, requests, "≥ 1.25× DispatchGroup requests/s", 1.25)]
            + [ServerPeer.boltsTasks, .boltsExecuteAll, .boltsPool].map {
                ($0, WrkMetrics.p99Latency, "p99 ≤ DispatchGroup's", 1)
            }
        return bounds.map { peer, metric, text, bound in
            Goal(
                text: "server: \(peer.shortTitle) \(text)", rows: rows(peer, metric), bound: bound,
                isAtLeast: !metric.lowerIsBetter, inverts: metric.lowerIsBetter)
        }
    }

    /// The server's goals judged on this run: `goalList` on the intervals, then no Bolts request
    /// slower than 20 ms in any run (an observed maximum), measured beside the slowest request of
    /// DispatchGroup and of the jobs inline on the loop: a maximum the floor also exceeds is the
    /// machine's (wrk, the loops and the kernel sharing its CPUs), not an executor's. Beside each
    /// requests/s goal stands the floor's ratio: where the floor is under a bound, none meets it.
    static func goals(_ outcome: Outcome, configurations: [Configuration]) -> [GoalCheck] {
        var checks = goalList(configurations).map { Goals.judge($0, in: outcome.verdicts) }
        func slowest(_ peer: ServerPeer) -> (Configuration, Double)? {
            configurations.compactMap { configuration in
                outcome.summary(peer, configuration.key).map { (configuration, $0.max) }
            }.max { $0.1 < $1.1 }
        }
        let others = [ServerPeer.dispatchGroup, .inlineOnLoop].compactMap { peer in
            let name = peer == .inlineOnLoop ? "floor" : peer.shortTitle
            return slowest(peer).map { "\(name) \(($0.1 / 1_000).formattedMilliseconds)" }
        }
        for peer in [ServerPeer.boltsTasks, .boltsExecuteAll, .boltsPool] {
            let slowest = slowest(peer)
            let measured = slowest.map {
                "slowest \(($0.1 / 1_000).formattedMilliseconds) (\($0.0.fanOut)×\($0.0.jobNanoseconds)ns)"
                    + (others.isEmpty ? "" : "; " + others.joined(separator: ", "))
            }
            checks.append(
                GoalCheck(
                    goal: "server: no \(peer.shortTitle) request slower than 20 ms (every run)",
                    measured: measured ?? "not measured in this run",
                    verdict: slowest.map { $0.1 <= 20_000 ? .met : .notMet } ?? .undecided,
                    decidedBy: "the observed maximum"))
        }
        return checks
    }
}

