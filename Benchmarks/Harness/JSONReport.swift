import Foundation

/// What `--json` writes, and what `--save-baseline` keeps. Its contract is the top-level
/// `verdicts` array: one object per comparison and metric, with `section`, `name`,
/// `subject`, `baseline` (the peer), `metric`, `ratio` (how many times better the subject
/// is; above 1 always means better), `interval95`, `verdict`, `rounds` and
/// `noiseThreshold`; the A/A rows (`isAA`) are among them, their `interval95` simultaneous
/// over the run's A/A rows and their own 95 % interval in `individualInterval95`
/// (`Verdicts.simultaneous`); an undecided row's `roundsToDecide` says at how many rounds
/// its present spread would decide it (absent when none up to a thousand would, and from
/// reports saved before the field existed, which still load); `key` identifies the row in code
/// (`VerdictKey`: section, comparison, arm, baseline and metric identifiers, no titles), on the
/// rows of the sections that key theirs. `--baseline` meets a row by its key where both runs
/// have one, else by its section, name, subject and metric, so reports saved before keys
/// existed still compare. The rest is detail: the
/// machine, the settings, every sample of the comparisons run by `Runner`, the goals, each
/// round's noise, and each section's own part under its key.
struct JSONReport: Encodable {
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
    /// This run against `--baseline`, when given.
    var baselineName: String?
    var baselineComparisons: [Baseline.Comparison]?
    /// Each section's own detail under a top-level key of its choosing (`SectionOutcome.json`):
    /// every measurement, its summaries, or why it was skipped.
    var sectionParts: [(key: String, value: any Encodable)]

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(machine, forKey: Key("machine"))
        try container.encode(settings, forKey: Key("settings"))
        try container.encode(measuredSeconds, forKey: Key("measuredSeconds"))
        try container.encode(verdicts, forKey: Key("verdicts"))
        try container.encode(goals, forKey: Key("goals"))
        try container.encode(noise, forKey: Key("noise"))
        try container.encode(comparisons, forKey: Key("comparisons"))
        try container.encodeIfPresent(baselineName, forKey: Key("baselineName"))
        try container.encodeIfPresent(baselineComparisons, forKey: Key("baselineComparisons"))
        for part in sectionParts {
            try container.encode(part.value, forKey: Key(part.key))
        }
    }

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
