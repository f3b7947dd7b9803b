import Foundation

extension SVGChart {
    /// The executor chart: tiny-job throughput against producer threads, one line per
    /// executor, with the goal (2× `DispatchQueue.global()`) dashed. `.immediate` runs jobs
    /// inline (no hand-off) and is an order of magnitude above the rest, so it is left off the
    /// scale and given in a footnote instead. Nil without executor results.
    static func executorThroughput(_ results: [ComparisonResult], machine: Machine) -> String? {
        let comparisons = results.filter { $0.section == .executors && $0.producers != nil }
            .sorted { $0.producers! < $1.producers! }
        guard !comparisons.isEmpty else { return nil }
        let producers = comparisons.map { $0.producers! }
        var series: [Series] = []
        var footnote = ""
        var goal: [Double?]?
        for kind in ExecutorKind.allCases {
            let values: [Double?] = comparisons.map { comparison in
                comparison.entries.first { $0.id == kind.rawValue }?.medianNanosecondsPerOperation
                    .map { 1e9 / $0 }
            }
            let rates = values.compactMap { $0 }
            guard !rates.isEmpty else { continue }
            if kind == .boltsImmediate {
                footnote =
                    "Not drawn: \(kind.shortTitle) runs each job inline on its producer (no hand-off): "
                    + "\(rates.min()!.formattedRate) to \(rates.max()!.formattedRate)."
                continue
            }
            let (color, width, dashed) = style(for: kind)
            series.append(Series(label: kind.shortTitle, color: color, width: width, dashed: dashed, values: values))
            if kind == .dispatchGlobal { goal = values.map { $0.map { $0 * 2 } } }
        }
        if let goal {
            series.append(
                Series(
                    label: "goal: 2× Dispatch global", color: "#888888", width: 1.5, dashed: true, values: goal,
                    marksValues: false))
        }
        let load = machine.loadAverageAtStart.split(separator: " ").first ?? "?"
        return render(
            [Panel(series: series)],
            Layout(
                title: "Tiny jobs per second vs producer threads (higher is better)",
                subtitle: "\(machine.cpuModel), \(machine.usableCPUs) CPUs · Swift \(machine.swiftCompiler) \(machine.build) "
                    + "· medians over paired rounds · \(machine.date.prefix(10)) · load average \(load) at start",
                footnote: footnote, xLabels: producers.map(String.init), xAxis: "producer threads submitting at once",
                yAxis: "million jobs per second", scale: .linear(unit: 1e6))
        )
    }

    private static func style(for kind: ExecutorKind) -> (color: String, width: Double, dashed: Bool) {
        switch kind {
        case .boltsPool: return ("#d62728", 4, false)
        case .boltsImmediate: return ("#f4a3a3", 2, true)
        case .dispatchGlobal: return ("#1f77b4", 3, false)
        case .dispatchSerial: return ("#7fb2dc", 2, false)
        case .operationQueue: return ("#8c564b", 2, false)
        case .nioEventLoopGroup: return ("#2ca02c", 2.5, false)
        case .concurrencyTask: return ("#9467bd", 2.5, false)
        }
    }
}
