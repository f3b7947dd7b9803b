import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the steps that build with the toolchain share (`ReleaseHandOver`, which rebuilds this
/// tool in release mode, and `FrameworkServerBuild`, which builds a framework's server): running
/// the `swift` driver, and finding this checkout's root package from this executable.
enum SwiftDriver {
    /// Why `swift` could not be run.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The `swift` driver on PATH, or nil.
    static func find() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":", omittingEmptySubsequences: true) {
            let candidate = "\(directory)/swift"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs the driver at `swift` with `arguments`, its stdout into `output` (a `Pipe` or a
    /// `FileHandle`) and its stderr on ours; its exit status (128 + the signal if a signal ended it).
    static func run(_ swift: String, _ arguments: [String], output: Any) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: swift)
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        do {
            try process.run()
        } catch {
            throw Failure(description: "cannot run \(swift): \(error)")
        }
        process.waitUntilExit()
        return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
    }

    /// This executable's path with symbolic links resolved (`.build/<triple>/<configuration>/Benchmarks`).
    static func currentExecutablePath() -> String? {
        #if os(Linux)
            if let path = resolved("/proc/self/exe") { return path }
        #endif
        guard let first = CommandLine.arguments.first, first.contains("/") else { return nil }
        return resolved(first)
    }

    /// The root package: the nearest directory above `executable` that `isRoot` accepts, or else
    /// the current directory if it accepts it.
    static func packageRoot(above executable: String?, where isRoot: (String) -> Bool) -> String? {
        if let executable {
            var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
            while directory.path != "/" {
                if isRoot(directory.path) { return directory.path }
                directory.deleteLastPathComponent()
            }
        }
        let current = FileManager.default.currentDirectoryPath
        return isRoot(current) ? current : nil
    }

    /// `path` with symbolic links resolved, or nil if it does not exist.
    static func resolved(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }
}
