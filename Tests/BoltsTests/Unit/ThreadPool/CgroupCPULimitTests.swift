import CBoltsRuntime
import CBoltsTuning
import Foundation
import Testing

@testable import Bolts

/// A fixture tree in a temporary directory: `/proc/self/cgroup`, `/proc/self/mountinfo` and
/// cgroup files at the paths they name, under `root`. Removed when the fixture goes.
final class CgroupFixture {
    let root: String

    init() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("bolts-cgroup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        root = base.path
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// Writes `content` to `path` (absolute, under `root`), creating the directories on the way.
    func write(_ path: String, _ content: String) throws {
        let url = URL(fileURLWithPath: root + path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(content.utf8).write(to: url)
    }

    func makeDirectory(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: root + path, withIntermediateDirectories: true)
    }

    func cgroup(_ lines: String...) throws { try write("/proc/self/cgroup", lines.map { $0 + "\n" }.joined()) }
    func mountinfo(_ lines: String...) throws { try write("/proc/self/mountinfo", lines.map { $0 + "\n" }.joined()) }

    /// cgroup v1 `cpu` quota files of the cgroup at `directory`.
    func v1(_ directory: String, quota: String, period: String = "100000") throws {
        try write(directory + "/cpu.cfs_quota_us", quota + "\n")
        try write(directory + "/cpu.cfs_period_us", period + "\n")
    }

    /// cgroup v2 `cpu.max` of the cgroup at `directory`.
    func v2(_ directory: String, _ max: String) throws { try write(directory + "/cpu.max", max + "\n") }

    var cpus: Int? { CgroupCPULimit.cpus(root: root) }
}

/// mountinfo lines as a Debian host shows them.
private let v1CPUMount =
    "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct"
private let v1MemoryMount = "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:12 - cgroup cgroup rw,memory"
private let v1CpuacctOnlyMount = "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct"
private let v2Mount =
    "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate"
private let v2HybridMount = "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw"
private let rootMount = "23 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda rw"

@Suite("The cgroup CPU quota sizes the default pool (fixture trees)")
struct CgroupCPULimitTests {
    @Test func cgroupV1QuotaOfTheCPUControllerCounts() throws {
        let fixture = try CgroupFixture()
        try fixture.cgroup("5:memory:/app", "4:cpu,cpuacct:/app", "1:name=systemd:/app")
        try fixture.mountinfo(rootMount, v1CpuacctOnlyMount, v1MemoryMount, v1CPUMount)
        try fixture.v1("/sys/fs/cgroup/cpu,cpuacct", quota: "-1")
        try fixture.v1("/sys/fs/cgroup/cpu,cpuacct/app", quota: "300000")
        #expect(fixture.cpus == 3)
        #expect(
            CgroupCPULimit.hierarchies(root: fixture.root) == [
                .init(
                    version: .v1, mountPoint: fixture.root + "/sys/fs/cgroup/cpu,cpuacct",
                    directory: fixture.root + "/sys/fs/cgroup/cpu,cpuacct/app"
                )
            ]
        )
    }

    @Test func cgroupV1QuotaOfMinusOneIsNoLimit() throws {
        let fixture = try CgroupFixture()
        try fixture.cgroup("4:cpu,cpuacct:/app")
        try fixture.mountinfo(v1CPUMount)
        try fixture.v1("/sys/fs/cgroup/cpu,cpuacct", quota: "-1")
        try fixture.v1("/sys/fs/cgroup/cpu,cpuacct/app", quota: "-1")
        #expect(fixture.cpus == nil)
    }

    @Test func cgroupV2CPUMaxCounts() throws {
        let fixture = try CgroupFixture()
        try fixture.cgroup("0::/system.slice/app.service")
        try fixture.mountinfo(rootMount, v2Mount)
        try fixture.v2("/sys/fs/cgroup/system.slice", "max 100000")
        try fixture.v2("/sys/fs/cgroup/system.slice/app.service", "200000 100000")
        #expect(fixture.cpus == 2)
    }

    @Test func cgroupV2MaxIsNoLimit() throws {
        let fixture = try CgroupFixture()
        try fixture.cgroup("0::/app")
        try fixture.mountinfo(v2Mount)
        try fixture.v2("/sys/fs/cgroup/app", "max 100000")
        #expect(fixture.cpus == nil)
        #expect(ThreadPool.defaultThreadCount(override: nil, cpuCount: 8, cgroupCPUs: fixture.cpus) == 8)
    }

