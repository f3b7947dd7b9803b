import Foundation

/// The benchmark's one chart writer: SVG line charts in panels sharing a y axis (linear from 0,
/// or by decades), the series named at their lines' ends (one panel) or in a legend below. The
/// sections give the data (`SVGChart.executorThroughput`, `ServerReport.chart`).
enum SVGChart {
    struct Series {
        var label: String
        var color: String
        var width: Double
        var dashed: Bool
        /// One value per x label, in order; nil where there is none.
        var values: [Double?]
        /// Whether its points are marked and its last value follows its label at the line's end
        /// (`Layout.labelsAtEnds`).
        var marksValues = true
    }

    struct Panel {
        var title: String = ""
        var series: [Series]
    }

    enum Scale {
        /// From 0 to a round number above the highest value; `unit` divides the tick labels
        /// (1e6: millions).
        case linear(unit: Double)
        /// Whole decades around the values; the ticks read as durations of microseconds.
        case logMicroseconds
    }

    struct Layout {
        var title: String
        var subtitle: String
        var footnote = ""
        var xLabels: [String]
        var xAxis = ""
        var yAxis = ""
        var scale: Scale
        /// Panels in a row.
        var columns = 1
        /// Whether each series is named at its line's end (with its points marked), rather than
        /// in a legend under the panels.
        var labelsAtEnds = true
    }

