import Foundation
import Testing

/// Runs the `GlobalExecutorChecks` program (built with the tests, next to the test
/// bundle) in a child process: installing a global executor is process-wide, so it cannot
/// happen in this one, where the test runner's own tasks already run on Swift's executor.
private func runChecks(_ mode: String) throws -> (status: Int32, reason: Process.TerminationReason, output: String) {
    let here = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    let program = here.appendingPathComponent("GlobalExecutorChecks")
    guard FileManager.default.isExecutableFile(atPath: program.path) else {
        Issue.record("GlobalExecutorChecks not found at \(program.path)")
        return (-1, .exit, "")
    }
    let process = Process()
    process.executableURL = program
    process.arguments = [mode]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, process.terminationReason, String(decoding: data, as: UTF8.self))
}

@Suite("ThreadPool as Swift Concurrency's global executor (in a child process)")
struct GlobalExecutorTests {
    @Test func everyCheckHoldsWithThePoolInstalled() throws {
        let (status, reason, output) = try runChecks("installed")
        #expect(reason == .exit && status == 0, "\(output)")
        for check in [
            "ok install", "ok unstructured tasks run on the pool",
            "ok async let and nonisolated async functions run on the pool", "ok actors run on the pool",
            "ok task-local values", "ok Task.sleep waits on the pool's timer, for the time asked",
            "ok cancellation", "ok Bolts tasks awaited from async code",
            "ok a worker blocked in async code is compensated",
        ] {
            #expect(output.contains(check + "\n"), "missing: \(check)\n\(output)")
        }
    }

    @Test func installingAfterASwiftTaskRanIsRefused() throws {
        let (status, reason, output) = try runChecks("too-late")
        #expect(reason == .exit && status == 0, "\(output)")
        #expect(output.contains("ok too-late\n"), "\(output)")
    }

    @Test func shuttingDownTheGlobalExecutorTrapsWithAClearMessage() throws {
        let (status, reason, output) = try runChecks("shutdown")
        #expect(output.contains("ok installed, shutting down"), "\(output)")
        #expect(reason == .uncaughtSignal, "exit \(status): \(output)")
        #expect(output.contains("is Swift Concurrency's global executor and cannot be shut down"), "\(output)")
        #expect(!output.contains("FAILED"), "\(output)")
    }
}