    @Test func hybridReadsTheV1CPUControllerAndTheUnifiedHierarchy() throws {
        let fixture = try CgroupFixture()
        try fixture.cgroup("4:cpu,cpuacct:/app", "0::/app")
        try fixture.mountinfo(v1CPUMount, v2HybridMount)
        try fixture.v1("/sys/fs/cgroup/cpu,cpuacct/app", quota: "-1")
        try fixture.v2("/sys/fs/cgroup/unified/app", "100000 100000")
        #expect(fixture.cpus == 1)

        try fixture.v1("/sys/fs/cgroup/cpu,cpuacct/app", quota: "100000")
        try fixture.v2("/sys/fs/cgroup/unified/app", "max 100000")
        #expect(fixture.cpus == 1)
        #expect(CgroupCPULimit.hierarchies(root: fixture.root).map(\.version) == [.v1, .v2])
    }

    @Test func aParentLimitedToOneCPUBoundsAnUnlimitedChild() throws {
        let v1 = try CgroupFixture()
        try v1.cgroup("4:cpu,cpuacct:/parent/child")
        try v1.mountinfo(v1CPUMount)
        try v1.v1("/sys/fs/cgroup/cpu,cpuacct/parent", quota: "100000")
        try v1.v1("/sys/fs/cgroup/cpu,cpuacct/parent/child", quota: "-1")
        #expect(v1.cpus == 1)

        let v2 = try CgroupFixture()
        try v2.cgroup("0::/parent/child")
        try v2.mountinfo(v2Mount)
        try v2.v2("/sys/fs/cgroup/parent", "100000 100000")
        try v2.v2("/sys/fs/cgroup/parent/child", "max 100000")
        #expect(v2.cpus == 1)
    }

    @Test func theTightestQuotaOnThePathWinsWhereverItIs() throws {
        let fixture = try CgroupFixture()
        try fixture.cgroup("0::/a/b/c")
        try fixture.mountinfo(v2Mount)
        try fixture.v2("/sys/fs/cgroup/a", "400000 100000")
        try fixture.v2("/sys/fs/cgroup/a/b", "200000 100000")
        try fixture.v2("/sys/fs/cgroup/a/b/c", "300000 100000")
        #expect(fixture.cpus == 2)
    }

    @Test func aQuotaAboveTheMountIsNotRead() throws {
        // The walk ends at the mount point: files beside it belong to another file system.
        let fixture = try CgroupFixture()
        try fixture.cgroup("4:cpu,cpuacct:/app")
        try fixture.mountinfo(v1CPUMount)
        try fixture.v1("/sys/fs/cgroup", quota: "100000")
        try fixture.v1("/sys/fs/cgroup/cpu,cpuacct/app", quota: "-1")
        #expect(fixture.cpus == nil)
    }

    @Test func aQuotaIsRoundedUpToWholeCPUs() throws {
        let fixture = try CgroupFixture()
        try fixture.cgroup("0::/app")
        try fixture.mountinfo(v2Mount)
        for (max, cpus) in [
            ("150000 100000", 2), ("200000 100000", 2), ("200001 100000", 3), ("75000 50000", 2),
            ("1000000 1000000", 1),
        ] {
            try fixture.v2("/sys/fs/cgroup/app", max)
            #expect(fixture.cpus == cpus, "cpu.max \(max)")
        }
        let v1 = try CgroupFixture()
        try v1.cgroup("4:cpu,cpuacct:/app")
        try v1.mountinfo(v1CPUMount)
        try v1.v1("/sys/fs/cgroup/cpu,cpuacct/app", quota: "150000", period: "100000")
        #expect(v1.cpus == 2)
    }

    @Test func aQuotaBelowOneCPUCountsAsOne() throws {
        let fixture = try CgroupFixture()
        try fixture.cgroup("0::/app")
        try fixture.mountinfo(v2Mount)
        try fixture.v2("/sys/fs/cgroup/app", "50000 100000")
        #expect(fixture.cpus == 1)
        let v1 = try CgroupFixture()
        try v1.cgroup("4:cpu,cpuacct:/app")
        try v1.mountinfo(v1CPUMount)
        try v1.v1("/sys/fs/cgroup/cpu,cpuacct/app", quota: "1000")
        #expect(v1.cpus == 1)
    }

    @Test func theDefaultIsTheSmallestOfCPUsAndQuota() {
        #expect(ThreadPool.defaultThreadCount(override: nil, cpuCount: 8, cgroupCPUs: 2) == 2)
        #expect(ThreadPool.defaultThreadCount(override: nil, cpuCount: 2, cgroupCPUs: 8) == 2)
        #expect(ThreadPool.defaultThreadCount(override: nil, cpuCount: 4, cgroupCPUs: nil) == 4)
        #expect(ThreadPool.defaultThreadCount(override: nil, cpuCount: 0, cgroupCPUs: nil) == 1)
    }

