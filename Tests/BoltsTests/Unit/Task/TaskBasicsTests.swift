import Dispatch
import Testing

@testable import Bolts

@Suite struct TaskBasicsTests {
    @Test func completedTaskWithValue() {
        let task = Task(5)
        #expect(task.isCompleted)
        #expect(!task.isFaulted)
        #expect(!task.isCancelled)
        #expect(task.result == 5)
        #expect(task.error == nil)
        #expect(task.description == "Task<Int>: success(5)")
    }

    @Test func taskWithError() {
        let task = Task<Int>(error: TestError(7))
        #expect(task.isCompleted)
        #expect(task.isFaulted)
        #expect(!task.isCancelled)
        #expect(task.result == nil)
        #expect(task.error as? TestError == TestError(7))
        #expect(task.description == "Task<Int>: error(TestError(7))")
    }

    @Test func cancelledTask() {
        let task = Task<String>.cancelledTask()
        #expect(task.isCompleted)
        #expect(task.isCancelled)
        #expect(!task.isFaulted)
        #expect(task.result == nil)
        #expect(task.error == nil)
        #expect(task.description == "Task<String>: cancelled")
    }

    @Test func pendingTaskDescription() {
        let tcs = TaskCompletionSource<Int>()
        #expect(!tcs.task.isCompleted)
        #expect(tcs.task.description == "Task<Int>: pending")
        tcs.set(result: 1)
        #expect(tcs.task.description == "Task<Int>: success(1)")
    }

    @Test func completionSourceSetsEachOutcome() {
        let a = TaskCompletionSource<Int>()
        a.set(result: 3)
        #expect(a.task.result == 3)
        let b = TaskCompletionSource<Int>()
        b.set(error: TestError(1))
        #expect(b.task.isFaulted)
        #expect(b.task.error as? TestError == TestError(1))
        let c = TaskCompletionSource<Int>()
        c.cancel()
        #expect(c.task.isCancelled)
    }

    @Test func trySetKeepsTheFirstOutcome() {
        let tcs = TaskCompletionSource<Int>()
        #expect(tcs.trySet(result: 1))
        #expect(!tcs.trySet(result: 2))
        #expect(!tcs.trySet(error: TestError()))
        #expect(!tcs.tryCancel())
        #expect(tcs.task.result == 1)

        let cancelled = TaskCompletionSource<Int>()
        #expect(cancelled.tryCancel())
        #expect(!cancelled.trySet(result: 1))
        #expect(cancelled.task.isCancelled)

        let failed = TaskCompletionSource<Int>()
        #expect(failed.trySet(error: TestError(2)))
        #expect(!failed.tryCancel())
        #expect(failed.task.error as? TestError == TestError(2))
    }

    @Test func taskIsAReferenceType() {
        let tcs = TaskCompletionSource<Int>()
        let a = tcs.task
        let b = tcs.task
        #expect(a === b)
    }

    @Test func executeRunsTheClosureAndCompletes() {
        let task = Task.execute(.immediate) { 40 + 2 }
        #expect(task.result == 42)
        let failing = Task<Int>.execute(.immediate) { throw TestError(3) }
        #expect(failing.error as? TestError == TestError(3))
        let cancelling = Task<Int>.execute(.immediate) { throw CancelledError() }
        #expect(cancelling.isCancelled)
    }

    @Test func executeOnAQueueRunsThere() {
        let queue = DispatchQueue(label: "bolts.test.execute")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 9)
        let task = Task.execute(.queue(queue)) { DispatchQueue.getSpecific(key: key) }
        task.waitUntilCompleted()
        #expect(task.result == 9)
    }

    @Test func executeWithTaskUnwraps() {
        let tcs = TaskCompletionSource<Int>()
        let task = Task.executeWithTask(.immediate) { tcs.task }
        #expect(!task.isCompleted)
        tcs.set(result: 8)
        #expect(task.result == 8)
        let thrown = Task<Int>.executeWithTask(.immediate) { throw TestError(4) }
        #expect(thrown.error as? TestError == TestError(4))
    }

    @Test func waitUntilCompletedBlocksUntilDone() {
        let tcs = TaskCompletionSource<Int>()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { tcs.set(result: 5) }
        tcs.task.waitUntilCompleted()
        #expect(tcs.task.result == 5)
    }

    @Test func timedWaitReportsTimeoutAndCompletion() {
        let tcs = TaskCompletionSource<Int>()
        #expect(!tcs.task.waitUntilCompleted(timeout: 0.02))
        #expect(!tcs.task.waitUntilCompleted(timeout: 0))
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.02) { tcs.set(result: 1) }
        #expect(tcs.task.waitUntilCompleted(timeout: 10))
        #expect(Task(1).waitUntilCompleted(timeout: 0))
    }

    @Test func timedWaitThatGaveUpDoesNotBreakLaterCompletion() {
        // The waiter record outlives the timed-out wait; completion must still be safe.
        for _ in 0..<100 {
            let tcs = TaskCompletionSource<Int>()
            #expect(!tcs.task.waitUntilCompleted(timeout: 0.0001))
            tcs.set(result: 1)
            #expect(tcs.task.waitUntilCompleted(timeout: 0))
        }
    }

    @Test func errorsDescribeThemselves() {
        #expect(String(describing: CancelledError()) == "CancelledError")
        let aggregate = AggregateError(errors: [TestError(1), TestError(2)])
        #expect(aggregate.errors.count == 2)
        #expect(String(describing: aggregate).contains("TestError(2)"))
        #expect(TimeoutError(seconds: 2).seconds == 2)
    }
}

@Suite struct BoltsSwiftSpellingTests {
    @Test func synchronousClosureInitializerRunsInline() {
        let task = Task<String> { "Hello, World!" }
        #expect(task.result == "Hello, World!")
        let failing = Task<Int> { throw TestError(1) }
        #expect(failing.error as? TestError == TestError(1))
        let onQueue = Task(.queue(DispatchQueue(label: "bolts.test.init"))) { 5 }
        onQueue.waitUntilCompleted()
        #expect(onQueue.result == 5)
    }

    @Test func withDelayFromAnyTaskType() {
        let delay: Task<Void> = Task<String>.withDelay(0.001)
        delay.waitUntilCompleted()
        #expect(delay.isCompleted)
        let plain = Task.withDelay(0.001)
        plain.waitUntilCompleted()
        #expect(plain.result != nil)
    }
}
