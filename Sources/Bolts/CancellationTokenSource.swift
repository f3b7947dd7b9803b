import CBoltsRuntime
import Dispatch
import Foundation
import Synchronization

/// Creates and cancels a ``CancellationToken``.
///
/// The source is the producer side: whoever owns it decides when the work stops; the
/// ``token`` is handed to the work. Cancellation is one-way and happens once.
///
/// ```swift
/// let source = CancellationTokenSource()
/// let reply = fetch().continueWith(cancellationToken: source.token) { task in … }
/// source.cancel(after: 2)      // give up after two seconds
/// ```
///
/// A source may be used from any thread. Call ``dispose()`` when it is no longer needed:
/// that drops the handlers still waiting on its token, stops a pending `cancel(after:)`
/// timer and unhooks a linked source from its parents. Using a source after `dispose()`
/// (anything but `dispose()` again) is a programming error and traps with a message.
public final class CancellationTokenSource: Sendable {
    private let _token: CancellationToken
    /// Registrations on the parent tokens of a linked source (immutable after `init`).
    private let _links: [_CancellationRegistrationHandle]
    /// The `cancel(after:)` timer, created on first use (most sources never need one).
    private let _timer = AtomicLazyReference<_CancelTimer>()

    /// Creates a source whose token is not cancelled.
    public init() {
        _token = CancellationToken(_adopting: bolts_token_create())
        _links = []
    }

    /// Creates a source that is cancelled when any of `tokens` is cancelled (or at once, if
    /// one of them already is), as well as by its own ``cancel()``.
    ///
    /// The links hold the new token alive from the parents, so a linked token keeps
    /// working after this source is released. Call ``dispose()`` on a linked source that
    /// is no longer needed, so that long-lived parents do not keep it: until then (or
    /// until the parent is cancelled or released), each parent holds one small
    /// registration for it. Once this source is cancelled, its links are removed.
    ///
    /// - Parameter tokens: The parent tokens. Cancelling the new source does not cancel them.
    public init(linkedTo tokens: [CancellationToken]) {
        let core = bolts_token_create()
        _token = CancellationToken(_adopting: core)
        var links: [_CancellationRegistrationHandle] = []
        links.reserveCapacity(tokens.count)
        for parent in tokens {
            // The link's context is one reference to the child's C token, released by the
            // C core once the link ran or was dropped.
            bolts_token_retain(core)
            let node = bolts_token_register(
                parent._core,
                { context in _ = bolts_token_cancel(OpaquePointer(context!)) },
                { context in bolts_token_release(OpaquePointer(context!)) },
                UnsafeMutableRawPointer(core)
            )
            if let node { links.append(_CancellationRegistrationHandle(node)) }
        }
        _links = links
        if bolts_token_is_cancelled(core) { _disposeLinks() }
    }

    deinit {
        // A linked token outlives its source and must keep listening to its parents,
        // unless it is already cancelled: then the links are dead weight in the parents.
        if bolts_token_is_cancelled(_token._core) { _disposeLinks() }
        for link in _links { link.release() }
    }

    /// The token this source controls. The same object every time.
    ///
    /// Traps if the source was disposed.
    public var token: CancellationToken {
        _checkNotDisposed("token")
        return _token
    }

    /// Whether ``cancel()`` was called (or a timer or linked token cancelled the source).
    ///
    /// Traps if the source was disposed.
    public var isCancellationRequested: Bool {
        _checkNotDisposed("isCancellationRequested")
        return bolts_token_is_cancelled(_token._core)
    }

    /// Cancels the token: runs every registered handler, synchronously, on this thread, in
    /// registration order. When `cancel()` returns, every handler has returned, also when
    /// another thread started cancelling first (this call then waits for it). Calling it
    /// again, or from inside a handler, does nothing.
    ///
    /// Traps if the source was disposed.
    public func cancel() {
        _checkNotDisposed("cancel()")
        _ = bolts_token_cancel(_token._core)
        _disposeLinks()
    }

    /// Cancels the token after `seconds`, on a Dispatch thread.
    ///
    /// `cancel(after: 0)` cancels before it returns, like ``cancel()``. Calling it several
    /// times keeps the earliest deadline (cancellation cannot be undone, so a later
    /// deadline would change nothing). The timer keeps the token alive, so it still fires
    /// after the source is released; ``dispose()`` stops it. An infinite delay does
    /// nothing. Does nothing on a source that is already cancelled.
    ///
    /// - Parameter seconds: The delay; must be zero or more (a negative or NaN delay traps).
    ///
    /// Traps if the source was disposed.
    public func cancel(after seconds: Double) {
        _checkNotDisposed("cancel(after:)")
        guard seconds >= 0 else {
            fatalError("CancellationTokenSource.cancel(after:) needs a delay >= 0, got \(seconds)")
        }
        if seconds == 0 {
            cancel()
            return
        }
        // Past ~31 years the deadline overflows Dispatch's clock; treat it as never.
        if bolts_token_is_cancelled(_token._core) || seconds > 1e9 { return }
        let timer = _timer.load() ?? _timer.storeIfNil(_CancelTimer())
        timer.schedule(after: seconds, cancelling: _token)
    }

