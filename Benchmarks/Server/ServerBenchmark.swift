import Bolts
import CBenchmarkSupport
import BenchmarkStatistics
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The server scenario: a SwiftNIO HTTP/1.1 server in this process, wrk in another, each
/// request fanned out to CPU jobs by one peer. Every configuration (fan-out × job size)
/// runs every peer once per round, in an order rotated each round, so the peers share
/// the machine's state; the ratios are to `DispatchGroup` in the same run.
struct ServerBenchmark {
    static let group = "Inside a server"

    struct Configuration: Codable, Hashable {
        var fanOut: Int
        /// The target duration of one job, in nanoseconds.
        var jobNanoseconds: Int
        /// Work rounds per job that take about `jobNanoseconds` here.
        var rounds: Int

        var title: String {
            let size = jobNanoseconds < 1_000 ? "0.3 µs" : "\(jobNanoseconds / 1_000) µs"
            return "\(fanOut) job\(fanOut == 1 ? "" : "s") of ~\(size) per request"
        }
    }

    struct Settings: Codable {
        var fanOuts: [Int]
        var jobNanoseconds: [Int]
        var rounds: Int
        var seconds: Int
        var eventLoops: Int
        var wrkThreads: Int
        var connections: Int
    }

    /// One wrk run against one peer.
    struct RunResult: Codable {
        var peer: ServerPeer
        var configuration: Configuration
        var round: Int
        /// Whether this is the reference's second run in its round (for the A/A).
        var isTwin: Bool = false
        var wrk: WrkLoadGenerator.Run
        var requestsPerSecond: Double
        /// Server process CPU (user + system, getrusage) ÷ requests.
        var cpuMicrosecondsPerRequest: Double
        /// Requests the server answered 200 during the run (cross-check of wrk's count).
        var serverAnswered: Int
        var serverFailed: Int
        /// Allocations in the server process (every thread) ÷ requests.
        var allocationsPerRequest: Double
        /// Context switches of the server process (voluntary + involuntary, every thread,
        /// getrusage) ÷ requests: how often its threads slept, woke or were preempted.
        var contextSwitchesPerRequest: Double?
        /// Times a worker of `ThreadPool.shared` parked ÷ requests (every peer: the pool's
        /// workers may park while another peer runs, which shows it idles).
        var poolParksPerRequest: Double?
    }

    /// A peer's figures in one configuration: medians over the rounds, and the worst max.
    struct PeerSummary: Codable {
        var peer: ServerPeer
        var title: String
        var isReference: Bool
        var requestsPerSecond: Double
        var cpuMicrosecondsPerRequest: Double
        var allocationsPerRequest: Double
        /// Median context switches of the server process per request (nil in old JSON).
        var contextSwitchesPerRequest: Double?
        var p50: Double
        var p90: Double
        var p99: Double
        var p999: Double
        /// The slowest request over every round.
        var max: Double
        var requestsPerSecondRatio: Double?
        var cpuRatio: Double?
        var p99Ratio: Double?
        var errors: Int
    }

    struct ConfigurationSummary: Codable {
        var configuration: Configuration
        var title: String
        var peers: [PeerSummary]
    }

    struct Outcome: Codable {
        var settings: Settings
        var skipped: String?
        var runs: [RunResult]
        var summaries: [ConfigurationSummary]
        var goals: [GoalCheck]
        var verdicts: [VerdictRow] = []
        /// Each configuration's rounds, in order.
        var noise: [[RoundNoise]] = []
    }

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

    /// How the rounds of each configuration run: the budget they share, when they stop, and
    /// the seed of their orders.
    struct Pacing {
        var budget: Budget
        var stopping: StoppingRule
        /// The budget weight of each configuration.
        var weightPerConfiguration: Double
        var seed: UInt64
    }

    /// The configurations of `settings`, in the order they run.
    var configurations: [Configuration] {
        settings.fanOuts.flatMap { fanOut in
            settings.jobNanoseconds.map { nanoseconds in
                Configuration(
                    fanOut: fanOut,
                    jobNanoseconds: nanoseconds,
                    rounds: serverJobRounds(forNanoseconds: Double(nanoseconds))
                )
            }
        }
    }

