import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One framework server child process (`Framework.product`), serving on 127.0.0.1 with one
/// executor choice: a section's `WrkServer`. The child binds a port the system picks and prints
/// `port <port>` once it accepts connections; it serves until its standard input closes (the
/// parent holds the pipe, so the child also ends when the parent dies). `stop` closes that pipe,
/// waits a few seconds, then kills and reaps the child; so does every path out of `init` that
/// throws.
final class FrameworkServerProcess: WrkServer {
    let arm: FrameworkBenchmark.Arm
    private(set) var port = 0
    private let process: Process
    private let input: Pipe

    var pid: pid_t { process.processIdentifier }

    /// Starts `executable` with `arm`'s executor and jobs of `jobRounds` rounds, and waits (at
    /// most `timeoutSeconds`) until it says which port it serves.
    init(executable: String, arm: FrameworkBenchmark.Arm, jobRounds: Int, timeoutSeconds: Double = 30) throws {
        self.arm = arm
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [arm.rawValue, "--port", "0", "--job-rounds", "\(jobRounds)"]
        input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        do {
            let line = try Self.readLine(output.fileHandleForReading.fileDescriptor, timeoutSeconds: timeoutSeconds)
            let fields = line.split(separator: " ")
            guard fields.count == 2, fields[0] == "port", let port = Int(fields[1]), port > 0 else {
                throw BenchmarkChildFailed(description: "the \(arm.rawValue) server said \"\(line)\"")
            }
            self.port = port
        } catch {
            stop()
            throw error
        }
    }

    /// `http://127.0.0.1:<port>/<path>`: loopback only.
    func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

    /// The child's CPU time so far (user + system, every thread); nil once it is gone.
    func reading() -> WrkReading? { processCPUMicroseconds(pid: pid).map { WrkReading(cpuMicroseconds: $0) } }


    /// The body of one `GET /<path>` to the child over a new loopback connection (HTTP/1.1,
    /// `Connection: close`), read until the child closes it; for the odd request outside wrk's
    /// runs, such as `/thread`. Throws when the connection or the exchange fails.
    func get(_ path: String) throws -> String {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw BenchmarkChildFailed(description: "socket(): errno \(errno)") }
        let connection = FileHandle(fileDescriptor: socket, closeOnDealloc: true)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7f00_0001).bigEndian)  // 127.0.0.1
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw BenchmarkChildFailed(description: "connect to port \(port): errno \(errno)") }
        let request = "GET /\(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        try connection.write(contentsOf: Data(request.utf8))
        let text = String(decoding: try connection.readToEnd() ?? Data(), as: UTF8.self)
        guard text.hasPrefix("HTTP/1.1 200"), let bodyStart = text.range(of: "\r\n\r\n") else {
            throw BenchmarkChildFailed(description: "GET /\(path) answered \"\(text.prefix(80))\"")
        }
        return String(text[bodyStart.upperBound...])
    }

    /// Ends the child and reaps it (see the type's comment).
    func stop() {
        try? input.fileHandleForWriting.close()
        for _ in 0..<150 where process.isRunning { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// One line from `descriptor` (without its newline), waiting at most `timeoutSeconds`.
    private static func readLine(_ descriptor: Int32, timeoutSeconds: Double) throws -> String {
        var line: [UInt8] = []
        let deadline = now() &+ UInt64(timeoutSeconds * 1e9)
        while now() < deadline {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 100)
            if ready < 0, errno != EINTR { break }
            guard ready > 0 else { continue }
            var byte: UInt8 = 0
            let count = read(descriptor, &byte, 1)
            if count <= 0 { throw BenchmarkChildFailed(description: "the server exited before it served") }
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
        throw BenchmarkChildFailed(description: "the server did not say its port in \(timeoutSeconds) s")
    }
}

/// A framework's server executable (`Framework.product`), built from its nested package once per
/// run, before anything is measured. The nested package keeps the framework out of the root
/// package's build and depends on the root by path, so the server measures this checkout's
/// Bolts. The root is the nearest directory above this executable (or else the current one) with
/// a Package.swift and the nested package (`SwiftDriver.packageRoot`). The configuration is this
/// executable's own: release, or debug in a `--debug-build` run, which only exercises the harness.
enum FrameworkServerBuild {
    /// Why the server could not be built; the section is skipped with this reason.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Builds `framework`'s server (`swift build -c <configuration> --package-path <package>`,
    /// its output on stderr; a first build takes minutes) and returns where `--show-bin-path`
    /// says it is and how long the build took, or throws why it could not.
    static func build(_ framework: Framework) throws -> (executable: String, seconds: Double) {
        let (packageDirectory, product, files) = (framework.packageDirectory, framework.product, FileManager.default)
        let root = SwiftDriver.packageRoot(above: SwiftDriver.currentExecutablePath()) {
            files.fileExists(atPath: $0 + "/Package.swift")
                && files.fileExists(atPath: $0 + "/" + packageDirectory + "/Package.swift")
        }
        guard let root else {
            throw Failure(
                description: "cannot find the package root (a Package.swift with \(packageDirectory)/Package.swift "
                    + "beside it, above this executable or in the current directory)"
            )
        }
        guard let swift = SwiftDriver.find() else { throw Failure(description: "`swift` is not on PATH") }
        let arguments = [
            "build", "-c", isDebugBuild ? "debug" : "release", "--package-path", root + "/" + packageDirectory,
            "--product", product,
        ]
        let command = "swift \(arguments.joined(separator: " "))"
        writeError("Building the \(framework.name) server: \(command)\n")
        let start = now()
        let status = try SwiftDriver.run(swift, arguments, output: FileHandle.standardError)
        let seconds = Double(now() &- start) / 1e9
        guard status == 0 else { throw Failure(description: "`\(command)` exited with status \(status)") }
        let binPath = Pipe()
        let binPathStatus = try SwiftDriver.run(swift, arguments + ["--show-bin-path"], output: binPath)
        let directory = String(decoding: binPath.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let executable = directory + "/" + product
        guard binPathStatus == 0, files.isExecutableFile(atPath: executable) else {
            throw Failure(description: "the build left no executable at \(executable)")
        }
        writeError("Built the \(framework.name) server in \(seconds.fixed(1)) s: \(executable)\n")
        return (executable, seconds)
    }
}
