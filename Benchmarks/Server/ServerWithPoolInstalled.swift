import Bolts
import Foundation

/// The server scenario's Swift Concurrency handler with `ThreadPool.shared` installed as
/// the global executor: the same server, handler and load, in a child process of the
/// benchmark (installing is process-wide and must come first), with `DispatchGroup` run
/// in that process too as its reference. The main process's own run of the handler, on
/// Swift's default executor, is the other half of the comparison.
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
        let outcome = ServerBenchmark(settings: settings, peers: peers).run(
            host: host, progress: progress,
            watchdog: Watchdog(limitSeconds: 300),
            pacing: .init(
                budget: Budget(seconds: nil, totalWeight: 1),
                stopping: StoppingRule(minimumRounds: settings.rounds, maximumRounds: settings.rounds),
                weightPerConfiguration: 1,
                seed: UInt64(settings.rounds)
            )
        )
        host.shutdown()
        progress.finish()
        let data = try JSONEncoder().encode(outcome)
        print(String(decoding: data, as: UTF8.self))
        exit(0)
    }

    /// Runs the child with the same server settings as the main run.
    static func run(arguments: [String], watchdog: Watchdog) throws -> ServerBenchmark.Outcome {
        watchdog.beat("server scenario with the pool installed (child process)")
        let data = try runBenchmarkChild(ChildKind.serverWithPoolInstalled.arguments + arguments)
        return try JSONDecoder().decode(ServerBenchmark.Outcome.self, from: data)
    }

    /// A table per configuration: the handler on the default executor (main run), the
    /// handler with the pool installed (child), and each process's DispatchGroup.
    static func render(installed: ServerBenchmark.Outcome, main: ServerBenchmark.Outcome?) -> String {
        var text = "\n### The Swift Concurrency handler with the Bolts pool installed\n\n"
        if let skipped = installed.skipped { return text + "Skipped: \(skipped).\n" }
        text += Report.method("With the pool installed", ["ratios to the `DispatchGroup` of the same process"]) + "\n"
        text += "| configuration | handler | req/s | ratio | CPU µs/req | ratio | p50 ms | p99 ms | ratio | max ms |\n"
        text += "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
        for configuration in installed.settings.configurations(rounds: { _ in 0 }) {
            // Matched by fan-out and job size: the rounds of xorshift per job are calibrated
            // in each process and may differ by a little.
            var rows: [(String, WrkSummary<ServerPeer>, reference: WrkSummary<ServerPeer>?)] = []
            if let main {
                for peer in [ServerPeer.concurrencyTaskGroup, .dispatchGroup] {
                    guard let summary = main.summary(peer, configuration.key) else { continue }
                    rows.append(
                        ("\(peer.shortTitle), default executor (main run)", summary,
                         main.summary(.dispatchGroup, configuration.key)))
                }
            }
            for peer in peers {
                guard let summary = installed.summary(peer, configuration.key) else { continue }
                let place = peer == .dispatchGroup ? "in the child" : "pool installed"
                rows.append(("\(peer.shortTitle), \(place)", summary, installed.summary(.dispatchGroup, configuration.key)))
            }
            for (name, peer, reference) in rows {
                func ratio(_ value: KeyPath<WrkSummary<ServerPeer>, Double>) -> String {
                    reference.map { (peer[keyPath: value] / $0[keyPath: value]).formattedRatio } ?? "–"
                }
                text += "| \(configuration.title) | \(name) | \(peer.requestsPerSecond.formattedPlain) | "
                text += "\(ratio(\.requestsPerSecond)) | \(peer.cpuMicrosecondsPerRequest.formattedPlain) | "
                text += "\(ratio(\.cpuMicrosecondsPerRequest)) | \((peer.p50 / 1_000).formattedMilliseconds) | "
                text += "\((peer.p99 / 1_000).formattedMilliseconds) | \(ratio(\.p99)) | "
                text += "\((peer.max / 1_000).formattedMilliseconds) |\n"
            }
        }
        return text
    }
}
