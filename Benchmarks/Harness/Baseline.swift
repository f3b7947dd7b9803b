import BenchmarkStatistics
import Foundation

/// Saved runs and comparisons against them. `--save-baseline NAME` keeps the run's JSON
/// report (every verdict with its rounds' log ratios) as `.benchmarks/NAME.json` under the
/// current directory; `--baseline NAME` reads it back and compares each row of this run with
/// the same row there.
///
/// Two runs cannot be paired round by round, and the machine may be faster in one of them;
/// so what is compared is each row's paired ratio to its peer (which cancels the machine's
/// speed in each run), across the runs: this run's log ratios against the baseline's, with
/// Welch's t interval. Above 1: the subject gained on its peer since the baseline. The noise
/// threshold is the larger of the two runs' A/A thresholds for that row. A change of the
/// peer itself (another version of its library, say) shows as a change of the subject.
enum Baseline {
    static let directory = ".benchmarks"

    struct Comparison: Codable {
        var section: Section
        var name: String
        var subject: String
        var baseline: String
        var metric: String
        /// This run's ratio to the peer ÷ the baseline's.
        var ratio: Double?
        var interval95: [Double]?
        /// `better`: the subject improved against its peer since the baseline; `worse`: it
        /// regressed beyond the threshold.
        var verdict: Verdict
        var rounds: Int
        var noiseThreshold: Double?
        var currentRatio: Double?
        var baselineRatio: Double?
    }

    /// Why a name or a file is no baseline.
    struct Failure: Error, CustomStringConvertible { var description: String }

    static func path(_ name: String) throws -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        guard !name.isEmpty, name.allSatisfy(allowed.contains), !name.hasPrefix(".") else {
            throw Failure(
                description: "a baseline name takes letters, digits, '.', '_' and '-' (and does not start with '.'): "
                    + name)
        }
        return "\(directory)/\(name).json"
    }

    static func save(_ report: JSONReport, as name: String) throws -> String {
        let file = try path(name)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try report.write(to: file)
        return file
    }

    static func load(_ name: String) throws -> [VerdictRow] {
        let file = try path(name)
        guard FileManager.default.fileExists(atPath: file) else {
            let saved = (try? FileManager.default.contentsOfDirectory(atPath: directory))?
                .filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted() ?? []
            throw Failure(
                description: "no baseline \(name) (\(file) does not exist); saved baselines: "
                    + (saved.isEmpty ? "none (save one with --save-baseline NAME)" : saved.joined(separator: ", ")))
        }
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: file))
            return try JSONCoding.decoder().decode(Saved.self, from: data).verdicts
        } catch {
            throw Failure(description: "\(file) is not a benchmark report this version can read: \(error)")
        }
    }

    /// Only what a comparison needs of a saved report.
    private struct Saved: Decodable {
        var verdicts: [VerdictRow]
    }

    /// Each row of `current` against the same row of `saved`: the row with its key where both
    /// have one, else (a baseline saved before rows had keys, or a section that keys none) the
    /// row with its section, name, subject and metric.
    static func compare(_ current: [VerdictRow], with saved: [VerdictRow]) -> [Comparison] {
        current.filter { !$0.isAA }.compactMap { row in
            guard let old = saved.first(where: { old in
                guard !old.isAA else { return false }
                if let key = row.key, let oldKey = old.key { return key == oldKey }
                return old.section == row.section && old.name == row.name && old.subject == row.subject
                    && old.metric == row.metric
            }) else { return nil }
            let estimate = PairedStatistics.unpairedEstimate(row.logRatios, against: old.logRatios)
            let threshold = [row.noiseThreshold, old.noiseThreshold].compactMap { $0 }.max()
            return Comparison(
                section: row.section, name: row.name, subject: row.subject, baseline: row.baseline, metric: row.metric,
                ratio: estimate?.ratio, interval95: estimate.map { [$0.low, $0.high] },
                verdict: PairedStatistics.verdict(estimate, threshold: threshold ?? .infinity),
                rounds: min(row.rounds, old.rounds), noiseThreshold: threshold, currentRatio: row.ratio,
                baselineRatio: old.ratio)
        }
    }

    /// The report's "Against the baseline NAME": the comparisons' table, and whether a row regressed.
    static func render(_ comparisons: [Comparison], name: String) -> String {
        var text = "\n## Against the baseline \(name)\n\n"
        text += "Each row's ratio to its peer in this run ÷ the same in the baseline (Welch's t interval over the "
        text += "two runs' rounds); above 1: the subject gained on its peer. **worse** is a regression beyond the "
        text += "larger of the two runs' noise thresholds.\n\n"
        guard !comparisons.isEmpty else { return text + "No row of this run is in the baseline.\n" }
        var table = MarkdownTable(
            headers: [
                "section", "comparison", "subject", "metric", "now", "baseline", "change [95% interval]", "verdict",
                "noise",
            ],
            alignments: [.left, .left, .left, .left, .right, .right, .right, .left, .right])
        for row in comparisons {
            let change = row.ratio.map { ratio in
                row.interval95.map { ratio.formattedRatio(interval: $0[0], $0[1]) } ?? ratio.formattedRatio
            } ?? "–"
            table.rows.append([
                row.section.rawValue, row.name, row.subject, row.metric, row.currentRatio?.formattedRatio ?? "–",
                row.baselineRatio?.formattedRatio ?? "–", change, row.verdict.formatted,
                row.noiseThreshold?.plusMinusPercent ?? "–",
            ])
        }
        let regressions = comparisons.filter { $0.verdict == .worse }
        text += table.render()
        text += regressions.isEmpty
            ? "\nNo row regressed beyond its threshold.\n"
            : "\n**\(regressions.count) row\(regressions.count == 1 ? "" : "s") regressed beyond the threshold.**\n"
        return text
    }
}