    /// Cancels the token after `duration`, on a Dispatch thread: the `Double` form, to which
    /// it hands `duration` converted to seconds (`duration / .seconds(1)`, a `Double`: exact
    /// to the nanosecond up to about three weeks).
    ///
    /// `cancel(after: .zero)` cancels before it returns, like ``cancel()``; the earliest of
    /// several deadlines wins; ``dispose()`` stops the timer.
    ///
    /// - Parameter duration: The delay; must be zero or more (a negative delay traps).
    ///
    /// Traps if the source was disposed.
    public func cancel(after duration: Duration) {
        cancel(after: duration / .seconds(1))
    }

    /// Releases what the source holds: the handlers still registered on its token are
    /// dropped without running, a pending `cancel(after:)` timer is stopped, and a linked
    /// source is unhooked from its parents. The token stays valid and keeps its state
    /// (it can no longer become cancelled). Calling `dispose()` again does nothing; any
    /// other use of the source afterwards traps.
    public func dispose() {
        bolts_token_dispose(_token._core)
        _disposeLinks()
        // A concurrent first cancel(after:) may still install a timer after this, and a
        // timer may be firing right now; either way the C core refuses to cancel a token
        // that was disposed first.
        _timer.load()?.stop()
    }

    /// Cancels unless the source was disposed (no trap): for runtime code that cancels a
    /// source it was given, for example when a timeout fires after the caller disposed it.
    /// Returns true if the token is cancelled afterwards.
    @usableFromInline
    @discardableResult
    internal func _cancelUnlessDisposed() -> Bool {
        // The C core refuses to cancel a token that was disposed first (also when the
        // dispose races this call), so read the outcome back rather than assume it.
        _ = bolts_token_cancel(_token._core)
        _disposeLinks()
        return bolts_token_is_cancelled(_token._core)
    }

    private func _disposeLinks() {
        for link in _links { _ = bolts_token_registration_dispose(link._node) }
    }

    @inline(__always)
    private func _checkNotDisposed(_ member: StaticString) {
        if bolts_token_is_disposed(_token._core) { _cancellationSourceUsedAfterDispose(member) }
    }
}

@inline(never)
private func _cancellationSourceUsedAfterDispose(_ member: StaticString) -> Never {
    fatalError("CancellationTokenSource.\(member) used after dispose()")
}

/// The `cancel(after:)` timer of a source: one Dispatch timer, created on first use and
/// moved to the earliest deadline asked for.
//
// @unchecked Sendable: every mutable field is read and written only while `lock` is held.
// NSLock (a pthread mutex) rather than Synchronization.Mutex: ThreadSanitizer sees pthread
// mutexes, so sanitizer runs of code using sources stay free of false reports.
private final class _CancelTimer: @unchecked Sendable {
    private let lock = NSLock()
    private var timer: (any DispatchSourceTimer)?
    private var deadline: DispatchTime?
    private var stopped = false

    /// Arms (or moves earlier) the timer that cancels `token`.
    func schedule(after seconds: Double, cancelling token: CancellationToken) {
        let deadline = DispatchTime.now() + seconds
        lock.lock()
        defer { lock.unlock() }
        if stopped { return }
        if let current = self.deadline, current <= deadline { return }
        self.deadline = deadline
        if let timer {
            timer.schedule(deadline: deadline, repeating: .never)
            return
        }
        // Its own serial queue, like every runtime timer (see `_OneShotTimer`): it fires
        // on time even when the global pool's threads are all busy.
        let timer = DispatchSource.makeTimerSource(queue: _timerQueue())
        // The handler retains the timer: an armed timer then survives its source's release,
        // and keeps the token it will cancel. `cancel()` of the Dispatch source releases the
        // handler, which breaks that cycle (after it fired, or in `stop()`).
        timer.setEventHandler {
            _ = bolts_token_cancel(token._core)
            timer.cancel()
        }
        timer.schedule(deadline: deadline, repeating: .never)
        timer.resume()
        self.timer = timer
    }

    /// Stops the timer for good (the source was disposed).
    func stop() {
        lock.lock()
        let timer = self.timer
        self.timer = nil
        stopped = true
        lock.unlock()
        timer?.cancel()
    }
}
