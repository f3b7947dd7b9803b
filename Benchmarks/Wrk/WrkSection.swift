import BenchmarkStatistics
import Foundation

/// The layer of every section that loads a server with wrk (`ServerBenchmark`, `FrameworkHost`):
/// a section says where an arm's server comes from (`WrkHost`) and which loads a draw runs
/// (`WrkLoad`); `WrkRounds.run` runs the rounds (`RoundScheduler`) and judges requests/s, CPU
/// per request and p99.

/// How long each wrk run lasts and how wrk loads the server.
struct WrkSettings: Codable {
    var seconds: Int
    var wrkThreads: Int
    var connections: Int
}

/// The server process's CPU time and counters at one moment.
struct WrkReading {
    var cpuMicroseconds: Double
    var counters: [String: Double] = [:]
}

/// One arm's server, as a measurement sees it.
protocol WrkServer {
    /// `http://127.0.0.1:<port>/<path>`: loopback only.
    func url(_ path: String) -> String
    /// The server process's CPU time and counters now; nil once it is gone.
    func reading() -> WrkReading?
}

/// Where a section's servers come from: a child per draw, a child per arm, or one for all arms.
protocol WrkHost {
    /// An arm: its raw value is its identifier in verdict keys.
    associatedtype Arm: Hashable & Codable & RawRepresentable where Arm.RawValue == String
    associatedtype Server: WrkServer

    /// The server that measures `arm` in one draw.
    func server(for draw: RoundDraw<Arm>) throws -> Server
    /// Before the loads of a draw (a warm-up): what the draw records of where its handlers run.
    func prepare(_ server: Server, _ draw: RoundDraw<Arm>) throws -> String?
    /// After the loads of a draw that is not the reference's twin: the blocking-handler run, if any.
    func finish(_ server: Server, _ draw: RoundDraw<Arm>) throws -> BlockingRun?
    /// The draw is over (a child started for it stops).
    func release(_ server: Server)
    /// One run's figures from how the counters changed over it (by default, each ÷ requests).
    func figures(_ change: [String: Double], requests: Double, seconds: Double) -> [String: Double]
}

extension WrkHost {
    func prepare(_ server: Server, _ draw: RoundDraw<Arm>) throws -> String? { nil }
    func finish(_ server: Server, _ draw: RoundDraw<Arm>) throws -> BlockingRun? { nil }
    func release(_ server: Server) {}
    func figures(_ change: [String: Double], requests: Double, seconds: Double) -> [String: Double] {
        change.mapValues { $0 / requests }
    }
}

/// One load a draw runs: a path (which may depend on the arm) and the name of its verdicts.
struct WrkLoad<Arm> {
    /// What its runs and summaries are filed under ("plain", "16x3000").
    var key: String
    /// The verdicts' name.
    var name: String
    var path: (Arm) -> String
}

/// One wrk run of one load, with the server's costs over it.
struct WrkRun: Codable {
    /// The load's key.
    var load: String
    var wrk: WrkLoadGenerator.Run
    var requestsPerSecond: Double
    /// The server's CPU (user + system, every thread) over the run ÷ requests.
    var cpuMicrosecondsPerRequest: Double
    /// The host's figures over the run (`WrkHost.figures`), by name.
    var figures: [String: Double] = [:]

    /// wrk's connect, read, write, timeout and non-2xx counts, with the server's own failures.
    var errors: Int { wrk.errors + wrk.timeouts + wrk.non2xx + Int(figures["failed"] ?? 0) }
}

/// One arm's measurement in one round: every load's run, and what the host added.
struct WrkDraw<Arm: Codable>: Codable {
    var arm: Arm
    var round: Int
    /// Whether this is the reference's second measurement in its round (for the A/A).
    var isTwin: Bool
    var runs: [WrkRun]
    /// Where the draw's handlers ran (`WrkHost.prepare`), if the host says.
    var handlerThread: String?
    /// The blocking-handler run (`WrkHost.finish`), if the host has one.
    var blocking: BlockingRun?

    func run(_ load: String) -> WrkRun? { runs.first { $0.load == load } }
}

