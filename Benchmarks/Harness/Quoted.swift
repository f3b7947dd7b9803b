/// The comparisons whose rows the README's performance table quotes, by section and
/// `VerdictKey.comparison`. Where a section gives each comparison a share of its own, these
/// weigh `factor` times their section's others, so that the default run's budget goes first to
/// the figures a reader of the README compares (the harness's tests check that each names a
/// comparison its section makes). A section measured as one comparison (Swift Concurrency, the
/// framework servers) has no shares to tilt.
enum Quoted {
    static let factor = 2.0

    static let comparisons: [Section: Set<String>] = [
        .taskOperations: ["continue-with-completed", "promise-1-waiter", "when-all-result"],
        .executors: ["tiny-P8"],
        .server: ["64x300"],
    ]

    /// `weight` of comparison `id` of `section`, times `factor` where the README quotes it.
    static func weight(_ weight: Double, _ section: Section, _ id: String) -> Double {
        comparisons[section]?.contains(id) == true ? weight * factor : weight
    }
}
