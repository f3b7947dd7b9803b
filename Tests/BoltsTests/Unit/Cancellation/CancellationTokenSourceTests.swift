import BoltsTestSupport
import CBoltsRuntime
import Dispatch
import Foundation
import Synchronization
import Testing

@testable import Bolts

/// `cancel(after:)`, `dispose()` and linked sources.
@Suite struct CancellationTokenSourceTests {
    // MARK: cancel(after:)

    @Test func cancelAfterZeroCancelsBeforeItReturns() {
        let source = CancellationTokenSource()
        let runs = Counter()
        source.token.register { runs.increment() }
        source.cancel(after: 0)
        #expect(source.isCancellationRequested)
        #expect(runs.value == 1)
    }

    @Test func cancelAfterADelayCancelsLater() {
        let source = CancellationTokenSource()
        let runs = Counter()
        source.token.register { runs.increment() }
        let start = DispatchTime.now()
        source.cancel(after: 0.3)
        let early = source.isCancellationRequested
        // Only a read made before the deadline must see "not yet": on a loaded machine this
        // thread can be descheduled for longer than the delay.
        if secondsElapsed(since: start) < 0.3 { #expect(!early) }
        #expect(eventually(within: 10) { runs.value == 1 })
        #expect(source.isCancellationRequested)
    }

    @Test func cancelAfterKeepsTheEarliestDeadline() {
        let source = CancellationTokenSource()
        source.cancel(after: 3600)
        source.cancel(after: 0.02)
        source.cancel(after: 7200)
        #expect(eventually(within: 10) { source.isCancellationRequested })
    }

    @Test func cancelAfterOnACancelledSourceDoesNothing() {
        let source = CancellationTokenSource()
        source.cancel()
        source.cancel(after: 0.01)
        #expect(source.isCancellationRequested)
    }

    @Test func infiniteDelayNeverCancels() {
        let source = CancellationTokenSource()
        source.cancel(after: .infinity)
        usleep(20_000)
        #expect(!source.isCancellationRequested)
    }

    @Test func cancelAfterStillFiresWhenTheSourceWasReleased() {
        var source: CancellationTokenSource? = CancellationTokenSource()
        let token = source!.token
        let runs = Counter()
        token.register { runs.increment() }
        source!.cancel(after: 0.02)
        source = nil
        #expect(eventually(within: 10) { runs.value == 1 })
        #expect(token.isCancellationRequested)
    }

    @Test func timerReleasesTheTokenAfterItFired() {
        weak var weakToken: CancellationToken?
        let start = DispatchTime.now()
        do {
            let source = CancellationTokenSource()
            weakToken = source.token
            source.cancel(after: 0.3)
        }
        // The armed timer keeps the token alive, so that it can still cancel it (checked
        // only if this thread got here before the deadline)...
        let aliveEarly = weakToken != nil
        if secondsElapsed(since: start) < 0.3 { #expect(aliveEarly) }
        // ...and lets it go once it fired.
        #expect(eventually(within: 10) { weakToken == nil })
    }

    @Test func disposeReleasesThePendingTimer() {
        weak var weakToken: CancellationToken?
        do {
            let source = CancellationTokenSource()
            weakToken = source.token
            source.cancel(after: 3600)
            source.dispose()
        }
        #expect(eventually(within: 10) { weakToken == nil })
    }

    @Test func disposeStopsAPendingTimer() {
        let source = CancellationTokenSource()
        let token = source.token
        let start = DispatchTime.now()
        source.cancel(after: 0.2)
        source.dispose()
        // A dispose that returned before the deadline must win; one that returned later
        // may have lost to the timer (this thread was descheduled), which is allowed.
        let disposedInTime = secondsElapsed(since: start) < 0.2
        usleep(400_000)
        if disposedInTime { #expect(!token.isCancellationRequested) }
    }

    @Test func aTokenDisposedFirstIsNeverCancelled() {
        // What a `cancel(after:)` timer or a timeout does when it fires just after the
        // owner's dispose: the C core must refuse, so the token keeps its state.
        let source = CancellationTokenSource()
        let token = source.token
        let runs = Counter()
        token.register { runs.increment() }
        source.dispose()
        #expect(!bolts_token_cancel(token._core))
        #expect(!token.isCancellationRequested)
        #expect(runs.value == 0)
        #expect(!source._cancelUnlessDisposed())
        #expect(!token.isCancellationRequested)
        // Registering afterwards drops the handler: nothing can cancel the token any more.
        let late = Counter()
        token.register { late.increment() }
        #expect(late.value == 0)
    }

    @Test func timersRacingDisposeRunEachHandlerAtMostOnce() {
        // Each source's timer fires at about the moment its owner disposes it. Whatever
        // the order: a handler runs at most once, never on a token that is not cancelled,
        // and a dispose that returned before the timer's deadline always wins. (A cancel
        // that set its bit just before the dispose may still see its handler dropped by
        // that dispose: the walk runs no handler disposed before it reached it.)
        let count = 200
        let runs = (0..<count).map { _ in Counter() }
        var tokens: [CancellationToken] = []
        var inTime = [Bool](repeating: false, count: count)
        for i in 0..<count {
            let source = CancellationTokenSource()
            let counter = runs[i]
            source.token.register { counter.increment() }
            tokens.append(source.token)
            let start = DispatchTime.now()
            source.cancel(after: 0.000_2)
            // Spin past roughly the deadline, alternating which side is likely first.
            while secondsElapsed(since: start) < (i % 2 == 0 ? 0.000_15 : 0.000_25) {}
            source.dispose()
            inTime[i] = secondsElapsed(since: start) < 0.000_2
        }
        // Every token is disposed now, so no timer can cancel one any more; a cancel that
        // began before its dispose may still be running its handler.
        usleep(50_000)
        var ranUncancelled = 0
        var lostInTime = 0
        for i in 0..<count {
            let value = runs[i].value
            if !tokens[i].isCancellationRequested && value != 0 { ranUncancelled += 1 }
            if inTime[i] && tokens[i].isCancellationRequested { lostInTime += 1 }
        }
        #expect(runs.allSatisfy { $0.value <= 1 })
        #expect(ranUncancelled == 0)
        #expect(lostInTime == 0)
    }

    // MARK: dispose()

    @Test func disposeDropsHandlersWithoutRunningThem() {
        let source = CancellationTokenSource()
        let token = source.token
        let runs = Counter()
        let lifetimes = LifetimeTracker()
        do {
            let tracked = lifetimes.track()
            token.register {
                tracked.touch()
                runs.increment()
            }
        }
        source.dispose()
        #expect(lifetimes.alive == 0)
        #expect(token._registrationCount == 0)
        #expect(runs.value == 0)
    }

    @Test func disposingTwiceIsHarmless() {
        let source = CancellationTokenSource()
        source.dispose()
        source.dispose()
    }

    @Test func disposingACancelledSourceIsHarmless() {
        let source = CancellationTokenSource()
        let token = source.token
        source.cancel()
        source.dispose()
        #expect(token.isCancellationRequested)
    }

    @Test func registrationCanBeDisposedAfterItsSourceWasDisposed() {
        let source = CancellationTokenSource()
        let registration = source.token.register {}
        source.dispose()
        registration.dispose()
    }

    @Test func registrationDisposedBeforeItsSourceIsDisposedIsHarmless() {
        let source = CancellationTokenSource()
        let registration = source.token.register {}
        registration.dispose()
        source.dispose()
    }

    @Test func registeringOnTheTokenOfADisposedSourceDropsTheHandler() {
        let source = CancellationTokenSource()
        let token = source.token
        source.dispose()
        let lifetimes = LifetimeTracker()
        let runs = Counter()
        do {
            let tracked = lifetimes.track()
            token.register {
                tracked.touch()
                runs.increment()
            }
        }
        #expect(lifetimes.alive == 0)
        #expect(runs.value == 0)
        #expect(!token.isCancellationRequested)
    }

    @Test func internalCancelUnlessDisposedDoesNotTrap() {
        let source = CancellationTokenSource()
        source.dispose()
        #expect(!source._cancelUnlessDisposed())
        let other = CancellationTokenSource()
        #expect(other._cancelUnlessDisposed())
        #expect(other.isCancellationRequested)
    }

    // MARK: Linked sources

    @Test func linkedSourceIsCancelledWhenAnyParentIsCancelled() {
        let first = CancellationTokenSource()
        let second = CancellationTokenSource()
        let linked = CancellationTokenSource(linkedTo: [first.token, second.token])
        let runs = Counter()
        linked.token.register { runs.increment() }
        #expect(!linked.isCancellationRequested)
        second.cancel()
        #expect(linked.isCancellationRequested)
        #expect(runs.value == 1)
        first.cancel()
        #expect(runs.value == 1)
    }

    @Test func linkedSourceOfACancelledParentStartsCancelled() {
        let parent = CancellationTokenSource()
        parent.cancel()
        let linked = CancellationTokenSource(linkedTo: [parent.token])
        #expect(linked.isCancellationRequested)
    }

    @Test func cancellingALinkedSourceLeavesItsParentsAlone() {
        let parent = CancellationTokenSource()
        let linked = CancellationTokenSource(linkedTo: [parent.token])
        linked.cancel()
        #expect(linked.isCancellationRequested)
        #expect(!parent.isCancellationRequested)
        // Its link is useless now and was removed from the parent.
        #expect(parent.token._registrationCount == 0)
    }

    @Test func disposingALinkedSourceUnhooksItFromItsParents() {
        let parent = CancellationTokenSource()
        let linked = CancellationTokenSource(linkedTo: [parent.token])
        let linkedToken = linked.token
        #expect(parent.token._registrationCount == 1)
        linked.dispose()
        #expect(parent.token._registrationCount == 0)
        parent.cancel()
        #expect(!linkedToken.isCancellationRequested)
    }

    @Test func linkedTokenKeepsListeningAfterItsSourceIsReleased() {
        let parent = CancellationTokenSource()
        let runs = Counter()
        do {
            let linked = CancellationTokenSource(linkedTo: [parent.token])
            linked.token.register { runs.increment() }
        }
        parent.cancel()
        #expect(runs.value == 1)
    }

    @Test func linkedChainCancelsInOrderBeforeCancelReturns() {
        let root = CancellationTokenSource()
        let middle = CancellationTokenSource(linkedTo: [root.token])
        let leaf = CancellationTokenSource(linkedTo: [middle.token])
        let log = Recorder<Int>()
        root.token.register { log.append(0) }
        middle.token.register { log.append(1) }
        leaf.token.register { log.append(2) }
        root.cancel()
        #expect(leaf.isCancellationRequested)
        // The link was registered before the handlers, so each child runs first.
        #expect(log.values == [2, 1, 0])
    }

    @Test func droppedParentAndChildLeakNothing() {
        let parentHandlers = LifetimeTracker()
        let childHandlers = LifetimeTracker()
        do {
            let parent = CancellationTokenSource()
            let child = CancellationTokenSource(linkedTo: [parent.token])
            let parentTracked = parentHandlers.track()
            let childTracked = childHandlers.track()
            parent.token.register { parentTracked.touch() }
            child.token.register { childTracked.touch() }
        }
        // Armed handlers are released when their token is freed: both tokens were freed.
        #expect(parentHandlers.alive == 0)
        #expect(childHandlers.alive == 0)
    }

    @Test func sourceLinkedToTheSameParentTwiceIsCancelledOnce() {
        let parent = CancellationTokenSource()
        let linked = CancellationTokenSource(linkedTo: [parent.token, parent.token])
        let runs = Counter()
        linked.token.register { runs.increment() }
        parent.cancel()
        #expect(runs.value == 1)
    }
}
