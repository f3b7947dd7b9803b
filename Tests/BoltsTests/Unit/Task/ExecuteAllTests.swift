import BoltsTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

@testable import Bolts

/// A value that counts its live instances, to check that every value a fan-out made is
/// destroyed exactly once, whether it reached the result or not.
private final class Tracked: Sendable {
    static let live = Atomic<Int>(0)
    let index: Int
    init(_ index: Int) {
        self.index = index
        Tracked.live.add(1, ordering: .relaxed)
    }
    deinit { Tracked.live.subtract(1, ordering: .relaxed) }
}

@Suite(.serialized) struct ExecuteAllTests {
    @Test func valuesComeBackInIndexOrderAndEachIndexRunsOnce() {
        let count = 1_000
        let runs = (0..<count).map { _ in Counter() }
        let all = Task<Int>.executeAll(.pool(.shared), count: count) { index in
            runs[index].increment()
            return index * 3
        }
        #expect(all.waitUntilCompleted(timeout: 60))
        #expect(all.result == (0..<count).map { $0 * 3 })
        #expect(runs.allSatisfy { $0.value == 1 })
    }

    @Test func zeroCallsHaveAlreadySucceededWithNothing() {
        let ran = Counter()
        let all = Task<Int>.executeAll(.pool(.shared), count: 0) { _ in ran.increment() }
        #expect(all.isCompleted)
        #expect(all.result == [])
        #expect(ran.value == 0)
    }

    @Test func inlineExecutorsCompleteBeforeReturning() {
        let all = Task<String>.executeAll(count: 4) { "#\($0)" }
        #expect(all.isCompleted)
        #expect(all.result == ["#0", "#1", "#2", "#3"])
    }

    @Test func otherExecutorsRunEveryIndex() {
        let queue = DispatchQueue(label: "executeAll", attributes: .concurrent)
        let all = Task<Int>.executeAll(.queue(queue), count: 64) { $0 + 1 }
        #expect(all.waitUntilCompleted(timeout: 60))
        #expect(all.result == Array(1...64))
    }

    @Test func oneErrorPassesThroughUnchanged() {
        let all = Task<Int>.executeAll(.pool(.shared), count: 32) { index in
            if index == 7 { throw TestError(7) }
            if index == 9 { throw CancelledError() }
            return index
        }
        #expect(all.waitUntilCompleted(timeout: 60))
        #expect(all.error as? TestError == TestError(7))
    }

    @Test func severalErrorsAreAggregatedInIndexOrder() {
        let all = Task<Int>.executeAll(.pool(.shared), count: 32) { index in
            // The later index throws first, so index order is not completion order.
            if index == 20 { throw TestError(20) }
            if index == 3 {
                usleep(2_000)
                throw TestError(3)
            }
            return index
        }
        #expect(all.waitUntilCompleted(timeout: 60))
        let aggregate = all.error as? AggregateError
        #expect(aggregate?.errors.compactMap { ($0 as? TestError)?.code } == [3, 20])
    }

    @Test func cancellationsWithoutErrorsCancel() {
        let all = Task<Int>.executeAll(.pool(.shared), count: 16) { index in
            if index == 1 { throw CancelledError() }
            if index == 2 { throw CancellationError() }
            return index
        }
        #expect(all.waitUntilCompleted(timeout: 60))
        #expect(all.isCancelled)
    }

    @Test func aTokenCancelledBeforehandRunsNothing() {
        let source = CancellationTokenSource()
        source.cancel()
        let ran = Counter()
        let all = Task<Int>.executeAll(.pool(.shared), count: 8, cancellationToken: source.token) { _ in
            ran.increment()
        }
        #expect(all.isCancelled)
        #expect(ran.value == 0)
    }

    @Test func aTokenCancelledMidwaySkipsTheCallsNotStarted() {
        let source = CancellationTokenSource()
        let ran = Counter()
        // One worker, so the calls run one after the other and the cancel lands between them.
        let pool = ThreadPool(threadCount: 1, name: "fan-cancel")
        defer { pool.shutdown(wait: true) }
        let all = Task<Int>.executeAll(.pool(pool), count: 100, cancellationToken: source.token) { index in
            if ran.increment() == 10 { source.cancel() }
            return index
        }
        #expect(all.waitUntilCompleted(timeout: 60))
        #expect(all.isCancelled)
        #expect(ran.value == 10)
    }

    @Test func everyValueIsDestroyedOnceWhateverTheOutcome() {
        for failing in [false, true] {
            do {
                let all = Task<Tracked>.executeAll(.pool(.shared), count: 50) { index in
                    if failing && index == 25 { throw TestError(25) }
                    return Tracked(index)
                }
                #expect(all.waitUntilCompleted(timeout: 60))
                if failing {
                    #expect(all.isFaulted)
                } else {
                    #expect(all.result?.map(\.index) == Array(0..<50))
                }
            }
            // The last call releases the shared state right after completing the result:
            // give it a moment on a loaded machine.
            var waited = 0
            while Tracked.live.load(ordering: .relaxed) != 0 && waited < 10_000 {
                usleep(1_000)
                waited += 1
            }
            #expect(Tracked.live.load(ordering: .relaxed) == 0)
        }
    }

    /// Many fan-outs at once from several threads onto a small pool: each result holds
    /// exactly its own values (run under ThreadSanitizer in CI).
    @Test func concurrentFanOutsFromManyThreads() {
        let pool = ThreadPool(threadCount: 2, name: "fan-stress")
        defer { pool.shutdown(wait: true) }
        let failures = Counter()
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<200 {
                let count = 1 + (round % 33)
                let all = Task<Int>.executeAll(.pool(pool), count: count) { index in thread * 1_000_000 + round * 100 + index }
                guard all.waitUntilCompleted(timeout: 60),
                    all.result == (0..<count).map({ thread * 1_000_000 + round * 100 + $0 })
                else {
                    failures.increment()
                    continue
                }
            }
        }
        #expect(failures.value == 0)
    }
}
