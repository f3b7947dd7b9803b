import CBoltsRuntime
import CBoltsTuning
import Foundation
import Testing

@testable import Bolts

/// Real cgroups made for the test, below this process's own cgroup in the hierarchy that
/// holds the `cpu` controller, each removed when the test is done with it.
private struct ScratchCgroups {
    let hierarchy: CgroupCPULimit.Hierarchy

    /// The hierarchy to make cgroups in, if this process may (it is root, and a probe cgroup
    /// was made, given a quota and removed), or why not.
    static let available: Result<ScratchCgroups, ProbeFailure> = probe()

    struct ProbeFailure: Error, CustomStringConvertible {
        let description: String
    }

    private static func probe() -> Result<ScratchCgroups, ProbeFailure> {
        guard geteuid() == 0 else { return .failure(.init(description: "not root")) }
        // The v1 cpu controller first: on a hybrid system it is there, not in the unified
        // hierarchy.
        let hierarchies = CgroupCPULimit.hierarchies().sorted { $0.version == .v1 && $1.version == .v2 }
        var reasons: [String] = []
        for hierarchy in hierarchies {
            let scratch = ScratchCgroups(hierarchy: hierarchy)
            do {
                let probe = try scratch.make("probe", cpus: (100_000, 100_000))
                guard rmdir(probe) == 0 else {
                    return .failure(.init(description: "rmdir \(probe): \(String(cString: strerror(errno)))"))
                }
                return .success(scratch)
            } catch {
                reasons.append("\(hierarchy.directory): \(error)")
            }
        }
        if hierarchies.isEmpty { reasons.append("no cpu cgroup hierarchy is mounted") }
        return .failure(.init(description: reasons.joined(separator: "; ")))
    }

    struct WriteFailure: Error, CustomStringConvertible {
        let description: String
    }