    /// Runs every configuration in paired rounds: each round runs every peer once and
    /// `DispatchGroup` (the reference) twice, in an order drawn at random, one wrk run each;
    /// a configuration stops when every peer's requests/s interval is narrower than the
    /// target or its share of the budget is spent. `watchdog` is told before each wrk run.
    func run(progress: Progress, watchdog: Watchdog, pacing: Pacing) -> Outcome {
        guard let wrk = WrkLoadGenerator.find() else {
            let reason = WrkLoadGenerator.Failure.notFound.description
            writeError("warning: \(reason)\n")
            return Outcome(settings: settings, skipped: reason, runs: [], summaries: [], goals: [])
        }
        let loadGenerator = WrkLoadGenerator(
            executable: wrk,
            threads: settings.wrkThreads,
            connections: settings.connections
        )
        let configurations = configurations
        let server: FanOutHTTPServer
        do {
            server = try FanOutHTTPServer(eventLoops: settings.eventLoops)
        } catch {
            let reason = "the server could not start: \(error)"
            writeError("warning: \(reason)\n")
            return Outcome(settings: settings, skipped: reason, runs: [], summaries: [], goals: [])
        }
        defer { server.shutdown() }

        func url(_ peer: ServerPeer, _ configuration: Configuration) -> String {
            "http://127.0.0.1:\(server.port)/\(peer.rawValue)?fan=\(configuration.fanOut)&rounds=\(configuration.rounds)"
        }

        // Warm-up: one short run of every peer, so no measured run pays for threads
        // starting or caches filling.
        for peer in peers {
            watchdog.beat("server scenario: warm-up of \(peer.shortTitle)")
            _ = try? loadGenerator.run(url: url(peer, configurations[0]), seconds: 1)
        }

        let scheduler = RoundScheduler(
            budget: pacing.budget, stopping: pacing.stopping, seed: pacing.seed, progress: progress, watchdog: watchdog
        )
        let metrics = Self.metrics
        var runs: [RunResult] = []
        var verdicts: [VerdictRow] = []
        var noise: [[RoundNoise]] = []
        for configuration in configurations {
            let rounds = scheduler.run(
                "server: \(configuration.title)", arms: peers, reference: Self.reference(among: peers),
                weight: pacing.weightPerConfiguration, title: \.shortTitle,
                measure: { draw in
                    measure(
                        draw.arm, configuration, round: draw.round, isTwin: draw.isTwin,
                        label: "\(configuration.title): \(draw.label)"
                    )
                },
                widestInterval: { $0.widestHalfWidth(metrics[0]) }
            )
            verdicts += rounds.verdicts(section: .server, name: configuration.title, title: \.title, metrics: metrics)
            runs += rounds.measurements.map(\.value)
            noise.append(rounds.noise)
        }
        let summaries = configurations.map { configuration in
            summarize(configuration, runs.filter { $0.configuration == configuration && !$0.isTwin })
        }
        return Outcome(
            settings: settings,
            skipped: nil,
            runs: runs,
            summaries: summaries,
            goals: Self.goals(summaries, verdicts: verdicts),
            verdicts: verdicts,
            noise: noise
        )

        /// One wrk run of `peer`, with the server process's own costs over it.
        func measure(_ peer: ServerPeer, _ configuration: Configuration, round: Int, isTwin: Bool, label: String)
            -> RunResult?
        {
            let allocationsBefore = bench_allocation_count()
            let switchesBefore = processContextSwitches()
            let parksBefore = ThreadPool.shared.metrics.parks
            let before = processCPUMicroseconds()
            let (answeredBefore, failedBefore) = server.counts
            do {
                let result = try loadGenerator.run(url: url(peer, configuration), seconds: settings.seconds)
                let cpu = processCPUMicroseconds() - before
                let allocations = bench_allocation_count() - allocationsBefore
                let switches = processContextSwitches() - switchesBefore
                let parks = ThreadPool.shared.metrics.parks - parksBefore
                let (answered, failed) = server.counts
                let requests = Double(max(result.requests, 1))
                let run = RunResult(
                    peer: peer,
                    configuration: configuration,
                    round: round,
                    isTwin: isTwin,
                    wrk: result,
                    requestsPerSecond: Double(result.requests) / result.seconds,
                    cpuMicrosecondsPerRequest: cpu / requests,
                    serverAnswered: answered - answeredBefore,
                    serverFailed: failed - failedBefore,
                    allocationsPerRequest: Double(allocations) / requests,
                    contextSwitchesPerRequest: Double(switches) / requests,
                    poolParksPerRequest: Double(parks) / requests
                )
                progress.log(
                    "  \(label): \(run.requestsPerSecond.formattedPlain) req/s, "
                        + "\(run.cpuMicrosecondsPerRequest.formattedPlain) µs CPU/req, p99 "
                        + "\((result.p99 / 1_000).formattedMilliseconds), max \((result.max / 1_000).formattedMilliseconds)"
                )
                return run
            } catch {
                writeError("warning: server run of \(peer.shortTitle) failed: \(error)\n")
                return nil
            }
        }
    }

