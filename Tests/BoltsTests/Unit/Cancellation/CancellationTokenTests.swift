import BoltsTestSupport
import CBoltsRuntime
import Dispatch
import Foundation
import Synchronization
import Testing

@testable import Bolts

/// End-to-end behaviour of tokens and registrations.
@Suite struct CancellationTokenTests {
    @Test func newSourceAndTokenAreNotCancelled() {
        let source = CancellationTokenSource()
        #expect(!source.isCancellationRequested)
        #expect(!source.token.isCancellationRequested)
    }

    @Test func cancelMarksSourceAndTokenCancelled() {
        let source = CancellationTokenSource()
        source.cancel()
        #expect(source.isCancellationRequested)
        #expect(source.token.isCancellationRequested)
    }

    @Test func cancellingTwiceIsHarmless() {
        let source = CancellationTokenSource()
        let runs = Counter()
        source.token.register { runs.increment() }
        source.cancel()
        source.cancel()
        #expect(source.isCancellationRequested)
        #expect(runs.value == 1)
    }

    @Test func tokenIsTheSameObjectEveryTime() {
        let source = CancellationTokenSource()
        #expect(source.token === source.token)
    }

    @Test func handlerRunsOnceWhenCancelled() {
        let source = CancellationTokenSource()
        let runs = Counter()
        source.token.register { runs.increment() }
        #expect(runs.value == 0)
        source.cancel()
        #expect(runs.value == 1)
    }

    @Test func handlersRunInRegistrationOrderBeforeCancelReturns() {
        let source = CancellationTokenSource()
        let log = Recorder<Int>()
        for index in 0..<100 {
            source.token.register { log.append(index) }
        }
        source.cancel()
        #expect(log.values == Array(0..<100))
    }

    @Test func handlerRunsOnTheCancellingThread() {
        let source = CancellationTokenSource()
        let handlerThread = LockedValue<UInt?>(nil)
        source.token.register { handlerThread.withLock { $0 = currentThreadID() } }
        let cancellerThread = LockedValue<UInt?>(nil)
        runOnThreads(1, stackSize: 1 << 20) { _ in
            cancellerThread.withLock { $0 = currentThreadID() }
            source.cancel()
        }
        let ran = handlerThread.withLock { $0 }
        #expect(ran != nil)
        #expect(ran == cancellerThread.withLock { $0 })
    }

    @Test func registeringOnACancelledTokenRunsTheHandlerAtOnceOnTheCallersThread() {
        let source = CancellationTokenSource()
        source.cancel()
        let ranOn = LockedValue<UInt?>(nil)
        let registration = source.token.register { ranOn.withLock { $0 = currentThreadID() } }
        #expect(ranOn.withLock { $0 } == currentThreadID())
        registration.dispose()  // nothing left to dispose: harmless
    }

    @Test func disposedRegistrationNeverRuns() {
        let source = CancellationTokenSource()
        let runs = Counter()
        let registration = source.token.register { runs.increment() }
        #expect(source.token._registrationCount == 1)
        registration.dispose()
        #expect(source.token._registrationCount == 0)
        source.cancel()
        #expect(runs.value == 0)
    }

    @Test func disposingOneRegistrationKeepsTheOthers() {
        let source = CancellationTokenSource()
        let log = Recorder<Int>()
        let registrations = (0..<5).map { index in source.token.register { log.append(index) } }
        registrations[1].dispose()
        registrations[3].dispose()
        source.cancel()
        #expect(log.values == [0, 2, 4])
    }

    @Test func disposingAfterCancelIsHarmless() {
        let source = CancellationTokenSource()
        let runs = Counter()
        let registration = source.token.register { runs.increment() }
        source.cancel()
        registration.dispose()
        registration.dispose()
        #expect(runs.value == 1)
    }

    @Test func disposingTwiceIsHarmless() {
        let source = CancellationTokenSource()
        let runs = Counter()
        let registration = source.token.register { runs.increment() }
        registration.dispose()
        registration.dispose()
        source.cancel()
        #expect(runs.value == 0)
    }

    @Test func droppedRegistrationStillRuns() {
        let source = CancellationTokenSource()
        let runs = Counter()
        do {
            _ = source.token.register { runs.increment() }
        }
        source.cancel()
        #expect(runs.value == 1)
    }

    @Test func disposingFromInsideTheHandlerDoesNotDeadlock() {
        let source = CancellationTokenSource()
        let slot = LockedValue<CancellationTokenRegistration?>(nil)
        let finished = Flag()
        let registration = source.token.register {
            slot.withLock { $0 }?.dispose()
            finished.set()
        }
        slot.withLock { $0 = registration }
        source.cancel()
        #expect(finished.isSet)
    }

    @Test func handlerCanDisposeALaterRegistrationSoItNeverRuns() {
        let source = CancellationTokenSource()
        let later = LockedValue<CancellationTokenRegistration?>(nil)
        let laterRuns = Counter()
        source.token.register { later.withLock { $0 }?.dispose() }
        later.withLock { $0 = source.token.register { laterRuns.increment() } }
        source.cancel()
        #expect(laterRuns.value == 0)
    }

