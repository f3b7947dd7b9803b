import Foundation

/// What `--json` writes: the machine, the settings, every sample of every scenario, the
/// medians and ratios derived from them, and the goals.
struct JSONReport: Codable {
    struct Settings: Codable {
        var quick: Bool
        var repetitions: Int
        var sampleNanoseconds: UInt64
        var producerCounts: [Int]
        var filter: String?
        var allocationCountingWorks: Bool
    }

    struct Entry: Codable {
        var name: String
        var subject: String
        var unit: String
        var isReference: Bool
        var expectedAllocations: String
        var medianNanosecondsPerOperation: Double?
        var minimumNanosecondsPerOperation: Double?
        var maximumNanosecondsPerOperation: Double?
        var medianAllocationsPerOperation: Double?
        /// Median time per operation ÷ the reference's.
        var timeRatioToReference: Double?
        /// Hand-off latency over all measured samples (executors only).
        var latency: LatencySummary?
        var error: String?
        var samples: [Sample]
    }

    struct Comparison: Codable {
        var group: String
        var operation: String
        var producers: Int?
        var reference: String?
        var entries: [Entry]
    }

    var machine: Machine
    var settings: Settings
    var comparisons: [Comparison]
    var goals: [GoalCheck]
    /// The server scenario: every wrk run, the per-configuration summaries and its goals.
    var server: ServerBenchmark.Outcome?
    /// The server scenario's Swift Concurrency handler (and DispatchGroup) in a child
    /// process with the pool installed as the global executor.
    var serverWithPoolInstalled: ServerBenchmark.Outcome?
    /// Swift Concurrency with the default global executor and with the pool installed.
    var concurrency: ConcurrencyOnPool.Outcome?

    init(
        machine: Machine,
        settings: Settings,
        results: [ComparisonResult],
        goals: [GoalCheck],
        server: ServerBenchmark.Outcome? = nil,
        serverWithPoolInstalled: ServerBenchmark.Outcome? = nil,
        concurrency: ConcurrencyOnPool.Outcome? = nil
    ) {
        self.serverWithPoolInstalled = serverWithPoolInstalled
        self.machine = machine
        self.server = server
        self.concurrency = concurrency
        self.settings = settings
        self.goals = goals
        comparisons = results.map { result in
            Comparison(
                group: result.group,
                operation: result.operation,
                producers: result.producers,
                reference: result.reference?.name,
                entries: result.entries.map { entry in
                    Entry(
                        name: entry.name,
                        subject: entry.subject.rawValue,
                        unit: entry.unit,
                        isReference: entry.isReference,
                        expectedAllocations: entry.expectedAllocations,
                        medianNanosecondsPerOperation: entry.medianNanosecondsPerOperation,
                        minimumNanosecondsPerOperation: entry.minimumNanosecondsPerOperation,
                        maximumNanosecondsPerOperation: entry.maximumNanosecondsPerOperation,
                        medianAllocationsPerOperation: entry.medianAllocationsPerOperation,
                        timeRatioToReference: result.timeRatio(entry),
                        latency: entry.latency,
                        error: entry.error,
                        samples: entry.samples
                    )
                }
            )
        }
    }

    func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: URL(fileURLWithPath: path))
    }
}
