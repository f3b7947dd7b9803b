import Bolts
import CBenchmarkSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The server scenario's host in this process: one `FanOutHTTPServer` serves every handler (each
/// on its own path); its costs are this process's CPU time, allocations, context switches, parks
/// of `ThreadPool.shared`'s workers and the requests it answered.
final class InProcessServerHost: WrkHost, WrkServer {
    private let server: FanOutHTTPServer

    init(eventLoops: Int) throws { server = try FanOutHTTPServer(eventLoops: eventLoops) }

    func shutdown() { server.shutdown() }

    func server(for draw: RoundDraw<ServerPeer>) -> InProcessServerHost { self }

    func url(_ path: String) -> String { "http://127.0.0.1:\(server.port)/\(path)" }

    func reading() -> WrkReading? {
        let (answered, failed) = server.counts
        let usage = processUsage()
        return WrkReading(
            cpuMicroseconds: usage.cpuMicroseconds,
            counters: [
                "allocations": Double(bench_allocation_count()),
                "contextSwitches": Double(usage.contextSwitches),
                "poolParks": Double(ThreadPool.shared.metrics.parks),
                "answered": Double(answered),
                "failed": Double(failed),
            ]
        )
    }

    /// Allocations, context switches and the pool's parks (idle workers park in every handler's
    /// run) per request; the server's counts of requests answered and failed as they are.
    func figures(_ change: [String: Double], requests: Double, seconds: Double) -> [String: Double] {
        let counts: Set = ["answered", "failed"]
        return Dictionary(uniqueKeysWithValues: change.map { ($0, counts.contains($0) ? $1 : $1 / requests) })
    }
}

/// The server scenario's host under a CPU quota: each handler's server in a child process
/// (`CPULimitedServerChild`) in its own cgroup with a quota of `cpus` CPUs, for the whole section;
/// wrk stays in this process's cgroup. `stop` (run by an `init` that throws too) cleans up.
final class QuotaChildrenHost: WrkHost {
    private var children: [ServerPeer: CPULimitedServerChild] = [:]
    private var cgroups: [CPUQuotaCgroup] = []
    /// "cgroup v1, below /sys/fs/cgroup/cpu/…".
    let cgroupDescription: String
    /// `ThreadPool.shared.threadCount` in each child, as it reported itself.
    var poolThreads: [Int] { children.values.map(\.poolThreads) }

    init(
        hierarchy: CgroupCPULimit.Hierarchy, peers: [ServerPeer], cpus: Double, childArguments: [String],
        watchdog: Watchdog
    ) throws {
        cgroupDescription = "cgroup \(hierarchy.version == .v1 ? "v1" : "v2"), below \(hierarchy.directory)"
        do {
            for peer in peers {
                watchdog.beat("server (cpu limit): starting the \(peer.shortTitle) child")
                let cgroup = try CPUQuotaCgroup.make(in: hierarchy, name: peer.rawValue, cpus: cpus)
                cgroups.append(cgroup)
                children[peer] = try CPULimitedServerChild(cgroup: cgroup, arguments: childArguments)
            }
        } catch {
            stop()
            throw error
        }
    }

    func server(for draw: RoundDraw<ServerPeer>) throws -> CPULimitedServerChild {
        guard let child = children[draw.arm] else {
            throw BenchmarkChildFailed(description: "no child serves \(draw.arm.shortTitle)")
        }
        return child
    }

    /// A run's figures are its cgroup's throttling.
    func figures(_ change: [String: Double], requests: Double, seconds: Double) -> [String: Double] {
        Self.throttling(change, seconds: seconds)
    }

    /// The throttling of a run of `seconds` over which the cgroup's counters changed by `change`:
    /// the share of periods in which it used up its quota, and how long it was stopped per second.
    static func throttling(_ change: [String: Double], seconds: Double) -> [String: Double] {
        let periods = change["periods"] ?? 0
        return [
            "throttledFraction": periods > 0 ? (change["throttledPeriods"] ?? 0) / periods : 0,
            "throttledMillisecondsPerSecond": (change["throttledNanoseconds"] ?? 0) / 1e6 / max(seconds, 1e-9),
        ]
    }

    /// Ends every child and removes every cgroup.
    func stop() {
        for child in children.values { child.stop() }
        children = [:]
        for cgroup in cgroups {
            if let failure = cgroup.remove() { writeError("warning: \(failure)\n") }
        }
        cgroups = []
    }
}

/// This process's CPU time so far (user + system, in microseconds) and its context switches
/// (voluntary + involuntary), every thread's.
func processUsage() -> (cpuMicroseconds: Double, contextSwitches: Int) {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    func micros(_ time: timeval) -> Double { Double(time.tv_sec) * 1e6 + Double(time.tv_usec) }
    return (micros(usage.ru_utime) + micros(usage.ru_stime), usage.ru_nvcsw + usage.ru_nivcsw)
}
