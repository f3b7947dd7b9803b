import Foundation

/// A framework's server executable (`Framework.product`), built from its nested package
/// (`Framework.packageDirectory`) once per run, before anything is measured.
///
/// The nested package keeps the framework out of the root package's build; it depends on the
/// root by path, so the server measures the Bolts of this checkout. The root is found as
/// `ReleaseHandOver` finds it (`SwiftDriver.packageRoot`): the nearest directory above this
/// executable (or else the current directory) that holds a Package.swift, here also required to
/// hold the nested package. The build runs `swift build -c <configuration> --package-path
/// <root>/<package directory>` with its output on stderr (a first build compiles the framework
/// and its dependencies: minutes; later ones only what changed), then asks `--show-bin-path`
/// where the executable is. The configuration is this executable's own: release, except in a
/// harness run with `--debug-build`, whose numbers are meaningless anyway and which is there to
/// exercise the harness (CI's smoke run), so the server is not compiled a second time optimised.
enum FrameworkServerBuild {
    /// Why the server could not be built; the section is skipped with this reason.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The built executable and how long the build took.
    struct Built {
        var executable: String
        var seconds: Double
    }

    /// Builds `framework`'s server in this executable's configuration and returns where it
    /// is, or throws why it could not.
    static func build(_ framework: Framework) throws -> Built {
        let packageDirectory = framework.packageDirectory
        let product = framework.product
        let files = FileManager.default
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
        let package = root + "/" + packageDirectory
        let configuration = isDebugBuild ? "debug" : "release"
        let arguments = ["build", "-c", configuration, "--package-path", package, "--product", product]
        writeError("Building the \(framework.name) server: swift \(arguments.joined(separator: " "))\n")
        let start = now()
        let status = try SwiftDriver.run(swift, arguments, output: FileHandle.standardError)
        let seconds = Double(now() &- start) / 1e9
        guard status == 0 else {
            throw Failure(description: "`swift \(arguments.joined(separator: " "))` exited with status \(status)")
        }
        let binPath = Pipe()
        let binPathStatus = try SwiftDriver.run(swift, arguments + ["--show-bin-path"], output: binPath)
        let directory = String(decoding: binPath.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let executable = directory + "/" + product
        guard binPathStatus == 0, FileManager.default.isExecutableFile(atPath: executable) else {
            throw Failure(description: "the build left no executable at \(executable)")
        }
        writeError("Built the \(framework.name) server in \(seconds.fixed(1)) s: \(executable)\n")
        return Built(executable: executable, seconds: seconds)
    }
}