/// An arm's figures on one load: medians over its rounds (twins left out), and the worst max.
struct WrkSummary<Arm: Codable & Equatable>: Codable {
    var arm: Arm
    var load: String
    var rounds: Int
    var requestsPerSecond: Double
    var cpuMicrosecondsPerRequest: Double
    var p50: Double
    var p90: Double
    var p99: Double
    var p999: Double
    /// The slowest request of any round.
    var max: Double
    var errors: Int
    /// The medians of the host's figures.
    var figures: [String: Double]

    init?(arm: Arm, load: String, draws: [WrkDraw<Arm>]) {
        let runs = draws.filter { $0.arm == arm && !$0.isTwin }.compactMap { $0.run(load) }
        guard !runs.isEmpty else { return nil }
        func middle(_ value: (WrkRun) -> Double?) -> Double { median(runs.compactMap(value)) ?? .nan }
        self.arm = arm
        self.load = load
        rounds = runs.count
        requestsPerSecond = middle(\.requestsPerSecond)
        cpuMicrosecondsPerRequest = middle(\.cpuMicrosecondsPerRequest)
        p50 = middle(\.wrk.p50)
        p90 = middle(\.wrk.p90)
        p99 = middle(\.wrk.p99)
        p999 = middle(\.wrk.p999)
        max = runs.map(\.wrk.max).max()!
        errors = runs.reduce(0) { $0 + $1.errors }
        let names = Set(runs.flatMap(\.figures.keys))
        figures = Dictionary(uniqueKeysWithValues: names.map { name in (name, middle { $0.figures[name] }) })
    }

    /// Its median of `metric` as a table shows it (`Double.formatted(unit:)`): "41,200/s", "23.4 µs".
    func formatted(_ metric: Metric) -> String {
        let medians = [
            WrkMetrics.requestsPerSecond.key: requestsPerSecond,
            WrkMetrics.cpuPerRequest.key: cpuMicrosecondsPerRequest,
        ]
        return (medians[metric.key] ?? p99).formatted(unit: metric.unit)
    }
}

/// What a wrk section's JSON holds and its report reads; `Settings` is the section's own.
struct WrkOutcome<Arm: Codable & Hashable, Settings: Codable>: Codable {
    var settings: Settings
    /// Why the section did not run (no wrk, no server, no cgroup, …).
    var skipped: String?
    /// What the host says of itself (the cgroup used, the children's pool sizes, the build).
    var notes: [String: String] = [:]
    var draws: [WrkDraw<Arm>] = []
    var summaries: [WrkSummary<Arm>] = []
    var verdicts: [VerdictRow] = []
    var goals: [GoalCheck] = []
    /// Each comparison's rounds, in order.
    var noise: [[RoundNoise]] = []

    func summary(_ arm: Arm, _ load: String) -> WrkSummary<Arm>? {
        summaries.first { $0.arm == arm && $0.load == load }
    }

    /// The row of `key`.
    func verdict(_ key: VerdictKey) -> VerdictRow? { verdicts.first { $0.key == key } }
}

/// The metrics every wrk section judges.
enum WrkMetrics {
    static let requestsPerSecond = Metric(title: "requests/s", unit: "req/s", lowerIsBetter: false, id: "rps")
    static let cpuPerRequest = Metric(title: "CPU per request", unit: "µs", lowerIsBetter: true, id: "cpu")
    static let p99Latency = Metric(title: "p99 latency", unit: "µs", lowerIsBetter: true, id: "p99")
    static let all = [requestsPerSecond, cpuPerRequest, p99Latency]

    /// The metrics judged on `load`, read from a draw's run of it (requests/s first: it
    /// decides when the rounds stop).
    static func judged<Arm>(_ load: String) -> [JudgedMetric<WrkDraw<Arm>>] {
        [
            JudgedMetric(requestsPerSecond) { $0.run(load)?.requestsPerSecond },
            JudgedMetric(cpuPerRequest) { $0.run(load)?.cpuMicrosecondsPerRequest },
            JudgedMetric(p99Latency) { $0.run(load)?.wrk.p99 },
        ]
    }
}

