/// The server scenario's Swift Concurrency handler with the pool installed
/// (`ServerWithPoolInstalled`), with `--full` only, after the server section ran it on the
/// default executor. It takes no share of the budget and reports no verdicts: its tables set
/// the child's numbers beside the server section's.
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
            installed = try ServerWithPoolInstalled.run(arguments: childArguments, watchdog: context.watchdog)
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
