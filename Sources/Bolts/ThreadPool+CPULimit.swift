import CBoltsRuntime
internal import CBoltsTuning

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension ThreadPool {
    /// The number of workers a pool gets when none is given, and the size of ``shared``: the
    /// number of CPUs this process can keep busy.
    ///
    /// It is the smallest of:
    /// - the online CPUs;
    /// - the CPUs in the process's affinity mask (`sched_getaffinity`, `taskset`, a cpuset);
    /// - the CPU quota of every cgroup on the process's own cgroup path, from its own cgroup up
    ///   to the root of the hierarchy as mounted (`/proc/self/cgroup` names the path,
    ///   `/proc/self/mountinfo` where it is mounted): `cpu.max` on cgroup v2,
    ///   `cpu.cfs_quota_us` and `cpu.cfs_period_us` on cgroup v1 (a hybrid system's v1 `cpu`
    ///   controller and v2 hierarchy are both read). A quota counts as quota / period CPUs
    ///   rounded up, and at least 1: a quota of 1.5 CPUs gives 2, one of half a CPU gives 1. A
    ///   cgroup without a limit (`max`, `-1`), and a file that is missing, unreadable or
    ///   malformed, limits nothing.
    ///
    /// The quota counts because an idle worker spins briefly (`BOLTS_POOL_SPIN_NS`) before it
    /// parks, and under a quota that spin is CPU time charged against the quota like a job's.
    /// With more workers than the quota has CPUs, workers that spin waiting for work spend the
    /// budget of the period that the running jobs need, and the whole cgroup is then throttled
    /// until the next period; with one worker per CPU of the quota, every worker can be busy
    /// without the cgroup being throttled.
    ///
    /// The environment variable `BOLTS_POOL_THREADS` overrides all of it: a whole number from 1
    /// to `BOLTS_POOL_MAX_THREADS` is the value, whatever the CPUs and quotas (it may exceed
    /// them). Any other value is ignored.
    ///
    /// Each read looks again (the environment and the cgroup files are read anew), so a quota
    /// changed while the process runs sizes the pools created afterwards; ``shared`` keeps the
    /// value read when it was first used. Any thread may read it.
    public static var defaultThreadCount: Int {
        defaultThreadCount(
            override: getenv(threadCountVariable).map { String(cString: $0) },
            // The affinity mask, which the kernel reports within the online CPUs; the online
            // CPUs when the mask cannot be read (bolts_cpu_count).
            cpuCount: Int(bolts_cpu_count()),
            cgroupCPUs: CgroupCPULimit.cpus()
        )
    }

    /// The environment variable that overrides ``defaultThreadCount``.
    package static let threadCountVariable = "BOLTS_POOL_THREADS"

    /// ``defaultThreadCount`` from its inputs: `override` (the value of `BOLTS_POOL_THREADS`,
    /// if set) when it is a whole number in 1...`BOLTS_POOL_MAX_THREADS`; otherwise the smaller
    /// of `cpuCount` and `cgroupCPUs` (nil: no quota), at least 1.
    package static func defaultThreadCount(override: String?, cpuCount: Int, cgroupCPUs: Int?) -> Int {
        if let override, let count = Int(override), count >= 1, count <= Int(BOLTS_POOL_MAX_THREADS) {
            return count
        }
        return max(1, min(cpuCount, cgroupCPUs ?? .max))
    }
}

