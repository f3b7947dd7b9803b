#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The median of `values` (the mean of the middle two for an even count); nil when empty.
package func median(_ values: [Double]) -> Double? {
    guard !values.isEmpty else { return nil }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// The geometric mean of the positive, finite `values` (others are skipped: a missing
/// measurement is recorded as 0); nil when none is left.
package func geometricMean(_ values: [Double]) -> Double? {
    let positive = values.filter { $0 > 0 && $0.isFinite }
    guard !positive.isEmpty else { return nil }
    return exp(positive.reduce(0) { $0 + log($1) } / Double(positive.count))
}
