import Dispatch
import Testing

@testable import Bolts

@Suite struct AsyncTests {
    @Test func valueOfCompletedTasks() async throws {
        #expect(try await Task(3).value == 3)
        await #expect(throws: TestError.self) { try await Task<Int>(error: TestError()).value }
        await #expect(throws: CancellationError.self) { try await Task<Int>.cancelledTask().value }
    }

    @Test func valueWaitsForCompletion() async throws {
        let tcs = TaskCompletionSource<String>()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.02) { tcs.set(result: "late") }
        #expect(try await tcs.task.value == "late")
    }

    @Test func cancelledAwaiterReturnsAtOnceWithoutTouchingTheTask() async throws {
        let tcs = TaskCompletionSource<Int>()
        let waiter = _Concurrency.Task { try await tcs.task.value }
        try await _Concurrency.Task.sleep(nanoseconds: 10_000_000)
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(!tcs.task.completed)
        // Another waiter still gets the real outcome.
        let other = _Concurrency.Task { try await tcs.task.value }
        tcs.set(result: 9)
        #expect(try await other.value == 9)
    }

    @Test func alreadyCancelledAwaiterThrows() async {
        let tcs = TaskCompletionSource<Int>()
        let waiter = _Concurrency.Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await tcs.task.value
        }
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(!tcs.task.completed)
        tcs.set(result: 0)
    }

    @Test func fromAsyncBridgesOutcomes() async throws {
        let ok = Task.fromAsync { () async throws -> Int in
            try await _Concurrency.Task.sleep(nanoseconds: 1_000_000)
            return 7
        }
        #expect(try await ok.value == 7)
        let failed = Task<Int>.fromAsync { throw TestError(2) }
        await #expect(throws: TestError.self) { try await failed.value }
        #expect(failed.error as? TestError == TestError(2))
        let cancelled = Task<Int>.fromAsync { throw CancellationError() }
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(cancelled.cancelled)
    }

    @Test func manyConcurrentAwaitersAllResume() async throws {
        let tcs = TaskCompletionSource<Int>()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<100 { group.addTask { try await tcs.task.value } }
            tcs.set(result: 4)
            var sum = 0
            for try await value in group { sum += value }
            #expect(sum == 400)
        }
    }
}
