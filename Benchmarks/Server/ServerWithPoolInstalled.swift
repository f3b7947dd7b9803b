import Bolts
import Foundation

/// The server scenario's Swift Concurrency handler with `ThreadPool.shared` installed as the
/// global executor (process-wide, so in a child process), with `DispatchGroup` as its reference
/// there; the main run's handler on Swift's default executor is the other half of the comparison.
enum ServerWithPoolInstalled {
    static let peers: [ServerPeer] = [.dispatchGroup, .concurrencyTaskGroup]

    /// The child's main: installs the pool, runs the two handlers, prints the outcome as
    /// JSON on standard output.
    static func runChild(settings: ServerBenchmark.Settings) throws -> Never {
        guard ThreadPool.shared.unsafeTryInstallAsConcurrencyGlobalExecutor() else {
            writeError("the child could not install the pool as the global executor\n")
            exit(2)
        }
        let progress = Progress(budget: nil)
        let host = try InProcessServerHost(eventLoops: settings.eventLoops)
        let scheduler = RoundScheduler(
            budget: Budget(seconds: nil, totalWeight: 1),
            stopping: StoppingRule(minimumRounds: settings.rounds, maximumRounds: settings.rounds),
            seed: UInt64(settings.rounds), progress: progress, watchdog: Watchdog(limitSeconds: 300))
        let outcome = ServerBenchmark(settings: settings, peers: peers).run(host: host, scheduler: scheduler, weight: 1)
        host.shutdown()
        progress.finish()
        print(String(decoding: try JSONEncoder().encode(outcome), as: UTF8.self))
        exit(0)
    }

    /// A table per configuration: the handler on the default executor (main run), the
    /// handler with the pool installed (child), and each process's DispatchGroup.
    static func render(installed: ServerBenchmark.Outcome, main: ServerBenchmark.Outcome?) -> String {
        var text = "\n### The Swift Concurrency handler with the Bolts pool installed\n\n"
        if let skipped = installed.skipped { return text + "Skipped: \(skipped).\n" }
        text += Report.method("With the pool installed", ["ratios to the `DispatchGroup` of the same process"]) + "\n"
        text += "| configuration | handler | req/s | ratio | CPU µs/req | ratio | p50 ms | p99 ms | ratio | max ms |\n"
        text += "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
        let inMain = main.map { main in
            [ServerPeer.concurrencyTaskGroup, .dispatchGroup].map { peer in
                ("\(peer.shortTitle), default executor (main run)", peer, main)
            }
        }
        let rows = (inMain ?? []) + peers.map { peer in
            ("\(peer.shortTitle), \(peer == .dispatchGroup ? "in the child" : "pool installed")", peer, installed)
        }
        for configuration in installed.settings.configurations(rounds: { _ in 0 }) {
            // Matched by fan-out and job size: the rounds of xorshift per job are calibrated
            // in each process and may differ by a little.
            for (name, peer, outcome) in rows {
                guard let summary = outcome.summary(peer, configuration.key) else { continue }
                let reference = outcome.summary(.dispatchGroup, configuration.key)
                func ratio(_ value: KeyPath<WrkSummary<ServerPeer>, Double>) -> String {
                    reference.map { (summary[keyPath: value] / $0[keyPath: value]).formattedRatio } ?? "–"
                }
                let cells = [
                    configuration.title, name, summary.requestsPerSecond.formattedPlain, ratio(\.requestsPerSecond),
                    summary.cpuMicrosecondsPerRequest.formattedPlain, ratio(\.cpuMicrosecondsPerRequest),
                    (summary.p50 / 1_000).formattedMilliseconds, (summary.p99 / 1_000).formattedMilliseconds,
                    ratio(\.p99), (summary.max / 1_000).formattedMilliseconds,
                ]
                text += "| " + cells.joined(separator: " | ") + " |\n"
            }
        }
        return text
    }
}

/// `ServerWithPoolInstalled` as a section, with `--full` only, after the server section: no share
/// of the budget and no verdicts, only tables that set the child's numbers beside the main run's.
final class ServerWithPoolInstalledSection: BenchmarkSection {
    private let server: ServerSection
    private let isWanted: Bool
    /// The options that fix the child's server settings.
    private let childArguments: [String]

    init(server: ServerSection, full: Bool, childArguments: [String]) {
        self.server = server
        isWanted = full && server.server.peers.contains(.concurrencyTaskGroup)
        self.childArguments = childArguments
    }

    var listing: [String] { [] }
    var weight: Double { 0 }
    var progressSteps: Int { 0 }

    func run(_ context: SectionContext) -> SectionOutcome? {
        guard isWanted, server.outcome?.skipped == nil else { return nil }
        context.progress.update(
            "\(ServerBenchmark.group): the Swift Concurrency handler with the pool installed (child process)")
        let installed: ServerBenchmark.Outcome
        do {
            context.watchdog.beat("server scenario with the pool installed (child process)")
            let data = try runBenchmarkChild(ChildKind.serverWithPoolInstalled.arguments + childArguments)
            installed = try JSONDecoder().decode(ServerBenchmark.Outcome.self, from: data)
        } catch {
            writeError("warning: the server scenario with the pool installed failed: \(error)\n")
            return nil
        }
        return SectionOutcome(
            markdown: ServerWithPoolInstalled.render(installed: installed, main: server.outcome),
            json: [("serverWithPoolInstalled", installed)]
        )
    }
}
