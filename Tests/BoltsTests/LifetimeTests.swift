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
        #expect(next.completed)
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
        let reports = Recorder<UnobservedTaskError>()
        TaskDiagnostics.setUnobservedErrorHandler { reports.append($0) }
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
        let reports = Recorder<UnobservedTaskError>()
        TaskDiagnostics.setUnobservedErrorHandler { reports.append($0) }
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