    @Test func boltsPoolThreadsOverridesCPUsAndQuota() {
        #expect(ThreadPool.threadCountVariable == "BOLTS_POOL_THREADS")
        #expect(ThreadPool.defaultThreadCount(override: "3", cpuCount: 2, cgroupCPUs: 1) == 3)
        #expect(ThreadPool.defaultThreadCount(override: "1", cpuCount: 8, cgroupCPUs: nil) == 1)
        let maximum = Int(BOLTS_POOL_MAX_THREADS)
        #expect(ThreadPool.defaultThreadCount(override: "\(maximum)", cpuCount: 2, cgroupCPUs: nil) == maximum)
        for ignored in ["", "0", "-2", "two", " 3", "3.5", "\(maximum + 1)", "99999999999999999999"] {
            #expect(
                ThreadPool.defaultThreadCount(override: ignored, cpuCount: 4, cgroupCPUs: 2) == 2,
                "BOLTS_POOL_THREADS=\(ignored)"
            )
        }
    }

    @Test func missingFilesLimitNothing() throws {
        let empty = try CgroupFixture()
        #expect(empty.cpus == nil)
        #expect(CgroupCPULimit.hierarchies(root: empty.root).isEmpty)

        let noMountinfo = try CgroupFixture()
        try noMountinfo.cgroup("0::/app")
        try noMountinfo.v2("/sys/fs/cgroup/app", "100000 100000")
        #expect(noMountinfo.cpus == nil)

        let noCgroupFile = try CgroupFixture()
        try noCgroupFile.mountinfo(v2Mount)
        try noCgroupFile.v2("/sys/fs/cgroup/app", "100000 100000")
        #expect(noCgroupFile.cpus == nil)

        // No cgroup directory at all (the cgroup went while we looked), and a v1 period file
        // without its quota file.
        let noDirectory = try CgroupFixture()
        try noDirectory.cgroup("4:cpu,cpuacct:/gone", "0::/gone")
        try noDirectory.mountinfo(v1CPUMount, v2HybridMount)
        try noDirectory.write("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n")
        #expect(noDirectory.cpus == nil)

        // Hierarchies the process is in but that are not mounted.
        let notMounted = try CgroupFixture()
        try notMounted.cgroup("4:cpu,cpuacct:/app", "0::/app")
        try notMounted.mountinfo(rootMount, v1MemoryMount)
        #expect(CgroupCPULimit.hierarchies(root: notMounted.root).isEmpty)
    }

    @Test func anUnreadableFileIsSkippedAndTheRestOfThePathStillCounts() throws {
        // A directory where the file should be: open succeeds, read fails (EISDIR), even as root.
        let fixture = try CgroupFixture()
        try fixture.cgroup("0::/parent/child")
        try fixture.mountinfo(v2Mount)
        try fixture.makeDirectory("/sys/fs/cgroup/parent/child/cpu.max")
        #expect(fixture.cpus == nil)
        try fixture.v2("/sys/fs/cgroup/parent", "100000 100000")
        #expect(fixture.cpus == 1)

        let v1 = try CgroupFixture()
        try v1.cgroup("4:cpu,cpuacct:/app")
        try v1.mountinfo(v1CPUMount)
        try v1.write("/sys/fs/cgroup/cpu,cpuacct/app/cpu.cfs_quota_us", "100000\n")
        try v1.makeDirectory("/sys/fs/cgroup/cpu,cpuacct/app/cpu.cfs_period_us")
        #expect(v1.cpus == nil)
    }

    @Test func malformedContentLimitsNothing() throws {
        let v2 = try CgroupFixture()
        try v2.cgroup("0::/app")
        try v2.mountinfo(v2Mount)
        for max in ["", "100000", "abc 100000", "100000 abc", "100000 0", "0 100000", "-5 100000", "1 2 3", "max"] {
            try v2.v2("/sys/fs/cgroup/app", max)
            #expect(v2.cpus == nil, "cpu.max \(max)")
        }

        let v1 = try CgroupFixture()
        try v1.cgroup("4:cpu,cpuacct:/app")
        try v1.mountinfo(v1CPUMount)
        for (quota, period) in [("", "100000"), ("12x", "100000"), ("0", "100000"), ("100000", "0"), ("100000", "")] {
            try v1.v1("/sys/fs/cgroup/cpu,cpuacct/app", quota: quota, period: period)
            #expect(v1.cpus == nil, "quota \(quota), period \(period)")
        }

        // Garbage lines in /proc/self/cgroup and mountinfo are skipped; good lines still count.
        let lines = try CgroupFixture()
        try lines.cgroup("garbage", "4:cpu", "3:cpu:relative/path", "0::/app")
        try lines.mountinfo("", "1 2 3", "30 23 0:26 / /x rw - ", "31 23 0:27 /\\9 /y rw - cgroup2 c rw", v2Mount)
        try lines.v2("/sys/fs/cgroup/app", "100000 100000")
        #expect(lines.cpus == 1)
        #expect(CgroupCPULimit.parseMountInfo("30 23 0:26 / /x rw - cgroup2").count == 1)
        #expect(CgroupCPULimit.parseCgroupFile("3:cpu:relative/path\n9:name=systemd:/\n").isEmpty)
    }

    @Test func aMountOfACgroupDirectoryShowsThePathBelowItsRoot() throws {
        // A container without a cgroup namespace: /proc/self/cgroup names the host's path, and
        // the container's mount shows only its own cgroup (mountinfo's 4th field).
        let fixture = try CgroupFixture()
        try fixture.cgroup("4:cpu,cpuacct:/docker/abc/worker")
        try fixture.mountinfo(
            "1035 1034 0:29 /docker/abc /sys/fs/cgroup/cpu,cpuacct ro,nosuid - cgroup cgroup rw,cpu,cpuacct"
        )
        try fixture.v1("/sys/fs/cgroup/cpu,cpuacct", quota: "100000")
        try fixture.v1("/sys/fs/cgroup/cpu,cpuacct/worker", quota: "-1")
        #expect(fixture.cpus == 1)
        #expect(
            CgroupCPULimit.hierarchies(root: fixture.root).map(\.directory) == [
                fixture.root + "/sys/fs/cgroup/cpu,cpuacct/worker"
            ]
        )

        #expect(CgroupCPULimit.relativePath("/docker/abc", mountRoot: "/docker/abc") == "/")
        #expect(CgroupCPULimit.relativePath("/docker/abc/x", mountRoot: "/docker/abc") == "/x")
        #expect(CgroupCPULimit.relativePath("/docker/abc/x", mountRoot: "/docker/abc/") == "/x")
        #expect(CgroupCPULimit.relativePath("/docker/abcd", mountRoot: "/docker/abc") == nil)
        #expect(CgroupCPULimit.relativePath("/other", mountRoot: "/docker/abc") == nil)
        #expect(CgroupCPULimit.relativePath("/x/y", mountRoot: "/") == "/x/y")
        #expect(CgroupCPULimit.relativePath("/../outside", mountRoot: "/") == nil)
    }

    @Test func aCgroupNoMountShowsLimitsNothing() throws {
        // Outside the mount's root, or outside the cgroup namespace ("/.."): nothing to read.
        let fixture = try CgroupFixture()
        try fixture.cgroup("0::/../elsewhere")
        try fixture.mountinfo(v2Mount)
        try fixture.v2("/sys/fs/cgroup", "100000 100000")
        try fixture.v2("/sys/fs/cgroup/elsewhere", "100000 100000")
        #expect(fixture.cpus == nil)

        let outside = try CgroupFixture()
        try outside.cgroup("0::/other")
        try outside.mountinfo("30 23 0:26 /mine /sys/fs/cgroup rw - cgroup2 cgroup2 rw")
        try outside.v2("/sys/fs/cgroup", "100000 100000")
        #expect(outside.cpus == nil)
    }

    @Test func theMountShowingMostOfThePathIsWalked() throws {
        // The hierarchy is mounted twice: at a cgroup's directory first, then whole. The whole
        // mount shows the parent's limit too.
        let fixture = try CgroupFixture()
        try fixture.cgroup("0::/parent/child")
        try fixture.mountinfo(
            "40 23 0:26 /parent/child /mnt/child rw - cgroup2 cgroup2 rw",
            v2Mount
        )
        try fixture.v2("/sys/fs/cgroup/parent", "100000 100000")
        try fixture.v2("/sys/fs/cgroup/parent/child", "max 100000")
        try fixture.v2("/mnt/child", "max 100000")
        #expect(fixture.cpus == 1)
    }

    @Test func escapedMountPointsAreDecoded() throws {
        let fixture = try CgroupFixture()
        try fixture.cgroup("4:cpu:/app")
        try fixture.mountinfo("32 31 0:29 / /sys/fs/cgroup/my\\040cpu rw - cgroup cgroup rw,cpu")
        try fixture.v1("/sys/fs/cgroup/my cpu/app", quota: "100000")
        #expect(fixture.cpus == 1)
    }

    @Test func thisProcessReadsItsOwnCgroups() {
        // Whatever the machine: the parse of the real files does not fail, and the default
        // never exceeds the CPUs nor the quota.
        let cpus = CgroupCPULimit.cpus()
        #expect(cpus.map { $0 >= 1 } ?? true)
        let count = ThreadPool.defaultThreadCount
        if getenv(ThreadPool.threadCountVariable) == nil {
            #expect(count >= 1 && count <= Int(bolts_cpu_count()))
            #expect(count <= cpus ?? .max)
        }
    }
}
