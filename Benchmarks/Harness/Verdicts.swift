import Foundation
import BenchmarkStatistics

/// A section of the report as the JSON's `section` key names it (encoded as the bare
/// string). Each benchmark section declares its names beside its code, as static members
/// (`Section.server`), so that `section: .server` reads as an enum case would.
struct Section: RawRepresentable, Codable, Hashable, Sendable {
    var rawValue: String
}

/// One comparison's conclusion on one metric: an entry of the JSON's `verdicts` array.
///
/// `ratio` is how many times better the subject is than its peer (the peer's time ÷ the
/// subject's, or the subject's rate ÷ the peer's), the geometric mean of the rounds' paired
/// ratios; `interval95` its 95 % interval; `noiseThreshold` the fraction below which a
/// difference counts as noise, set by the A/A comparison of the same rounds. An A/A row
/// (`isAA`) compares the peer with itself.
struct VerdictRow: Codable, Sendable {
    var section: Section
    var name: String
    var subject: String
    var baseline: String
    var metric: String
    var ratio: Double?
    var interval95: [Double]?
    var verdict: Verdict
    var rounds: Int
    var noiseThreshold: Double?
    /// Its identity in code (nil where its section does not key its rows, and in rows read
    /// from a baseline saved before keys existed).
    var key: VerdictKey? = nil

    /// Whether this row is the peer against itself.
    var isAA: Bool = false
    /// An A/A row's own 95 % interval (the one its noise threshold comes from); its
    /// `interval95` is then the run-wide simultaneous one (`Verdicts.simultaneous`).
    var individualInterval95: [Double]? = nil
    /// Processes whose mean log ratios the estimate is over, when the process is the unit
    /// (`ProcessReplicas`); nil when the rounds are.
    var processes: Int? = nil
    /// Those processes' mean log ratios.
    var processMeans: [Double]? = nil
    /// Rounds that the noise probe flagged (they are kept in the estimate).
    var contaminatedRounds: Int = 0
    /// For an undecided row: the rounds at which its present mean and spread would decide it
    /// (`PairedStatistics.roundsToDecide`); nil when decided, when no number up to a thousand
    /// would (its ratio sits at the noise threshold's edge), and where the process is the unit.
    var roundsToDecide: Int? = nil
    /// Where the process is the unit, the same projected over processes: how many processes'
    /// mean log ratios, at their present mean and spread, would decide it (`--processes`).
    var processesToDecide: Int? = nil
    /// The rounds' log ratios (subject better: positive), for comparisons with a baseline.
    var logRatios: [Double] = []
    /// Geometric means of the subject's and the peer's metric over the rounds, and its unit.
    var subjectValue: Double?
    var peerValue: Double?
    var unit: String = ""

    var estimate: Estimate? {
        guard let ratio, let interval95, interval95.count == 2, interval95[0] > 0 else { return nil }
        return Estimate(logMean: log(ratio), logMargin: (log(interval95[1]) - log(interval95[0])) / 2, rounds: rounds)
    }
}

/// What a metric is and which way is better.
struct Metric: Sendable {
    var title: String
    var unit: String
    var lowerIsBetter: Bool
    /// What verdict keys call it (`VerdictKey.metric`); the title where none is given.
    var id: String = ""

    var key: String { id.isEmpty ? title : id }
}

/// What identifies a verdict row whatever its titles say (the JSON's `key`): its section, its
/// comparison, the arm judged, the arm it is judged against, and the metric, each an
/// identifier the code defines (an enum's raw value, a configuration's key), so that renaming
/// a title changes no lookup. Goals and tables find their rows by key; rows read from a
/// baseline saved before keys existed have none.
struct VerdictKey: Codable, Hashable, Sendable, CustomStringConvertible {
    var section: Section
    var comparison: String
    var arm: String
    var baseline: String
    var metric: String

    var description: String { "\(section.rawValue) \(comparison): \(arm) ÷ \(baseline), \(metric)" }
}

extension PairedValues {
    /// Marks the rounds that `noise` (every round of the comparison, in order) flagged.
    mutating func markContaminated(_ noise: [RoundNoise]) { markContaminated(noise.map(\.isContaminated)) }
}

enum Verdicts {
    /// The A/A row of a comparison on `metric`, or nil when it has no twin measurements.
    static func aa(
        section: Section, name: String, peer: String, metric: Metric, _ values: PairedValues, key: VerdictKey? = nil
    ) -> VerdictRow? {
        let logs = values.aaLogRatios
        guard !logs.isEmpty else { return nil }
        let estimate = PairedStatistics.estimate(logRatios: logs)
        var row = VerdictRow(
            section: section, name: name, subject: peer, baseline: peer, metric: metric.title,
            ratio: estimate?.ratio, verdict: .undecided, rounds: logs.count, key: key, isAA: true,
            contaminatedRounds: values.contaminated.filter { $0 }.count, logRatios: logs,
            subjectValue: geometricMean(values.peer), peerValue: geometricMean(values.twin), unit: metric.unit)
        row.judge(estimate, threshold: nil)
        return row
    }

    /// The subject's row against its peer, judged with `threshold` (from the A/A).
    static func row(
        section: Section, name: String, subject: String, peer: String, metric: Metric, _ values: PairedValues,
        threshold: Double?, key: VerdictKey? = nil
    ) -> VerdictRow {
        let logs = values.logRatios(lowerIsBetter: metric.lowerIsBetter)
        let estimate = PairedStatistics.estimate(logRatios: logs)
        var row = VerdictRow(
            section: section, name: name, subject: subject, baseline: peer, metric: metric.title,
            ratio: estimate?.ratio ?? (logs.count == 1 ? exp(logs[0]) : nil), verdict: .undecided, rounds: logs.count,
            key: key, contaminatedRounds: values.contaminated.filter { $0 }.count, logRatios: logs,
            subjectValue: geometricMean(values.subject), peerValue: geometricMean(values.peer + values.twin),
            unit: metric.unit)
        row.judge(estimate, threshold: threshold)
        return row
    }