/// The round loop of a wrk section.
enum WrkRounds {
    /// Runs one comparison of `arms` on `loads` in paired rounds (a `measure` per draw), stopped on
    /// the widest requests/s interval of any load; returns the rounds and their verdicts.
    static func run<Host: WrkHost>(
        _ name: String, host: Host, loads: [WrkLoad<Host.Arm>], arms: [Host.Arm], reference: Host.Arm?,
        section: Section, title: @escaping (Host.Arm) -> String, shortTitle: (Host.Arm) -> String,
        scheduler: RoundScheduler, weight: Double, settings: WrkSettings, loadGenerator: WrkLoadGenerator
    ) -> (rounds: PairedRounds<Host.Arm, WrkDraw<Host.Arm>>, verdicts: [VerdictRow]) {
        let deciding = loads.map { WrkMetrics.judged($0.key)[0] as JudgedMetric<WrkDraw<Host.Arm>> }
        let rounds = scheduler.run(
            name, arms: arms, reference: reference, weight: weight, title: shortTitle,
            measure: { draw -> WrkDraw<Host.Arm>? in
                do {
                    let measured = try measure(
                        draw, host: host, loads: loads, settings: settings, load: loadGenerator,
                        watchdog: scheduler.watchdog)
                    scheduler.progress.log("  \(name): \(draw.label): " + describe(measured))
                    return measured
                } catch {
                    writeError("warning: \(name): the run of \(draw.label) failed: \(error)\n")
                    return nil
                }
            },
            widestInterval: { rounds in deciding.compactMap { rounds.widestHalfWidth($0) }.max() }
        )
        return (rounds, verdicts(rounds, loads: loads, section: section, title: title))
    }

    /// Each load's verdicts: every arm against the reference on `WrkMetrics.judged`, with the A/A,
    /// keyed by the load's key and the arms' raw values.
    static func verdicts<Arm: RawRepresentable & Hashable>(
        _ rounds: PairedRounds<Arm, WrkDraw<Arm>>, loads: [WrkLoad<Arm>], section: Section, title: (Arm) -> String
    ) -> [VerdictRow] where Arm.RawValue == String {
        loads.flatMap { load in
            rounds.verdicts(
                section: section, name: load.name, title: title, metrics: WrkMetrics.judged(load.key),
                comparison: load.key, id: \.rawValue)
        }
    }

    /// One draw: `host`'s server for its arm, prepared, every load run, finished and released.
    private static func measure<Host: WrkHost>(
        _ draw: RoundDraw<Host.Arm>, host: Host, loads: [WrkLoad<Host.Arm>], settings: WrkSettings,
        load generator: WrkLoadGenerator, watchdog: Watchdog
    ) throws -> WrkDraw<Host.Arm> {
        let server = try host.server(for: draw)
        defer { host.release(server) }
        let handlerThread = try host.prepare(server, draw)
        let gone = BenchmarkChildFailed(description: "the server of \(draw.label) is gone")
        var runs: [WrkRun] = []
        for load in loads {
            watchdog.beat("\(draw.label): \(load.key)")
            guard let before = server.reading() else { throw gone }
            let wrk = try generator.run(url: server.url(load.path(draw.arm)), seconds: settings.seconds)
            guard let after = server.reading() else { throw gone }
            let requests = Double(max(wrk.requests, 1))
            let change = Dictionary(
                uniqueKeysWithValues: after.counters.map { ($0.key, $0.value - (before.counters[$0.key] ?? 0)) })
            runs.append(
                WrkRun(
                    load: load.key, wrk: wrk, requestsPerSecond: Double(wrk.requests) / wrk.seconds,
                    cpuMicrosecondsPerRequest: (after.cpuMicroseconds - before.cpuMicroseconds) / requests,
                    figures: host.figures(change, requests: requests, seconds: wrk.seconds)))
        }
        let blocking = draw.isTwin ? nil : try host.finish(server, draw)
        return WrkDraw(
            arm: draw.arm, round: draw.round, isTwin: draw.isTwin, runs: runs, handlerThread: handlerThread,
            blocking: blocking)
    }

    /// A draw's figures on one line, for the progress log.
    private static func describe<Arm>(_ draw: WrkDraw<Arm>) -> String {
        let runs = draw.runs.map { run in
            "\(run.load) \(run.requestsPerSecond.formattedPlain)/s, \(run.cpuMicrosecondsPerRequest.formattedPlain) µs "
                + "CPU/req, p99 \((run.wrk.p99 / 1_000).formattedMilliseconds)"
        }
        return runs.joined(separator: "; ") + (draw.blocking.map { "; " + $0.description } ?? "")
    }
}
