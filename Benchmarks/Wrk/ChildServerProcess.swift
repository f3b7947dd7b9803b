import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A server in a child process (`FrameworkServerProcess`, `CPULimitedServerChild`): the child
/// prints `port <port> …` on one line once it accepts connections on 127.0.0.1 and serves until
/// its standard input closes (the parent holds the pipe, so the child also ends when the parent
/// dies). `stop` closes that pipe, waits `stopSeconds`, then kills and reaps the child; so does
/// every path out of `init` that throws.
class ChildServerProcess {
    /// The child's line, split at spaces: `port`, the port, then what the child adds.
    let fields: [Substring]
    let port: Int
    private let process: Process
    private let input: Pipe
    private let stopSeconds: Double

    var pid: pid_t { process.processIdentifier }

    /// Starts `executable` with `arguments`, calls `started` with the child's pid and input, then
    /// waits (at most `timeoutSeconds`) for its line, which must hold `fieldCount` fields.
    init(
        _ name: String, executable: String, arguments: [String], fieldCount: Int = 2,
        timeoutSeconds: Double = .infinity, stopSeconds: Double,
        started: (pid_t, FileHandle) throws -> Void = { _, _ in }
    ) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        input = Pipe()
        self.stopSeconds = stopSeconds
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        do {
            try started(process.processIdentifier, input.fileHandleForWriting)
            let line = try ChildServerProcess.readLine(
                output.fileHandleForReading, name: name, timeoutSeconds: timeoutSeconds)
            fields = line.split(separator: " ")
            guard fields.count == fieldCount, fields[0] == "port", let port = Int(fields[1]), port > 0 else {
                throw BenchmarkChildFailed(description: "the \(name) server said \"\(line)\"")
            }
            self.port = port
        } catch {
            ChildServerProcess.stop(process, input, seconds: stopSeconds)
            throw error
        }
    }

    /// `http://127.0.0.1:<port>/<path>`: loopback only.
    func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

    /// Ends the child and reaps it (see the type's comment).
    func stop() { Self.stop(process, input, seconds: stopSeconds) }

    private static func stop(_ process: Process, _ input: Pipe, seconds: Double) {
        try? input.fileHandleForWriting.close()
        for _ in 0..<Int(seconds * 50) where process.isRunning { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// One line from `handle` (without its newline), waiting at most `timeoutSeconds`.
    private static func readLine(_ handle: FileHandle, name: String, timeoutSeconds: Double) throws -> String {
        let deadline = Double(now()) / 1e9 + timeoutSeconds
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            guard Double(now()) / 1e9 < deadline else {
                throw BenchmarkChildFailed(description: "the \(name) server said no port in \(timeoutSeconds) s")
            }
            var poller = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 100)
            if ready < 0, errno != EINTR {
                throw BenchmarkChildFailed(description: "the \(name) server's output: poll failed (errno \(errno))")
            }
            guard ready > 0 else { continue }
            let chunk = handle.availableData
            guard !chunk.isEmpty else { throw BenchmarkChildFailed(description: "the \(name) server exited") }
            line += chunk
        }
        return String(decoding: line.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    }
}
