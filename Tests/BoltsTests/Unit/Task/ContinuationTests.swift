import BoltsTestSupport
import CBoltsRuntime
import Dispatch
import Foundation
import Testing

@testable import Bolts

@Suite struct ContinuationTests {
    @Test func continueWithOnCompletedTaskRunsAtOnce() {
        let next = Task(2).continueWith { $0.result! * 10 }
        #expect(next.result == 20)
    }

    @Test func continueWithWaitsForCompletion() {
        let tcs = TaskCompletionSource<Int>()
        let ran = Counter()
        let next = tcs.task.continueWith { task -> String in
            ran.increment()
            return "got \(task.result!)"
        }
        #expect(!next.isCompleted)
        #expect(ran.value == 0)
        tcs.set(result: 4)
        #expect(next.result == "got 4")
        #expect(ran.value == 1)
    }

    @Test func continueWithReceivesErrorsAndCancellation() {
        let failed = Task<Int>(error: TestError(1)).continueWith { $0.error as? TestError }
        #expect(failed.result == TestError(1))
        let cancelled = Task<Int>.cancelledTask().continueWith { $0.isCancelled }
        #expect(cancelled.result == true)
    }

    @Test func thrownErrorFaultsTheNewTask() {
        let next = Task(1).continueWith { _ -> Int in throw TestError(9) }
        #expect(next.isFaulted)
        #expect(next.error as? TestError == TestError(9))
    }

    @Test func thrownCancelledErrorCancelsTheNewTask() {
        let a = Task(1).continueWith { _ -> Int in throw CancelledError() }
        #expect(a.isCancelled)
        let b = Task(1).continueWith { _ -> Int in throw CancellationError() }
        #expect(b.isCancelled)
        #expect(!b.isFaulted)
    }

    @Test func returnedTaskIsUnwrapped() {
        let inner = TaskCompletionSource<String>()
        let outer = Task(1).continueWithTask { _ in inner.task }
        #expect(!outer.isCompleted)
        inner.set(result: "x")
        #expect(outer.result == "x")

        let innerFailure = TaskCompletionSource<String>()
        let failing = Task(1).continueWithTask { _ in innerFailure.task }
        innerFailure.set(error: TestError(5))
        #expect(failing.error as? TestError == TestError(5))

        let innerCancel = TaskCompletionSource<String>()
        let cancelling = Task(1).continueWithTask { _ in innerCancel.task }
        innerCancel.cancel()
        #expect(cancelling.isCancelled)
    }

    @Test func returnedCompletedTaskEndsTheNewTaskAtOnce() {
        let outer = Task(1).continueWithTask { _ in Task("done") }
        #expect(outer.result == "done")
        let thrown = Task(1).continueWithTask { _ -> Task<Int> in throw TestError(2) }
        #expect(thrown.error as? TestError == TestError(2))
    }

    @Test func continueOnSuccessSkipsFailuresAndCancellation() {
        let ran = Counter()
        let ok = Task(3).continueOnSuccessWith { value -> Int in
            ran.increment()
            return value + 1
        }
        #expect(ok.result == 4)
        let failed = Task<Int>(error: TestError(2)).continueOnSuccessWith { value -> Int in
            ran.increment()
            return value
        }
        #expect(failed.error as? TestError == TestError(2))
        let cancelled = Task<Int>.cancelledTask().continueOnSuccessWith { value -> Int in
            ran.increment()
            return value
        }
        #expect(cancelled.isCancelled)
        #expect(ran.value == 1)
    }

    @Test func continueOnSuccessWithTaskUnwraps() {
        let inner = TaskCompletionSource<Int>()
        let next = Task(3).continueOnSuccessWithTask { _ in inner.task }
        inner.set(result: 30)
        #expect(next.result == 30)
        let failed = Task<Int>(error: TestError(1)).continueOnSuccessWithTask { _ in Task(0) }
        #expect(failed.error as? TestError == TestError(1))
        let thrown = Task(1).continueOnSuccessWithTask { _ -> Task<Int> in throw CancelledError() }
        #expect(thrown.isCancelled)
    }

    @Test func continueOnErrorRecoversAndPassesOtherOutcomes() {
        let recovered = Task<Int>(error: TestError(4)).continueOnErrorWith { error in (error as! TestError).code * 2 }
        #expect(recovered.result == 8)
        let passed = Task(5).continueOnErrorWith { _ in 0 }
        #expect(passed.result == 5)
        let cancelled = Task<Int>.cancelledTask().continueOnErrorWith { _ in 0 }
        #expect(cancelled.isCancelled)
        let rethrown = Task<Int>(error: TestError(1)).continueOnErrorWith { _ -> Int in throw TestError(2) }
        #expect(rethrown.error as? TestError == TestError(2))
    }

    struct OtherError: Error {}

    @Test func typedContinueOnErrorHandlesOnlyItsType() {
        let handled = Task<Int>(error: TestError(6)).continueOnErrorWith { (error: TestError) in error.code }
        #expect(handled.result == 6)
        let passed = Task<Int>(error: OtherError()).continueOnErrorWith { (error: TestError) in error.code }
        #expect(passed.error is OtherError)
    }

