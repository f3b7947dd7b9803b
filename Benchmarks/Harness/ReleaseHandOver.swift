import ArgumentParser
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Makes `swift run Benchmarks`, as users type it, measure an optimised build.
///
/// `swift run` without `-c release` builds this tool in debug, where every number is
/// meaningless (generics are not specialised, nothing is inlined). A debug build therefore
/// does not measure anything: at the very start of `run()` it says so in one line on
/// stderr, runs `swift build -c release --product Benchmarks` in the same package (the
/// directory holding Package.swift above the executable, or the current directory) with
/// the same scratch path as its own build (the `.build` directory it lives in), asks
/// `swift build … --show-bin-path` where the release executable is, and replaces itself
/// with it through `execv`, forwarding every argument unchanged. The process is replaced,
/// not wrapped, so the release build's output, exit code and signals reach the caller
/// directly. `swift run -c release Benchmarks` gets there without the detour; a release
/// build never hands over. `--debug-build` keeps the debug run, for debugging the harness.
///
/// The build's own output goes to stderr, so `swift run Benchmarks > report.md` holds only
/// the report. An environment variable marks the hand-over, so that a debug build handed
/// to (which should not happen) runs as it is instead of handing over again.
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
                + "`swift build -c release --product Benchmarks` (pass --debug-build to run the debug build).\n"
        )
        do {
            try handOver(arguments: arguments)
        } catch {
            writeError("error: \((error as? Failure)?.message ?? "\(error)")\n")
            throw ExitCode(1)
        }
    }

    private struct Failure: Error {
        let message: String
    }

    private static func handOver(arguments: [String]) throws -> Never {
        let ownExecutable = SwiftDriver.currentExecutablePath()
        let packageRoot = SwiftDriver.packageRoot(above: ownExecutable) {
            FileManager.default.fileExists(atPath: $0 + "/Package.swift")
        }
        guard let packageRoot else {
            throw Failure(
                message: "cannot find the package (no Package.swift above \(ownExecutable ?? "this executable") "
                    + "or in the current directory) to build Benchmarks in release mode; run "
                    + "`swift run -c release Benchmarks` in the package, or pass --debug-build"
            )
        }
        guard let swift = SwiftDriver.find() else {
            throw Failure(
                message: "`swift` is not on PATH, so the release build of Benchmarks cannot be made; "
                    + "put the Swift toolchain on PATH, or pass --debug-build"
            )
        }
        var buildArguments = ["build", "-c", "release", "--product", "Benchmarks", "--package-path", packageRoot]
        if let scratch = scratchPath(executable: ownExecutable) {
            buildArguments += ["--scratch-path", scratch]
        }

        let status = try SwiftDriver.run(swift, buildArguments, output: FileHandle.standardError)
        guard status == 0 else {
            throw Failure(
                message: "the release build failed (`swift \(buildArguments.joined(separator: " "))` exited with "
                    + "status \(status)); fix it, or pass --debug-build to run this debug build"
            )
        }

        let binPathOutput = Pipe()
        let binPathStatus = try SwiftDriver.run(swift, buildArguments + ["--show-bin-path"], output: binPathOutput)
        let binPath = String(decoding: binPathOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard binPathStatus == 0, !binPath.isEmpty else {
            throw Failure(message: "`swift build -c release --show-bin-path` did not tell where the release build is")
        }
        let releaseExecutable = URL(fileURLWithPath: binPath).appendingPathComponent("Benchmarks").path
        guard FileManager.default.isExecutableFile(atPath: releaseExecutable) else {
            throw Failure(message: "the release build left no executable at \(releaseExecutable)")
        }
        if let ownExecutable, SwiftDriver.resolved(releaseExecutable) == ownExecutable {
            throw Failure(message: "the release executable \(releaseExecutable) is this debug build itself")
        }

        setenv(environmentMarker, "1", 1)
        fflush(nil)  // whatever is buffered must not be lost when the process image goes
        let argv = ([releaseExecutable] + arguments).map { strdup($0) } + [nil]
        execv(releaseExecutable, argv)
        let reason = String(cString: strerror(errno))
        argv.forEach { free($0) }
        throw Failure(message: "cannot run \(releaseExecutable): \(reason)")
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
