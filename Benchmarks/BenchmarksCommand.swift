import ArgumentParser
import BenchmarkStatistics
import CBenchmarkSupport
import Foundation

/// `swift run Benchmarks` (a debug build hands over to a release build of itself; see
/// `ReleaseHandOver`) or `swift run -c release Benchmarks`: compares Bolts' task operations
/// and executors with SwiftNIO, Dispatch, OperationQueue and Swift Concurrency in paired,
/// randomly ordered rounds of one run, and gives each comparison a ratio with a 95 %
/// interval and a verdict, within a time budget.
@main
struct BenchmarksCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "Benchmarks",
        abstract: "Compare Bolts task operations and executors with their peers: paired rounds, intervals, verdicts.",
        discussion: """
            Plain `swift run Benchmarks` ends its measurements within --budget minutes (10). Each \
            comparison stops when its 95% interval is narrower than ±5% or its share of the budget is \
            spent, and then says what it reached. Exit status: 0; 1 when a scenario failed; 2 with \
            --check when a row regressed against --baseline beyond its noise threshold.
            """
    )

    @Option(help: ArgumentHelp(
        "Run only comparisons (or scenarios) whose name contains this text, case-insensitively.", valueName: "text"))
    var filter: String?

    @Option(help: ArgumentHelp(
        "Minutes the measurements may take in all (default: 10; 1.5 with --quick).", valueName: "minutes"))
    var budget: Double?

    @Flag(help: ArgumentHelp(
        "No time budget: every comparison runs until its interval is ±5% or its maximum rounds, with longer samples "
            + "and server runs, the server with the pool installed, and the Vapor server."))
    var full = false

    @Flag(help: "Smoke mode: short samples, a few rounds, one server configuration; about two minutes (used by CI).")
    var quick = false

    @Option(
        help: ArgumentHelp(
            "Producer thread counts for the executor comparisons, comma-separated (default: 1,2,4,8).",
            valueName: "counts"),
        transform: BenchmarksCommand.parsePositiveList)
    var threads: [Int] = [1, 2, 4, 8]

    @Option(help: ArgumentHelp("Write the verdicts and every sample as JSON to this file.", valueName: "file"))
    var json: String?

    @Option(help: ArgumentHelp("Write the report (Markdown, as printed) to this file too.", valueName: "file"))
    var markdown: String?

    @Option(help: ArgumentHelp("Write the executor throughput chart (SVG) to this file.", valueName: "file.svg"))
    var chart: String?

    @Option(help: ArgumentHelp("Write the server scenario's latency chart (SVG) to this file.", valueName: "file.svg"))
    var serverChart: String?

    @Option(help: ArgumentHelp(
        "Keep this run's samples as a named baseline in .benchmarks/NAME.json (under the current directory).",
        valueName: "name"))
    var saveBaseline: String?

    @Option(help: ArgumentHelp("Compare this run with the saved baseline NAME, row by row.", valueName: "name"))
    var baseline: String?

    @Flag(help: "With --baseline: exit with status 2 when a row regressed beyond its noise threshold.")
    var check = false

    @Option(help: ArgumentHelp(
        "Seed of the rounds' random orders (default: drawn; the report prints it).", valueName: "n"))
    var seed: UInt64?

    @Option(help: ArgumentHelp(
        "Exactly this many rounds per comparison, ignoring intervals and the budget.", valueName: "n"))
    var rounds: Int?

    @Option(help: ArgumentHelp(
        "Seconds of each wrk run in the server scenario (default: 1, or 2 with --full).", valueName: "s"))
    var serverSeconds: Int?

    @Option(help: ArgumentHelp(
        "Rounds of the server scenario with the pool installed (--full only; default: 3).", valueName: "n"))
    var serverRounds: Int?

    @Option(
        help: ArgumentHelp(
            "Jobs per request in the server scenario, comma-separated (default: 1,16,64; 16 with --quick).",
            valueName: "counts"),
        transform: BenchmarksCommand.parsePositiveList)
    var serverFanOuts: [Int]?

    @Option(
        help: ArgumentHelp(
            "Job durations in ns in the server scenario, comma-separated (default: 300,3000; 3000 with --quick).",
            valueName: "ns"),
        transform: BenchmarksCommand.parsePositiveList)
    var serverJobNs: [Int]?

    @Option(help: ArgumentHelp(
        "CPUs of the quota on each handler's server in the server scenario's CPU-limit variant (needs root and a "
            + "writable cgroup cpu controller; 0 turns it off; default: 1).",
        valueName: "cpus"))
    var cpuLimit: Double = 1

    @Option(help: ArgumentHelp(
        "Operations per sample instead of calibrating (for profilers such as callgrind).", valueName: "n"))
    var iterations: Int?

    @Flag(help: "Leave the reference peers out of a filtered run, to profile one scenario alone (no ratios).")
    var withoutReference = false

    @Option(help: ArgumentHelp(
        "Child processes per comparison where the process is the unit (default: 4; 2 with --quick, 6 with --full).",
        valueName: "n"))
    var processes: Int?

    @Option(help: .hidden)
    var child: ChildKind?

    @Option(help: .hidden)
    var concurrencyScale: String?

    @Option(help: .hidden)
    var comparisonIndex: Int?

    @Option(help: .hidden)
    var comparisonSeconds: Double?

    @Option(help: .hidden)
    var repetitions: Int?

    @Flag(help: "List the comparisons and scenarios (after --filter) and exit.")
    var list = false

    @Flag(help: ArgumentHelp(
        "Run this debug build as it is instead of handing over to a release build (for debugging the harness; the "
            + "numbers are meaningless)."))
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
            jobNanoseconds: serverJobNs ?? (quick ? [3_000] : [300, 3_000]),
            rounds: serverRounds ?? 3,
            seconds: serverSeconds ?? (full ? 2 : 1),
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

    /// When comparisons stop: `micro` for the in-process comparisons, else the server's and
    /// the Swift Concurrency section's (whose rounds cost seconds).
    func stopping(_ kind: StoppingKind) -> StoppingRule {
        var rule: StoppingRule
        switch (kind, quick, full) {
        case (_, true, _): rule = StoppingRule(minimumRounds: 2, maximumRounds: 3)
        case (.micro, _, true): rule = StoppingRule(minimumRounds: 8, maximumRounds: 200)
        case (.micro, _, false): rule = StoppingRule(minimumRounds: 5, maximumRounds: 100)
        case (.server, _, true): rule = StoppingRule(minimumRounds: 5, maximumRounds: 20)
        case (.server, _, false): rule = StoppingRule(minimumRounds: 3, maximumRounds: 12)
        case (.processes, _, true): rule = StoppingRule(minimumRounds: 6, maximumRounds: 40)
        case (.processes, _, false): rule = StoppingRule(minimumRounds: 4, maximumRounds: 30)
        }
        rule.fixedRounds = rounds
        return rule
    }

    enum StoppingKind { case micro, server, processes }

    /// What one sample of an in-process comparison should last.
    var sampleNanoseconds: UInt64 { quick ? 5_000_000 : (full ? 50_000_000 : 20_000_000) }

    /// The in-process comparisons' settings (shared with the comparisons' child processes); without
    /// `--seed`, each call draws a new seed.
    func runSettings() -> RunSettings {
        RunSettings(
            sampleNanoseconds: sampleNanoseconds, fixedIterations: iterations, stopping: stopping(.micro),
            seed: seed ?? UInt64.random(in: 1...UInt64(UInt32.max)))
    }

    /// Child processes per comparison that runs in children (`ProcessReplicas`).
    var executorProcesses: Int { processes ?? (quick ? 2 : (full ? 6 : 4)) }

    /// The options a comparison's child process needs to build the same comparisons.
    var comparisonChildArguments: [String] {
        var arguments = ["--threads", threads.map(String.init).joined(separator: ",")]
        if let filter { arguments += ["--filter", filter] }
        if withoutReference { arguments.append("--without-reference") }
        if let iterations { arguments += ["--iterations", "\(iterations)"] }
        if let rounds { arguments += ["--rounds", "\(rounds)"] }
        if quick { arguments.append("--quick") }
        if full { arguments.append("--full") }
        return arguments
    }

    /// The fraction of the budget the measurements plan for; the rest absorbs the round in
    /// progress when a share runs out, the tear-downs and the report.
    static let plannedFraction = 0.93

    func validate() throws {
        if let budget, !(budget > 0) { throw ValidationError("--budget must be a positive number of minutes") }
        if full, budget != nil { throw ValidationError("--full runs without a budget; leave out --budget") }
        if full, quick { throw ValidationError("--full and --quick contradict each other") }
        if check, baseline == nil { throw ValidationError("--check compares with a baseline: give --baseline NAME") }
        if let rounds, rounds < 2 {
            throw ValidationError("--rounds must be at least 2 (an interval needs two rounds)")
        }
        if let repetitions, repetitions < 1 { throw ValidationError("--repetitions must be at least 1") }
        if let iterations, iterations < 1 { throw ValidationError("--iterations must be at least 1") }
        if let processes, processes < 2 {
            throw ValidationError("--processes must be at least 2 (an interval needs two)")
        }
        if let serverSeconds, serverSeconds < 1 { throw ValidationError("--server-seconds must be at least 1") }
        if let serverRounds, serverRounds < 1 { throw ValidationError("--server-rounds must be at least 1") }
        if !(cpuLimit >= 0) { throw ValidationError("--cpu-limit must be a number of CPUs, or 0 for none") }
        if let saveBaseline { _ = try Baseline.path(saveBaseline) }
        if let baseline { _ = try Baseline.path(baseline) }
    }

    func run() throws {
        // A child process (`ChildKind`) does its one job and exits, before anything else starts
        // a Swift task: some install the pool as the global executor first.
        if let child { try runChild(child) }
        // Before anything is measured: a debug build hands over to a release build of itself.
        if isDebugBuild, !debugBuild, !ReleaseHandOver.wasHandedOver {
            try ReleaseHandOver.replaceWithReleaseBuild(arguments: Array(CommandLine.arguments.dropFirst()))
        }
        // Before any thread starts, so that the counters follow every thread.
        PerfCounters.open()
        if isDebugBuild { warnAboutDebugBuild() }
        // Read the baseline first: a wrong name fails before minutes of measuring.
        let savedBaseline = try baseline.map { name in
            do { return try Baseline.load(name) } catch { throw ValidationError("\(error)") }
        }
        let loadAverageAtStart = Machine.loadAverage()
        let countsAllocations = bench_allocation_counting_works() != 0
        if !countsAllocations {
            writeError("warning: the allocation counter is not interposed; allocation columns will be wrong.\n")
        }
        let settings = runSettings()
        let sections = Sections(self)
        if list {
            for section in sections.listed { section.listing.forEach { print($0) } }
            sections.taskOperations.shutDown()
            return
        }
        for section in sections.all { section.prepare() }
        let budgetMinutes: Double? = full ? nil : (budget ?? (quick ? 1.5 : 10))
        let weight = sections.all.map(\.weight).reduce(0, +)
        let runBudget = Budget(seconds: budgetMinutes.map { $0 * 60 * Self.plannedFraction }, totalWeight: weight)
        let measurementStart = now()

        let progress = Progress(budget: runBudget)
        progress.begin(total: sections.all.map(\.progressSteps).reduce(0, +))
        // A sample lasts well under a second (a 10^6-link chain a few); minutes of silence
        // mean a hang.
        let runner = Runner(
            settings: settings, progress: progress, watchdog: Watchdog(limitSeconds: 300), budget: runBudget)
        let context = SectionContext(
            budget: runBudget, progress: progress, watchdog: runner.watchdog, seed: settings.seed, runner: runner)
        let outcomes = sections.all.compactMap { $0.run(context) }
        progress.finish()
        let measuredSeconds = Double(now() &- measurementStart) / 1e9

        let machine = Machine.current(loadAverageAtStart: loadAverageAtStart)
        let verdicts = Verdicts.simultaneous(outcomes.flatMap(\.verdicts))
        let noiseSummary = NoiseSummary(outcomes.flatMap(\.noise))
        let baselineComparisons = savedBaseline.map { Baseline.compare(verdicts, with: $0) }

        var report = Report.header(
            machine: machine, settings: settings, budgetMinutes: budgetMinutes, measuredSeconds: measuredSeconds,
            countsAllocations: countsAllocations, processIsTheUnit: sections.all.compactMap(\.processIsTheUnit))
        report += Report.noise(noiseSummary, verdicts: verdicts)
        report += Report.sections(outcomes)
        report += Report.aaTable(verdicts.filter(\.isAA))
        if let baselineComparisons, let baseline { report += Baseline.render(baselineComparisons, name: baseline) }
        print(report)
        if let markdown {
            try report.write(toFile: markdown, atomically: true, encoding: .utf8)
            writeError("wrote \(markdown)\n")
        }

        let jsonReport = JSONReport(
            machine: machine,
            settings: .init(
                quick: quick, full: full, budgetMinutes: budgetMinutes, seed: settings.seed,
                sampleNanoseconds: settings.sampleNanoseconds, targetHalfWidth: settings.stopping.targetHalfWidth,
                minimumRounds: settings.stopping.minimumRounds, maximumRounds: settings.stopping.maximumRounds,
                producerCounts: threads, processes: executorProcesses, filter: filter,
                allocationCountingWorks: countsAllocations,
                instructionCounting: PerfCounters.unavailableReason.map { "n/a: \($0)" } ?? "perf_event_open"),
            measuredSeconds: measuredSeconds, verdicts: verdicts, goals: outcomes.flatMap(\.goals),
            noise: noiseSummary, comparisons: JSONReport.comparisons(outcomes.flatMap(\.comparisons)),
            baselineName: baseline, baselineComparisons: baselineComparisons, sectionParts: outcomes.flatMap(\.json))
        if let json {
            try jsonReport.write(to: json)
            writeError("wrote \(json)\n")
        }
        if let saveBaseline {
            writeError("saved the baseline \(saveBaseline) as \(try Baseline.save(jsonReport, as: saveBaseline))\n")
        }
        // Each chart option, the outcomes' chart it writes, and what it says when no outcome draws one.
        let charts = [
            (chart, "executors", "no executor results to chart (check --filter)"),
            (serverChart, "server", "no server results to chart (check --filter and wrk)"),
        ]
        for case let (file?, name, missing) in charts {
            if let svg = outcomes.lazy.compactMap({ $0.charts[name]?(machine) }).first {
                try svg.write(toFile: file, atomically: true, encoding: .utf8)
                writeError("wrote \(file)\n")
            } else {
                writeError("\(missing); \(file) not written\n")
            }
        }
        if isDebugBuild { warnAboutDebugBuild() }
        if outcomes.contains(where: \.failed) { throw ExitCode(1) }
        if check, let regressions = baselineComparisons?.filter({ $0.verdict == .worse }), !regressions.isEmpty {
            writeError("--check: \(regressions.count) row(s) regressed against the baseline \(baseline ?? "")\n")
            throw ExitCode(2)
        }
    }

    private func warnAboutDebugBuild() {
        writeError("""

            ************************************************************************
            *  WARNING: DEBUG BUILD. Every number below is meaningless: generics    *
            *  are not specialised and nothing is optimised. Measure with           *
            *      swift run -c release Benchmarks                                  *
            ************************************************************************


            """)
    }
}

