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
        let runs = CancellationCounter()
        source.token.register { runs.increment() }
        source.cancel(after: 0)
        #expect(source.isCancellationRequested)
        #expect(runs.value == 1)
    }

    @Test func cancelAfterADelayCancelsLater() {
        let source = CancellationTokenSource()
        let runs = CancellationCounter()
        source.token.register { runs.increment() }
        source.cancel(after: 0.05)
        #expect(!source.isCancellationRequested)
        #expect(cancellationEventually(within: 10) { runs.value == 1 })
        #expect(source.isCancellationRequested)
    }

    @Test func cancelAfterKeepsTheEarliestDeadline() {
        let source = CancellationTokenSource()
        source.cancel(after: 3600)
        source.cancel(after: 0.02)
        source.cancel(after: 7200)
        #expect(cancellationEventually(within: 10) { source.isCancellationRequested })
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
        let runs = CancellationCounter()
        token.register { runs.increment() }
        source!.cancel(after: 0.02)
        source = nil
        #expect(cancellationEventually(within: 10) { runs.value == 1 })
        #expect(token.isCancellationRequested)
    }

    @Test func timerReleasesTheTokenAfterItFired() {
        weak var weakToken: CancellationToken?
        do {
            let source = CancellationTokenSource()
            weakToken = source.token
            source.cancel(after: 0.01)
        }
        // The armed timer keeps the token alive, so that it can still cancel it...
        #expect(weakToken != nil)
        // ...and lets it go once it fired.
        #expect(cancellationEventually(within: 10) { weakToken == nil })
    }

    @Test func disposeReleasesThePendingTimer() {
        weak var weakToken: CancellationToken?
        do {
            let source = CancellationTokenSource()
            weakToken = source.token
            source.cancel(after: 3600)
            source.dispose()
        }
        #expect(cancellationEventually(within: 10) { weakToken == nil })
    }

    @Test func disposeStopsAPendingTimer() {
        let source = CancellationTokenSource()
        let token = source.token
        source.cancel(after: 0.02)
        source.dispose()
        usleep(100_000)
        #expect(!token.isCancellationRequested)
    }

    // MARK: dispose()

    @Test func disposeDropsHandlersWithoutRunningThem() {
        let source = CancellationTokenSource()
        let token = source.token
        let runs = CancellationCounter()
        let released = CancellationFlag()
        do {
            let tracker = CancellationLifetimeTracker(released)
            token.register {
                tracker.touch()
                runs.increment()
            }
        }
        source.dispose()
        #expect(released.isSet)
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
        let released = CancellationFlag()
        let runs = CancellationCounter()
        do {
            let tracker = CancellationLifetimeTracker(released)
            token.register {
                tracker.touch()
                runs.increment()
            }
        }
        #expect(released.isSet)
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
        let runs = CancellationCounter()
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
        let runs = CancellationCounter()
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
        let log = CancellationLog()
        root.token.register { log.append(0) }
        middle.token.register { log.append(1) }
        leaf.token.register { log.append(2) }
        root.cancel()
        #expect(leaf.isCancellationRequested)
        // The link was registered before the handlers, so each child runs first.
        #expect(log.values == [2, 1, 0])
    }

    @Test func droppedParentAndChildLeakNothing() {
        let parentHandlerReleased = CancellationFlag()
        let childHandlerReleased = CancellationFlag()
        do {
            let parent = CancellationTokenSource()
            let child = CancellationTokenSource(linkedTo: [parent.token])
            let parentTracker = CancellationLifetimeTracker(parentHandlerReleased)
            let childTracker = CancellationLifetimeTracker(childHandlerReleased)
            parent.token.register { parentTracker.touch() }
            child.token.register { childTracker.touch() }
        }
        // Armed handlers are released when their token is freed: both tokens were freed.
        #expect(parentHandlerReleased.isSet)
        #expect(childHandlerReleased.isSet)
    }

    @Test func sourceLinkedToTheSameParentTwiceIsCancelledOnce() {
        let parent = CancellationTokenSource()
        let linked = CancellationTokenSource(linkedTo: [parent.token, parent.token])
        let runs = CancellationCounter()
        linked.token.register { runs.increment() }
        parent.cancel()
        #expect(runs.value == 1)
    }
}
