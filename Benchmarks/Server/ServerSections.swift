import Bolts

extension Section {
    static let server = Section(rawValue: "server")
    static let serverCPULimit = Section(rawValue: "server (cpu limit)")
}

/// "Inside a server" as a section of the run (`ServerBenchmark`): the SwiftNIO HTTP/1.1 server
/// in this process under wrk, a comparison per configuration.
final class ServerSection: BenchmarkSection {
    /// The weight of one configuration.
    static let weightPerConfiguration = 4.0

    let server: ServerBenchmark
    private let stopping: StoppingRule
    /// What `run` measured, for the sections that build on it (`ServerWithPoolInstalledSection`).
    private(set) var outcome: ServerBenchmark.Outcome?

    init(server: ServerBenchmark, stopping: StoppingRule) {
        self.server = server
        self.stopping = stopping
    }

    var listing: [String] {
        guard !server.peers.isEmpty else { return [] }
        let settings = server.settings
        return ["\(ServerBenchmark.group): fan-outs \(settings.fanOuts), jobs of \(settings.jobNanoseconds) ns"]
            + server.peers.map { "  \($0 == .dispatchGroup ? "[reference] " : "")\($0.title)" }
    }

    var weight: Double {
        server.peers.isEmpty ? 0 : server.settings.weight(perConfiguration: Self.weightPerConfiguration)
    }

    var progressSteps: Int { server.peers.isEmpty ? 0 : 1 }

    func run(_ context: SectionContext) -> SectionOutcome? {
        guard !server.peers.isEmpty else { return nil }
        context.progress.next("\(ServerBenchmark.group): SwiftNIO HTTP/1.1 server under wrk")
        var outcome = ServerBenchmark.Outcome(settings: server.settings)
        do {
            let host = try InProcessServerHost(eventLoops: server.settings.eventLoops)
            defer { host.shutdown() }
            let scheduler = context.scheduler(stopping, seedOffset: 2)
            outcome = server.run(host: host, scheduler: scheduler, weight: Self.weightPerConfiguration)
        } catch {
            outcome.skipped = "the server could not start: \(error)"
            writeError("warning: \(outcome.skipped!)\n")
        }
        self.outcome = outcome
        return outcome.sectionOutcome
    }
}

/// The server scenario under a CPU quota (`QuotaChildrenHost`), if `prepare` finds root and a
/// writable cgroup `cpu` controller; skipped with `--quick` or `--cpu-limit 0`, absent without peers.
final class ServerCPULimitSection: BenchmarkSection {
    /// The weight of one configuration.
    static let weightPerConfiguration = 5.0

    typealias Variant = (server: ServerBenchmark, hierarchy: Result<CgroupCPULimit.Hierarchy, CPUQuotaCgroup.Failure>)
    /// The variant and where to run it (`BenchmarksCommand.cpuLimitVariant`), made by `prepare`.
    private let makeVariant: () -> Variant?
    private var variant: Variant?
    /// The options that fix the children's server settings.
    private let childArguments: [String]
    private let stopping: StoppingRule

    init(variant: @escaping () -> Variant?, childArguments: [String], stopping: StoppingRule) {
        makeVariant = variant
        self.childArguments = childArguments
        self.stopping = stopping
    }

    /// `--list` leaves the variant out: it is listed with the server's peers.
    var listing: [String] { [] }

    func prepare() { variant = makeVariant() }

    private var runs: Bool { (try? variant?.hierarchy.get()) != nil }

    var weight: Double {
        guard runs, let variant else { return 0 }
        return variant.server.settings.weight(perConfiguration: Self.weightPerConfiguration)
    }

    var progressSteps: Int { runs ? 1 : 0 }

    func run(_ context: SectionContext) -> SectionOutcome? {
        guard let (server, hierarchy) = variant else { return nil }
        var outcome = ServerBenchmark.Outcome(settings: server.settings)
        let cpus = server.settings.cpus ?? 1
        switch hierarchy {
        case .failure(let reason):
            writeError("note: the server scenario's CPU-limit variant is skipped: \(reason)\n")
            outcome.skipped = reason.description
        case .success(let hierarchy):
            context.progress.next(
                "\(ServerBenchmark.group): under a CPU quota of \(cpus.formattedCPUs) (child processes)")
            do {
                let host = try QuotaChildrenHost(
                    hierarchy: hierarchy, peers: server.peers, cpus: cpus, childArguments: childArguments,
                    watchdog: context.watchdog)
                defer { host.stop() }
                let scheduler = context.scheduler(stopping, seedOffset: 3)
                outcome = server.run(host: host, scheduler: scheduler, weight: Self.weightPerConfiguration)
                outcome.notes["cgroup"] = host.cgroupDescription
                outcome.notes["poolThreads"] = Set(host.poolThreads).sorted().map(String.init).joined(separator: "/")
                context.progress.log(verdicts: outcome.verdicts)
            } catch {
                outcome.skipped = "a CPU-limited server could not start: \(error)"
                writeError("warning: \(outcome.skipped!)\n")
            }
        }
        return outcome.sectionOutcome
    }
}

extension WrkOutcome where Arm == ServerPeer, Settings == ServerBenchmark.Settings {
    /// A server section's outcome: its rows, noise, goals, report and JSON (under "server", or
    /// "cpuLimit" under a quota), and the in-process server's latency chart.
    var sectionOutcome: SectionOutcome {
        let inProcess = settings.cpus == nil
        return SectionOutcome(
            verdicts: verdicts, noise: noise.flatMap { $0 }, goals: goals, markdown: ServerReport.render(self),
            json: [(inProcess ? "server" : "cpuLimit", self)],
            charts: inProcess ? ["server": { machine in ServerReport.chart(self, machine: machine) }] : [:])
    }
}

extension BenchmarksCommand {
    /// The server scenario's CPU-limit variant and its cgroup hierarchy, or why it is skipped
    /// (`--quick`, `--cpu-limit 0`, no root or writable `cpu` controller); nil without peers. Its
    /// configurations are `server`'s with 16 jobs (and 1 with `--full`; else the first fan-out)
    /// of ~3 µs (else the longest): one configuration leaves the main scenario its budget.
    func cpuLimitVariant(server: ServerBenchmark) -> ServerCPULimitSection.Variant? {
        guard !server.peers.isEmpty else { return nil }
        var settings = server.settings
        let fanOuts = (full ? [16, 1] : [16]).filter(settings.fanOuts.contains)
        settings.fanOuts = fanOuts.isEmpty ? Array(settings.fanOuts.prefix(1)) : fanOuts
        settings.jobNanoseconds = [
            settings.jobNanoseconds.contains(3_000) ? 3_000 : (settings.jobNanoseconds.max() ?? 3_000)
        ]
        settings.cpus = cpuLimit
        let variant = ServerBenchmark(settings: settings, peers: server.peers)
        if quick { return (variant, .failure(.init(description: "not run with --quick"))) }
        if cpuLimit == 0 { return (variant, .failure(.init(description: "turned off with --cpu-limit 0"))) }
        return (variant, CPUQuotaCgroup.probe())
    }
}