    static let requestsPerSecond = Metric(title: "requests/s", unit: "req/s", lowerIsBetter: false)
    static let cpuPerRequest = Metric(title: "CPU per request", unit: "µs", lowerIsBetter: true)
    static let p99Latency = Metric(title: "p99 latency", unit: "µs", lowerIsBetter: true)

    /// The server sections' metrics, in order: requests/s decides when a configuration stops.
    static var metrics: [JudgedMetric<RunResult>] {
        [
            JudgedMetric(requestsPerSecond) { $0.requestsPerSecond },
            JudgedMetric(cpuPerRequest) { $0.cpuMicrosecondsPerRequest },
            JudgedMetric(p99Latency) { $0.wrk.p99 },
        ]
    }

    /// The reference of a server comparison: `DispatchGroup`, when it is among `peers` (a
    /// filtered run without the reference has neither twin nor verdicts).
    static func reference(among peers: [ServerPeer]) -> ServerPeer? {
        peers.contains(.dispatchGroup) ? .dispatchGroup : nil
    }

    private func summarize(_ configuration: Configuration, _ runs: [RunResult]) -> ConfigurationSummary {
        func medianOrNaN(_ values: [Double]) -> Double { median(values) ?? .nan }
        var summaries: [PeerSummary] = peers.compactMap { peer in
            let mine = runs.filter { $0.peer == peer }
            guard !mine.isEmpty else { return nil }
            return PeerSummary(
                peer: peer,
                title: peer.title,
                isReference: peer == .dispatchGroup,
                requestsPerSecond: medianOrNaN(mine.map(\.requestsPerSecond)),
                cpuMicrosecondsPerRequest: medianOrNaN(mine.map(\.cpuMicrosecondsPerRequest)),
                allocationsPerRequest: medianOrNaN(mine.map(\.allocationsPerRequest)),
                contextSwitchesPerRequest: medianOrNaN(mine.compactMap(\.contextSwitchesPerRequest)),
                p50: medianOrNaN(mine.map(\.wrk.p50)),
                p90: medianOrNaN(mine.map(\.wrk.p90)),
                p99: medianOrNaN(mine.map(\.wrk.p99)),
                p999: medianOrNaN(mine.map(\.wrk.p999)),
                max: mine.map(\.wrk.max).max()!,
                errors: mine.reduce(0) { $0 + $1.wrk.errors + $1.wrk.timeouts + $1.wrk.non2xx + $1.serverFailed }
            )
        }
        if let reference = summaries.first(where: \.isReference) {
            for index in summaries.indices {
                summaries[index].requestsPerSecondRatio =
                    summaries[index].requestsPerSecond / reference.requestsPerSecond
                summaries[index].cpuRatio =
                    summaries[index].cpuMicrosecondsPerRequest / reference.cpuMicrosecondsPerRequest
                summaries[index].p99Ratio = summaries[index].p99 / reference.p99
            }
        }
        return ConfigurationSummary(configuration: configuration, title: configuration.title, peers: summaries)
    }

