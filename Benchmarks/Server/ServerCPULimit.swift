import BenchmarkStatistics
import Bolts
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The server scenario under a CPU quota: each handler's server in a child process of its
/// own (`CPULimitedServerChild`), placed in a cgroup of its own with a quota of `cpus` CPUs,
/// while wrk stays in this process's cgroup. Each round runs every handler once and
/// `DispatchGroup` twice, in an order drawn at random; beside wrk's figures each run reads the
/// child's CPU time (`/proc/<pid>/stat`) and its cgroup's throttling (`cpu.stat`).
///
/// It needs root and a writable `cpu` controller (`CPUQuotaCgroup.probe`); elsewhere its
/// outcome says why it was skipped. The children and cgroups are removed on every path out.
struct ServerCPULimit {
    static let section = Section.serverCPULimit

    struct Settings: Codable {
        /// The quota of each child's cgroup, in CPUs.
        var cpus: Double
        var configurations: [ServerBenchmark.Configuration]
        var seconds: Int
        var eventLoops: Int
        var wrkThreads: Int
        var connections: Int
    }

    /// One wrk run against one handler's child.
    struct RunResult: Codable {
        var peer: ServerPeer
        var configuration: ServerBenchmark.Configuration
        var round: Int
        var isTwin: Bool
        var wrk: WrkLoadGenerator.Run
        var requestsPerSecond: Double
        /// The child's CPU (user + system) over the run ÷ requests.
        var cpuMicrosecondsPerRequest: Double
        /// The change of the child's cgroup counters over the run.
        var throttling: Throttling
    }

    /// A handler's figures in one configuration: medians over the rounds, and the worst max.
    struct PeerSummary: Codable {
        var peer: ServerPeer
        var isReference: Bool
        var requestsPerSecond: Double
        var cpuMicrosecondsPerRequest: Double
        var p50: Double
        var p99: Double
        var max: Double
        /// Median fraction of the scheduler periods in which the cgroup was throttled.
        var throttledFraction: Double
        /// Median milliseconds per second of wall time that the cgroup was throttled.
        var throttledMillisecondsPerSecond: Double
        var errors: Int
    }

    struct ConfigurationSummary: Codable {
        var configuration: ServerBenchmark.Configuration
        var title: String
        var peers: [PeerSummary]
    }

    /// A child's server, as it reported itself.
    struct Child: Codable {
        var peer: ServerPeer
        var poolThreads: Int
    }

    struct Outcome: Codable {
        var settings: Settings
        /// Why the variant did not run (no root, no writable controller, no wrk, --quick, …).
        var skipped: String?
        /// The cgroup version used and where the cgroups were made.
        var cgroup: String?
        var children: [Child] = []
        var runs: [RunResult] = []
        var summaries: [ConfigurationSummary] = []
        var verdicts: [VerdictRow] = []
        var noise: [[RoundNoise]] = []
    }

    let settings: Settings
    let peers: [ServerPeer]

    /// The name of a configuration's verdicts (distinct from the main scenario's).
    func name(_ configuration: ServerBenchmark.Configuration) -> String {
        "\(configuration.title), \(settings.cpus.formattedCPUs) quota"
    }

    /// Runs the variant; `childArguments` fix the children's server settings. The hierarchy
    /// comes from `CPUQuotaCgroup.probe` (run by the caller, which skips the variant when it
    /// fails, so that the budget only counts a variant that can run).
    func run(
        hierarchy: CgroupCPULimit.Hierarchy,
        childArguments: [String],
        progress: Progress,
        watchdog: Watchdog,
        pacing: ServerBenchmark.Pacing
    ) -> Outcome {
        var outcome = Outcome(
            settings: settings,
            cgroup: "cgroup \(hierarchy.version == .v1 ? "v1" : "v2"), below \(hierarchy.directory)"
        )
        guard let wrk = WrkLoadGenerator.find() else {
            outcome.skipped = WrkLoadGenerator.Failure.notFound.description
            return outcome
        }
        let loadGenerator = WrkLoadGenerator(
            executable: wrk, threads: settings.wrkThreads, connections: settings.connections)

        // One cgroup and one child per handler, for the whole variant; all removed on the way out.
        var servers: [ServerPeer: (cgroup: CPUQuotaCgroup, child: CPULimitedServerChild)] = [:]
        var cgroups: [CPUQuotaCgroup] = []
        defer {
            for (_, server) in servers { server.child.stop() }
            for cgroup in cgroups {
                if let failure = cgroup.remove() { writeError("warning: \(failure)\n") }
            }
        }
        do {
            for peer in peers {
                watchdog.beat("server (cpu limit): starting the \(peer.shortTitle) child")
                let cgroup = try CPUQuotaCgroup.make(in: hierarchy, name: peer.rawValue, cpus: settings.cpus)
                cgroups.append(cgroup)
                servers[peer] = (cgroup, try CPULimitedServerChild(cgroup: cgroup, arguments: childArguments))
                outcome.children.append(Child(peer: peer, poolThreads: servers[peer]!.child.poolThreads))
            }
        } catch {
            outcome.skipped = "a CPU-limited server could not start: \(error)"
            writeError("warning: \(outcome.skipped!)\n")
            return outcome
        }

        func url(_ peer: ServerPeer, _ configuration: ServerBenchmark.Configuration) -> String {
            "http://127.0.0.1:\(servers[peer]!.child.port)/\(peer.rawValue)?fan=\(configuration.fanOut)&rounds=\(configuration.rounds)"
        }

        // Warm-up: one short run of every child.
        for peer in peers {
            watchdog.beat("server (cpu limit): warm-up of \(peer.shortTitle)")
            _ = try? loadGenerator.run(url: url(peer, settings.configurations[0]), seconds: 1)
        }

        let scheduler = RoundScheduler(
            budget: pacing.budget, stopping: pacing.stopping, seed: pacing.seed, progress: progress, watchdog: watchdog
        )
        for configuration in settings.configurations {
            let rounds = scheduler.run(
                "server (cpu limit): \(name(configuration))", arms: peers,
                reference: ServerBenchmark.reference(among: peers), weight: pacing.weightPerConfiguration,
                title: \.shortTitle,
                measure: { draw -> RunResult? in
                    let server = servers[draw.arm]!
                    do {
                        let run = try measure(
                            draw.arm, configuration, round: draw.round, isTwin: draw.isTwin,
                            cgroup: server.cgroup, pid: server.child.pid, url: url(draw.arm, configuration),
                            loadGenerator: loadGenerator
                        )
                        progress.log(
                            "  \(name(configuration)): \(draw.label): \(run.requestsPerSecond.formattedPlain) req/s, "
                                + "\(run.cpuMicrosecondsPerRequest.formattedPlain) µs CPU/req, p99 "
                                + "\((run.wrk.p99 / 1_000).formattedMilliseconds), throttled "
                                + run.throttling.throttledFraction.percent(0) + " of periods"
                        )
                        return run
                    } catch {
                        writeError("warning: CPU-limited server run of \(draw.arm.shortTitle) failed: \(error)\n")
                        return nil
                    }
                },
                widestInterval: { $0.widestHalfWidth(Self.metrics[0]) }
            )
            let mine = rounds.measurements.map(\.value)
            outcome.verdicts += rounds.verdicts(
                section: Self.section, name: name(configuration), title: \.title, metrics: Self.metrics
            )
            outcome.runs += mine
            outcome.noise.append(rounds.noise)
            outcome.summaries.append(summarize(configuration, mine.filter { !$0.isTwin }))
        }
        return outcome
    }

