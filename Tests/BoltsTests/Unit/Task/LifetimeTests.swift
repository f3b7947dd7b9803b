import BoltsTestSupport
import CBoltsRuntime
import Dispatch
import Synchronization
import Testing

@testable import Bolts

@Suite(.serialized) struct LifetimeTests {
    @Test func completedTaskReleasesItsContinuationClosures() {
        let tracker = LifetimeTracker()
        let tcs = TaskCompletionSource<Int>()
        var children: [Task<Int>] = []
        do {
            for _ in 0..<10 {
                let token = tracker.track()
                children.append(
                    tcs.task.continueWith { task in
                        _ = token
                        return task.result!
                    })
                let other = tracker.track()
                children.append(
                    tcs.task.continueOnSuccessWithTask { value in
                        _ = other
                        return Task(value)
                    })
            }
        }
        #expect(tracker.alive == 20)
        tcs.set(result: 1)
        // The antecedent and every child are still alive, but the closures are gone.
        #expect(tracker.alive == 0)
        #expect(children.allSatisfy { $0.result == 1 })
    }

    @Test func continuationOnCompletedTaskReleasesItsClosure() {
        let tracker = LifetimeTracker()
        let task = Task(3)
        let token = tracker.track()
        let next = task.continueWith { _ in _ = token }
        _ = consume token
        #expect(next.isCompleted)
        #expect(tracker.alive == 0)
    }

    @Test func chainOfTasksIsFreedAfterCompletion() {
        weak var weakFirst: Task<Int>?
        weak var weakLast: Task<Int>?
        do {
            let tcs = TaskCompletionSource<Int>()
            var task = tcs.task
            weakFirst = task
            for _ in 0..<1000 { task = task.continueWith { $0.result! + 1 } }
            weakLast = task
            tcs.set(result: 0)
            #expect(task.result == 1000)
        }
        #expect(weakFirst == nil)
        #expect(weakLast == nil)
    }

    @Test func unobservedErrorIsReportedWithFileAndLine() {
        let reports = recordUnobservedErrorsOfThisFile()
        defer { TaskDiagnostics.setUnobservedErrorHandler(nil) }

        do { _ = Task<Int>(error: TestError(11)) }
        let line = #line - 1
        #expect(reports.values.count == 1)
        #expect((reports.values.first?.error as? TestError) == TestError(11))
        #expect(reports.values.first?.file.hasSuffix("LifetimeTests.swift") == true)
        #expect(reports.values.first?.line == line)

        do {
            let tcs = TaskCompletionSource<Int>()
            tcs.set(error: TestError(12))
        }
        #expect(reports.values.count == 2)
    }

    @Test func observedErrorsAreNotReported() {
        let reports = recordUnobservedErrorsOfThisFile()
        defer { TaskDiagnostics.setUnobservedErrorHandler(nil) }

        do { _ = Task<Int>(error: TestError(1)).error }
        do { _ = Task<Int>(error: TestError(2)).continueWith { _ in 0 } }
        do { _ = Task.whenAll([Task<Int>(error: TestError(3))]).continueWith { _ in 0 } }
        do { _ = Task<Int>(error: TestError(4)).continueOnErrorWith { _ in 0 } }
        #expect(reports.values.isEmpty)

        // An error handed through continueOnSuccessWith moves to the next task: only the
        // last, unread one is reported.
        do { _ = Task<Int>(error: TestError(5)).continueOnSuccessWith { $0 } }
        #expect(reports.values.count == 1)
        #expect((reports.values.first?.error as? TestError) == TestError(5))
    }
}

@Suite struct AbandonedTaskTests {
    @Test func timedOutWaiterOnAnAbandonedTaskIsFreed() {
        // The waiter record outlives a timed-out wait; if the task is then abandoned, the
        // record must be freed by the task's destruction (AddressSanitizer checks this).
        for _ in 0..<10 {
            let source = TaskCompletionSource<Int>()
            #expect(!source.task.waitUntilCompleted(timeout: 0.0001))
        }
    }
}

/// A continuation step that does not hold its antecedent, so the antecedent can be abandoned
/// while the step is parked; `Padding` makes it fit the payload or not.
private struct ParkedTestStep<Padding: Sendable>: _ContinuationStep {
    let token: LifetimeTracker.Token
    let padding: Padding
    let value: Int
    var probe: @Sendable () -> Int = { 0 }