    /// The server's goals, judged on this run's intervals: in every configuration, Bolts tasks
    /// (and the fan-out API) serve at least DispatchGroup's requests/s with at most 0.9× its
    /// CPU per request, the raw pool ≥ 1.25× its requests/s, each with p99 no worse; and no
    /// Bolts request slower than 20 ms in any run (an observed maximum, not an estimate).
    /// Beside each requests/s goal the report gives the floor's ratio (the jobs inline on the
    /// event loop, no executor): where the floor itself is under a bound, no executor can
    /// meet it.
    static func goals(_ summaries: [ConfigurationSummary], verdicts: [VerdictRow]) -> [GoalCheck] {
        func rows(_ peer: ServerPeer, _ metric: Metric) -> [LabelledRow] {
            summaries.map { summary in
                let label = "\(summary.configuration.fanOut)×\(summary.configuration.jobNanoseconds)ns"
                var row = verdicts.first {
                    !$0.isAA && $0.name == summary.title && $0.subject == peer.title && $0.metric == metric.title
                }
                // CPU and p99 goals read as "≤ 0.9× Dispatch's": the verdict ratio is Dispatch's
                // ÷ the peer's, so those goals bound its inverse.
                if !metric.lowerIsBetter, let floor = verdicts.first(where: {
                    !$0.isAA && $0.name == summary.title && $0.subject == ServerPeer.inlineOnLoop.title
                        && $0.metric == metric.title
                })?.ratio {
                    return LabelledRow(label: label + " (floor \(floor.formattedRatio))", row: row)
                }
                if metric.lowerIsBetter, let ratio = row?.ratio, let interval = row?.interval95 {
                    row?.ratio = 1 / ratio
                    row?.interval95 = [1 / interval[1], 1 / interval[0]]
                }
                return LabelledRow(label: label, row: row)
            }
        }
        var checks: [GoalCheck] = []
        for peer in [ServerPeer.boltsTasks, .boltsExecuteAll] {
            checks.append(
                Goals.ratio("server: \(peer.shortTitle) ≥ 1.0× DispatchGroup requests/s", rows(peer, requestsPerSecond), atLeast: 1)
            )
            checks.append(
                Goals.ratio("server: \(peer.shortTitle) ≤ 0.9× DispatchGroup CPU per request", rows(peer, cpuPerRequest), atMost: 0.9)
            )
        }
        checks.append(
            Goals.ratio("server: Bolts pool ≥ 1.25× DispatchGroup requests/s", rows(.boltsPool, requestsPerSecond), atLeast: 1.25)
        )
        for peer in [ServerPeer.boltsTasks, .boltsExecuteAll, .boltsPool] {
            checks.append(
                Goals.ratio("server: \(peer.shortTitle) p99 ≤ DispatchGroup's", rows(peer, p99Latency), atMost: 1)
            )
            let maxima = summaries.compactMap { summary in
                summary.peers.first { $0.peer == peer }.map { (summary, $0.max) }
            }
            let worst = maxima.map(\.1).max()
            let slowest = maxima.max { $0.1 < $1.1 }
            checks.append(
                GoalCheck(
                    goal: "server: no \(peer.shortTitle) request slower than 20 ms (every run)",
                    measured: slowest.map {
                        "slowest \(($0.1 / 1_000).formattedMilliseconds) (\($0.0.configuration.fanOut)×\($0.0.configuration.jobNanoseconds)ns)"
                    } ?? "not measured in this run",
                    verdict: worst.map { $0 <= 20_000 ? .met : .notMet } ?? .undecided,
                    decidedBy: "the slowest request observed (a maximum, not an estimate)"
                )
            )
        }
        return checks
    }
}

/// Context switches of this process so far (voluntary + involuntary, every thread).
func processContextSwitches() -> Int {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return usage.ru_nvcsw + usage.ru_nivcsw
}

/// CPU time (user + system) this process has used, in microseconds.
func processCPUMicroseconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    func micros(_ time: timeval) -> Double { Double(time.tv_sec) * 1e6 + Double(time.tv_usec) }
    return micros(usage.ru_utime) + micros(usage.ru_stime)
}
