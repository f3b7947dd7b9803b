import CBoltsRuntime

//
// @unchecked Sendable: (1) `_node` is immutable; (2) it is nil or a C registration handle
// whose operations are thread-safe (bolts_token.h); (3) this object owns that handle from
// `init` until `deinit`, which releases it exactly once.
/// A handler registered on a ``CancellationToken``; ``dispose()`` removes it.
///
/// Dropping a registration does not remove its handler: only ``dispose()`` does.
public final class CancellationTokenRegistration: @unchecked Sendable {
    /// The C handle, or nil for a registration whose handler already ran or was dropped.
    internal let _node: OpaquePointer?

    /// Shared by every registration that has nothing left to dispose.
    internal static let _empty = CancellationTokenRegistration(_node: nil)

    internal init(_node node: OpaquePointer?) {
        _node = node
    }

    deinit {
        if let node = _node { bolts_token_registration_release(node) }
    }

    /// Removes the handler so that it never runs.
    ///
    /// - If the handler has not started, it never will, and it is released now.
    /// - If it is running on another thread (the token is being cancelled), waits until it
    ///   returned: no handler runs after its `dispose()` returned.
    /// - If it is running on this thread (`dispose()` from inside the handler), returns at
    ///   once.
    /// - If it already ran, or the registration was disposed before, does nothing.
    ///
    /// Safe to call from any thread, any number of times, after the source was disposed.
    public func dispose() {
        if let node = _node { _ = bolts_token_registration_dispose(node) }
    }
}
