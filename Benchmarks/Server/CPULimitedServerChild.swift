import Bolts
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The server of the CPU-limit variant, in a child process that the parent has placed in a
/// cgroup with a CPU quota (`CPUQuotaCgroup`). One line at a time: the child waits for `start`
/// (so that `ThreadPool.shared` and `NIOThreadPool`, which size themselves from the quota, see
/// the cgroup), starts `FanOutHTTPServer`, prints `port <port> pool <workers>` and serves until
/// its standard input reads `stop` or closes (as when the parent dies), then exits 0. Its costs
/// are its CPU time (`/proc/<pid>/stat`) and its cgroup's throttling (`cpu.stat`).
final class CPULimitedServerChild: WrkServer {
    private let process: Process
    private let input: Pipe
    private let cgroup: CPUQuotaCgroup
    let port: Int
    /// `ThreadPool.shared.threadCount` in the child.
    let poolThreads: Int

    var pid: pid_t { process.processIdentifier }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

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
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ChildKind.serverUnderCPULimit.arguments + arguments
        input = Pipe()
        self.cgroup = cgroup
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        do {
            try cgroup.add(pid: process.processIdentifier)
            try input.fileHandleForWriting.write(contentsOf: Data("start\n".utf8))
            var line = Data()
            while !line.contains(UInt8(ascii: "\n")) {
                let chunk = output.fileHandleForReading.availableData
                guard !chunk.isEmpty else { throw BenchmarkChildFailed(description: "the CPU-limited server exited") }
                line += chunk
            }
            let text = String(decoding: line, as: UTF8.self)
            let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
            guard fields.count == 4, fields[0] == "port", let port = Int(fields[1]), let pool = Int(fields[3]) else {
                throw BenchmarkChildFailed(description: "the CPU-limited server said \(text)")
            }
            self.port = port
            poolThreads = pool
        } catch {
            Self.stop(process, input: input)
            throw error
        }
    }

    /// Asks the child to stop, waits for it (killing it after a few seconds) and reaps it.
    func stop() { Self.stop(process, input: input) }

    private static func stop(_ process: Process, input: Pipe) {
        try? input.fileHandleForWriting.close()
        for _ in 0..<250 where process.isRunning { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
