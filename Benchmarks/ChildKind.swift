import ArgumentParser

/// The child processes the benchmark starts of its own executable, named by the hidden
/// `--child` option. A child does its one job as the first thing `run()` does (before
/// anything starts a Swift task, so that a child may still install the pool as the global
/// executor) and exits; `BenchmarksCommand.runChild` is the one place that dispatches them.
enum ChildKind: String, CaseIterable, ExpressibleByArgument {
    /// "Swift Concurrency on the Bolts pool": the workloads on Swift's default executor.
    case concurrencyOnDefaultExecutor = "concurrency-default"
    /// The same with `ThreadPool.shared` installed as the global executor.
    case concurrencyOnPoolInstalled = "concurrency-installed"
    /// One executor comparison in paired rounds (`ProcessReplicas`).
    case executorComparison = "executor-comparison"
    /// One task operation whose work hops between threads, in paired rounds (`ProcessReplicas`).
    case taskOperationComparison = "task-comparison"
    /// A server of the CPU-limit variant, in a cgroup with a quota (`CPULimitedServerChild`).
    case serverUnderCPULimit = "server-cpu-limit"
    /// The server scenario's Swift Concurrency handler with the pool installed (`ServerWithPoolInstalled`).
    case serverWithPoolInstalled = "server-installed"

    /// The arguments that start this child (the caller adds the options it needs).
    var arguments: [String] { ["--child", rawValue] }
}

extension BenchmarksCommand {
    /// The main of a child process of `kind`; it never returns.
    func runChild(_ kind: ChildKind) throws -> Never {
        switch kind {
        case .concurrencyOnDefaultExecutor, .concurrencyOnPoolInstalled:
            try ConcurrencyWorkloads.runChild(
                installed: kind == .concurrencyOnPoolInstalled, scale: concurrencyScale ?? (quick ? "quick" : "full"),
                repetitions: repetitions ?? 3, filter: filter)
        case .executorComparison, .taskOperationComparison:
            // A task operation's environment lives until the child exits; an executor child
            // makes none (its idle threads would take part in the contention).
            let comparisons =
                kind == .executorComparison
                ? ExecutorsSection.comparisons(
                    producerCounts: threads, filter: filter, withoutReference: withoutReference)
                : Catalog.taskOperationsInProcesses(Environment(), filter: filter, withoutReference: withoutReference)
            try ProcessReplicas.runChild(
                comparisons, index: comparisonIndex ?? -1, seconds: comparisonSeconds ?? 10, settings: runSettings())
        case .serverUnderCPULimit:
            CPULimitedServerChild.runChild(settings: serverSettings)
        case .serverWithPoolInstalled:
            try ServerWithPoolInstalled.runChild(settings: serverSettings)
        }
    }
}
