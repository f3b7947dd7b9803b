import CBenchmarkSupport

#if canImport(Glibc)
    import Glibc
#endif

/// One timed run of a scenario: `iterations` operations took `nanoseconds`, and the whole
/// process made `allocations` heap allocations meanwhile (counted by the interposed
/// allocator in `CBenchmarkSupport`, on every thread).
struct Sample: Codable, Sendable {
    var iterations: Int
    var nanoseconds: UInt64
    var allocations: UInt64
    /// Hand-off latency percentiles of this sample (executor scenarios only).
    var latency: LatencySummary?
    /// User-space instructions and cycles of the whole process during the sample, where the
    /// machine has hardware counters (`PerfCounters`).
    var instructions: UInt64? = nil
    var cycles: UInt64? = nil

    var nanosecondsPerOperation: Double { Double(nanoseconds) / Double(max(iterations, 1)) }
    var allocationsPerOperation: Double { Double(allocations) / Double(max(iterations, 1)) }
    var instructionsPerOperation: Double? { instructions.map { Double($0) / Double(max(iterations, 1)) } }
}

/// The process's hardware instruction and cycle counters, opened once before any thread
/// starts, or the reason they are not available ("n/a" in the report).
enum PerfCounters {
    /// nil when the counters are open; otherwise why not. `nonisolated(unsafe)`: written only
    /// by `open()`, on the main thread before any other thread starts; only read after.
    nonisolated(unsafe) private(set) static var unavailableReason: String? = "not opened"

    /// Opens the counters; call first thing in `main`, on the main thread, before any other
    /// thread exists (the counters follow the threads started after them).
    static func open() {
        let error = bench_perf_open()
        if error == 0 {
            unavailableReason = nil
        } else {
            let text = String(cString: strerror(error))
            unavailableReason =
                error == ENOENT || error == EOPNOTSUPP
                ? "perf_event_open: \(text): this machine exposes no hardware counters (common in VMs)"
                : "perf_event_open: \(text) (see /proc/sys/kernel/perf_event_paranoid)"
        }
    }

    /// (instructions, cycles) so far, or nil when unavailable.
    static func read() -> (UInt64, UInt64)? {
        unavailableReason == nil ? (bench_perf_instructions(), bench_perf_cycles()) : nil
    }
}

/// Percentiles of sampled hand-off latencies, in nanoseconds.
struct LatencySummary: Codable, Sendable {
    var count: UInt64
    var p50: UInt64
    var p99: UInt64
    var p999: UInt64
    var max: UInt64
}

/// Runs `body`, which performs `iterations` operations, and times it on the calling thread.
@inline(__always)
func measure(iterations: Int, _ body: () throws -> Void) rethrows -> Sample {
    let allocationsBefore = bench_allocation_count()
    let start = bench_now_ns()
    try body()
    let end = bench_now_ns()
    let allocations = bench_allocation_count() &- allocationsBefore
    return Sample(iterations: iterations, nanoseconds: end &- start, allocations: allocations)
}

/// `measure` for scenarios whose operations suspend.
@inline(__always)
func measureAsync(iterations: Int, _ body: () async throws -> Void) async rethrows -> Sample {
    let allocationsBefore = bench_allocation_count()
    let start = bench_now_ns()
    try await body()
    let end = bench_now_ns()
    let allocations = bench_allocation_count() &- allocationsBefore
    return Sample(iterations: iterations, nanoseconds: end &- start, allocations: allocations)
}

/// Hands an object to an opaque C function, so that the optimizer cannot delete the work
/// that produced it. Passes the address only: no retain, no release, no allocation.
@inline(__always)
func consume(_ object: AnyObject) {
    bench_sink_pointer(UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque()))
}

/// Hands an integer to an opaque C function; see `consume(_:)` for objects.
@inline(__always)
func consume(_ value: Int) {
    bench_sink_u64(UInt64(truncatingIfNeeded: value))
}

/// Nanoseconds on the monotonic clock.
@inline(__always)
func now() -> UInt64 { bench_now_ns() }
