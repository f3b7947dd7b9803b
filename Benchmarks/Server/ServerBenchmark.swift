import Bolts
import CBenchmarkSupport
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

    /// Runs every configuration; `watchdog` is told before each wrk run (a run lasts
    /// `settings.seconds`, the whole scenario many minutes).
    func run(progress: Progress, watchdog: Watchdog) -> Outcome {
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
        let configurations = settings.fanOuts.flatMap { fanOut in
            settings.jobNanoseconds.map { nanoseconds in
                Configuration(
                    fanOut: fanOut,
                    jobNanoseconds: nanoseconds,
                    rounds: serverJobRounds(forNanoseconds: Double(nanoseconds))
                )
            }
        }
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

        var runs: [RunResult] = []
        let total = settings.rounds * configurations.count * peers.count
        var done = 0
        for round in 0..<settings.rounds {
            for configuration in configurations {
                // Rotate the order each round: no peer always follows the same one.
                let shift = (round + configurations.firstIndex(of: configuration)!) % peers.count
                let order = Array(peers[shift...] + peers[..<shift])
                for peer in order {
                    done += 1
                    let label = "\(peer.shortTitle), \(configuration.title), round \(round + 1)"
                    progress.update("server run \(done)/\(total): \(label)")
                    watchdog.beat("server scenario: \(label)")
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
                        runs.append(
                            RunResult(
                                peer: peer,
                                configuration: configuration,
                                round: round,
                                wrk: result,
                                requestsPerSecond: Double(result.requests) / result.seconds,
                                cpuMicrosecondsPerRequest: cpu / Double(max(result.requests, 1)),
                                serverAnswered: answered - answeredBefore,
                                serverFailed: failed - failedBefore,
                                allocationsPerRequest: Double(allocations) / requests,
                                contextSwitchesPerRequest: Double(switches) / requests,
                                poolParksPerRequest: Double(parks) / requests
                            )
                        )
                        let last = runs.last!
                        progress.log(
                            "  \(label): \(last.requestsPerSecond.formattedPlain) req/s, "
                                + "\(last.cpuMicrosecondsPerRequest.formattedPlain) µs CPU/req, "
                                + "\(last.allocationsPerRequest.formattedPlain) allocs/req, "
                                + String(format: "%.2f switches/req, ", Double(switches) / requests)
                                + String(format: "%.2f pool parks/req, p99 ", Double(parks) / requests)
                                + "\((result.p99 / 1_000).formattedMilliseconds), max \((result.max / 1_000).formattedMilliseconds)"
                        )
                    } catch {
                        writeError("warning: server run of \(peer.shortTitle) failed: \(error)\n")
                    }
                }
            }
        }
        let summaries = configurations.map { configuration in
            summarize(configuration, runs.filter { $0.configuration == configuration })
        }
        return Outcome(
            settings: settings,
            skipped: nil,
            runs: runs,
            summaries: summaries,
            goals: Self.goals(summaries, runs: runs)
        )
    }

    private func summarize(_ configuration: Configuration, _ runs: [RunResult]) -> ConfigurationSummary {
        func median(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            guard !sorted.isEmpty else { return .nan }
            return sorted.count % 2 == 1
                ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
        var summaries: [PeerSummary] = peers.compactMap { peer in
            let mine = runs.filter { $0.peer == peer }
            guard !mine.isEmpty else { return nil }
            return PeerSummary(
                peer: peer,
                title: peer.title,
                isReference: peer == .dispatchGroup,
                requestsPerSecond: median(mine.map(\.requestsPerSecond)),
                cpuMicrosecondsPerRequest: median(mine.map(\.cpuMicrosecondsPerRequest)),
                allocationsPerRequest: median(mine.map(\.allocationsPerRequest)),
                contextSwitchesPerRequest: median(mine.compactMap(\.contextSwitchesPerRequest)),
                p50: median(mine.map(\.wrk.p50)),
                p90: median(mine.map(\.wrk.p90)),
                p99: median(mine.map(\.wrk.p99)),
                p999: median(mine.map(\.wrk.p999)),
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

    /// The issue's bar, judged from this run: at every configuration, Bolts tasks serve
    /// ≥ 1.0× DispatchGroup's requests/s with ≤ 0.9× its CPU per request, the raw pool
    /// ≥ 1.25×, each with p99 ≤ Dispatch's, and no Bolts request slower than 20 ms. The
    /// fan-out API (`Task.executeAll`) is held to the tasks' bar.
    static func goals(_ summaries: [ConfigurationSummary], runs: [RunResult]) -> [GoalCheck] {
        var checks: [GoalCheck] = []
        func check(
            _ goal: String, _ peer: ServerPeer, _ measure: (PeerSummary, ConfigurationSummary) -> (Double?, String),
            _ pass: (Double) -> Bool
        ) {
            var measured: [String] = []
            var met: Bool? = true
            for summary in summaries {
                guard let entry = summary.peers.first(where: { $0.peer == peer }),
                    summary.peers.contains(where: \.isReference)
                else {
                    met = nil
                    continue
                }
                let (value, text) = measure(entry, summary)
                measured.append("\(summary.configuration.fanOut)×\(summary.configuration.jobNanoseconds)ns \(text)")
                guard let value else {
                    met = nil
                    continue
                }
                if !pass(value), met != nil { met = false }
            }
            if summaries.isEmpty { met = nil }
            checks.append(
                GoalCheck(goal: goal, measured: measured.isEmpty ? "not measured in this run" : measured.joined(separator: "; "), met: met)
            )
        }
        // The requests/s goals show, beside each ratio, the floor's: the same jobs run inline
        // on the event loop, with no executor at all. Where the floor itself is under a bound,
        // no executor can meet it (the jobs then take most of the server's CPU).
        func floorRatio(_ summary: ConfigurationSummary) -> String {
            guard let ratio = summary.peers.first(where: { $0.peer == .inlineOnLoop })?.requestsPerSecondRatio
            else { return "" }
            return " (inline \(ratio.formattedRatio))"
        }
        for peer in [ServerPeer.boltsTasks, .boltsExecuteAll] {
            check("server: \(peer.shortTitle) ≥ 1.0× DispatchGroup requests/s", peer, {
                ($0.requestsPerSecondRatio, ($0.requestsPerSecondRatio?.formattedRatio ?? "?") + floorRatio($1))
            }) { $0 >= 1.0 }
            check("server: \(peer.shortTitle) ≤ 0.9× DispatchGroup CPU per request", peer, { entry, _ in
                (entry.cpuRatio, entry.cpuRatio?.formattedRatio ?? "?")
            }) { $0 <= 0.9 }
        }
        check("server: Bolts pool ≥ 1.25× DispatchGroup requests/s", .boltsPool, {
            ($0.requestsPerSecondRatio, ($0.requestsPerSecondRatio?.formattedRatio ?? "?") + floorRatio($1))
        }) { $0 >= 1.25 }
        for peer in [ServerPeer.boltsTasks, .boltsExecuteAll, .boltsPool] {
            check("server: \(peer.shortTitle) p99 ≤ DispatchGroup's", peer, { entry, _ in
                (entry.p99Ratio, entry.p99Ratio?.formattedRatio ?? "?")
            }) { $0 <= 1.0 }
            check("server: no \(peer.shortTitle) request slower than 20 ms (every run)", peer, { entry, _ in
                (entry.max, (entry.max / 1_000).formattedMilliseconds)
            }) { $0 <= 20_000 }
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

extension Double {
    /// "2.31 ms" for a value in milliseconds.
    var formattedMilliseconds: String {
        self < 10 ? String(format: "%.2f ms", self) : String(format: "%.1f ms", self)
    }
}
