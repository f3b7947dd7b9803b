import Foundation

/// Runs `program` with `arguments` (and `environment`, if given) to its end and returns
/// its exit status, how it ended, and its standard output and error together.
package func runChildProcess(
    _ program: URL,
    _ arguments: [String],
    environment: [String: String]? = nil
) throws -> (status: Int32, reason: Process.TerminationReason, output: String) {
    let process = Process()
    process.executableURL = program
    process.arguments = arguments
    if let environment { process.environment = environment }
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, process.terminationReason, String(decoding: data, as: UTF8.self))
}

/// The running test runner's own executable; programs built with the tests sit beside it.
package var testRunnerExecutable: URL { URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath() }
