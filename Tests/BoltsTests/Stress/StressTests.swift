import BoltsTestSupport
import Dispatch
import Synchronization
import Testing

@testable import Bolts

/// Many threads race the exact transitions: completion against adding continuations, and
/// trySet against trySet. Each check is exact: every continuation runs exactly once, sees the
/// winning value, and one completer wins per task.
@Suite struct StressTests {
    /// Each of `threads` workers sweeps the same array of pending tasks: even workers add two
    /// continuations per task, odd workers try to complete it with their own value.
    @Test func completionRacesAddingContinuations() {
        let tasks = 60_000 * stressScale
        let threads = 8
        let sources = (0..<tasks).map { _ in TaskCompletionSource<Int>() }
        let runs = UnsafeMutablePointer<Atomic<Int>>.allocate(capacity: tasks)
        let mismatches = Counter()
        let outOfOrder = Counter()
        let wins = Counter()
        for i in 0..<tasks { (runs + i).initialize(to: Atomic(0)) }
        defer { runs.deallocate() }
        nonisolated(unsafe) let counters = runs

        DispatchQueue.concurrentPerform(iterations: threads) { worker in
            for i in 0..<tasks {
                let index = (i + worker * 997) % tasks  // workers start at different places
                let source = sources[index]
                if worker % 2 == 0 {
                    let first = Counter()
                    source.task.continueWith { task in
                        first.increment()
                        counters[index].add(1, ordering: .relaxed)
                        if task.result! % 100 != index % 100 { mismatches.increment() }
                    }
                    source.task.continueWith { task in
                        if first.value != 1 { outOfOrder.increment() }
                        counters[index].add(1, ordering: .relaxed)
                        if task.result! % 100 != index % 100 { mismatches.increment() }
                    }
                } else {
                    if source.trySet(result: worker * 100 + index % 100) { wins.increment() }
                }
            }
        }
        let adders = threads / 2
        var wrongCounts = 0
        for i in 0..<tasks where counters[i].load(ordering: .relaxed) != 2 * adders { wrongCounts += 1 }
        #expect(wins.value == tasks)
        #expect(wrongCounts == 0)
        #expect(mismatches.value == 0)
        #expect(outOfOrder.value == 0)
    }

    @Test func trySetRacesTrySet() {
        let tasks = 50_000 * stressScale
        let threads = 4
        let sources = (0..<tasks).map { _ in TaskCompletionSource<Int>() }
        let wins = UnsafeMutablePointer<Atomic<Int>>.allocate(capacity: tasks)
        for i in 0..<tasks { (wins + i).initialize(to: Atomic(0)) }
        defer { wins.deallocate() }
        nonisolated(unsafe) let winners = wins
        DispatchQueue.concurrentPerform(iterations: threads) { worker in
            for i in 0..<tasks {
                let won: Bool
                switch worker % 3 {
                case 0: won = sources[i].trySet(result: worker)
                case 1: won = sources[i].trySet(error: TestError(worker))
                default: won = sources[i].tryCancel()
                }
                if won { winners[i].add(1, ordering: .relaxed) }
            }
        }
        var bad = 0
        for i in 0..<tasks {
            if winners[i].load(ordering: .relaxed) != 1 || !sources[i].task.isCompleted { bad += 1 }
            _ = sources[i].task.error  // observe, so the unobserved handler stays quiet
        }
        #expect(bad == 0)
    }

    @Test func continuationsAddedWhileCompletingRunExactlyOnce() {
        // One completer, many adders hammering the same task for its whole life.
        let rounds = 2_000 * stressScale
        let total = Counter()
        let expected = Counter()
        for _ in 0..<rounds {
            let source = TaskCompletionSource<Int>()
            DispatchQueue.concurrentPerform(iterations: 4) { worker in
                if worker == 0 {
                    source.set(result: 1)
                } else {
                    for _ in 0..<25 {
                        expected.increment()
                        source.task.continueWith { _ in total.increment() }
                    }
                }
            }
        }
        #expect(total.value == expected.value)
    }

    @Test func aggregatesCompletedFromManyThreads() {
        let rounds = 200 * stressScale
        var failures = 0
        for round in 0..<rounds {
            let sources = (0..<64).map { _ in TaskCompletionSource<Int>() }
            let all = Task.whenAllResult(sources.map(\.task))
            let any = Task.whenAny(sources.map(\.task))
            DispatchQueue.concurrentPerform(iterations: 64) { sources[$0].set(result: $0 + round) }
            all.waitUntilCompleted()
            any.waitUntilCompleted()
            if all.result != (0..<64).map({ $0 + round }) { failures += 1 }
            if any.result?.isCompleted != true { failures += 1 }
        }
        #expect(failures == 0)
    }

    /// The aggregate's backward walk races the inputs' completions: the aggregate is made
    /// while other threads complete its inputs (in input order, in reverse, or interleaved),
    /// so that its look at an input, its registration on the first pending one and that
    /// input's completion (which resumes the walk on the completing thread) overlap. Each
    /// aggregate must complete once, after all of its inputs, with every value in order.
    @Test(arguments: ["in order", "reversed", "interleaved"])
    func aggregateWalkRacesTheInputsCompletions(_ order: String) {
        let rounds = 300 * stressScale
        let count = 48
        var failures = 0
        for round in 0..<rounds {
            let sources = (0..<count).map { _ in TaskCompletionSource<Int>() }
            let started = DispatchSemaphore(value: 0)
            let aggregate = Mutex<Task<[Int]>?>(nil)
            DispatchQueue.concurrentPerform(iterations: 4) { thread in
                if thread == 0 {
                    started.signal()
                    started.signal()
                    started.signal()
                    let all = Task.whenAllResult(sources.map(\.task))
                    aggregate.withLock { $0 = all }
                    return
                }
                started.wait()
                // Threads 1-3 complete a third of the inputs each.
                var mine = Array(stride(from: thread - 1, to: count, by: 3))
                switch order {
                case "reversed": mine.reverse()
                case "interleaved": if (round + thread) % 2 == 0 { mine.reverse() }
                default: break
                }
                for index in mine { sources[index].set(result: index &+ round) }
            }
            guard let all = aggregate.withLock({ $0 }) else {
                failures += 1
                continue
            }
            if !all.waitUntilCompleted(timeout: 30) || all.result != (0..<count).map({ $0 &+ round }) { failures += 1 }
        }
        #expect(failures == 0)
    }
}