    @Test func registrationDisposedDuringTheCancelWalkIsReclaimedAfterAGracePeriod() {
        let source = CancellationTokenSource()
        let later = LockedValue<CancellationTokenRegistration?>(nil)
        let laterRuns = Counter()
        let deferredBefore = bolts_token_deferred_reclamations()
        source.token.register { later.withLock { $0 }?.dispose() }
        source.token.register {}
        later.withLock { $0 = source.token.register { laterRuns.increment() } }
        source.token.register {}
        source.cancel()
        #expect(laterRuns.value == 0)
        #expect(source.token._registrationCount == 0)
        if deferredBefore >= 0 {
            // The walk may still have been holding the disposed node: it went through call_rcu.
            #expect(bolts_token_deferred_reclamations() > deferredBefore)
        }
        bolts_token_reclaim_barrier()
    }

    @Test func cancellingAgainFromInsideAHandlerReturnsAtOnce() {
        let source = CancellationTokenSource()
        let log = Recorder<Int>()
        source.token.register {
            log.append(1)
            source.cancel()
            log.append(2)
        }
        source.token.register { log.append(3) }
        source.cancel()
        #expect(log.values == [1, 2, 3])
    }

    @Test func registeringFromInsideAHandlerRunsTheNewHandlerAtOnce() {
        let source = CancellationTokenSource()
        let log = Recorder<Int>()
        source.token.register {
            log.append(1)
            source.token.register { log.append(2) }
            log.append(3)
        }
        source.cancel()
        #expect(log.values == [1, 2, 3])
    }

    @Test func disposeWaitsForTheHandlerRunningOnAnotherThread() {
        let source = CancellationTokenSource()
        let started = DispatchSemaphore(value: 0)
        let finished = Flag()
        let registration = source.token.register {
            started.signal()
            usleep(100_000)
            finished.set()
        }
        let canceller = Thread { source.cancel() }
        canceller.start()
        started.wait()
        registration.dispose()
        #expect(finished.isSet, "dispose() returned while its handler was still running")
    }

    @Test func secondCancelOnAnotherThreadWaitsForTheHandlers() {
        let source = CancellationTokenSource()
        let started = DispatchSemaphore(value: 0)
        let finished = Flag()
        source.token.register {
            started.signal()
            usleep(100_000)
            finished.set()
        }
        let canceller = Thread { source.cancel() }
        canceller.start()
        started.wait()
        source.cancel()
        #expect(finished.isSet, "cancel() returned before every handler had returned")
    }

    @Test func handlerIsReleasedRightAfterItRuns() {
        let source = CancellationTokenSource()
        let lifetimes = LifetimeTracker()
        do {
            let tracked = lifetimes.track()
            source.token.register { tracked.touch() }
        }
        #expect(lifetimes.alive == 1)
        source.cancel()
        #expect(lifetimes.alive == 0)
    }

    @Test func handlerIsReleasedWhenDisposed() {
        let source = CancellationTokenSource()
        let lifetimes = LifetimeTracker()
        let registration: CancellationTokenRegistration
        do {
            let tracked = lifetimes.track()
            registration = source.token.register { tracked.touch() }
        }
        #expect(lifetimes.alive == 1)
        registration.dispose()
        #expect(lifetimes.alive == 0)
    }

    @Test func handlersAreReleasedWhenNothingCanCancelTheTokenAnyMore() {
        let lifetimes = LifetimeTracker()
        do {
            let source = CancellationTokenSource()
            let tracked = lifetimes.track()
            source.token.register { tracked.touch() }
        }
        #expect(lifetimes.alive == 0)
    }

    @Test func tokenKeepsWorkingAfterItsSourceIsReleased() {
        var source: CancellationTokenSource? = CancellationTokenSource()
        let token = source!.token
        source = nil
        #expect(!token.isCancellationRequested)
        let runs = Counter()
        let registration = token.register { runs.increment() }
        registration.dispose()
        #expect(runs.value == 0)
    }

    @Test func registrationFastPathRunsAndDisposes() {
        let source = CancellationTokenSource()
        let runs = Counter()
        let kept = source.token._register { runs.increment() }
        let disposed = source.token._register { runs.increment() }
        #expect(kept != nil && disposed != nil)
        #expect(disposed!.disposeAndRelease())
        source.cancel()
        #expect(runs.value == 1)
        #expect(kept!.disposeAndRelease() == false)
        #expect(source.token._register { runs.increment() } == nil)
        #expect(runs.value == 2)
    }

    @Test func registeringAndDisposingAMillionTimesLeavesTheListEmpty() {
        let source = CancellationTokenSource()
        let token = source.token
        let before = bolts_token_live_registrations()
        for _ in 0..<1_000_000 {
            token.register {}.dispose()
        }
        #expect(token._registrationCount == 0)
        bolts_token_reclaim_barrier()
        if before >= 0 {
            // Other tests may hold a few registrations meanwhile; a leak here would be 10^6.
            #expect(bolts_token_live_registrations() - before < 10_000)
        }
    }

    @Test func cAPIReportsWhetherDisposeKeptTheHandlerFromRunning() {
        let token = bolts_token_create()
        defer { bolts_token_release(token) }
        let node = bolts_token_register(token, { _ in }, nil, nil)!
        #expect(bolts_token_registration_count(token) == 1)
        #expect(bolts_token_registration_dispose(node))
        #expect(!bolts_token_registration_dispose(node))
        #expect(bolts_token_registration_count(token) == 0)
        bolts_token_registration_release(node)
        #expect(bolts_token_cancel(token))
        #expect(!bolts_token_cancel(token))
    }
}