    /// The subject's row and the A/A row together; the A/A's threshold judges the subject.
    /// With `key`, the subject's row carries it, and the A/A row the same key with the
    /// baseline as its arm.
    static func pair(
        section: Section, name: String, subject: String, peer: String, metric: Metric, _ values: PairedValues,
        key: VerdictKey? = nil
    ) -> (VerdictRow, VerdictRow?) {
        var aaKey = key
        aaKey?.arm = key?.baseline ?? ""
        let aaRow = aa(section: section, name: name, peer: peer, metric: metric, values, key: aaKey)
        let subjectRow = row(
            section: section, name: name, subject: subject, peer: peer, metric: metric, values,
            threshold: aaRow?.noiseThreshold, key: key)
        return (subjectRow, aaRow)
    }

    /// The run's A/A rows with simultaneous intervals: "every A/A interval holds 1" is one
    /// claim about the whole run, so their intervals are 95 % for all of them together
    /// (Bonferroni: each at 1 − 0.05/k for k A/A rows). Each row keeps its own 95 % interval,
    /// from which its noise threshold came, as `individualInterval95`. Other rows pass through.
    static func simultaneous(_ rows: [VerdictRow]) -> [VerdictRow] {
        let count = rows.filter(\.isAA).count
        guard count > 1 else { return rows }
        let confidence = 1 - (1 - PairedStatistics.confidence) / Double(count)
        return rows.map { row in
            guard row.isAA else { return row }
            var copy = row
            copy.individualInterval95 = row.interval95
            if let estimate = PairedStatistics.estimate(logRatios: row.logRatios, confidence: confidence) {
                copy.interval95 = [estimate.low, estimate.high]
            }
            return copy
        }
    }

    /// What the marks of a matrix cell mean (said once, in the report's opening).
    static let legend =
        "Matrix cells: ratio [95 % interval] and verdict (**+** better, **−** worse, = same, ? undecided, →n its "
            + "rounds to decide, →np its processes)."
}

extension Verdict {
    /// The verdict as the report prints it: decided verdicts in bold.
    var formatted: String { self == .better || self == .worse ? "**\(rawValue)**" : rawValue }
}

extension VerdictRow {
    /// Sets its interval and verdict from `estimate`: an A/A row is judged with the noise
    /// threshold its own estimate sets, any other with `threshold` (its A/A's); an undecided one
    /// gets the count its present mean and spread would decide at (`PairedStatistics.roundsToDecide`):
    /// `roundsToDecide`, or `processesToDecide` where the process is the unit (`processes`).
    mutating func judge(_ estimate: Estimate?, threshold: Double?) {
        interval95 = estimate.map { [$0.low, $0.high] }
        let aaThreshold = PairedStatistics.noiseThreshold(aa: estimate)
        noiseThreshold = !isAA ? threshold : aaThreshold.isFinite ? aaThreshold : nil
        verdict = PairedStatistics.verdict(estimate, threshold: noiseThreshold ?? .infinity)
        guard !isAA, verdict == .undecided, let estimate else { return }
        let count = PairedStatistics.roundsToDecide(estimate, threshold: noiseThreshold ?? .infinity)
        if processes == nil { roundsToDecide = count } else { processesToDecide = count }
    }

    /// "1.56× [1.49, 1.63]" or "–".
    var formattedRatioAndInterval: String {
        guard let ratio else { return "–" }
        guard let interval95 else { return "\(ratio.formattedRatio) (one round)" }
        return ratio.formattedRatio(interval: interval95[0], interval95[1])
    }

    /// "±2.3%" or "–".
    var formattedThreshold: String { noiseThreshold?.plusMinusPercent ?? "–" }

    /// A matrix cell: "1.56× [1.49, 1.63] +", the verdict as a mark (`Verdicts.legend`).
    var formattedCell: String {
        let mark = switch verdict {
        case .better: "**+**"
        case .worse: "**−**"
        case .same: "="
        case .undecided: "?" + undecidedHint
        }
        return formattedRatioAndInterval + " " + mark
    }

    /// The verdict as the report prints it (`Verdict.formatted`), an undecided one with the
    /// rounds it would need (`undecidedHint`).
    var formattedVerdict: String { undecidedHint.isEmpty ? verdict.formatted : verdict.formatted + " " + undecidedHint }

    /// "→24" (rounds its present spread would decide it at), "→∞" (not within a thousand),
    /// "→9p" or "→∞p" where the process is the unit (`processes`: its interval narrows with
    /// processes, not rounds), or nothing: no interval or no threshold to project.
    var undecidedHint: String {
        guard verdict == .undecided, estimate != nil, noiseThreshold?.isFinite == true else { return "" }
        let unit = processes == nil ? "" : "p"
        return ((processes == nil ? roundsToDecide : processesToDecide).map { "→\($0)" } ?? "→∞") + unit
    }

    /// How many times its present rounds (or processes) the projection asks for; nil when
    /// none up to a thousand would decide it.
    var decidingFactor: Double? {
        guard let processes else { return roundsToDecide.map { Double($0) / Double(max(rounds, 1)) } }
        return processesToDecide.map { Double($0) / Double(max(processes, 1)) }
    }
}
