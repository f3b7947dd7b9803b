import BoltsTestSupport
import CGlobalExecutorSwitch
import Foundation
import Testing

private func run(
    _ program: URL,
    _ arguments: [String],
    environment: [String: String]? = nil
) throws -> (status: Int32, reason: Process.TerminationReason, output: String) {
    try runChildProcess(program, arguments, environment: environment)
}

/// This test runner's own executable.
private var testRunner: URL { testRunnerExecutable }

/// Runs a checks program (`GlobalExecutorChecks` by default; built with the tests, next to
/// the test runner) in a child process: installing a global executor is process-wide, so it
/// cannot happen in this one, where the test runner's own tasks already run on Swift's
/// executor.
private func runChecks(
    _ arguments: String...,
    program name: String = "GlobalExecutorChecks"
) throws -> (status: Int32, reason: Process.TerminationReason, output: String) {
    let program = testRunner.deletingLastPathComponent().appendingPathComponent(name)
    guard FileManager.default.isExecutableFile(atPath: program.path) else {
        Issue.record("\(name) not found at \(program.path)")
        return (-1, .exit, "")
    }
    return try run(program, arguments)
}

@Suite("ThreadPool as Swift Concurrency's global executor (in a child process)")
struct GlobalExecutorTests {
    /// The project's own async test suites, run again by a child of this test runner that
    /// installed a Bolts pool as the global executor before its first task (see
    /// Tests/CGlobalExecutorSwitch).
    @Test func theProjectsAsyncTestsPassWithAPoolInstalled() throws {
        guard !bolts_test_global_executor_installed() else { return }  // already the child
        var environment = ProcessInfo.processInfo.environment
        environment["BOLTS_TEST_GLOBAL_EXECUTOR"] = "1"
        let (status, reason, output) = try run(
            testRunner,
            [
                "--testing-library", "swift-testing",
                "--filter", "AsyncTests|ThreadPoolTaskExecutorTests|SerialPoolExecutor|TaskExecuteOnPoolTests",
            ],
            environment: environment
        )
        #expect(output.contains("a Bolts pool is Swift Concurrency's global executor"), "\(output)")
        #expect(reason == .exit && status == 0, "\(output)")
        #expect(output.contains("Suite AsyncTests passed"), "\(output)")
    }

    @Test func everyCheckHoldsWithThePoolInstalled() throws {
        let (status, reason, output) = try runChecks("installed")
        #expect(reason == .exit && status == 0, "\(output)")
        for check in [
            "ok install", "ok unstructured tasks run on the pool",
            "ok async let and nonisolated async functions run on the pool", "ok actors run on the pool",
            "ok task-local values", "ok Task.sleep waits on the pool's timer, for the time asked",
            "ok cancellation", "ok Swift's default executor is the pool: yields, globalConcurrentExecutor",
            "ok Bolts tasks awaited from async code",
            "ok a worker blocked in async code is compensated",
        ] {
            #expect(output.contains(check + "\n"), "missing: \(check)\n\(output)")
        }
    }

    /// An async `main`, as servers start, installs the pool as its first statement: the
    /// install is accepted (its main task runs on the main actor, not on the global
    /// executor), and the tasks it starts then run on the pool (Tests/GlobalExecutorAsyncMainChecks).
    @Test func installingFromTheFirstStatementOfAnAsyncMainRunsItsTasksOnThePool() throws {
        let (status, reason, output) = try runChecks(program: "GlobalExecutorAsyncMainChecks")
        #expect(reason == .exit && status == 0, "\(output)")
        for check in [
            "ok install from the first statement of an async main", "ok a detached task runs on the pool",
            "ok task-group children run on the pool", "ok async let runs on the pool",
            "ok Swift's default executor is the pool", "ok main stays on the main actor",
            "ok a second install is refused",
        ] {
            #expect(output.contains(check + "\n"), "missing: \(check)\n\(output)")
        }
    }

    /// The README's install from an async `main` (Tests/ReadmeExamples/ReadmeGlobalExecutorExample,
    /// the block verbatim) is accepted: it calls `fatalError` when the install is refused.
    @Test func theReadmesInstallFromAnAsyncMainIsAccepted() throws {
        let (status, reason, output) = try runChecks(program: "ReadmeGlobalExecutorExample")
        #expect(reason == .exit && status == 0, "\(output)")
    }

    @Test func installingAfterASwiftTaskRanIsRefused() throws {
        let (status, reason, output) = try runChecks("too-late")
        #expect(reason == .exit && status == 0, "\(output)")
        #expect(output.contains("ok too-late\n"), "\(output)")
    }

    /// Tasks started an instant before the install, whose Dispatch threads do not run yet,
    /// are seen: the install is refused, and they run on Swift's default executor.
    @Test func installingJustAfterStartingATaskIsRefused() throws {
        let (status, reason, output) = try runChecks("just-after-a-task")
        #expect(reason == .exit && status == 0, "\(output)")
        #expect(output.contains("ok just-after-a-task\n"), "\(output)")
    }

    @Test func shuttingDownTheGlobalExecutorTrapsWithAClearMessage() throws {
        let (status, reason, output) = try runChecks("shutdown")
        #expect(output.contains("ok installed, shutting down"), "\(output)")
        #expect(reason == .uncaughtSignal, "exit \(status): \(output)")
        #expect(output.contains("is Swift Concurrency's global executor and cannot be shut down"), "\(output)")
        #expect(!output.contains("FAILED"), "\(output)")
    }
}
