import CBoltsRuntime

//
// @unchecked Sendable: (1) the only stored property, `_core`, is immutable; (2) it points
// at a C token whose every operation is thread-safe (see bolts_token.h); (3) this object
// owns one reference to the C token from `init` to `deinit`, so the pointer is valid for
// every call made through this object.
/// A token that tells work whether it should stop, and calls handlers when it must.
///
/// Get one from a ``CancellationTokenSource`` (`source.token`) and pass it to the work
/// that should be cancellable, for example
/// `task.continueWith(cancellationToken: source.token) { … }` or
/// `Task.withDelay(1, cancellationToken: source.token)`. Only the source can cancel it.
///
/// A token is thread-safe: any thread may read it, register on it, or dispose
/// registrations while another thread cancels it. The token stays usable after its source
/// was disposed (it then never becomes cancelled any more), and after the source was
/// released (a `cancel(after:)` timer or a linked parent can still cancel it).
///
/// ## Threading and ordering
/// When ``isCancellationRequested`` returns `true`, everything the cancelling thread did
/// before it called `cancel()` is visible to the reader. Handlers run synchronously on the
/// thread that calls `cancel()`, in the order they were registered, so every handler has
/// returned when `cancel()` returns.
public final class CancellationToken: @unchecked Sendable {
    /// The C token; this object owns one reference to it.
    @usableFromInline
    internal let _core: OpaquePointer

    /// Wraps a C token, taking over one reference the caller owns.
    internal init(_adopting core: OpaquePointer) {
        _core = core
    }

    deinit {
        bolts_token_release(_core)
    }

    /// Whether cancellation was requested.
    ///
    /// Becomes `true` when the source's `cancel()` starts (its handlers may still be
    /// running on the cancelling thread) and never becomes `false` again.
    public var isCancellationRequested: Bool {
        bolts_token_is_cancelled(_core)
    }

    /// Registers `handler` to run when the token is cancelled.
    ///
    /// - If the token is not cancelled yet, `handler` runs once, synchronously, on the
    ///   thread that calls `cancel()` (or on the thread of the timer or linked token that
    ///   cancels it), after the handlers registered before it.
    /// - If the token is already cancelled, `handler` runs now, on the calling thread,
    ///   before `register` returns.
    /// - If the token's source was disposed without being cancelled, `handler` never runs
    ///   and is released at once.
    ///
    /// The handler is released (with whatever it captured) right after it runs or as soon
    /// as it is disposed; a handler that was disposed before cancellation reached it never
    /// runs. Keeping or dropping the returned registration does not affect the handler:
    /// only ``CancellationTokenRegistration/dispose()`` removes it.
    ///
    /// - Parameter handler: The work to run on cancellation. It must not block waiting for
    ///   another thread that is cancelling this same token.
    /// - Returns: A registration whose `dispose()` removes the handler.
    @discardableResult
    public func register(_ handler: @escaping @Sendable () -> Void) -> CancellationTokenRegistration {
        guard let node = _register(handler) else { return CancellationTokenRegistration._empty }
        return CancellationTokenRegistration(_node: node._node)
    }

    /// The registration fast path, for the runtime's own token-aware operations.
    ///
    /// Same behaviour as ``register(_:)``, but returns the raw C registration handle
    /// instead of allocating a ``CancellationTokenRegistration``: `nil` when the handler
    /// already ran (the token was cancelled) or was dropped (the source was disposed),
    /// otherwise a handle the caller owns. The caller must eventually call
    /// `_CancellationRegistrationHandle.disposeAndRelease()` (or `release()` to keep the
    /// handler armed) exactly once.
    @usableFromInline
    internal func _register(_ handler: @escaping @Sendable () -> Void) -> _CancellationRegistrationHandle? {
        // Already cancelled: run now without boxing the handler (the C call would too).
        if bolts_token_is_cancelled(_core) {
            handler()
            return nil
        }
        let box = Unmanaged.passRetained(_CancellationHandlerBox(handler)).toOpaque()
        guard
            let node = bolts_token_register(
                _core,
                { context in
                    Unmanaged<_CancellationHandlerBox>.fromOpaque(context!).takeUnretainedValue().handler()
                },
                { context in
                    Unmanaged<_CancellationHandlerBox>.fromOpaque(context!).release()
                },
                box
            )
        else { return nil }
        return _CancellationRegistrationHandle(node)
    }

    /// For tests: how many registrations are linked in this token's list right now.
    internal var _registrationCount: Int {
        bolts_token_registration_count(_core)
    }
}

/// Holds a handler closure behind a pointer the C core can store (the C registration
/// owns one retain of the box, released exactly once by the core's `release` call).
internal final class _CancellationHandlerBox: Sendable {
    let handler: @Sendable () -> Void

    init(_ handler: @escaping @Sendable () -> Void) {
        self.handler = handler
    }
}

/// A raw C registration handle (see `CancellationToken._register`).
///
/// A value type with no deinit: the owner calls exactly one of `disposeAndRelease()` or
/// `release()`, once, and must not use the handle afterwards.
//
// @unchecked Sendable: the wrapped pointer is a handle whose every C operation is
// thread-safe (bolts_token.h); the one-owner rule above is the caller's contract.
@usableFromInline
internal struct _CancellationRegistrationHandle: @unchecked Sendable {
    @usableFromInline
    internal let _node: OpaquePointer

    @usableFromInline
    internal init(_ node: OpaquePointer) {
        _node = node
    }

    /// Disposes the registration (waiting if its handler is running on another thread),
    /// then drops the handle. Returns true if this call kept the handler from ever running.
    @usableFromInline
    @discardableResult
    internal func disposeAndRelease() -> Bool {
        let disarmed = bolts_token_registration_dispose(_node)
        bolts_token_registration_release(_node)
        return disarmed
    }

    /// Drops the handle and leaves the handler armed.
    @usableFromInline
    internal func release() {
        bolts_token_registration_release(_node)
    }
}
