import ArgumentParser
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the builds with the toolchain share (`ReleaseHandOver`, `FrameworkServerBuild`): building
/// with the `swift` driver, and finding this checkout's root package from this executable.
enum SwiftDriver {
    /// Why `swift` could not be run, or a build with it failed.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The `swift` driver on PATH, or nil.
    static func find() -> String? { findExecutable("swift") }

    /// Runs `swift <arguments>` (a build; its output on stderr), then asks `--show-bin-path` where
    /// `product` is; returns that path and the build's seconds, or throws why there is none.
    static func build(
        _ swift: String, _ arguments: [String], product: String
    ) throws -> (executable: String, seconds: Double) {
        func run(_ arguments: [String], output: FileHandle? = nil) throws -> (output: Data, status: Int32) {
            do {
                return try runProcess(swift, arguments, output: output)
            } catch {
                throw Failure(description: "cannot run \(swift): \(error)")
            }
        }
        let start = now()
        let status = try run(arguments, output: FileHandle.standardError).status
        let seconds = Double(now() &- start) / 1e9
        guard status == 0 else {
            throw Failure(description: "`swift \(arguments.joined(separator: " "))` exited with status \(status)")
        }
        let (binPath, binPathStatus) = try run(arguments + ["--show-bin-path"])
        let directory = String(decoding: binPath, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let executable = directory + "/" + product
        guard binPathStatus == 0, !directory.isEmpty, FileManager.default.isExecutableFile(atPath: executable) else {
            throw Failure(description: "the build left no executable at \(executable)")
        }
        return (executable, seconds)
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

/// Makes `swift run Benchmarks`, as users type it, measure an optimised build.
///
/// `swift run` without `-c release` builds in debug, where every number is meaningless (nothing
/// is specialised or inlined). A debug build therefore says so on stderr at the start of
/// `run()`, builds `swift build -c release --product Benchmarks` in its package (the directory
/// with Package.swift above the executable, or the current one) with its own scratch path,
/// asks `--show-bin-path` where that executable is, and `execv`s it with every argument: the
/// process is replaced, not wrapped, so output, exit code and signals reach the caller. The
/// build's output goes to stderr (`swift run Benchmarks > report.md` holds only the report);
/// an environment variable marks the hand-over, so a handed-to debug build runs as it is.
/// `--debug-build` keeps the debug run, for debugging the harness.
enum ReleaseHandOver {
    /// Set in the environment of the release build this tool hands over to.
    static let environmentMarker = "BOLTS_BENCHMARKS_HANDED_OVER"

    /// Whether this process is the result of a hand-over.
    static var wasHandedOver: Bool { getenv(environmentMarker) != nil }

    /// Builds the release executable and replaces this process with it, passing
    /// `arguments` (without the program name) unchanged. Returns only by throwing, after
    /// printing why on stderr.
    static func replaceWithReleaseBuild(arguments: [String]) throws -> Never {
        writeError(
            "Benchmarks: this is a debug build, whose numbers would be meaningless; handing over to "
                + "`swift build -c release --product Benchmarks` (pass --debug-build to run the debug build).\n")
        do {
            try handOver(arguments: arguments)
        } catch {
            writeError("error: \(error)\n")
            throw ExitCode(1)
        }
    }

    private typealias Failure = SwiftDriver.Failure

    /// Builds, finds and `execv`s the release executable; throws why it could not.
    private static func handOver(arguments: [String]) throws -> Never {
        let ownExecutable = SwiftDriver.currentExecutablePath()
        let packageRoot = SwiftDriver.packageRoot(above: ownExecutable) {
            FileManager.default.fileExists(atPath: $0 + "/Package.swift")
        }
        guard let packageRoot else {
            throw Failure(
                description: "cannot find the package (no Package.swift above \(ownExecutable ?? "this executable") "
                    + "or in the current directory) to build Benchmarks in release mode; run "
                    + "`swift run -c release Benchmarks` in the package, or pass --debug-build")
        }
        guard let swift = SwiftDriver.find() else {
            throw Failure(
                description: "`swift` is not on PATH, so the release build of Benchmarks cannot be made; "
                    + "put the Swift toolchain on PATH, or pass --debug-build")
        }
        var buildArguments = ["build", "-c", "release", "--product", "Benchmarks", "--package-path", packageRoot]
        buildArguments += scratchPath(executable: ownExecutable).map { ["--scratch-path", $0] } ?? []

        let releaseExecutable: String
        do {
            releaseExecutable = try SwiftDriver.build(swift, buildArguments, product: "Benchmarks").executable
        } catch {
            throw Failure(
                description: "the release build failed (\(error)); fix it, or pass --debug-build to run this build")
        }
        if let ownExecutable, SwiftDriver.resolved(releaseExecutable) == ownExecutable {
            throw Failure(description: "the release executable \(releaseExecutable) is this debug build itself")
        }

        setenv(environmentMarker, "1", 1)
        fflush(nil)  // whatever is buffered must not be lost when the process image goes
        let argv = ([releaseExecutable] + arguments).map { strdup($0) } + [nil]
        execv(releaseExecutable, argv)
        let reason = String(cString: strerror(errno))
        argv.forEach { free($0) }
        throw Failure(description: "cannot run \(releaseExecutable): \(reason)")
    }

    /// The scratch directory of this build: `<scratch>/<triple>/debug/Benchmarks`.
    private static func scratchPath(executable: String?) -> String? {
        guard let executable else { return nil }
        let directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
        guard directory.lastPathComponent == "debug" else { return nil }
        let scratch = directory.deletingLastPathComponent().deletingLastPathComponent().path
        return scratch == "/" ? nil : scratch
    }
}