/// The process's cgroup CPU quota, read the way ``ThreadPool/defaultThreadCount`` needs it.
///
/// Every function takes `root`, a directory prefixed to each path read (`/proc/self/cgroup`,
/// `/proc/self/mountinfo` and the cgroup files), so that tests can lay out a fixture tree in a
/// temporary directory; the process's own files are read with the empty prefix. Nothing is
/// cached and nothing is written. A file that is missing, unreadable or malformed contributes
/// nothing: the answer is then what the other files say, or no limit.
package enum CgroupCPULimit {
    /// The cgroup version of a hierarchy.
    package enum Version: Sendable, Equatable {
        /// A v1 hierarchy with the `cpu` controller (`cpu.cfs_quota_us`, `cpu.cfs_period_us`).
        case v1
        /// The v2 unified hierarchy (`cpu.max`).
        case v2
    }

    /// Where the process's cgroup of one hierarchy is in the file system.
    package struct Hierarchy: Sendable, Equatable {
        package var version: Version
        /// The hierarchy's mount point, `root` prefixed.
        package var mountPoint: String
        /// The process's own cgroup directory: `mountPoint` or a directory below it.
        package var directory: String

        /// `directory` and each of its parents up to `mountPoint`, innermost first.
        package var directoriesUpToMount: [String] {
            var result = [directory]
            var current = directory
            while current.utf8.count > mountPoint.utf8.count, let slash = current.lastIndex(of: "/") {
                current = String(current[..<slash])
                result.append(current)
            }
            return result
        }
    }

    /// The tightest CPU quota on the process's cgroup path, in whole CPUs (quota / period
    /// rounded up, at least 1), or nil when no cgroup on it has a quota that can be read.
    package static func cpus(root: String = "") -> Int? {
        var tightest: Int?
        for hierarchy in hierarchies(root: root) {
            for directory in hierarchy.directoriesUpToMount {
                guard let limit = quotaCPUs(directory: directory, version: hierarchy.version) else { continue }
                tightest = min(tightest ?? .max, limit)
            }
        }
        return tightest
    }

    /// The hierarchies that can limit the process's CPU time: the v1 hierarchy with the `cpu`
    /// controller and the v2 unified hierarchy, each where the process's cgroup in it is
    /// mounted and visible. A hierarchy missing from `/proc/self/cgroup`, not mounted, or
    /// mounted only at a cgroup that does not contain the process's, is left out.
    package static func hierarchies(root: String = "") -> [Hierarchy] {
        guard let cgroupFile = readFile(root + "/proc/self/cgroup"),
            let mountInfo = readFile(root + "/proc/self/mountinfo")
        else { return [] }
        let mounts = parseMountInfo(mountInfo)
        var result: [Hierarchy] = []
        for (version, path) in parseCgroupFile(cgroupFile) {
            // Of the mounts of this hierarchy that show the process's cgroup, the one whose
            // root is highest shows the most of its ancestors.
            var best: (mountRoot: String, hierarchy: Hierarchy)?
            for mount in mounts where mount.version == version {
                guard let relative = relativePath(path, mountRoot: mount.root) else { continue }
                if let best, best.mountRoot.count <= mount.root.count { continue }
                // Without a trailing slash, so that "/" + relative is one path ("" for a
                // hierarchy mounted at "/" itself, whose files are then "/cpu.max" and so on).
                let mountPoint = root + (mount.point.hasSuffix("/") ? String(mount.point.dropLast()) : mount.point)
                let directory = relative == "/" ? mountPoint : mountPoint + relative
                best = (mount.root, Hierarchy(version: version, mountPoint: mountPoint, directory: directory))
            }
            if let best { result.append(best.hierarchy) }
        }
        return result
    }

    /// The quota of the cgroup at `directory` alone, in whole CPUs rounded up (at least 1), or
    /// nil when it has none or its files cannot be read or parsed.
    package static func quotaCPUs(directory: String, version: Version) -> Int? {
        switch version {
        case .v1:
            // "-1" (any negative value) is no limit; 0 is not a value the kernel accepts.
            guard let quotaText = readFile(directory + "/cpu.cfs_quota_us"),
                let quota = Int(trimmed(quotaText)), quota > 0,
                let periodText = readFile(directory + "/cpu.cfs_period_us"),
                let period = Int(trimmed(periodText))
            else { return nil }
            return wholeCPUs(quota: quota, period: period)
        case .v2:
            // "<quota> <period>", the quota "max" for no limit.
            guard let text = readFile(directory + "/cpu.max") else { return nil }
            let fields = trimmed(text).split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count == 2, fields[0] != "max", let quota = Int(fields[0]), let period = Int(fields[1]) else {
                return nil
            }
            return wholeCPUs(quota: quota, period: period)
        }
    }

    /// quota / period rounded up, at least 1; nil unless both are positive.
    private static func wholeCPUs(quota: Int, period: Int) -> Int? {
        guard quota > 0, period > 0 else { return nil }
        return max(1, quota / period + (quota % period == 0 ? 0 : 1))
    }

    // MARK: Parsing

    /// The process's cgroup path in each hierarchy that can limit its CPU time, from
    /// `/proc/self/cgroup` ("hierarchy-ID:controller-list:path" per line): the v1 hierarchy
    /// whose controllers include `cpu`, and the v2 hierarchy (ID 0, no controllers).
    package static func parseCgroupFile(_ text: String) -> [(Version, String)] {
        var result: [(Version, String)] = []
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, fields[2].hasPrefix("/") else { continue }
            if fields[0] == "0" && fields[1].isEmpty {
                result.append((.v2, String(fields[2])))
            } else if fields[1].split(separator: ",").contains("cpu") {
                result.append((.v1, String(fields[2])))
            }
        }
        return result
    }

    /// A cgroup mount from `/proc/self/mountinfo`.
    package struct Mount: Sendable, Equatable {
        package var version: Version
        /// The cgroup of the hierarchy shown at the mount point (field 4: "/" unless a
        /// container was given a cgroup's directory as its mount).
        package var root: String
        /// Where it is mounted (field 5).
        package var point: String
    }

    /// The mounts of a v1 hierarchy with the `cpu` controller (file system type `cgroup`, `cpu`
    /// among the super options) and of cgroup v2 (`cgroup2`), in file order. A line is
    /// "ID parent major:minor root mount-point options [optional fields...] - type source
    /// super-options", its paths with space, tab, newline and backslash escaped in octal.
    package static func parseMountInfo(_ text: String) -> [Mount] {
        var result: [Mount] = []
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count >= 7, let separator = fields[6...].firstIndex(of: "-"),
                separator + 1 < fields.count,
                let root = unescape(fields[3]), let point = unescape(fields[4]),
                root.hasPrefix("/"), point.hasPrefix("/")
            else { continue }
            let type = fields[separator + 1]
            let superOptions = separator + 3 < fields.count ? fields[separator + 3] : ""
            if type == "cgroup2" {
                result.append(Mount(version: .v2, root: root, point: point))
            } else if type == "cgroup" && superOptions.split(separator: ",").contains("cpu") {
                result.append(Mount(version: .v1, root: root, point: point))
            }
        }
        return result
    }

    /// The process's cgroup `path` as seen below a mount of its hierarchy whose root is
    /// `mountRoot` ("/" for the mount point itself), or nil when that mount does not show it.
    ///
    /// Both are paths from the root of the hierarchy (as the reader's cgroup namespace sees
    /// it): a mount of the whole hierarchy shows every path, a mount of a cgroup's directory
    /// (a container's view without a cgroup namespace) shows that cgroup and those below it,
    /// with the mount root's prefix removed. A path that climbs (`..`, a cgroup outside the
    /// reader's namespace) is shown by no mount.
    package static func relativePath(_ path: String, mountRoot: String) -> String? {
        guard path.hasPrefix("/"), !path.split(separator: "/").contains("..") else { return nil }
        if mountRoot == "/" { return path }
        let pathBytes = Array(path.utf8)
        var rootBytes = Array(mountRoot.utf8)
        if rootBytes.last == UInt8(ascii: "/") { rootBytes.removeLast() }
        if pathBytes == rootBytes { return "/" }
        guard pathBytes.count > rootBytes.count, pathBytes.starts(with: rootBytes),
            pathBytes[rootBytes.count] == UInt8(ascii: "/")
        else { return nil }
        return String(decoding: pathBytes[rootBytes.count...], as: UTF8.self)
    }

    /// `field` with mountinfo's octal escapes (`\040` for a space) decoded, or nil if one is
    /// malformed.
    private static func unescape(_ field: Substring) -> String? {
        guard field.contains("\\") else { return String(field) }
        var bytes: [UInt8] = []
        var input = Array(field.utf8)[...]
        while let byte = input.popFirst() {
            guard byte == UInt8(ascii: "\\") else {
                bytes.append(byte)
                continue
            }
            guard input.count >= 3 else { return nil }
            var value = 0
            for _ in 0..<3 {
                let digit = Int(input.removeFirst()) - Int(UInt8(ascii: "0"))
                guard (0...7).contains(digit) else { return nil }
                value = value * 8 + digit
            }
            guard value <= 255 else { return nil }
            bytes.append(UInt8(value))
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `text` without the blanks and newlines around it.
    private static func trimmed(_ text: String) -> Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" }
        guard let first = text.firstIndex(where: { !isBlank($0) }), let last = text.lastIndex(where: { !isBlank($0) })
        else { return "" }
        return text[first...last]
    }

    /// The whole of a file read to its end (procfs and cgroupfs report no size), or nil when it
    /// cannot be opened or read, or is longer than `limit` bytes.
    private static func readFile(_ path: String, limit: Int = 16 << 20) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[..<count])
            if bytes.count > limit { return nil }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
