import BenchmarkStatistics
import Foundation
import Testing

@testable import Benchmarks

/// The report's tables.
@Suite struct MarkdownTableTests {
    @Test func aColumnTheSameInEveryRowIsSaidOnceUnderTheTable() {
        var table = MarkdownTable(headers: ["row", "noise", "rounds"], alignments: [.left, .right, .right], uniform: ["noise", "rounds"])
        table.rows = [["a", "±10.0%", "4"], ["b", "±10.0%", "5"], ["c", "±10.0%", "4"]]
        let text = table.render()
        #expect(text.hasPrefix("| row | rounds |"))
        #expect(text.hasSuffix("\nEvery row: noise ±10.0%.\n"))
        table.rows.removeLast()
        #expect(table.render().hasPrefix("| row |  noise | rounds |"), "two rows are too few to say it once")
    }
}