    private func writeFile(_ path: String, _ text: String) throws {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw WriteFailure(description: "open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        guard write(fd, bytes, bytes.count) == bytes.count else {
            throw WriteFailure(description: "write \(text) to \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Makes the cgroup `name` below `parent` (this process's own cgroup when nil) with a
    /// quota of `cpus.quota / cpus.period` CPUs (no limit when nil) and returns its directory.
    func make(_ name: String, in parent: String? = nil, cpus: (quota: Int, period: Int)?) throws -> String {
        let parent = parent ?? hierarchy.directory
        let directory = parent + "/bolts-test-\(getpid())-\(name)"
        guard mkdir(directory, 0o755) == 0 else {
            throw WriteFailure(description: "mkdir \(directory): \(String(cString: strerror(errno)))")
        }
        do {
            switch hierarchy.version {
            case .v1:
                if let cpus {
                    try writeFile(directory + "/cpu.cfs_period_us", "\(cpus.period)")
                    try writeFile(directory + "/cpu.cfs_quota_us", "\(cpus.quota)")
                }
            case .v2:
                // A v2 cgroup has cpu.max only when its parent hands down the cpu controller.
                // The test enables it in the cgroups it made, never in this process's own
                // (a change it would leave behind): there it must already be on.
                if parent == hierarchy.directory {
                    let enabled =
                        (try? String(contentsOfFile: parent + "/cgroup.subtree_control", encoding: .utf8)) ?? ""
                    guard enabled.split(whereSeparator: { $0 == " " || $0 == "\n" }).contains("cpu") else {
                        throw WriteFailure(description: "the cpu controller is not enabled below \(parent)")
                    }
                } else {
                    try writeFile(parent + "/cgroup.subtree_control", "+cpu")
                }
                try writeFile(directory + "/cpu.max", cpus.map { "\($0.quota) \($0.period)" } ?? "max")
            }
        } catch {
            rmdir(directory)  // just made, still empty
            throw error
        }
        return directory
    }

    /// Removes a cgroup made by `make` (empty: its processes have exited and been waited for).
    func remove(_ directory: String) {
        if rmdir(directory) != 0 {
            Issue.record("could not remove the test cgroup \(directory): \(String(cString: strerror(errno)))")
        }
    }

    /// `ThreadPool.defaultThreadCount` as a process placed in the cgroup at `directory` sees
    /// it: a shell that moves itself there, then becomes the GlobalExecutorChecks program
    /// (built with the tests, next to the test runner) printing the count.
    func defaultThreadCount(in directory: String, environment extra: [String: String] = [:]) throws -> Int? {
        let runner = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let program = runner.deletingLastPathComponent().appendingPathComponent("GlobalExecutorChecks").path
        guard FileManager.default.isExecutableFile(atPath: program) else {
            Issue.record("GlobalExecutorChecks not found at \(program)")
            return nil
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c", #"echo $$ > "$1/cgroup.procs" && exec "$2" default-thread-count"#, "sh", directory, program,
        ]
        var environment = ProcessInfo.processInfo.environment
        environment[ThreadPool.threadCountVariable] = nil
        environment.merge(extra) { $1 }
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0,
            let line = output.split(separator: "\n").first(where: { $0.hasPrefix("defaultThreadCount ") }),
            let count = Int(line.dropFirst("defaultThreadCount ".count))
        else {
            Issue.record("the child in \(directory) failed: status \(process.terminationStatus)\n\(output)")
            return nil
        }
        return count
    }
}

/// This process's own default count, which bounds its children's.
private var ownDefaultThreadCount: Int {
    ThreadPool.defaultThreadCount(override: nil, cpuCount: Int(bolts_cpu_count()), cgroupCPUs: CgroupCPULimit.cpus())
}

/// Whether the test can run here; when it cannot, the reason goes to standard error (the
/// skip's own comment is fixed when the test is declared). On fewer than 2 CPUs a 1-CPU quota
/// cannot be told from the CPU count.
private var integrationTestCanRun: Bool {
    var reason: String?
    if case .failure(let failure) = ScratchCgroups.available {
        reason = "cannot make a cgroup here: \(failure)"
    } else if ownDefaultThreadCount < 2 {
        reason = "this process may use \(ownDefaultThreadCount) CPU; the test needs 2"
    }
    if let reason { FileHandle.standardError.write(Data("cgroup CPU quota test skipped: \(reason)\n".utf8)) }
    return reason == nil
}

@Suite("The cgroup CPU quota sizes the default pool (real cgroups, in a child process)")
struct CgroupCPULimitIntegrationTests {
    /// Each case makes its cgroups below this process's own, runs a child in the innermost
    /// and removes them. The condition is evaluated (and the probe cgroup made) only when the
    /// test is selected to run.
    @Test(
        .enabled(
            if: integrationTestCanRun,
            "needs root, a cgroup cpu controller in which this process may make cgroups, and 2 CPUs"
        )
    )
    func aChildInACgroupWithAQuotaGetsThatManyWorkers() throws {
        let scratch = try ScratchCgroups.available.get()

        // One CPU.
        let one = try scratch.make("one-cpu", cpus: (100_000, 100_000))
        defer { scratch.remove(one) }
        #expect(try scratch.defaultThreadCount(in: one) == 1, "a 1-CPU quota")

        // An unlimited cgroup inside one limited to one CPU.
        let parent = try scratch.make("parent", cpus: (100_000, 100_000))
        defer { scratch.remove(parent) }
        let child = try scratch.make("child", in: parent, cpus: nil)
        defer { scratch.remove(child) }
        #expect(try scratch.defaultThreadCount(in: child) == 1, "an unlimited child of a 1-CPU parent")

        // 1.5 CPUs: rounded up to 2.
        let oneAndAHalf = try scratch.make("one-and-a-half-cpus", cpus: (150_000, 100_000))
        defer { scratch.remove(oneAndAHalf) }
        #expect(try scratch.defaultThreadCount(in: oneAndAHalf) == 2, "a 1.5-CPU quota")

        // BOLTS_POOL_THREADS still wins.
        #expect(
            try scratch.defaultThreadCount(in: one, environment: [ThreadPool.threadCountVariable: "3"]) == 3,
            "BOLTS_POOL_THREADS=3 under a 1-CPU quota"
        )
    }
}
