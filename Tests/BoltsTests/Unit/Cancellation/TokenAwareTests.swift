import BoltsTestSupport
import Dispatch
import Foundation
import Testing

@testable import Bolts

/// Token-aware continuations, delays and timeouts (the eager semantics of DESIGN.md).
@Suite struct TokenAwareTests {
    @Test func alreadyCancelledTokenGivesACancelledTaskAndNoRun() {
        let cts = CancellationTokenSource()
        cts.cancel()
        let ran = Counter()
        let next = Task(1).continueWith(cancellationToken: cts.token) { _ in ran.increment() }
        #expect(next.isCancelled)
        #expect(ran.value == 0)
    }

    @Test func cancellingWhileWaitingCancelsAtOnce() {
        let cts = CancellationTokenSource()
        let tcs = TaskCompletionSource<Int>()
        let ran = Counter()
        let next = tcs.task.continueWith(cancellationToken: cts.token) { _ in ran.increment() }
        #expect(!next.isCompleted)
        cts.cancel()
        #expect(next.isCancelled)  // at once, while the antecedent is still pending
        tcs.set(result: 1)
        #expect(ran.value == 0)
        #expect(next.isCancelled)
    }

    @Test func everyFormHonoursTheToken() {
        let cts = CancellationTokenSource()
        let tcs = TaskCompletionSource<Int>()
        let token = cts.token
        let tasks: [Task<Int>] = [
            tcs.task.continueWith(cancellationToken: token) { $0.result! },
            tcs.task.continueWithTask(cancellationToken: token) { $0 },
            tcs.task.continueOnSuccessWith(cancellationToken: token) { $0 },
            tcs.task.continueOnSuccessWithTask(cancellationToken: token) { Task($0) },
            tcs.task.continueOnErrorWith(cancellationToken: token) { _ in 0 },
            tcs.task.continueOnErrorWithTask(cancellationToken: token) { _ in Task(0) },
        ]
        cts.cancel()
        #expect(tasks.allSatisfy { $0.isCancelled })
        tcs.set(result: 1)
        #expect(tasks.allSatisfy { $0.isCancelled })
    }

    @Test func uncancelledTokenLetsTheContinuationRun() {
        let cts = CancellationTokenSource()
        let tcs = TaskCompletionSource<Int>()
        let next = tcs.task.continueWith(cancellationToken: cts.token) { $0.result! + 1 }
        tcs.set(result: 1)
        #expect(next.result == 2)
        cts.cancel()
        #expect(next.result == 2)
    }

    @Test func cancellingWhileTheReturnedTaskIsPendingCancels() {
        let cts = CancellationTokenSource()
        let inner = TaskCompletionSource<Int>()
        let next = Task(1).continueWithTask(cancellationToken: cts.token) { _ in inner.task }
        #expect(!next.isCompleted)
        cts.cancel()
        #expect(next.isCancelled)
        inner.set(result: 5)
        #expect(next.isCancelled)
    }

    @Test func tokenOnAQueueExecutorCancelledBeforeTheJobRuns() {
        let cts = CancellationTokenSource()
        let queue = DispatchQueue(label: "bolts.test.token")
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        let ran = Counter()
        let next = Task(1).continueWith(.queue(queue), cancellationToken: cts.token) { _ in ran.increment() }
        cts.cancel()
        gate.signal()
        queue.sync {}
        #expect(next.isCancelled)
        #expect(ran.value == 0)
    }

    @Test func registrationsAreRemovedWhenContinuationsComplete() {
        // 10^6 continuations on one long-lived token: the list must not grow.
        let cts = CancellationTokenSource()
        let count = 1_000_000
        for _ in 0..<count {
            let tcs = TaskCompletionSource<Int>()
            let next = tcs.task.continueWith(cancellationToken: cts.token) { $0.result! }
            tcs.set(result: 1)
            _ = next
        }
        #expect(cts.token._registrationCount == 0)
        let pending = (0..<10).map { _ in TaskCompletionSource<Int>() }
        let waiting = pending.map { $0.task.continueWith(cancellationToken: cts.token) { $0.result! } }
        #expect(cts.token._registrationCount == 10)
        for source in pending { source.set(result: 0) }
        #expect(cts.token._registrationCount == 0)
        #expect(waiting.allSatisfy { $0.result == 0 })
    }