    static func render(_ panels: [Panel], _ layout: Layout) -> String? {
        let values = panels.flatMap { $0.series.flatMap { $0.values.compactMap { $0 } } }.filter { $0 > 0 }
        guard let smallest = values.min(), let largest = values.max(), !layout.xLabels.isEmpty else { return nil }
        let single = layout.labelsAtEnds
        let titled = panels.contains { !$0.title.isEmpty }
        let columns = max(1, min(layout.columns, panels.count))
        let rows = (panels.count + columns - 1) / columns
        let (panelWidth, panelHeight, left) = single ? (580.0, 384.0, 90.0) : (330.0, 250.0, 60.0)
        let top = 86.0
        let legend = single ? [] : uniqueSeries(panels)
        let width = max(left + Double(columns) * panelWidth + (single ? 230 : 20), 760)
        let height = top + Double(rows) * (panelHeight + 50) + (single ? 40 : 40 + 18 * Double(legend.count))

        // The y axis: ticks and where a value sits between 0 (bottom) and 1 (top).
        let ticks: [(Double, String)]
        let position: (Double) -> Double
        switch layout.scale {
        case .linear(let unit):
            let (step, top) = niceScale(largest)
            ticks = stride(from: 0.0, through: top + step / 2, by: step).map { ($0, axisNumber($0 / unit)) }
            position = { $0 / top }
        case .logMicroseconds:
            let low = floor(log10(smallest))
            let high = ceil(log10(largest))
            let decades = max(high - low, 1)
            ticks = stride(from: low, through: high, by: 1).map { (pow(10, $0), durationLabel(pow(10, $0))) }
            position = { (log10(max($0, pow(10, low))) - low) / decades }
        }

        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif">
            <rect width="100%" height="100%" fill="#ffffff"/>
            <text x="\(left)" y="34" font-size="19" font-weight="bold" fill="#222">\(escape(layout.title))</text>
            <text x="\(left)" y="58" font-size="12" fill="#555">\(escape(layout.subtitle))</text>

            """
        for (index, panel) in panels.enumerated() {
            let originX = left + Double(index % columns) * panelWidth
            let originY = top + Double(index / columns) * (panelHeight + 50)
            let plotWidth = panelWidth - (single ? 0 : 40)
            let plotHeight = panelHeight - (single ? 0 : 40) - (titled ? 24 : 0)
            let plotTop = originY + (titled ? 24 : 0)
            let bottom = plotTop + plotHeight
            func x(_ index: Int) -> Double {
                layout.xLabels.count > 1
                    ? originX + plotWidth * Double(index) / Double(layout.xLabels.count - 1) : originX + plotWidth / 2
            }
            func y(_ value: Double) -> Double { plotTop + plotHeight * (1 - position(value)) }
            if !panel.title.isEmpty {
                svg += text(originX, originY + 10, panel.title, size: 13, extra: " font-weight=\"bold\"")
            }
            for (value, label) in ticks {
                svg += line(originX, y(value), originX + plotWidth, y(value), stroke: "#e5e5e5")
                svg += text(originX - 8, y(value) + 4, label, size: 11, anchor: "end")
            }
            for (index, label) in layout.xLabels.enumerated() {
                svg += line(x(index), plotTop, x(index), bottom, stroke: "#f0f0f0")
                svg += text(x(index), bottom + 18, label, size: 12, anchor: "middle")
            }
            svg += line(originX, bottom, originX + plotWidth, bottom, stroke: "#888")
            svg += line(originX, plotTop, originX, bottom, stroke: "#888")
            // Thinnest first, so the emphasised lines sit on top.
            for series in panel.series.sorted(by: { $0.width < $1.width }) {
                let points = series.values.enumerated().compactMap { index, value in value.map { (index, $0) } }
                let path = points.map { "\(f(x($0.0))),\(f(y($0.1)))" }.joined(separator: " ")
                let dash = series.dashed ? " stroke-dasharray=\"7 5\"" : ""
                svg += "<polyline fill=\"none\" stroke=\"\(series.color)\" stroke-width=\"\(series.width)\""
                svg += "\(dash) stroke-linejoin=\"round\" points=\"\(path)\">"
                svg += "<title>\(escape(series.label))</title></polyline>\n"
                guard single, series.marksValues else { continue }
                for (index, value) in points {
                    let title = "\(series.label), \(layout.xLabels[index]): \(value.formattedRate)"
                    svg += "<circle cx=\"\(f(x(index)))\" cy=\"\(f(y(value)))\" r=\"\(series.width + 1)\" "
                    svg += "fill=\"\(series.color)\"><title>\(escape(title))</title></circle>\n"
                }
            }
            if single { svg += endLabels(panel.series, x: originX + plotWidth, y: y, bottom: bottom) }
            if index == 0 {
                svg += text(originX + plotWidth / 2, bottom + 38, layout.xAxis, size: 13, anchor: "middle")
                if !layout.yAxis.isEmpty {
                    svg += "<text transform=\"translate(24 \(f(plotTop + plotHeight / 2))) rotate(-90)\" "
                    svg += "font-size=\"13\" fill=\"#333\" text-anchor=\"middle\">\(escape(layout.yAxis))</text>\n"
                }
            }
        }
        for (index, series) in legend.enumerated() {
            let legendY = top + Double(rows) * (panelHeight + 50) + 10 + 18 * Double(index)
            let style = " stroke-width=\"\(series.width)\"" + (series.dashed ? " stroke-dasharray=\"6 4\"" : "")
            svg += line(left, legendY, left + 30, legendY, stroke: series.color, extra: style)
            svg += text(left + 40, legendY + 4, series.label, size: 12)
        }
        if !layout.footnote.isEmpty { svg += text(left, height - 14, layout.footnote, size: 11.5, color: "#666") }
        return svg + "</svg>\n"
    }

    /// One panel's series named at their lines' ends, spread apart so that no two overlap.
    private static func endLabels(_ series: [Series], x: Double, y: (Double) -> Double, bottom: Double) -> String {
        let gap = 17.0
        var labels = series.compactMap { series -> (Series, Double, Double)? in
            guard let last = series.values.last(where: { $0 != nil }) ?? nil else { return nil }
            return (series, last, y(last))
        }.sorted { $0.2 < $1.2 }
        for index in labels.indices.dropFirst() where labels[index].2 - labels[index - 1].2 < gap {
            labels[index].2 = labels[index - 1].2 + gap
        }
        if let overflow = labels.last.map({ $0.2 - bottom }), overflow > 0 {
            for index in labels.indices { labels[index].2 -= overflow }
        }
        return labels.map { series, last, labelY in
            let value = series.marksValues ? " \(last.formattedRate)" : ""
            return line(x + 2, y(last), x + 10, labelY, stroke: series.color)
                + text(
                    x + 12, labelY + 4, series.label + value, size: 12.5, color: series.color,
                    extra: series.width >= 4 ? " font-weight=\"bold\"" : "")
        }.joined()
    }

    /// Each series label once, in the order the panels first name them.
    private static func uniqueSeries(_ panels: [Panel]) -> [Series] {
        var seen: Set<String> = []
        return panels.flatMap(\.series).filter { seen.insert($0.label).inserted }
    }

    private static func line(
        _ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, stroke: String, extra: String = ""
    ) -> String {
        "<line x1=\"\(f(x1))\" y1=\"\(f(y1))\" x2=\"\(f(x2))\" y2=\"\(f(y2))\" stroke=\"\(stroke)\"\(extra)/>\n"
    }

    private static func text(
        _ x: Double, _ y: Double, _ content: String, size: Double, color: String = "#333",
        anchor: String = "start", extra: String = ""
    ) -> String {
        "<text x=\"\(f(x))\" y=\"\(f(y))\" font-size=\"\(size)\" fill=\"\(color)\" text-anchor=\"\(anchor)\"\(extra)>"
            + "\(escape(content))</text>\n"
    }

    /// A step of 1, 2 or 5 × 10^k giving about five ticks, and the axis maximum.
    private static func niceScale(_ maximum: Double) -> (step: Double, max: Double) {
        let raw = max(maximum, 1) / 5
        let magnitude = pow(10, floor(log10(raw)))
        let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? raw
        return (step, ceil(max(maximum, 1) / step) * step)
    }

    private static func axisNumber(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : value.fixed(1)
    }

    private static func durationLabel(_ microseconds: Double) -> String {
        if microseconds >= 1_000_000 { return "\(Int(microseconds / 1_000_000)) s" }
        if microseconds >= 1_000 { return "\(Int(microseconds / 1_000)) ms" }
        return "\(Int(microseconds)) µs"
    }

    /// A coordinate with one decimal.
    private static func f(_ value: Double) -> String { value.fixed(1) }

    /// `text` with XML's special characters escaped.
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
