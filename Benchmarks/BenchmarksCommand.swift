import ArgumentParser
import CBenchmarkSupport
import Foundation

/// `swift run Benchmarks` (a debug build hands over to a release build of itself; see
/// `ReleaseHandOver`) or `swift run -c release Benchmarks`: compares Bolts' task operations
/// and executors with SwiftNIO, Dispatch, OperationQueue and Swift Concurrency, measured in
/// the same run.
@main
struct BenchmarksCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "Benchmarks",
        abstract: "Compare Bolts task operations and executors under contention with their peers, in one run."
    )

    @Option(
        help: ArgumentHelp(
            "Run only comparisons (or scenarios) whose name contains this text, case-insensitively.",
            valueName: "text"
        )
    )
    var filter: String?

    @Flag(help: "Smoke mode: short samples and 3 repetitions; finishes in under a minute (used by CI).")
    var quick = false

    @Option(
        help: ArgumentHelp(
            "Producer thread counts for the executor comparisons, comma-separated (default: 1,2,4,8).",
            valueName: "counts"
        ),
        transform: { text in
            let counts = text.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard !counts.isEmpty, counts.allSatisfy({ ($0 ?? 0) > 0 }) else {
                throw ValidationError("--threads takes positive integers separated by commas, e.g. 1,2,4,8")
            }
            return counts.map { $0! }
        }
    )
    var threads: [Int] = [1, 2, 4, 8]

    @Option(
        help: ArgumentHelp(
            "Write every sample, with medians, ratios and goals, as JSON to this file.",
            valueName: "file"
        )
    )
    var json: String?

    @Option(help: ArgumentHelp("Write the executor throughput chart (SVG) to this file.", valueName: "file.svg"))
    var chart: String?

    @Option(help: ArgumentHelp("Write the server scenario's latency chart (SVG) to this file.", valueName: "file.svg"))
    var serverChart: String?

    @Option(help: ArgumentHelp("Seconds of each wrk run in the server scenario (default: 5, or 1 with --quick).", valueName: "s"))
    var serverSeconds: Int?

    @Option(
        help: ArgumentHelp(
            "Rounds of the server scenario; each runs every handler once per configuration (default: 3, or 1 with --quick).",
            valueName: "n"
        )
    )
    var serverRounds: Int?

    @Option(
        help: ArgumentHelp("Jobs per request in the server scenario, comma-separated (default: 1,16,64; 16 with --quick).", valueName: "counts"),
        transform: BenchmarksCommand.parsePositiveList
    )
    var serverFanOuts: [Int]?

    @Option(
        help: ArgumentHelp("Job durations in ns in the server scenario, comma-separated (default: 300,3000).", valueName: "ns"),
        transform: BenchmarksCommand.parsePositiveList
    )
    var serverJobNs: [Int]?

    @Option(help: ArgumentHelp("Measured samples per scenario (default: 7, or 3 with --quick).", valueName: "n"))
    var repetitions: Int?

    @Option(
        help: ArgumentHelp(
            "Operations per sample instead of calibrating (for profilers such as callgrind).",
            valueName: "n"
        )
    )
    var iterations: Int?

    @Flag(help: "Leave the reference peers out of a filtered run, to profile one scenario alone (no ratios).")
    var withoutReference = false

    @Option(help: .hidden)
    var concurrencyChild: String?

    @Flag(help: "List the comparisons and scenarios (after --filter) and exit.")
    var list = false

    @Flag(
        help:
            "Run this debug build as it is instead of handing over to a release build (for debugging the harness; the numbers are meaningless)."
    )
    var debugBuild = false

    /// "1,16,64" as [1, 16, 64]; anything else is a usage error.
    static func parsePositiveList(_ text: String) throws -> [Int] {
        let values = text.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !values.isEmpty, values.allSatisfy({ ($0 ?? 0) > 0 }) else {
            throw ValidationError("expected positive integers separated by commas, e.g. 1,16,64")
        }
        return values.map { $0! }
    }

    /// The server scenario's settings from the options (shared with its child process).
    var serverSettings: ServerBenchmark.Settings {
        .init(
            fanOuts: serverFanOuts ?? (quick ? [16] : [1, 16, 64]),
            jobNanoseconds: serverJobNs ?? [300, 3_000],
            rounds: serverRounds ?? (quick ? 1 : 3),
            seconds: serverSeconds ?? (quick ? 1 : 5),
            eventLoops: 2,
            wrkThreads: 1,
            connections: 32
        )
    }

    /// The options that fix `serverSettings`, for the server scenario's child process.
    var serverArguments: [String] {
        let settings = serverSettings
        return [
            "--server-fan-outs", settings.fanOuts.map(String.init).joined(separator: ","),
            "--server-job-ns", settings.jobNanoseconds.map(String.init).joined(separator: ","),
            "--server-rounds", "\(settings.rounds)", "--server-seconds", "\(settings.seconds)",
        ]
    }

    func validate() throws {
        if let repetitions, repetitions < 1 { throw ValidationError("--repetitions must be at least 1") }
        if let iterations, iterations < 1 { throw ValidationError("--iterations must be at least 1") }
        if let serverSeconds, serverSeconds < 1 { throw ValidationError("--server-seconds must be at least 1") }
        if let serverRounds, serverRounds < 1 { throw ValidationError("--server-rounds must be at least 1") }
    }

    func run() throws {
        // A child process of the "Swift Concurrency on the Bolts pool" section: it must
        // install the pool (or not) before anything else starts a Swift task.
        if concurrencyChild == ServerWithPoolInstalled.childMode {
            try ServerWithPoolInstalled.runChild(settings: serverSettings)
        }
        if let concurrencyChild {
            try ConcurrencyWorkloads.runChild(
                installed: concurrencyChild == "installed",
                quick: quick,
                repetitions: repetitions ?? (quick ? 3 : 7),
                filter: filter
            )
        }
        // Before anything is measured: a debug build hands over to a release build of itself.
        if isDebugBuild, !debugBuild, !ReleaseHandOver.wasHandedOver {
            try ReleaseHandOver.replaceWithReleaseBuild(arguments: Array(CommandLine.arguments.dropFirst()))
        }
        if isDebugBuild { warnAboutDebugBuild() }
        let loadAverageAtStart = Machine.loadAverage()
        let countsAllocations = bench_allocation_counting_works() != 0
        if !countsAllocations {
            writeError("warning: the allocation counter is not interposed; allocation columns will be wrong.\n")
        }
        let settings = RunSettings(
            repetitions: repetitions ?? (quick ? 3 : 7),
            sampleNanoseconds: quick ? 15_000_000 : 100_000_000,
            fixedIterations: iterations
        )
        let environment = Environment()
        let taskOperations = Catalog.filtered(
            Catalog.taskOperations(environment),
            by: filter,
            withoutReference: withoutReference
        )
        let executors = Catalog.filtered(
            Catalog.executors(producerCounts: threads) + Catalog.handOffs(producerCounts: threads),
            by: filter,
            withoutReference: withoutReference
        )
        let serverPeers = ServerBenchmark.peers(matching: filter, withoutReference: withoutReference)
        let concurrencyWanted = ConcurrencyOnPool.isSelected(by: filter)
        let server = ServerBenchmark(settings: serverSettings, peers: serverPeers)
        if list {
            for comparison in taskOperations + executors {
                print("\(comparison.group): \(comparison.operation)")
                for entry in comparison.entries {
                    print("  \(entry.scenario === comparison.reference ? "[reference] " : "")\(entry.scenario.name)")
                }
            }
            if !serverPeers.isEmpty {
                print("\(ServerBenchmark.group): fan-outs \(server.settings.fanOuts), jobs of \(server.settings.jobNanoseconds) ns")
                for peer in serverPeers {
                    print("  \(peer == .dispatchGroup ? "[reference] " : "")\(peer.title)")
                }
            }
            environment.shutdown()
            return
        }

        let progress = Progress()
        progress.begin(
            total: taskOperations.count + executors.count + (concurrencyWanted ? 1 : 0) + (serverPeers.isEmpty ? 0 : 1)
        )
        // A sample lasts well under a second (a 10^6-link chain a few); minutes of silence
        // mean a hang.
        let runner = Runner(settings: settings, progress: progress, watchdog: Watchdog(limitSeconds: 300))
        var results: [ComparisonResult] = []
        for comparison in taskOperations {
            progress.next("\(comparison.group): \(comparison.operation)")
            results.append(runner.run(comparison))
        }
        // The task operations' loop and pool go before the executors run, so their idle
        // threads take no part in the contention being measured.
        environment.shutdown()
        for comparison in executors {
            progress.next("\(comparison.group): \(comparison.operation)")
            results.append(runner.run(comparison))
        }
        var concurrencyOutcome: ConcurrencyOnPool.Outcome?
        if concurrencyWanted {
            progress.next("\(ConcurrencyOnPool.group): default executor vs the pool installed (child processes)")
            concurrencyOutcome = ConcurrencyOnPool.run(
                quick: quick,
                repetitions: settings.repetitions,
                progress: progress,
                watchdog: runner.watchdog
            )
        }
        var serverOutcome: ServerBenchmark.Outcome?
        if !serverPeers.isEmpty {
            progress.next("\(ServerBenchmark.group): SwiftNIO HTTP/1.1 server under wrk")
            serverOutcome = server.run(progress: progress, watchdog: runner.watchdog)
        }
        var serverInstalledOutcome: ServerBenchmark.Outcome?
        if serverPeers.contains(.concurrencyTaskGroup), serverOutcome?.skipped == nil {
            progress.update("\(ServerBenchmark.group): the Swift Concurrency handler with the pool installed (child process)")
            do {
                serverInstalledOutcome = try ServerWithPoolInstalled.run(arguments: serverArguments, watchdog: runner.watchdog)
            } catch {
                writeError("warning: the server scenario with the pool installed failed: \(error)\n")
            }
        }
        progress.finish()

        let machine = Machine.current(loadAverageAtStart: loadAverageAtStart)
        let goals = Goals.check(results)
        print(
            Report.render(
                results,
                goals: goals,
                machine: machine,
                settings: settings,
                countsAllocations: countsAllocations
            ) + (concurrencyOutcome.map(ConcurrencyOnPool.render) ?? "") + (serverOutcome.map(ServerReport.render) ?? "")
                + (serverInstalledOutcome.map { ServerWithPoolInstalled.render(installed: $0, main: serverOutcome) } ?? "")
        )

        if let json {
            let report = JSONReport(
                machine: machine,
                settings: .init(
                    quick: quick,
                    repetitions: settings.repetitions,
                    sampleNanoseconds: settings.sampleNanoseconds,
                    producerCounts: threads,
                    filter: filter,
                    allocationCountingWorks: countsAllocations
                ),
                results: results,
                goals: goals,
                server: serverOutcome,
                serverWithPoolInstalled: serverInstalledOutcome,
                concurrency: concurrencyOutcome
            )
            try report.write(to: json)
            writeError("wrote \(json)\n")
        }
        if let chart {
            if let svg = SVGChart.executorThroughput(results, machine: machine, repetitions: settings.repetitions) {
                try svg.write(toFile: chart, atomically: true, encoding: .utf8)
                writeError("wrote \(chart)\n")
            } else {
                writeError("no executor results to chart (check --filter); \(chart) not written\n")
            }
        }
        if let serverChart {
            if let outcome = serverOutcome, let svg = ServerReport.chart(outcome, machine: machine) {
                try svg.write(toFile: serverChart, atomically: true, encoding: .utf8)
                writeError("wrote \(serverChart)\n")
            } else {
                writeError("no server results to chart (check --filter and wrk); \(serverChart) not written\n")
            }
        }
        if isDebugBuild { warnAboutDebugBuild() }
        let failed = results.flatMap(\.entries).filter { $0.error != nil }
        if !failed.isEmpty { throw ExitCode(1) }
        if let outcome = serverOutcome, outcome.skipped == nil,
            outcome.runs.count < server.settings.rounds * server.settings.fanOuts.count
                * server.settings.jobNanoseconds.count * serverPeers.count
        {
            throw ExitCode(1)  // a wrk run failed (reported above)
        }
    }

    private func warnAboutDebugBuild() {
        writeError(
            """

            ************************************************************************
            *  WARNING: DEBUG BUILD. Every number below is meaningless: generics    *
            *  are not specialised and nothing is optimised. Measure with           *
            *      swift run -c release Benchmarks                                  *
            ************************************************************************


            """
        )
    }
}