    @Test func tokenCancelRacesCompletion() {
        let rounds = 5_000 * stressScale
        var bad = 0
        for _ in 0..<rounds {
            let cts = CancellationTokenSource()
            let tcs = TaskCompletionSource<Int>()
            let ran = Counter()
            let next = tcs.task.continueWith(cancellationToken: cts.token) { _ in ran.increment() }
            DispatchQueue.concurrentPerform(iterations: 2) { i in
                if i == 0 { cts.cancel() } else { tcs.set(result: 1) }
            }
            next.waitUntilCompleted()
            // Either outcome is allowed, but never both, and a cancelled task never ran.
            if next.isCancelled && ran.value != 0 && next.result != nil { bad += 1 }
            if !next.isCancelled && ran.value != 1 { bad += 1 }
        }
        #expect(bad == 0)
    }

    @Test func withDelaySucceedsLater() {
        let start = DispatchTime.now()
        let delay = Task<Void>.withDelay(0.05)
        let early = delay.isCompleted
        // "Not yet" only holds for a read made before the deadline (this thread can be
        // descheduled for longer than the delay on a loaded machine).
        if secondsElapsed(since: start) < 0.05 { #expect(!early) }
        delay.waitUntilCompleted()
        #expect(delay.result != nil)
        #expect(secondsElapsed(since: start) >= 0.04)
    }

    @Test func withDelayCancelledAtOnce() {
        let cts = CancellationTokenSource()
        let delay = Task<Void>.withDelay(10, cancellationToken: cts.token)
        cts.cancel()
        #expect(delay.isCancelled)
        let pre = CancellationTokenSource()
        pre.cancel()
        #expect(Task<Void>.withDelay(10, cancellationToken: pre.token).isCancelled)
    }

    @Test func withDelayReleasesItsRegistration() {
        let cts = CancellationTokenSource()
        let delay = Task<Void>.withDelay(0.001, cancellationToken: cts.token)
        delay.waitUntilCompleted()
        #expect(delay.result != nil)
        // The registration is disposed by a job that runs on the completing thread after
        // the task is marked complete, so wait for it rather than sample it.
        #expect(eventually(within: 10) { cts.token._registrationCount == 0 })
    }

    @Test func timeoutFaultsWithTimeoutErrorAndCancelsTheSource() {
        let cts = CancellationTokenSource()
        let tcs = TaskCompletionSource<Int>()
        let limited = tcs.task.timeout(after: 0.02, cancelling: cts)
        limited.waitUntilCompleted()
        #expect(limited.error is TimeoutError)
        #expect(cts.isCancellationRequested)
        tcs.set(result: 1)
        #expect(limited.error is TimeoutError)
    }

    @Test func timeoutPassesTheOutcomeWhenTheTaskWins() {
        let cts = CancellationTokenSource()
        let tcs = TaskCompletionSource<Int>()
        let limited = tcs.task.timeout(after: 5, cancelling: cts)
        tcs.set(result: 3)
        #expect(limited.result == 3)
        #expect(!cts.isCancellationRequested)
        let failing = TaskCompletionSource<Int>()
        let limitedFailure = failing.task.timeout(after: 5)
        failing.set(error: TestError(1))
        #expect(limitedFailure.error as? TestError == TestError(1))
        #expect(Task(1).timeout(after: 0).result == 1)
    }

    @Test func timeoutReleasesTheUpstreamWhenTheTimerWins() {
        weak var weakUpstream: Task<Int>?
        let limited: Task<Int>
        do {
            let tcs = TaskCompletionSource<Int>()
            weakUpstream = tcs.task
            limited = tcs.task.timeout(after: 0.01)
        }
        limited.waitUntilCompleted()
        #expect(limited.error is TimeoutError)
        #expect(weakUpstream == nil)
    }

    @Test func timeoutReleasesTheTimerWhenTheTaskWins() {
        // The timer's handler is the only holder of the source: once the task wins, the
        // timer is cancelled and the source must go away with the handler.
        weak var weakSource: CancellationTokenSource?
        let tcs = TaskCompletionSource<Int>()
        let limited: Task<Int>
        do {
            let cts = CancellationTokenSource()
            weakSource = cts
            limited = tcs.task.timeout(after: 60, cancelling: cts)
        }
        #expect(weakSource != nil)
        tcs.set(result: 1)
        #expect(limited.result == 1)
        // Dispatch releases a cancelled source's handler on its queue, shortly after.
        #expect(eventually(within: 30) { weakSource == nil })
    }
}
