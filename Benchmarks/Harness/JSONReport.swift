import Foundation

/// What `--json` writes, and what `--save-baseline` keeps. Its contract is the top-level
/// `verdicts` array: one object per comparison and metric, with `section`, `name`,
/// `subject`, `baseline` (the peer), `metric`, `ratio` (how many times better the subject
/// is; above 1 always means better), `interval95`, `verdict`, `rounds` and
/// `noiseThreshold`; the A/A rows (`isAA`) are among them, their `interval95` simultaneous
/// over the run's A/A rows and their own 95 % interval in `individualInterval95`
/// (`Verdicts.simultaneous`). The rest is detail: the machine,
/// the settings, every sample, the goals, each round's noise.
struct JSONReport: Codable {
    struct Settings: Codable {
        var quick: Bool
        var full: Bool
        var budgetMinutes: Double?
        var seed: UInt64
        var sampleNanoseconds: UInt64
        var targetHalfWidth: Double
        var minimumRounds: Int
        var maximumRounds: Int
        var producerCounts: [Int]
        var filter: String?
        var allocationCountingWorks: Bool
        var instructionCounting: String
    }

    struct Entry: Codable {
        var name: String
        var subject: String
        var unit: String
        var isReference: Bool
        var expectedAllocations: String
        var medianNanosecondsPerOperation: Double?
        var medianAllocationsPerOperation: Double?
        var medianInstructionsPerOperation: Double?
        /// Hand-off latency over all measured samples (executors only).
        var latency: LatencySummary?
        var error: String?
        var samples: [Sample]
    }

    struct Comparison: Codable {
        var section: Section
        var group: String
        var operation: String
        var producers: Int?
        var reference: String?
        var entries: [Entry]
        var noise: [RoundNoise]
    }

    var machine: Machine
    var settings: Settings
    var measuredSeconds: Double
    var verdicts: [VerdictRow]
    var goals: [GoalCheck]
    var noise: NoiseSummary
    var comparisons: [Comparison]
    /// The server scenario: every wrk run, the per-configuration summaries, verdicts and goals.
    var server: ServerBenchmark.Outcome?
    /// The server's Swift Concurrency handler with the pool installed (`--full` only).
    var serverWithPoolInstalled: ServerBenchmark.Outcome?
    /// Swift Concurrency with the default global executor and with the pool installed.
    var concurrency: ConcurrencyOnPool.Outcome?
    /// This run against `--baseline`, when given.
    var baselineName: String?
    var baselineComparisons: [Baseline.Comparison]?
    /// The server scenario under a CPU quota (its verdicts are in `verdicts` too), or why it
    /// was skipped.
    var cpuLimit: ServerCPULimit.Outcome? = nil
    /// The "Inside a Hummingbird server" section (its verdicts are in `verdicts` too, its goals
    /// in `goals`), or why it was skipped.
    var hummingbird: HummingbirdBenchmark.Outcome? = nil

    static func comparisons(_ results: [ComparisonResult]) -> [Comparison] {
        results.map { result in
            Comparison(
                section: result.section,
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
                        medianAllocationsPerOperation: entry.medianAllocationsPerOperation,
                        medianInstructionsPerOperation: entry.medianInstructionsPerOperation,
                        latency: entry.latency,
                        error: entry.error,
                        samples: entry.samples
                    )
                },
                noise: result.noise
            )
        }
    }

    func write(to path: String) throws {
        let encoder = JSONCoding.encoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: URL(fileURLWithPath: path))
    }
}

/// The benchmark's JSON coders: infinite and NaN doubles (an undecided ratio's bounds) are
/// written as the strings "inf", "-inf" and "nan", and read back the same way.
enum JSONCoding {
    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan"
        )
        return encoder
    }

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan"
        )
        return decoder
    }
}

extension ComparisonResult {
    var section: Section { Section(group: group) }
}
