import Bolts
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A cgroup with a CPU quota below the benchmark's own (in the `cpu` hierarchy `CgroupCPULimit`
/// finds), holding one child process; made, read for throttling and removed by one thread.
/// Needs root and a writable controller: v1 (`cpu.cfs_quota_us`), or v2 (`cpu.max`) where this
/// process's cgroup already hands `cpu` down (the benchmark never turns it on, a change it would
/// leave behind).
struct CPUQuotaCgroup {
    let directory: String
    let version: CgroupCPULimit.Version

    /// The scheduler period of the quota, in microseconds (the kernel's default).
    static let periodMicroseconds = 100_000

    /// Why a cgroup cannot be made, or a cgroup file could not be written.
    struct Failure: Error, CustomStringConvertible {
        let description: String

        /// `action` failed with the current `errno`.
        static func errno(_ action: String) -> Failure {
            Failure(description: "\(action): \(String(cString: strerror(Glibc.errno)))")
        }
    }

    /// The hierarchy to make cgroups in (where a probe cgroup with a quota was made and removed),
    /// or why there is none. v1 first: on a hybrid system the `cpu` controller is there.
    static func probe() -> Result<CgroupCPULimit.Hierarchy, Failure> {
        guard geteuid() == 0 else { return .failure(Failure(description: "the benchmark is not running as root")) }
        let hierarchies = CgroupCPULimit.hierarchies().sorted { $0.version == .v1 && $1.version == .v2 }
        guard !hierarchies.isEmpty else { return .failure(Failure(description: "no cgroup cpu controller is mounted")) }
        var reasons: [String] = []
        for hierarchy in hierarchies {
            removeLeftovers(in: hierarchy)
            do {
                let probe = try make(in: hierarchy, name: "probe", cpus: 1)
                if let failure = probe.remove() { return .failure(failure) }
                return .success(hierarchy)
            } catch {
                reasons.append("\(hierarchy.directory): \(error)")
            }
        }
        return .failure(Failure(description: reasons.joined(separator: "; ")))
    }

    /// Removes the cgroups of earlier runs that were killed (their children have ended since).
    private static func removeLeftovers(in hierarchy: CgroupCPULimit.Hierarchy) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: hierarchy.directory) else { return }
        for name in names where name.hasPrefix("bolts-bench-") {
            let owner = name.dropFirst("bolts-bench-".count).prefix { $0.isNumber }
            guard let pid = pid_t(owner), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            rmdir(hierarchy.directory + "/" + name)
        }
    }

    /// Makes the cgroup `bolts-bench-<pid>-<name>` in this process's own cgroup of `hierarchy`,
    /// with a quota of `cpus` CPUs per period; removes it again if the quota cannot be set.
    static func make(in hierarchy: CgroupCPULimit.Hierarchy, name: String, cpus: Double) throws -> CPUQuotaCgroup {
        let parent = hierarchy.directory
        if hierarchy.version == .v2 {
            let enabled = (try? String(contentsOfFile: parent + "/cgroup.subtree_control", encoding: .utf8)) ?? ""
            guard enabled.split(whereSeparator: { $0 == " " || $0 == "\n" }).contains("cpu") else {
                throw Failure(description: "cgroup v2: the cpu controller is not enabled below \(parent)")
            }
        }
        let directory = parent + "/bolts-bench-\(getpid())-\(name)"
        guard mkdir(directory, 0o755) == 0 else { throw Failure.errno("mkdir \(directory)") }
        let cgroup = CPUQuotaCgroup(directory: directory, version: hierarchy.version)
        let quota = max(1_000, Int((cpus * Double(periodMicroseconds)).rounded()))
        do {
            switch hierarchy.version {
            case .v1:
                try cgroup.write("cpu.cfs_period_us", "\(periodMicroseconds)")
                try cgroup.write("cpu.cfs_quota_us", "\(quota)")
            case .v2:
                try cgroup.write("cpu.max", "\(quota) \(periodMicroseconds)")
            }
        } catch {
            _ = cgroup.remove()  // just made, still empty
            throw error
        }
        return cgroup
    }

    /// Moves the process `pid` (every one of its threads) into this cgroup.
    func add(pid: pid_t) throws { try write("cgroup.procs", "\(pid)") }

    /// Removes the empty cgroup, retrying for a moment while the kernel releases a task that just
    /// exited; returns why it could not, or nil.
    func remove() -> Failure? {
        for _ in 0..<50 {
            if rmdir(directory) == 0 || errno == ENOENT { return nil }
            guard errno == EBUSY else { break }
            usleep(20_000)
        }
        return Failure.errno("rmdir \(directory)")
    }

    /// The throttling counters in `cpu.stat` so far (nil if unreadable): `periods` it ran in,
    /// `throttledPeriods` (it used up its quota) and `throttledNanoseconds` kept off the CPU.
    func throttling() -> [String: Double]? {
        guard let text = try? String(contentsOfFile: directory + "/cpu.stat", encoding: .utf8) else { return nil }
        var values: [Substring: Double] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 2, let value = Double(fields[1]) { values[fields[0]] = value }
        }
        let throttled = version == .v1 ? values["throttled_time"] : values["throttled_usec"].map { $0 * 1_000 }
        guard let periods = values["nr_periods"], let periodsThrottled = values["nr_throttled"], let throttled else {
            return nil
        }
        return ["periods": periods, "throttledPeriods": periodsThrottled, "throttledNanoseconds": throttled]
    }

    private func write(_ file: String, _ text: String) throws {
        let path = directory + "/" + file
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure.errno("open \(path)") }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        guard Glibc.write(fd, bytes, bytes.count) == bytes.count else {
            throw Failure.errno("write \(text) to \(path)")
        }
    }
}

/// CPU time (user + system, every thread) that the process `pid` has used, in microseconds,
/// from `/proc/<pid>/stat` (clock ticks: 10 ms on most kernels), or nil if it cannot be read.
func processCPUMicroseconds(pid: pid_t) -> Double? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = text.lastIndex(of: ")")
    else { return nil }
    // After "pid (comm)": state is field 3, utime field 14, stime field 15.
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
    let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
    return (user + system) / ticksPerSecond * 1e6
}
