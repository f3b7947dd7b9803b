import CBoltsRuntime
import Dispatch
import Synchronization

extension Task {
    /// The token-carrying form of `_continue`: the returned task is cancelled at once when
    /// `token` is cancelled before it ends, and `step` then never runs. The registration
    /// is disposed as soon as the returned task ends, so a long-lived token does not grow.
    @usableFromInline
    internal func _continue<U, Step: _ContinuationStep>(
        _ executor: Executor,
        token: CancellationToken,
        file: StaticString,
        line: UInt,
        _ step: Step
    ) -> Task<U> where Step.Next == U {
        if token.isCancellationRequested { return Task<U>.cancelledTask() }
        let next = Task<U>(_pendingAt: file, line: line)
        let runNow = executor._runsInline && _isSettled
        if runNow {
            // Runs at once; the token matters only if the step left `next` waiting on a
            // returned task.
            step.perform(next)
            if next.isCompleted { return next }
        }
        if let registration = token._register({ next._tryCancel() }) {
            _whenComplete(next) { registration.disposeAndRelease() }
        }
        if runNow || next.isCompleted { return next }
        next._await(self, executor, _TokenGuardedStep(step: step, token: token))
        return next
    }

    /// A task that ends as this one does, unless `seconds` pass first: then it fails with
    /// ``TimeoutError`` and `source` (if given) is cancelled, before the returned task
    /// completes (so a continuation that sees the timeout sees the source cancelled; a
    /// cancellation handler of `source` must therefore not block on the returned task).
    /// Whichever side wins releases
    /// the other: the timer is cancelled when this task ends first, and the returned task
    /// holds no reference to this one.
    public func timeout(
        after seconds: Double,
        cancelling source: CancellationTokenSource? = nil,
        file: StaticString = #fileID,
        line: UInt = #line
    ) -> Task<T> {
        precondition(seconds >= 0 && !seconds.isNaN, "timeout(after:) with a negative delay")
        if isCompleted { return self }
        let result = Task<T>(_pendingAt: file, line: line)
        // The link is the only path from the waiting callback to this task; whichever side
        // wins empties it, so a timer that fires releases this task even if it never ends.
        let link = _TimeoutLink(self)
        let timer = _OneShotTimer(after: seconds) {
            _ = link.take()
            // Claim first, cancel the source, then publish: whoever sees the TimeoutError
            // also sees the source cancelled.
            guard result._claim() else { return }
            _ = source?._cancelUnlessDisposed()
            result._error = TimeoutError(seconds: seconds)
            result._publish(BOLTS_ERROR)
        }
        _whenComplete(self) { [weak result] in
            guard let upstream = link.take() else { return }
            timer.cancel()
            result?._trySet(outcomeOf: upstream)
        }
        return result
    }

    /// A task that ends as this one does, unless `duration` passes first: then it fails with
    /// ``TimeoutError`` and `source` (if given) is cancelled. The same as the `Double` form,
    /// to which it hands `duration` converted to seconds (`duration / .seconds(1)`, a
    /// `Double`: exact to the nanosecond up to about three weeks, within a microsecond for
    /// two centuries); the ``TimeoutError`` carries those seconds. A negative duration traps, as a negative
    /// number of seconds does.
    public func timeout(
        after duration: Duration,
        cancelling source: CancellationTokenSource? = nil,
        file: StaticString = #fileID,
        line: UInt = #line
    ) -> Task<T> {
        timeout(after: duration / .seconds(1), cancelling: source, file: file, line: line)
    }
}

extension Task {
    /// A `Task<Void>` that succeeds after `seconds`, reachable from any `Task<T>` (as in
    /// Bolts-Swift, `Task<String>.withDelay(1)` is a `Task<Void>`). See the `Task<Void>` form.
    @_disfavoredOverload
    public static func withDelay(
        _ seconds: Double,
        cancellationToken: CancellationToken? = nil,
        file: StaticString = #fileID,
        line: UInt = #line
    ) -> Task<Void> {
        Task<Void>.withDelay(seconds, cancellationToken: cancellationToken, file: file, line: line)
    }

    /// A `Task<Void>` that succeeds after `duration`, reachable from any `Task<T>`. See the
    /// `Task<Void>` form.
    @_disfavoredOverload
    public static func withDelay(
        _ duration: Duration,
        cancellationToken: CancellationToken? = nil,
        file: StaticString = #fileID,
        line: UInt = #line
    ) -> Task<Void> {
        Task<Void>.withDelay(duration, cancellationToken: cancellationToken, file: file, line: line)
    }
}

