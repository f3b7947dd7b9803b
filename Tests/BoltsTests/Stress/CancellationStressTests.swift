import BoltsTestSupport
import CBoltsRuntime
import Foundation
import Synchronization
import Testing

@testable import Bolts

/// Many threads racing register / dispose / cancel on shared tokens.
///
/// Short by default (CI, debug builds); `BOLTS_STRESS=1` runs the long form.
@Suite struct CancellationStressTests {
    /// One registration's record: how often its handler ran, and whether its `dispose()`
    /// had returned by then.
    final class Slot: Sendable {
        let runs = Atomic<Int>(0)
        let disposeReturned = Atomic<Bool>(false)
        let ranAfterDispose = Atomic<Bool>(false)
        let disposed = Atomic<Bool>(false)

        func run() {
            // Acquire: pairs with the releasing store after dispose() returned.
            if disposeReturned.load(ordering: .acquiring) { ranAfterDispose.store(true, ordering: .relaxed) }
            runs.add(1, ordering: .relaxed)
        }
    }

    private static let threads = 4
    private static var rounds: Int { stressIsLong ? 400 : 40 }
    private static var perThread: Int { stressIsLong ? 4_000 : 1_000 }

    @Test func racingRegisterDisposeAndCancelRunsEachLiveHandlerExactlyOnce() {
        for round in 0..<Self.rounds {
            let source = CancellationTokenSource()
            let token = source.token
            let slots = (0..<(Self.threads * Self.perThread)).map { _ in Slot() }
            let registered = Atomic<Int>(0)
            let cancelAt = Int.random(in: 0..<slots.count)
            runOnThreads(Self.threads + 1, stackSize: 1 << 20) { index in
                if index == Self.threads {
                    // The canceller starts once a random share of the registrations exists.
                    while registered.load(ordering: .relaxed) < cancelAt { sched_yield() }
                    source.cancel()
                    return
                }
                var generator = SystemRandomNumberGenerator()
                var window: [(CancellationTokenRegistration, Slot)] = []
                for i in 0..<Self.perThread {
                    let slot = slots[index * Self.perThread + i]
                    window.append((token.register { slot.run() }, slot))
                    registered.add(1, ordering: .relaxed)
                    // Dispose older registrations (while the walk may be reaching them).
                    if window.count == 16 {
                        let (registration, old) = window.removeFirst()
                        if Bool.random(using: &generator) {
                            old.disposed.store(true, ordering: .relaxed)
                            registration.dispose()
                            old.disposeReturned.store(true, ordering: .releasing)
                        }
                    }
                }
                for (registration, old) in window where Bool.random(using: &generator) {
                    old.disposed.store(true, ordering: .relaxed)
                    registration.dispose()
                    old.disposeReturned.store(true, ordering: .releasing)
                }
            }
            for slot in slots {
                let runs = slot.runs.load(ordering: .acquiring)
                #expect(runs <= 1, "round \(round): a handler ran \(runs) times")
                let ranAfterDispose = slot.ranAfterDispose.load(ordering: .relaxed)
                #expect(!ranAfterDispose, "round \(round): a handler ran after its dispose returned")
                if !slot.disposed.load(ordering: .relaxed) {
                    #expect(runs == 1, "round \(round): a live handler did not run")
                }
            }
            #expect(token._registrationCount == 0)
        }
    }

    @Test func racingDisposeOfOneRegistrationFromManyThreadsDropsItOnce() {
        let iterations = stressIsLong ? 20_000 : 1_000
        for _ in 0..<iterations / 100 {
            let source = CancellationTokenSource()
            let slots = (0..<100).map { _ in Slot() }
            let handles = slots.map { slot in source.token._register { slot.run() }! }
            let disarmed = Atomic<Int>(0)
            runOnThreads(3, stackSize: 1 << 20) { index in
                if index == 2 {
                    source.cancel()
                    return
                }
                for handle in handles where bolts_token_registration_dispose(handle._node) {
                    disarmed.add(1, ordering: .relaxed)
                }
            }
            let ran = slots.reduce(0) { $0 + $1.runs.load(ordering: .acquiring) }
            // Every handler was either disarmed by exactly one disposer or run exactly once.
            #expect(ran + disarmed.load(ordering: .relaxed) == slots.count)
            for handle in handles { handle.release() }
        }
    }

    @Test func manyTokensCancelledWhileOtherThreadsRegisterAndDispose() {
        let tokens = stressIsLong ? 20_000 : 1_000
        let sources = LockedValue<[CancellationTokenSource]>([])
        let ran = Atomic<Int>(0)
        let inline = Atomic<Int>(0)
        let live = Atomic<Int>(0)
        runOnThreads(3, stackSize: 1 << 20) { index in
            for _ in 0..<tokens {
                switch index {
                case 0:
                    sources.withLock { $0.append(CancellationTokenSource()) }
                case 1:
                    if let source = sources.withLock({ $0.randomElement() }) {
                        let registration = source.token.register { ran.add(1, ordering: .relaxed) }
                        if Bool.random() { registration.dispose() } else { live.add(1, ordering: .relaxed) }
                    } else {
                        inline.add(1, ordering: .relaxed)
                    }
                default:
                    if let source = sources.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { source.cancel() }
                }
            }
        }
        for source in sources.withLock({ $0 }) { source.cancel() }
        // Every handler that was never disposed ran exactly once by now (maybe at once, when
        // its token was already cancelled); disposed ones may or may not have run.
        #expect(ran.load(ordering: .relaxed) >= live.load(ordering: .relaxed))
    }

    @Test func shortLivedThreadsThatUsedRCUDoNotStallReclamation() {
        // Each thread runs a cancel walk (a read-side section, so it registers with liburcu)
        // and disposes a node the walk may be reading (call_rcu), then exits. Exited threads
        // must have unregistered, or grace periods would wait on (or read) dead threads.
        for _ in 0..<(stressIsLong ? 200 : 20) {
            runOnThreads(2, stackSize: 1 << 20) { _ in
                let source = CancellationTokenSource()
                let later = LockedValue<CancellationTokenRegistration?>(nil)
                source.token.register { later.withLock { $0 }?.dispose() }
                later.withLock { $0 = source.token.register {} }
                source.cancel()
            }
        }
        bolts_token_reclaim_barrier()
    }

    @Test func reclamationKeepsUpWithChurnOnALongLivedToken() {
        let source = CancellationTokenSource()
        let token = source.token
        let perThread = stressIsLong ? 1_000_000 : 100_000
        let before = bolts_token_live_registrations()
        runOnThreads(2, stackSize: 1 << 20) { _ in
            for _ in 0..<perThread {
                token.register {}.dispose()
            }
        }
        #expect(token._registrationCount == 0)
        bolts_token_reclaim_barrier()
        if before >= 0 {
            #expect(bolts_token_live_registrations() - before < 10_000)
        }
    }
}
