import BoltsTestSupport
import Dispatch
import Testing

@testable import Bolts

/// Every delay and timeout takes a Swift `Duration` as well as `Double` seconds, and behaves as
/// the `Double` form given `duration / .seconds(1)`: the same waits, the same outcomes, the same
/// traps for a negative value.
@Suite struct DurationOverloadTests {
    // MARK: Task.withDelay

    @Test func withDelaySucceedsAfterTheDuration() {
        let start = DispatchTime.now()
        let delay = Task.withDelay(.milliseconds(30))
        #expect(delay.waitUntilCompleted(timeout: .seconds(30)))
        #expect(delay.result != nil)
        #expect(secondsElapsed(since: start) >= 0.029)
    }

    @Test func withDelayFromAnyTaskTypeIsATaskOfVoid() {
        let delay: Task<Void> = Task<String>.withDelay(.milliseconds(1))
        #expect(delay.waitUntilCompleted(timeout: .seconds(30)))
        #expect(delay.result != nil)
    }

    @Test func withDelayOfZeroSucceeds() {
        let delay = Task.withDelay(.zero)
        #expect(delay.waitUntilCompleted(timeout: .seconds(30)))
        #expect(delay.result != nil)
    }

    @Test func withDelayIsCancelledAtOnceByItsToken() {
        let source = CancellationTokenSource()
        let delay = Task.withDelay(.seconds(3600), cancellationToken: source.token)
        #expect(!delay.isCompleted)
        source.cancel()
        #expect(delay.isCancelled)
    }

    // MARK: timeout(after:)

    @Test func timeoutFaultsWithTheDurationInSecondsAndCancelsTheSource() {
        let upstream = TaskCompletionSource<Int>()
        let source = CancellationTokenSource()
        let limited = upstream.task.timeout(after: .milliseconds(20), cancelling: source)
        #expect(limited.waitUntilCompleted(timeout: .seconds(30)))
        #expect(limited.error as? TimeoutError == TimeoutError(seconds: 0.02))
        #expect(source.isCancellationRequested)
        upstream.cancel()
    }

    @Test func timeoutPassesOnAnOutcomeThatComesFirst() {
        let upstream = TaskCompletionSource<Int>()
        let limited = upstream.task.timeout(after: .seconds(3600))
        #expect(!limited.isCompleted)
        upstream.set(result: 7)
        #expect(limited.result == 7)
    }

    // MARK: CancellationTokenSource.cancel(after:)

    @Test func cancelAfterZeroCancelsBeforeItReturns() {
        let source = CancellationTokenSource()
        source.cancel(after: .zero)
        #expect(source.isCancellationRequested)
    }

    @Test func cancelAfterADurationCancelsOnceItPasses() {
        let source = CancellationTokenSource()
        let start = DispatchTime.now()
        source.cancel(after: .milliseconds(300))
        let early = source.isCancellationRequested
        // Only a read made before the deadline must see "not yet": on a loaded machine this
        // thread can be descheduled for longer than the delay.
        if secondsElapsed(since: start) < 0.3 { #expect(!early) }
        #expect(eventually(within: 10) { source.isCancellationRequested })
    }

    @Test func cancelAfterADurationKeepsTheEarliestDeadlineOfBothForms() {
        let source = CancellationTokenSource()
        source.cancel(after: 3600)
        source.cancel(after: .milliseconds(20))
        source.cancel(after: .seconds(7200))
        #expect(eventually(within: 10) { source.isCancellationRequested })
    }

    // MARK: waitUntilCompleted(timeout:)

    @Test func waitUntilCompletedReturnsFalseOnceTheDurationPasses() {
        let pending = TaskCompletionSource<Int>()
        let start = DispatchTime.now()
        #expect(!pending.task.waitUntilCompleted(timeout: .milliseconds(20)))
        #expect(secondsElapsed(since: start) >= 0.019)
        #expect(!pending.task.waitUntilCompleted(timeout: .zero))
        pending.set(result: 1)
        #expect(pending.task.waitUntilCompleted(timeout: .zero))
    }

    @Test func waitUntilCompletedReturnsTrueWhenTheTaskEndsInTime() {
        let pending = TaskCompletionSource<Int>()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.01) { pending.set(result: 2) }
        #expect(pending.task.waitUntilCompleted(timeout: .seconds(60)))
        #expect(pending.task.result == 2)
    }

    // MARK: ThreadPool.awaitTermination(timeout:)

    @Test func awaitTerminationWaitsAtMostTheDuration() {
        let pool = ThreadPool(threadCount: 1, name: "term")
        let held = HeldWorker(of: pool)
        pool.shutdown(wait: false)
        let start = DispatchTime.now()
        #expect(!pool.awaitTermination(timeout: .milliseconds(20)))
        #expect(secondsElapsed(since: start) >= 0.019)
        // As with seconds, zero or a negative duration just checks.
        #expect(!pool.awaitTermination(timeout: .zero))
        #expect(!pool.awaitTermination(timeout: .seconds(-1)))
        held.release()
        #expect(pool.awaitTermination(timeout: .seconds(60)))
    }

    // MARK: Negative durations trap as negative seconds do

    @Test func negativeDurationDelayTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Task.withDelay(.milliseconds(-1))
        }
        Self.expectMessage(result, "withDelay(_:) with a negative delay")
    }

    @Test func negativeDurationTimeoutTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = TaskCompletionSource<Int>().task.timeout(after: .nanoseconds(-1))
        }
        Self.expectMessage(result, "timeout(after:) with a negative delay")
    }

    @Test func negativeDurationCancelAfterTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            CancellationTokenSource().cancel(after: .seconds(-1))
        }
        Self.expectMessage(result, "cancel(after:) needs a delay >= 0")
    }

    @Test func negativeDurationWaitTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            waitOnAPendingTask(timeout: .seconds(-1))
        }
        Self.expectMessage(result, "waitUntilCompleted(timeout:) with a negative timeout")
    }

    private static func expectMessage(_ result: ExitTest.Result?, _ message: String) {
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains(message), "stderr was: \(stderr)")
    }
}

/// `waitUntilCompleted(timeout:)` on a task that never ends, from a synchronous function (the
/// wait is not available to the async body of an exit test).
private func waitOnAPendingTask(timeout: Duration) {
    _ = TaskCompletionSource<Int>().task.waitUntilCompleted(timeout: timeout)
}
