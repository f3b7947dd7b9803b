import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One framework server child process (`Framework.product`, a `ChildServerProcess`), serving
/// with one executor choice: a section's `WrkServer`.
final class FrameworkServerProcess: ChildServerProcess, WrkServer {
    let arm: FrameworkBenchmark.Arm

    /// Starts `executable` with `arm`'s executor and jobs of `jobRounds` rounds, and waits (at
    /// most `timeoutSeconds`) until it says which port it serves.
    init(executable: String, arm: FrameworkBenchmark.Arm, jobRounds: Int, timeoutSeconds: Double = 30) throws {
        self.arm = arm
        let arguments = [arm.rawValue, "--port", "0", "--job-rounds", "\(jobRounds)"]
        try super.init(
            arm.rawValue, executable: executable, arguments: arguments, timeoutSeconds: timeoutSeconds, stopSeconds: 3)
    }

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
}

/// A framework's server executable (`Framework.product`), built from its nested package once per
/// run, before anything is measured. The nested package keeps the framework out of the root
/// package's build and depends on the root by path, so the server measures this checkout's
/// Bolts. The root is the nearest directory above this executable (or else the current one) with
/// a Package.swift and the nested package (`SwiftDriver.packageRoot`). The configuration is this
/// executable's own: release, or debug in a `--debug-build` run, which only exercises the harness.
enum FrameworkServerBuild {
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
            throw SwiftDriver.Failure(
                description: "cannot find the package root (a Package.swift with \(packageDirectory)/Package.swift "
                    + "beside it, above this executable or in the current directory)"
            )
        }
        guard let swift = SwiftDriver.find() else { throw SwiftDriver.Failure(description: "`swift` is not on PATH") }
        let arguments = [
            "build", "-c", isDebugBuild ? "debug" : "release", "--package-path", root + "/" + packageDirectory,
            "--product", product,
        ]
        writeError("Building the \(framework.name) server: swift \(arguments.joined(separator: " "))\n")
        let (executable, seconds) = try SwiftDriver.build(swift, arguments, product: product)
        writeError("Built the \(framework.name) server in \(seconds.fixed(1)) s: \(executable)\n")
        return (executable, seconds)
    }
}
