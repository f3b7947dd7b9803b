import Bolts

extension Section {
    static let server = Section(rawValue: "server")
    static let serverCPULimit = Section(rawValue: "server (cpu limit)")
}

/// "Inside a server" as a section of the run (`ServerBenchmark`): the SwiftNIO HTTP/1.1 server
/// in this process under wrk, a comparison per configuration.
final class ServerSection: BenchmarkSection {
    /// The weight of one configuration.
    static let weightPerConfiguration = 5.0

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
        return ["\(ServerBenchmark.group): fan-outs \(server.settings.fanOuts), jobs of \(server.settings.jobNanoseconds) ns"]
            + server.peers.map { "  \($0 == .dispatchGroup ? "[reference] " : "")\($0.title)" }
    }

    var weight: Double {
        server.peers.isEmpty ? 0 : Self.weightPerConfiguration * Double(server.configurations.count)
    }

    var progressSteps: Int { server.peers.isEmpty ? 0 : 1 }

    func run(_ context: SectionContext) -> SectionOutcome? {
        guard !server.peers.isEmpty else { return nil }
        context.progress.next("\(ServerBenchmark.group): SwiftNIO HTTP/1.1 server under wrk")
        let outcome = server.run(
            progress: context.progress,
            watchdog: context.watchdog,
            pacing: .init(
                budget: context.budget,
                stopping: stopping,
                weightPerConfiguration: Self.weightPerConfiguration,
                seed: context.seed &+ 2
            )
        )
        self.outcome = outcome
        return SectionOutcome(
            verdicts: outcome.verdicts,
            noise: outcome.noise.flatMap { $0 },
            goals: outcome.goals,
            markdown: ServerReport.render(outcome),
            json: [("server", outcome)],
            charts: ["server": { machine in ServerReport.chart(outcome, machine: machine) }]
        )
    }
}

/// The server scenario under a CPU quota (`ServerCPULimit`), which `prepare` probes for: it
/// needs root and a writable cgroup `cpu` controller, and is skipped with `--quick` or
/// `--cpu-limit 0`. Absent when the server section has no peers.
final class ServerCPULimitSection: BenchmarkSection {
    /// The weight of one configuration.
    static let weightPerConfiguration = 5.0

    /// The variant and where to run it (`BenchmarksCommand.cpuLimitVariant`), made by `prepare`.
    private let makeVariant: () -> (variant: ServerCPULimit, hierarchy: Result<CgroupCPULimit.Hierarchy, CPUQuotaCgroup.Failure>)?
    private var variant: (variant: ServerCPULimit, hierarchy: Result<CgroupCPULimit.Hierarchy, CPUQuotaCgroup.Failure>)?
    /// The options that fix the children's server settings.
    private let childArguments: [String]
    private let stopping: StoppingRule

    init(
        variant: @escaping () -> (variant: ServerCPULimit, hierarchy: Result<CgroupCPULimit.Hierarchy, CPUQuotaCgroup.Failure>)?,
        childArguments: [String],
        stopping: StoppingRule
    ) {
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
        return Self.weightPerConfiguration * Double(variant.variant.settings.configurations.count)
    }

    var progressSteps: Int { runs ? 1 : 0 }

    func run(_ context: SectionContext) -> SectionOutcome? {
        guard let (variant, hierarchy) = variant else { return nil }
        let outcome: ServerCPULimit.Outcome
        switch hierarchy {
        case .success(let hierarchy):
            context.progress.next(
                "\(ServerBenchmark.group): under a CPU quota of \(variant.settings.cpus.formattedCPUs) (child processes)")
            outcome = variant.run(
                hierarchy: hierarchy,
                childArguments: childArguments,
                progress: context.progress,
                watchdog: context.watchdog,
                pacing: .init(
                    budget: context.budget,
                    stopping: stopping,
                    weightPerConfiguration: Self.weightPerConfiguration,
                    seed: context.seed &+ 3
                )
            )
            context.progress.log(verdicts: outcome.verdicts)
        case .failure(let reason):
            writeError("note: the server scenario's CPU-limit variant is skipped: \(reason)\n")
            outcome = .init(settings: variant.settings, skipped: reason.description)
        }
        return SectionOutcome(
            verdicts: outcome.verdicts,
            noise: outcome.noise.flatMap { $0 },
            markdown: ServerCPULimitReport.render(outcome),
            json: [("cpuLimit", outcome)]
        )
    }
}
