// This file imports Bolts, so `Task` here means Bolts' task. It proves that the everyday
// Swift Concurrency spellings still compile and behave.
import Bolts
import Testing

@Suite struct NameClashTests {
    @Test func asyncClosureInitializerRunsAndCompletes() async throws {
        let task = Task { () async -> Int in
            await Task.yield()
            return 41 + 1
        }
        #expect(try await task.value == 42)
        let boltsTask: BoltsTask<Int> = task
        #expect(boltsTask.isCompleted)
    }

    @Test func plainTaskBlockStillCompiles() async throws {
        let done = Task {
            try await Task.sleep(nanoseconds: 1_000_000)
        }
        try await done.value
        #expect(done.isCompleted)
    }

    @Test func forwardedStatics() async throws {
        try await Task.sleep(nanoseconds: 1000)
        try await Task.sleep(for: .milliseconds(1))
        await Task.yield()
        #expect(!Task.isCancelled)
        try Task.checkCancellation()
    }

    @Test func concurrencyTaskIsStillReachable() async {
        let swiftTask = _Concurrency.Task { 5 }
        #expect(await swiftTask.value == 5)
        let handle: _Concurrency.Task<Int, Never> = swiftTask
        _ = handle
    }

    @Test func cancellationOfTheSwiftTaskIsVisibleThroughForwardedStatics() async {
        let swiftTask = _Concurrency.Task {
            while !Task.isCancelled { await Task.yield() }
            return (try? Task.checkCancellation()) == nil
        }
        swiftTask.cancel()
        #expect(await swiftTask.value)
    }

    @Test func boltsTaskAliasIsTheSameType() {
        let task: BoltsTask<Int> = Task(1)
        let same: Task<Int> = task
        #expect(same.result == 1)
    }
}
