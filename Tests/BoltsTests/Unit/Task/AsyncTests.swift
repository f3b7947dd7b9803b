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
        #expect(!tcs.task.isCompleted)
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
        #expect(!tcs.task.isCompleted)
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
        #expect(cancelled.isCancelled)
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

    /// Cancelling the awaiting Swift task races completing the Bolts task, 2,000 times: each
    /// await ends exactly once, with the value or with `CancellationError`, and the awaiter
    /// (which holds the task) is released either way, so the task is freed. (Named so that
    /// the ThreadSanitizer stage's filter leaves it out: TSan cannot see the ordering that
    /// `Synchronization.Mutex`, which guards the awaiter's state, provides on Linux, and
    /// reports the state as racing.)
    @Test func anAwaiterCancelledWhileTheTaskCompletesResumesOnceAndReleasesEverything() async throws {
        var sawValue = 0
        var sawCancellation = 0
        for round in 0..<2_000 {
            weak var weakTask: Task<Int>?
            let outcome: Result<Int, any Error>
            do {
                let source = TaskCompletionSource<Int>()
                weakTask = source.task
                let task = source.task
                let waiter = _Concurrency.Task { try await task.value }
                // Random head starts, so that cancellation lands before, during and after the
                // await suspends, and completion before or after either.
                let cancelSpin = Int.random(in: 0..<20_000)
                let completeSpin = Int.random(in: 0..<20_000)
                let canceller = _Concurrency.Task.detached {
                    spin(cancelSpin)
                    waiter.cancel()
                }
                let completer = _Concurrency.Task.detached {
                    spin(completeSpin)
                    source.set(result: round)
                }
                outcome = await waiter.result
                await canceller.value
                await completer.value
            }
            switch outcome {
            case .success(let value):
                #expect(value == round)
                sawValue += 1
            case .failure(let error):
                #expect(error is CancellationError)
                sawCancellation += 1
            }
            #expect(weakTask == nil, "round \(round): the task outlived its awaiter")
        }
        #expect(sawValue + sawCancellation == 2_000)
    }
}

/// Busy work that the optimizer cannot remove, for head starts in races.
private func spin(_ iterations: Int) {
    var x = 0
    for i in 0..<iterations { x &+= i }
    withExtendedLifetime(x) {}
}