extension Task where T == Void {
    /// A task that succeeds after `seconds`. Cancelling `cancellationToken` cancels it at
    /// once (and releases its timer); a token that is already cancelled gives a cancelled
    /// task. Completion happens on a Dispatch thread.
    public static func withDelay(
        _ seconds: Double,
        cancellationToken: CancellationToken? = nil,
        file: StaticString = #fileID,
        line: UInt = #line
    ) -> Task<Void> {
        precondition(seconds >= 0 && !seconds.isNaN, "withDelay(_:) with a negative delay")
        if cancellationToken?.isCancellationRequested == true { return .cancelledTask() }
        let task = Task<Void>(_pendingAt: file, line: line)
        let timer = _OneShotTimer(after: seconds) { task._trySet(value: ()) }
        if let token = cancellationToken {
            let registration = token._register {
                timer.cancel()
                task._tryCancel()
            }
            if let registration { _whenComplete(task) { registration.disposeAndRelease() } }
        }
        return task
    }

    /// A task that succeeds after `duration`: the `Double` form, to which it hands `duration`
    /// converted to seconds (`duration / .seconds(1)`, a `Double`: exact to the nanosecond
    /// up to about three weeks). Cancelling `cancellationToken` cancels it at once; a negative duration
    /// traps, as a negative number of seconds does.
    public static func withDelay(
        _ duration: Duration,
        cancellationToken: CancellationToken? = nil,
        file: StaticString = #fileID,
        line: UInt = #line
    ) -> Task<Void> {
        withDelay(duration / .seconds(1), cancellationToken: cancellationToken, file: file, line: line)
    }
}

/// Holds the upstream of a `timeout` until the first side takes it.
internal final class _TimeoutLink<T: Sendable>: Sendable {
    private let upstream: Mutex<Task<T>?>
    init(_ upstream: Task<T>) { self.upstream = Mutex(upstream) }
    func take() -> Task<T>? { upstream.withLock { $0.take() } }
}

/// A Dispatch timer that fires once; `cancel()` releases its handler at once.
///
/// Each timer fires on a serial queue of its own, not on `DispatchQueue.global()` nor on a
/// shared concurrent queue: both are served by the global pool's few threads, which can
/// all be busy or blocked (a loaded server, `concurrentPerform`, blocking waits), and a
/// delay or timeout must not be postponed by that. A serial queue is overcommitting in
/// Dispatch (it gets a thread even when the pool is saturated), and one per timer keeps a
/// slow continuation of one delay from holding up the others.
//
// @unchecked Sendable: `source` is immutable and DispatchSource's methods are thread-safe.
internal final class _OneShotTimer: @unchecked Sendable {
    private let source: DispatchSourceTimer

    init(after seconds: Double, _ handler: @escaping @Sendable () -> Void) {
        source = DispatchSource.makeTimerSource(queue: _timerQueue())
        let source = self.source
        source.setEventHandler {
            handler()
            source.cancel()
        }
        source.schedule(deadline: .now() + seconds, repeating: .never)
        source.resume()
    }

    func cancel() { source.cancel() }
}

/// A step that runs only if its task has not been cancelled (by its token) meanwhile. Too
/// big for the inline buffer (one allocation), which only token-carrying continuations pay.
@usableFromInline
internal struct _TokenGuardedStep<Step: _ContinuationStep>: _ContinuationStep {
    @usableFromInline let step: Step
    @usableFromInline let token: CancellationToken

    @inlinable
    init(step: Step, token: CancellationToken) {
        self.step = step
        self.token = token
    }

    @usableFromInline typealias Next = Step.Next

    @usableFromInline
    func perform(_ next: Task<Step.Next>) {
        guard next._outcome == BOLTS_PENDING else { return }
        if token.isCancellationRequested {
            next._tryCancel()
            return
        }
        step.perform(next)
    }
}

/// A new serial queue for one timer (see `_OneShotTimer`): serial queues overcommit, so
/// the timer fires on time even when every thread of the global pool is busy.
internal func _timerQueue() -> DispatchQueue {
    DispatchQueue(label: "bolts.timer")
}
