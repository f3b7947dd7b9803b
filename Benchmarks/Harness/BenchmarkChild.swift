import Foundation

/// A child process of the benchmark failed.
struct BenchmarkChildFailed: Error, CustomStringConvertible {
    var description: String
}

/// Runs this benchmark executable again with `arguments` (a child mode) and returns what
/// it printed on standard output; its standard error (progress) passes through.
func runBenchmarkChild(_ arguments: [String]) throws -> Data {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationReason == .exit, process.terminationStatus == 0 else {
        throw BenchmarkChildFailed(
            description: "\(arguments.joined(separator: " ")): exit \(process.terminationStatus)"
        )
    }
    return data
}