    /// One wrk run against a child, with the child's CPU time and its cgroup's throttling over it.
    private func measure(
        _ peer: ServerPeer,
        _ configuration: ServerBenchmark.Configuration,
        round: Int,
        isTwin: Bool,
        cgroup: CPUQuotaCgroup,
        pid: pid_t,
        url: String,
        loadGenerator: WrkLoadGenerator
    ) throws -> RunResult {
        guard let throttlingBefore = cgroup.throttling(), let cpuBefore = processCPUMicroseconds(pid: pid) else {
            throw CPUQuotaCgroup.Failure(description: "cannot read \(cgroup.directory)/cpu.stat or /proc/\(pid)/stat")
        }
        let result = try loadGenerator.run(url: url, seconds: settings.seconds)
        guard let throttlingAfter = cgroup.throttling(), let cpuAfter = processCPUMicroseconds(pid: pid) else {
            throw CPUQuotaCgroup.Failure(description: "the \(peer.shortTitle) child is gone")
        }
        let requests = Double(max(result.requests, 1))
        return RunResult(
            peer: peer,
            configuration: configuration,
            round: round,
            isTwin: isTwin,
            wrk: result,
            requestsPerSecond: Double(result.requests) / result.seconds,
            cpuMicrosecondsPerRequest: (cpuAfter - cpuBefore) / requests,
            throttling: throttlingAfter - throttlingBefore
        )
    }

    /// Every handler is judged against `DispatchGroup` on requests/s (which decides when a
    /// configuration stops) and CPU per request, each metric with its A/A.
    static var metrics: [JudgedMetric<RunResult>] {
        [
            JudgedMetric(ServerBenchmark.requestsPerSecond) { $0.requestsPerSecond },
            JudgedMetric(ServerBenchmark.cpuPerRequest) { $0.cpuMicrosecondsPerRequest },
        ]
    }

    private func summarize(_ configuration: ServerBenchmark.Configuration, _ runs: [RunResult]) -> ConfigurationSummary
    {
        func medianOrNaN(_ values: [Double]) -> Double { median(values) ?? .nan }
        let summaries: [PeerSummary] = peers.compactMap { peer in
            let mine = runs.filter { $0.peer == peer }
            guard !mine.isEmpty else { return nil }
            return PeerSummary(
                peer: peer,
                isReference: peer == .dispatchGroup,
                requestsPerSecond: medianOrNaN(mine.map(\.requestsPerSecond)),
                cpuMicrosecondsPerRequest: medianOrNaN(mine.map(\.cpuMicrosecondsPerRequest)),
                p50: medianOrNaN(mine.map(\.wrk.p50)),
                p99: medianOrNaN(mine.map(\.wrk.p99)),
                max: mine.map(\.wrk.max).max()!,
                throttledFraction: medianOrNaN(mine.map(\.throttling.throttledFraction)),
                throttledMillisecondsPerSecond: medianOrNaN(
                    mine.map { Double($0.throttling.throttledNanoseconds) / 1e6 / max($0.wrk.seconds, 1e-9) }
                ),
                errors: mine.reduce(0) { $0 + $1.wrk.errors + $1.wrk.timeouts + $1.wrk.non2xx }
            )
        }
        return ConfigurationSummary(configuration: configuration, title: name(configuration), peers: summaries)
    }
}

extension Double {
    /// "1 CPU", "1.5 CPUs".
    var formattedCPUs: String {
        let number = self == rounded() ? String(Int(self)) : shortest
        return "\(number) CPU\(self == 1 ? "" : "s")"
    }
}