    @Test func continueOnErrorWithTaskForms() {
        let inner = TaskCompletionSource<Int>()
        let untyped = Task<Int>(error: TestError(1)).continueOnErrorWithTask { _ in inner.task }
        #expect(!untyped.isCompleted)
        inner.set(result: 11)
        #expect(untyped.result == 11)
        let typed = Task<Int>(error: TestError(2)).continueOnErrorWithTask { (error: TestError) in Task(error.code) }
        #expect(typed.result == 2)
        let other = Task<Int>(error: OtherError()).continueOnErrorWithTask { (error: TestError) in Task(error.code) }
        #expect(other.error is OtherError)
        let success = Task(3).continueOnErrorWithTask { _ in Task(0) }
        #expect(success.result == 3)
    }

    @Test func continuationsRunInRegistrationOrder() {
        let tcs = TaskCompletionSource<Int>()
        let order = Recorder<Int>()
        for i in 0..<50 { tcs.task.continueWith { _ in order.append(i) } }
        tcs.set(result: 0)
        #expect(order.values == Array(0..<50))
    }

    @Test func defaultExecutorRunsInlineOnTheCompletingThread() {
        let tcs = TaskCompletionSource<Int>()
        let thread = Recorder<UInt>()
        tcs.task.continueWith { _ in thread.append(currentThreadID()) }
        runOnThread(stackSize: 1 << 20) {
            thread.append(currentThreadID())
            tcs.set(result: 1)
        }
        #expect(thread.values.count == 2)
        #expect(thread.values[0] == thread.values[1])
    }

    @Test func continuationOnAQueueRunsOnThatQueue() {
        let queue = DispatchQueue(label: "bolts.test.continuation")
        let key = DispatchSpecificKey<String>()
        queue.setSpecific(key: key, value: "mine")
        let next = Task(1).continueWith(.queue(queue)) { _ in DispatchQueue.getSpecific(key: key) }
        next.waitUntilCompleted()
        #expect(next.result == "mine")
    }

    @Test func operationQueueAndClosureExecutors() {
        let operations = OperationQueue()
        operations.name = "ops"
        let viaOperations = Task(2).continueWith(.operationQueue(operations)) { $0.result! + 1 }
        viaOperations.waitUntilCompleted()
        #expect(viaOperations.result == 3)

        let calls = Counter()
        let closure = Executor.closure { job in
            calls.increment()
            job()
        }
        #expect(Task(1).continueWith(closure) { $0.result! }.result == 1)
        #expect(calls.value == 1)

        let queued = Recorder<String>()
        let escaping = Executor.escapingClosure { job in
            queued.append("scheduled")
            DispatchQueue.global().async(execute: job)
        }
        let later = Task(4).continueWith(escaping) { $0.result! * 2 }
        later.waitUntilCompleted()
        #expect(later.result == 8)
        #expect(queued.values == ["scheduled"])
    }

    @Test func userDefinedExecutor() {
        let scheduled = Counter()
        let executor = Executor { job in
            scheduled.increment()
            DispatchQueue.global().async(execute: job)
        }
        let next = Task(1).continueWith(executor) { $0.result! + 1 }
        next.waitUntilCompleted()
        #expect(next.result == 2)
        #expect(scheduled.value == 1)
        #expect(executor.description == "Custom Executor")
    }

    @Test func executorDescriptions() {
        #expect(Executor.default.description == "Default Executor")
        #expect(Executor.immediate.description == "Immediate Executor")
        #expect(Executor.mainThread.description == "Main Thread Executor")
        #expect(Executor.queue(DispatchQueue(label: "q1")).description == "Queue Executor: q1")
        #expect(Executor.closure { $0() }.description == "Closure Executor")
        #expect(Executor.escapingClosure { $0() }.description == "Escaping Closure Executor")
        #expect(Executor.trampolineInlineDepth == 20)
        #expect(Executor.pool(.shared).description == "ThreadPool Executor: bolts")
        let pool = ThreadPool(threadCount: 1, name: "described")
        #expect(Executor.pool(pool).description == "ThreadPool Executor: described")
        pool.shutdown(wait: true)
    }

    /// `.pool(.shared)` carries no object (its C pool is found through a global), another
    /// pool's executor keeps that pool; both run jobs, continuations and `Task.execute` on
    /// their own pool's workers.
    @Test func poolExecutorsRunOnTheirPool() {
        let other = ThreadPool(threadCount: 1, name: "other")
        defer { other.shutdown(wait: true) }
        for (executor, pool) in [(Executor.pool(.shared), ThreadPool.shared), (Executor.pool(other), other)] {
            let ran = TaskCompletionSource<Bool>()
            executor.execute { ran.set(result: bolts_pool_current() == pool._pool) }
            #expect(ran.task.waitUntilCompleted(timeout: 30))
            #expect(ran.task.result == true)
            let executed = Task<Bool>.execute(executor) { bolts_pool_current() == pool._pool }
            let continued = executed.continueWith(executor) { _ in bolts_pool_current() == pool._pool }
            #expect(continued.waitUntilCompleted(timeout: 30))
            #expect(executed.result == true)
            #expect(continued.result == true)
        }
    }

    @Test func executorExecuteRunsTheJob() {
        let ran = Counter()
        Executor.immediate.execute { ran.increment() }
        #expect(ran.value == 1)
    }

    @Test func mainThreadExecutorEnqueuesFromOtherThreads() {
        // From a non-main thread the job goes to the main queue; whether the test runner
        // serves the main queue or not, it must not run inline on this thread.
        let ranInline = Counter()
        runOnThread(stackSize: 1 << 20) {
            let me = currentThreadID()
            Executor.mainThread.execute { if currentThreadID() == me { ranInline.increment() } }
        }
        #expect(ranInline.value == 0)
    }
}
