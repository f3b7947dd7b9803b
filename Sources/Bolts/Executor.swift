import CBoltsRuntime
import Dispatch
import Foundation

/// Decides where a continuation (or any job) runs.
///
/// | executor | where the job runs |
/// | --- | --- |
/// | ``default`` | inline, on the thread that completed the antecedent (or that added the continuation to a completed task); the trampoline bounds the stack, so no thread hop is ever needed |
/// | ``immediate`` | inline, like `.default`, also bounded by the trampoline |
/// | ``mainThread`` | inline when already on the main thread, else enqueued on the main queue |
/// | ``queue(_:)`` | asynchronously on a `DispatchQueue` |
/// | ``operationQueue(_:)`` | as an operation on an `OperationQueue` |
/// | ``closure(_:)`` | handed to a closure that must run it before returning |
/// | ``escapingClosure(_:)`` | handed to a closure that runs it whenever it likes |
/// | ``pool(_:)`` | on a ``ThreadPool`` worker; continuations are handed to the pool by the C core |
/// | ``init(description:_:)`` | any other scheduler |
public struct Executor: Sendable, CustomStringConvertible {
    /// The part of an executor that the continuation hot path looks at: a trivial tag.
    /// The inline kinds come first (`_runsInline` relies on the order).
    @usableFromInline
    internal enum _Tag: UInt8, Sendable {
        case inlineDefault
        case inlineImmediate
        case pool
        case scheduled
    }

    @usableFromInline
    internal enum Kind: Sendable {
        case mainThread
        case queue(DispatchQueue)
        case operationQueue(OperationQueue)
        case closure(@Sendable (() -> Void) -> Void)
        case escaping(@Sendable (@escaping @Sendable () -> Void) -> Void)
        case pool(ThreadPool)
    }

    /// Everything but the two inline executors keeps its scheduler here, so that copying
    /// an executor (continuations capture one) is one reference, or nothing at all for
    /// `.default` and `.immediate`.
    //
    // @unchecked Sendable: all fields are immutable; `cPool` points to a C pool that is
    // thread-safe and kept alive by the `ThreadPool` held in `kind`.
    @usableFromInline
    internal final class _Impl: @unchecked Sendable {
        let kind: Kind
        /// A description given at creation (custom executors); nil: derived from `kind`
        /// when asked, so that making an executor builds no string.
        let customDescription: String?
        @usableFromInline
        let cPool: OpaquePointer?

        init(kind: Kind, customDescription: String? = nil, cPool: OpaquePointer? = nil) {
            self.kind = kind
            self.customDescription = customDescription
            self.cPool = cPool
        }

        var description: String {
            if let customDescription { return customDescription }
            switch kind {
            case .mainThread: return "Main Thread Executor"
            case .queue(let queue): return "Queue Executor: \(queue.label)"
            case .operationQueue(let queue): return "OperationQueue Executor: \(queue.name ?? "unnamed")"
            case .closure: return "Closure Executor"
            case .escaping: return "Escaping Closure Executor"
            case .pool(let pool): return Executor._poolDescription(pool)
            }
        }
    }

    @usableFromInline
    internal let _tag: _Tag

    @usableFromInline
    internal let _impl: _Impl?

    private init(tag: _Tag) {
        _tag = tag
        _impl = nil
    }

    private init(kind: Kind, customDescription: String? = nil) {
        if case .pool(let pool) = kind {
            _tag = .pool
            _impl = _Impl(kind: kind, cPool: pool._pool)
        } else {
            _tag = .scheduled
            _impl = _Impl(kind: kind, customDescription: customDescription)
        }
    }

    /// A name for the executor: "Default Executor", "Immediate Executor",
    /// "Queue Executor: <label>", and so on.
    public var description: String {
        switch _tag {
        case .inlineDefault: return "Default Executor"
        case .inlineImmediate: return "Immediate Executor"
        default: return _impl?.description ?? Executor._poolDescription(.shared)
        }
    }

    /// "ThreadPool Executor: <name>", for `.pool(_:)` with or without an object.
    private static func _poolDescription(_ pool: ThreadPool) -> String {
        "ThreadPool Executor: \(pool.name)"
    }

    /// An executor for any other scheduler: `schedule` receives each job and must run it
    /// exactly once, on whatever thread it chooses. `description` names it (default
    /// "Custom Executor").
    public init(
        description: String = "Custom Executor",
        _ schedule: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
    ) {
        self.init(kind: .escaping(schedule), customDescription: description)
    }

    /// Runs continuations inline on the thread that completes the antecedent. Deep chains
    /// are safe: past ``trampolineInlineDepth`` nested completions, jobs go on the thread's
    /// run queue and the outermost frame runs them in a loop, on the same thread.
    public static let `default` = Executor(tag: .inlineDefault)

    /// Runs jobs inline, at once, on the calling thread (bounded by the trampoline).
    public static let immediate = Executor(tag: .inlineImmediate)

    /// Runs jobs on the main thread: inline if already there, else enqueued on the main
    /// queue (which the program must serve). Nothing in Bolts defaults to it.
    public static let mainThread = Executor(kind: .mainThread)

