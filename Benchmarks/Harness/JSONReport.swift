import Foundation

/// What `--json` writes, and what `--save-baseline` keeps. Its contract is the top-level
/// `verdicts` array (`VerdictRow`): one object per comparison and metric, with `section`,
/// `name`, `subject`, `baseline` (the peer), `metric`, `ratio` (above 1 always means the
/// subject is better), `interval95`, `verdict`, `rounds` and `noiseThreshold`; the A/A rows
/// (`isAA`) among them, with simultaneous intervals (`Verdicts.simultaneous`); `key` where
/// the section keys its rows (`VerdictKey`), by which `--baseline` meets a row, else by its
/// section, name, subject and metric. The rest is detail: the machine, the settings, every
/// sample of the comparisons run by `Runner`, the goals, each round's noise, and each
/// section's own part under its key.
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
        /// Child processes per comparison where the process is the unit (`--processes`).
        var processes: Int
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
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Every field under its name, the absent optional ones left out, then the sections' parts.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        let fields: [(key: String, value: (any Encodable)?)] = [
            ("machine", machine), ("settings", settings), ("measuredSeconds", measuredSeconds), ("verdicts", verdicts),
            ("goals", goals), ("noise", noise), ("comparisons", comparisons), ("baselineName", baselineName),
            ("baselineComparisons", baselineComparisons),
        ]
        for (key, value) in fields + sectionParts.map({ ($0.key, $0.value) }) {
            if let value { try container.encode(value, forKey: Key(stringValue: key)) }
        }
    }

    /// The comparisons `Runner` and `ProcessReplicas` ran, as the JSON's `comparisons` holds them.
    static func comparisons(_ results: [ComparisonResult]) -> [Comparison] {
        results.map { result in
            Comparison(
                section: result.section, group: result.group, operation: result.operation,
                producers: result.producers, reference: result.reference?.name,
                entries: result.entries.map { entry in
                    Entry(
                        name: entry.name, subject: entry.subject.rawValue, unit: entry.unit,
                        isReference: entry.isReference, expectedAllocations: entry.expectedAllocations,
                        medianNanosecondsPerOperation: entry.medianNanosecondsPerOperation,
                        medianAllocationsPerOperation: entry.medianAllocationsPerOperation,
                        medianInstructionsPerOperation: entry.medianInstructionsPerOperation,
                        latency: entry.latency, error: entry.error, samples: entry.samples)
                },
                noise: result.noise)
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
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return encoder
    }

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return decoder
    }
}
