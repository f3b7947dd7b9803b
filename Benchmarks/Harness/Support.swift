import Dispatch
import Foundation
import Synchronization

/// Raised when a scenario's own check of its result fails (it measured the wrong thing).
enum BenchmarkError: Error, CustomStringConvertible {
    case wrongResult(String)

    var description: String {
        switch self {
        case .wrongResult(let what): return "wrong result: \(what)"
        }
    }
}

/// A child process of the benchmark failed.
struct BenchmarkChildFailed: Error, CustomStringConvertible {
    var description: String
}

/// Runs this benchmark executable again with `arguments` (a child mode) and returns what
/// it printed on standard output; its standard error (progress) passes through.
func runBenchmarkChild(_ arguments: [String]) throws -> Data {
    let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
    let (data, status) = try runProcess(executable, arguments)
    guard status == 0 else {
        throw BenchmarkChildFailed(description: "\(arguments.joined(separator: " ")): exit \(status)")
    }
    return data
}

/// The executable `name` in a directory of PATH, or else of `fallbacks`; nil if none has it.
func findExecutable(_ name: String, fallbacks: [String] = []) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    return (path.split(separator: ":").map(String.init) + fallbacks).map { "\($0)/\(name)" }
        .first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// Runs `executable` with `arguments` to its end, its standard output into `output` or else into
/// a pipe whose data this returns (its standard error goes the same way if `mergingErrors`; else
/// it is ours); returns that data and the exit status (128 + the signal if a signal ended it).
func runProcess(
    _ executable: String, _ arguments: [String], output: FileHandle? = nil, mergingErrors: Bool = false
) throws -> (output: Data, status: Int32) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = output == nil ? Pipe() : nil
    process.standardOutput = output ?? pipe
    if mergingErrors { process.standardError = output ?? pipe }
    try process.run()
    let data = pipe?.fileHandleForReading.readDataToEndOfFile() ?? Data()
    process.waitUntilExit()
    return (data, process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus)
}

/// Where a detached Swift task leaves its outcome for the blocked thread that waits on it.
private final class OutcomeBox: Sendable {
    let outcome = Mutex<Result<Sample, any Error>?>(nil)
}

/// Runs `body` in a detached Swift task (on the global concurrent executor) and blocks the
/// calling thread, which is never one of Swift's cooperative threads (the harness runs on
/// the main thread), until it returns.
func runAsync(_ body: @escaping @Sendable () async throws -> Sample) throws -> Sample {
    let box = OutcomeBox()
    let done = DispatchSemaphore(value: 0)
    _Concurrency.Task.detached {
        let result: Result<Sample, any Error>
        do {
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        box.outcome.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    return try box.outcome.withLock { $0! }.get()
}
