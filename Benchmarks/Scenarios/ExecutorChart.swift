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
        var series: [Series] = []
        var footnote = ""
        for kind in ExecutorKind.allCases {
            let points: [(Int, Double)] = comparisons.compactMap { comparison in
                guard let entry = comparison.entries.first(where: { $0.name.hasPrefix(kind.title + ":") }),
                    let ns = entry.medianNanosecondsPerOperation
                else { return nil }
                return (comparison.producers!, 1e9 / ns)
            }
            guard !points.isEmpty else { continue }
            if kind == .boltsImmediate {
                let rates = points.map(\.1)
                footnote =
                    "Not drawn: \(kind.shortTitle) runs each job inline on its producer (no hand-off): "
                    + "\(rates.min()!.formattedRate) to \(rates.max()!.formattedRate)."
                continue
            }
            let style = style(for: kind)
            series.append(
                Series(
                    label: kind.shortTitle,
                    color: style.color,
                    width: style.width,
                    dashed: style.dashed,
                    points: points
                )
            )
        }
        if let dispatch = series.first(where: { $0.label == ExecutorKind.dispatchGlobal.shortTitle }) {
            series.append(
                Series(
                    label: "goal: 2× Dispatch global",
                    color: "#888888",
                    width: 1.5,
                    dashed: true,
                    points: dispatch.points.map { ($0.0, $0.1 * 2) }
                )
            )
        }
        return render(
            series: series,
            producerCounts: comparisons.map { $0.producers! },
            title: "Tiny jobs per second vs producer threads (higher is better)",
            subtitle:
                "\(machine.cpuModel), \(machine.usableCPUs) CPUs · Swift \(machine.swiftCompiler) \(machine.build) · medians over paired rounds · \(machine.date.prefix(10)) · load average \(machine.loadAverageAtStart.split(separator: " ").first ?? "?") at start",
            footnote: footnote
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
