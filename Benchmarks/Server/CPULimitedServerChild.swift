import Bolts
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The server of the CPU-limit variant, in a child process that the parent has placed in a
/// cgroup with a CPU quota (`CPUQuotaCgroup`), a `ChildServerProcess`. The child waits for a
/// `start` line (so that `ThreadPool.shared` and `NIOThreadPool`, which size themselves from the
/// quota, see the cgroup), starts `FanOutHTTPServer`, prints `port <port> pool <workers>` and
/// serves until its standard input reads `stop` or closes, then exits 0. Its costs are its CPU
/// time (`/proc/<pid>/stat`) and its cgroup's throttling (`cpu.stat`).
final class CPULimitedServerChild: ChildServerProcess, WrkServer {
    private let cgroup: CPUQuotaCgroup

    /// `ThreadPool.shared.threadCount` in the child.
    private(set) var poolThreads = 0

    func reading() -> WrkReading? {
        guard let counters = cgroup.throttling(), let cpu = processCPUMicroseconds(pid: pid) else { return nil }
        return WrkReading(cpuMicroseconds: cpu, counters: counters)
    }

    /// The child's main.
    static func runChild(settings: ServerBenchmark.Settings) -> Never {
        guard readLine() == "start" else { exit(0) }
        let server: FanOutHTTPServer
        do {
            server = try FanOutHTTPServer(eventLoops: settings.eventLoops)
        } catch {
            writeError("the CPU-limited server could not start: \(error)\n")
            exit(2)
        }
        // Unbuffered: the parent waits for this line.
        FileHandle.standardOutput.write(Data("port \(server.port) pool \(ThreadPool.shared.threadCount)\n".utf8))
        while let line = readLine(), line != "stop" {}
        server.shutdown()
        exit(0)
    }

    /// Starts the child (`arguments` fix its server settings), puts it in `cgroup`, lets it
    /// start its server and reads its port. On failure the child is stopped before this throws.
    init(cgroup: CPUQuotaCgroup, arguments: [String]) throws {
        self.cgroup = cgroup
        try super.init(
            "CPU-limited", executable: URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path,
            arguments: ChildKind.serverUnderCPULimit.arguments + arguments, fieldCount: 4, stopSeconds: 5
        ) { pid, input in
            try cgroup.add(pid: pid)
            try input.write(contentsOf: Data("start\n".utf8))
        }
        guard fields[2] == "pool", let workers = Int(fields[3]) else {
            stop()
            throw BenchmarkChildFailed(description: "the CPU-limited server said \"\(fields.joined(separator: " "))\"")
        }
        poolThreads = workers
    }
}
