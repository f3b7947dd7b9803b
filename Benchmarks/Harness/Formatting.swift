import Foundation

extension Double {
    /// "41.2 ns", "1.23 µs", "4.56 ms".
    var formattedNanoseconds: String {
        if self < 1_000 { return String(format: self < 100 ? "%.1f ns" : "%.0f ns", self) }
        if self < 1_000_000 { return String(format: "%.2f µs", self / 1_000) }
        return String(format: "%.2f ms", self / 1_000_000)
    }

    /// "0.18×".
    var formattedRatio: String { String(format: self < 10 ? "%.2f×" : "%.1f×", self) }

    /// "2.00".
    var formattedAllocations: String { String(format: "%.2f", self) }

    /// "12.3 M/s" for a rate per second.
    var formattedRate: String {
        if self >= 1e6 { return String(format: "%.2f M/s", self / 1e6) }
        return String(format: "%.0f k/s", self / 1e3)
    }

    /// Plain number for tables: "41.2", "228", "1,234".
    var formattedPlain: String {
        if self < 100 { return String(format: "%.1f", self) }
        let rounded = Int(self.rounded())
        var digits = String(rounded)
        var groups: [String] = []
        while digits.count > 3 {
            groups.insert(String(digits.suffix(3)), at: 0)
            digits.removeLast(3)
        }
        groups.insert(digits, at: 0)
        return groups.joined(separator: ",")
    }
}

extension UInt64 {
    var formattedNanoseconds: String { Double(self).formattedNanoseconds }
}

/// A Markdown table whose columns are padded, so it reads in a terminal too, when it fits in
/// `paddedWidth` columns; a wider one wraps in a terminal anyway and is written unpadded.
struct MarkdownTable {
    enum Alignment { case left, right }

    var headers: [String]
    var alignments: [Alignment]
    var rows: [[String]] = []
    static let paddedWidth = 160

    func render() -> String {
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