extension BenchmarksCommand {
    /// The run's sections from the options, in the order they run. Seeds: the in-process
    /// comparisons take the run's seed, those in child processes `seed &+ spacing × (index + 1)`
    /// (`childSeedSpacing`); the other sections `seed &+ 1`, `&+ 2`, … in run order.
    struct Sections {
        /// The task operations' section, whose event loops `--list` shuts down.
        let taskOperations: TaskOperationsSection
        /// In run order, which is the report's.
        let all: [any BenchmarkSection]
        /// In `--list` order: the server's lines come last, after the sections listed by
        /// comparison and workload.
        let listed: [any BenchmarkSection]

        init(_ command: BenchmarksCommand) {
            let (quick, full) = (command.quick, command.full)
            taskOperations = TaskOperationsSection(
                filter: command.filter, withoutReference: command.withoutReference,
                processes: command.executorProcesses, childArguments: command.comparisonChildArguments)
            let executors = ExecutorsSection(
                producerCounts: command.threads, filter: command.filter, withoutReference: command.withoutReference,
                processes: command.executorProcesses, childArguments: command.comparisonChildArguments)
            let concurrency = ConcurrencySection(
                filter: command.filter, childMode: quick ? "quick" : (full ? "full" : "budget"),
                repetitions: quick ? 1 : (full ? 5 : 3), stopping: command.stopping(.processes))
            let serverBenchmark = ServerBenchmark(
                settings: command.serverSettings,
                peers: ServerBenchmark.peers(matching: command.filter, withoutReference: command.withoutReference))
            let server = ServerSection(server: serverBenchmark, stopping: command.stopping(.server))
            let servers: [any BenchmarkSection] = [
                server,
                ServerCPULimitSection(
                    variant: { command.cpuLimitVariant(server: serverBenchmark) },
                    childArguments: command.serverArguments, stopping: command.stopping(.server)),
                ServerWithPoolInstalledSection(server: server, full: full, childArguments: command.serverArguments),
            ]
            let frameworks: [any BenchmarkSection] = [
                FrameworkSection(.hummingbird, command: command), FrameworkSection(.vapor, command: command),
            ]
            let comparisons: [any BenchmarkSection] = [taskOperations, executors, concurrency]
            all = comparisons + servers + frameworks
            listed = comparisons + frameworks + servers
        }
    }
}
