import Foundation

/// Line charts of a rate against producer threads, as hand-written SVG: the sections draw
/// theirs with `render` (the executors' throughput) or with `f` and `escape` (the server's
/// latency).
enum SVGChart {
    struct Series {
        var label: String
        var color: String
        var width: Double
        var dashed: Bool
        /// (producers, jobs per second), in producer order.
        var points: [(Int, Double)]
    }

    /// The chart: a line per series against the producer counts on x, y from 0 to a round
    /// number above the highest point, each line labelled at its end; `footnote` under the plot.
    static func render(series: [Series], producerCounts: [Int], title: String, subtitle: String, footnote: String)
        -> String
    {
        let width = 900.0
        let height = 560.0
        let left = 90.0
        let right = 230.0
        let top = 86.0
        let bottom = 90.0
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom

        let maximum = series.flatMap { $0.points.map(\.1) }.max() ?? 1
        let (step, yMax) = niceScale(maximum)
        func x(_ producers: Int) -> Double {
            guard producerCounts.count > 1, let index = producerCounts.firstIndex(of: producers) else {
                return left + plotWidth / 2
            }
            return left + plotWidth * Double(index) / Double(producerCounts.count - 1)
        }
        func y(_ value: Double) -> Double { top + plotHeight * (1 - value / yMax) }

        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif">
            <rect width="100%" height="100%" fill="#ffffff"/>
            <text x="\(left)" y="34" font-size="20" font-weight="bold" fill="#222">\(escape(title))</text>
            <text x="\(left)" y="58" font-size="12.5" fill="#555">\(escape(subtitle))</text>

            """
        // Horizontal grid and y labels.
        var tick = 0.0
        while tick <= yMax + step / 2 {
            let ty = y(tick)
            svg +=
                "<line x1=\"\(f(left))\" y1=\"\(f(ty))\" x2=\"\(f(left + plotWidth))\" y2=\"\(f(ty))\" stroke=\"#e5e5e5\"/>\n"
            svg +=
                "<text x=\"\(f(left - 10))\" y=\"\(f(ty + 4))\" font-size=\"12\" fill=\"#444\" text-anchor=\"end\">\(tickLabel(tick))</text>\n"
            tick += step
        }
        // Vertical guides and x labels.
        for producers in producerCounts {
            let tx = x(producers)
            svg +=
                "<line x1=\"\(f(tx))\" y1=\"\(f(top))\" x2=\"\(f(tx))\" y2=\"\(f(top + plotHeight))\" stroke=\"#f0f0f0\"/>\n"
            svg +=
                "<text x=\"\(f(tx))\" y=\"\(f(top + plotHeight + 20))\" font-size=\"13\" fill=\"#444\" text-anchor=\"middle\">\(producers)</text>\n"
        }
        svg +=
            "<line x1=\"\(f(left))\" y1=\"\(f(top + plotHeight))\" x2=\"\(f(left + plotWidth))\" y2=\"\(f(top + plotHeight))\" stroke=\"#888\"/>\n"
        svg +=
            "<line x1=\"\(f(left))\" y1=\"\(f(top))\" x2=\"\(f(left))\" y2=\"\(f(top + plotHeight))\" stroke=\"#888\"/>\n"
        if !footnote.isEmpty {
            svg +=
                "<text x=\"\(f(left))\" y=\"\(f(height - 14))\" font-size=\"11.5\" fill=\"#666\">\(escape(footnote))</text>\n"
        }
        svg +=
            "<text x=\"\(f(left + plotWidth / 2))\" y=\"\(f(height - 46))\" font-size=\"13\" fill=\"#333\" text-anchor=\"middle\">producer threads submitting at once</text>\n"
        svg +=
            "<text transform=\"translate(24 \(f(top + plotHeight / 2))) rotate(-90)\" font-size=\"13\" fill=\"#333\" text-anchor=\"middle\">million jobs per second</text>\n"

        // Lines, thinnest first so the emphasised ones sit on top.
        for line in series.sorted(by: { $0.width < $1.width }) {
            let points = line.points.map { "\(f(x($0.0))),\(f(y($0.1)))" }.joined(separator: " ")
            let dash = line.dashed ? " stroke-dasharray=\"7 5\"" : ""
            svg +=
                "<polyline fill=\"none\" stroke=\"\(line.color)\" stroke-width=\"\(line.width)\"\(dash) stroke-linejoin=\"round\" points=\"\(points)\"/>\n"
            if !line.label.hasPrefix("goal") {
                for (producers, value) in line.points {
                    svg +=
                        "<circle cx=\"\(f(x(producers)))\" cy=\"\(f(y(value)))\" r=\"\(line.width + 1)\" fill=\"\(line.color)\">"
                    svg +=
                        "<title>\(escape(line.label)), \(producers) producers: \(escape(value.formattedRate))</title></circle>\n"
                }
            }
        }

        // End labels, spread apart so they never overlap.
        let minimumGap = 17.0
        var labels = series.compactMap { line -> (Series, Double)? in
            guard let last = line.points.last else { return nil }
            return (line, y(last.1))
        }.sorted { $0.1 < $1.1 }
        for index in labels.indices.dropFirst() where labels[index].1 - labels[index - 1].1 < minimumGap {
            labels[index].1 = labels[index - 1].1 + minimumGap
        }
        if let overflow = labels.last.map({ $0.1 - (top + plotHeight) }), overflow > 0 {
            for index in labels.indices { labels[index].1 -= overflow }
        }
        let labelX = left + plotWidth + 12
        for (line, labelY) in labels {
            let lastY = y(line.points.last!.1)
            svg +=
                "<line x1=\"\(f(left + plotWidth + 2))\" y1=\"\(f(lastY))\" x2=\"\(f(labelX - 2))\" y2=\"\(f(labelY))\" stroke=\"\(line.color)\" stroke-width=\"1\"/>\n"
            let weight = line.width >= 4 ? " font-weight=\"bold\"" : ""
            let value = line.label.hasPrefix("goal") ? "" : " \(line.points.last!.1.formattedRate)"
            svg +=
                "<text x=\"\(f(labelX))\" y=\"\(f(labelY + 4))\" font-size=\"12.5\" fill=\"\(line.color == "#f4a3a3" ? "#c46060" : line.color)\"\(weight)>\(escape(line.label + value))</text>\n"
        }
        svg += "</svg>\n"
        return svg
    }

    /// A step of 1, 2 or 5 × 10^k giving about five ticks, and the axis maximum.
    private static func niceScale(_ maximum: Double) -> (step: Double, max: Double) {
        let raw = max(maximum, 1) / 5
        let magnitude = pow(10, floor(log10(raw)))
        let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? raw
        return (step, ceil(max(maximum, 1) / step) * step)
    }

    private static func tickLabel(_ value: Double) -> String {
        let millions = value / 1e6
        return millions == millions.rounded() ? String(Int(millions)) : millions.fixed(1)
    }

    /// A coordinate with one decimal.
    static func f(_ value: Double) -> String { value.fixed(1) }

    /// `text` with XML's special characters escaped.
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