    typealias Next = Int

    func perform(_ next: Task<Int>) {
        _ = token
        next._trySet(value: value + probe())
    }
}

/// The two ways a parked step ends: it runs (moved out of the payload, or out of its heap
/// box when it does not fit), or the task it waits on is abandoned and it is destroyed
/// unrun. Either way the step, and what it holds, is released exactly once.
@Suite(.serialized) struct ParkedStepTests {
    typealias Small = Int
    typealias Large = (Int, Int, Int, Int, Int, Int, Int, Int)

    @Test func theTestStepsParkInlineAndBoxed() {
        #expect(ParkedTestStep<Small>._parksInline)
        #expect(!ParkedTestStep<Large>._parksInline)
    }

    @Test func theStepIsParkedAfterTheWholeExecutorAndAligned() {
        #expect(_parkedStepOffset >= MemoryLayout<Executor>.size)
        #expect(_parkedStepOffset % 16 == 0)
        // Room for at least a pointer to a boxed step after the executor.
        #expect(_parkedStepOffset + MemoryLayout<UnsafeMutableRawPointer>.size <= Int(BOLTS_TASK_PAYLOAD_SIZE))
    }

    private func runsOnce<Padding: Sendable>(padding: Padding) {
        let tracker = LifetimeTracker()
        let source = TaskCompletionSource<Int>()
        let next = Task<Int>(_pendingAt: #fileID, line: #line)
        next._await(source.task, .default, ParkedTestStep(token: tracker.track(), padding: padding, value: 42))
        #expect(tracker.alive == 1)
        #expect(!next.isCompleted)
        source.set(result: 0)
        #expect(next.result == 42)
        #expect(tracker.alive == 0)
    }

    @Test func aParkedStepRunsAndIsReleased() {
        runsOnce(padding: 7 as Small)
        runsOnce(padding: (1, 2, 3, 4, 5, 6, 7, 8) as Large)
    }

    private func discardedOnce<Padding: Sendable>(padding: Padding) {
        let tracker = LifetimeTracker()
        weak var weakNext: Task<Int>?
        do {
            let source = TaskCompletionSource<Int>()
            let next = Task<Int>(_pendingAt: #fileID, line: #line)
            weakNext = next
            next._await(source.task, .default, ParkedTestStep(token: tracker.track(), padding: padding, value: 1))
            #expect(tracker.alive == 1)
        }
        // The source and its task are gone while pending: the waiting task was released by
        // the job's drop, and its parked step destroyed unrun.
        #expect(weakNext == nil)
        #expect(tracker.alive == 0)
    }

    @Test func aParkedStepIsDestroyedWhenWhatItWaitsOnIsAbandoned() {
        discardedOnce(padding: 7 as Small)
        discardedOnce(padding: (1, 2, 3, 4, 5, 6, 7, 8) as Large)
    }

    @Test func aParkedStepRunsOnItsScheduledExecutor() {
        let tracker = LifetimeTracker()
        let queue = DispatchQueue(label: "parked")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 1)
        let source = TaskCompletionSource<Int>()
        let next = Task<Int>(_pendingAt: #fileID, line: #line)
        let step = ParkedTestStep(token: tracker.track(), padding: 0, value: 5) {
            DispatchQueue.getSpecific(key: key) == 1 ? 100 : 0
        }
        next._await(source.task, .queue(queue), step)
        _ = consume step
        source.set(result: 0)
        #expect(next.waitUntilCompleted(timeout: 10))
        #expect(next.result == 105)  // 100: the step ran on the queue
        queue.sync {}  // the queue's closure has returned and released the step
        #expect(tracker.alive == 0)
    }
}

/// Installs an unobserved-error handler that records the reports of tasks made in this
/// file only: the handler is process-wide and other suites run in parallel.
private func recordUnobservedErrorsOfThisFile() -> Recorder<UnobservedTaskError> {
    let reports = Recorder<UnobservedTaskError>()
    TaskDiagnostics.setUnobservedErrorHandler {
        if $0.file.hasSuffix("LifetimeTests.swift") { reports.append($0) }
    }
    return reports
}