    /// Runs jobs asynchronously on `queue`.
    public static func queue(_ queue: DispatchQueue) -> Executor {
        Executor(kind: .queue(queue))
    }

    /// Runs jobs as operations on `queue`.
    public static func operationQueue(_ queue: OperationQueue) -> Executor {
        Executor(kind: .operationQueue(queue))
    }

    /// Hands each job to `closure`, which must run it before it returns.
    public static func closure(_ closure: @escaping @Sendable (() -> Void) -> Void) -> Executor {
        Executor(kind: .closure(closure))
    }

    /// Hands each job to `closure`, which may keep it and run it later (exactly once).
    public static func escapingClosure(_ closure: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void)
        -> Executor
    {
        Executor(kind: .escaping(closure))
    }

    /// Runs jobs on `pool`'s workers. Continuations are handed to the pool by the C core
    /// directly, without a detour through a Swift closure.
    @inlinable
    public static func pool(_ pool: ThreadPool) -> Executor {
        // The shared pool's executor is built here rather than read from a global: a call
        // to another global's accessor while `pool` is in use made the compiler retain and
        // release `pool`, and for `.pool(.shared)` that is one object every submitting
        // thread would then bounce between CPUs on every call.
        pool.isShared ? Executor(_sharedPoolTag: ()) : _pool(pool)
    }

    /// `.pool(.shared)`: the pool tag and no object. The idiomatic
    /// `Task.execute(.pool(.shared)) { … }` then allocates nothing for its executor and
    /// copies it without touching a reference count: every event-loop thread that submits
    /// would otherwise retain and release one shared object (or the shared pool) per job,
    /// bouncing its cache line between CPUs. The shared pool is never deinitialized, so
    /// its C pool (`_sharedCPool`) needs no owner here.
    @inlinable
    internal init(_sharedPoolTag: ()) {
        _tag = .pool
        _impl = nil
    }

    /// `.pool(_:)` for a pool other than the shared one: an object that keeps it alive.
    @usableFromInline
    internal static func _pool(_ pool: ThreadPool) -> Executor {
        Executor(kind: .pool(pool))
    }

    /// The number of nested synchronous completions that run inline on one thread before
    /// the trampoline defers further ones to the thread's run queue: `BOLTS_INLINE_DEPTH`
    /// in the C core's `bolts_job.h`, the depth Bolts used.
    public static let trampolineInlineDepth = Int(BOLTS_INLINE_DEPTH)

    /// Runs `job` as this executor decides.
    @inlinable
    public func execute(_ job: consuming @escaping @Sendable () -> Void) {
        // The pool's path is inline in the caller: it reads the C pool through the
        // borrowed `_impl` (no retain of the shared executor object, whose reference
        // count every submitting thread would otherwise bounce) and hands the closure over.
        if let cPool = _cPool {
            ThreadPool._submit(toCPool: cPool, job)
        } else {
            _executeOther(job)
        }
    }

    /// Every executor but the pool (whose path is inline in ``execute(_:)``).
    @usableFromInline
    internal func _executeOther(_ job: @escaping @Sendable () -> Void) {
        // No object: an inline executor (the shared pool has none either, but `execute`
        // hands it to its C pool before this is reached).
        guard let impl = _impl else { return job() }
        switch impl.kind {
        case .mainThread:
            if Thread.isMainThread { job() } else { DispatchQueue.main.async(execute: job) }
        case .queue(let queue): queue.async(execute: job)
        case .operationQueue(let queue): queue.addOperation(job)
        case .closure(let closure): closure(job)
        case .escaping(let schedule): schedule(job)
        case .pool: ThreadPool._submit(toCPool: impl.cPool.unsafelyUnwrapped, job)
        }
    }

    /// The pool that continuations should be handed to by the C core, if any.
    @inlinable
    internal var _cPool: OpaquePointer? {
        guard _tag == .pool else { return nil }
        // Borrowed: no retain of `_impl`; no object at all for the shared pool.
        if let impl = _impl { return impl.cPool }
        return _sharedCPool
    }

    /// Whether jobs run inline on the calling thread (``default`` and ``immediate``): a
    /// continuation of a task that has settled may then run at once, without a job. One
    /// comparison, because the inline tags come first in `_Tag`.
    @inlinable
    internal var _runsInline: Bool {
        @inline(__always) get { _tag.rawValue <= _Tag.inlineImmediate.rawValue }
    }

    /// Whether a job that is already on the right thread (inline kinds, or a pool job that
    /// the C core has already moved to a worker) can run without scheduling.
    @inlinable
    internal var _runsInPlace: Bool { _tag != .scheduled }
}

/// The C pool of ``ThreadPool/shared``, read once: `.pool(.shared)` executors carry no
/// object and find their pool here (the shared pool is never deinitialized).
// nonisolated(unsafe): an immutable pointer, set once by the global's initializer, to a
// C pool whose every entry point may be called from any thread (bolts_pool.h).
@usableFromInline
nonisolated(unsafe) internal let _sharedCPool: OpaquePointer = ThreadPool.shared._pool
