import Foundation

// The one place that turns numbers into text: every other file formats through these.

extension Double {
    /// With exactly `decimals` decimals, rounded: `fixed(2)` gives "0.18", `fixed(0)` gives "228".
    func fixed(_ decimals: Int) -> String { String(format: "%.\(decimals)f", self) }

    /// The shortest of plain and exponent notation, up to six significant digits: "10",
    /// "1.5", "0.93" (C's `%g`).
    var shortest: String { String(format: "%g", self) }

    /// A fraction as a percentage with `decimals` decimals: 0.123 as "12.3%".
    func percent(_ decimals: Int = 1) -> String { (self * 100).fixed(decimals) + "%" }

    /// A fraction as a half-width: 0.023 as "±2.3%".
    var plusMinusPercent: String { "±" + percent(1) }

    /// "41.2 ns", "1.23 µs", "4.56 ms".
    var formattedNanoseconds: String {
        if self < 1_000 { return fixed(self < 100 ? 1 : 0) + " ns" }
        if self < 1_000_000 { return (self / 1_000).fixed(2) + " µs" }
        return (self / 1_000_000).fixed(2) + " ms"
    }

    /// "2.31 ms" for a value in milliseconds.
    var formattedMilliseconds: String { fixed(self < 10 ? 2 : 1) + " ms" }

    /// "0.18×".
    var formattedRatio: String { fixed(self < 10 ? 2 : 1) + "×" }

    /// A ratio with its interval: "1.56× [1.49, 1.63]".
    func formattedRatio(interval low: Double, _ high: Double) -> String {
        "\(formattedRatio) \(Self.formattedInterval(low, high))"
    }

    /// An interval's bounds: "[1.49, 1.63]".
    static func formattedInterval(_ low: Double, _ high: Double) -> String { "[\(low.fixed(2)), \(high.fixed(2))]" }

    /// "2.00".
    var formattedAllocations: String { fixed(2) }

    /// "12.3 M/s" for a rate per second.
    var formattedRate: String {
        if self >= 1e6 { return (self / 1e6).fixed(2) + " M/s" }
        return (self / 1e3).fixed(0) + " k/s"
    }

    /// A goal's bound: "2", "1.25", "0.9".
    var formattedBound: String { self == rounded() ? String(Int(self)) : shortest }

    /// Plain number for tables: "41.2", "228", "1,234".
    var formattedPlain: String {
        if self < 100 { return fixed(1) }
        var digits = String(Int(rounded()))
        for end in stride(from: digits.count - 3, to: 0, by: -3) {
            digits.insert(",", at: digits.index(digits.startIndex, offsetBy: end))
        }
        return digits
    }

    /// "1 CPU", "1.5 CPUs".
    var formattedCPUs: String { "\(formattedBound) CPU\(self == 1 ? "" : "s")" }

    /// A value in `unit` as the tables show it: "41.2 ns", "1.92 ms" (µs from 1,000 on),
    /// "41,200/s", or the number and the unit.
    func formatted(unit: String) -> String {
        switch unit {
        case "ns": return formattedNanoseconds
        case "µs": return self >= 1_000 ? (self / 1_000).formattedMilliseconds : fixed(1) + " µs"
        case "req/s": return formattedPlain + "/s"
        default: return formattedPlain + " " + unit
        }
    }
}

extension Int {
    /// 1000000 as "10^6", 10000 as "10^4"; other numbers as they are.
    var formatted: String {
        var (power, rest) = (0, self)
        while rest >= 10, rest % 10 == 0 { (power, rest) = (power + 1, rest / 10) }
        return rest == 1 && power >= 3 ? "10^\(power)" : String(self)
    }
}

extension String {
    /// `value` with one decimal, without Foundation's formatter (the progress line, redrawn
    /// often).
    init(format1 value: Double) {
        let tenths = Int((value * 10).rounded())
        self = "\(tenths / 10).\(abs(tenths % 10))"
    }
}

/// A Markdown table whose columns are padded, so it reads in a terminal too, when it fits in
/// `paddedWidth` columns; a wider one wraps in a terminal anyway and is written unpadded. The
/// columns named in `uniform` whose cells are all the same (in three rows or more) are left
/// out and said once under the table ("Every row: noise ±10.0%, rounds 4.").
struct MarkdownTable {
    enum Alignment { case left, right }

    var headers: [String]
    var alignments: [Alignment]
    var rows: [[String]] = []
    var uniform: Set<String> = []
    static let paddedWidth = 100

    func render() -> String {
        let same = headers.indices.filter { column in
            uniform.contains(headers[column]) && rows.count >= 3 && Set(rows.map { $0[column] }).count == 1
        }
        guard same.isEmpty else {
            let keep = headers.indices.filter { !same.contains($0) }
            let table = MarkdownTable(
                headers: keep.map { headers[$0] }, alignments: keep.map { alignments[$0] },
                rows: rows.map { row in keep.map { row[$0] } })
            let said = same.map { "\(headers[$0]) \(rows[0][$0])" }.joined(separator: ", ")
            return table.render() + "\nEvery row: \(said).\n"
        }
        var widths = headers.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        if widths.reduce(0, +) + 3 * widths.count + 1 > Self.paddedWidth {
            widths = widths.map { _ in 0 }
        }
        func line(_ cells: [String]) -> String {
            let padded = cells.enumerated().map { index, cell -> String in
                let padding = String(repeating: " ", count: max(0, widths[index] - cell.count))
                return alignments[index] == .left ? cell + padding : padding + cell
            }
            return "| " + padded.joined(separator: " | ") + " |"
        }
        let rule = widths.enumerated().map { index, width -> String in
            alignments[index] == .left
                ? String(repeating: "-", count: max(width, 3))
                : String(repeating: "-", count: max(width - 1, 2)) + ":"
        }
        var text = line(headers) + "\n"
        text += "| " + rule.joined(separator: " | ") + " |\n"
        for row in rows { text += line(row) + "\n" }
        return text
    }
}
