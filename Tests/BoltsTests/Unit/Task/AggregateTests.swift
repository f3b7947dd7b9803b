import Dispatch
import Testing

@testable import Bolts

@Suite struct AggregateTests {
    @Test func whenAllSucceedsAfterEveryInput() {
        let sources = (0..<5).map { _ in TaskCompletionSource<Int>() }
        let all = Task.whenAll(sources.map(\.task))
        for (i, source) in sources.enumerated() {
            #expect(!all.isCompleted)
            source.set(result: i)
        }
        #expect(all.isCompleted)
        #expect(!all.isFaulted && !all.isCancelled)
    }

    @Test func whenAllOverCompletedInputsIsCompleteOnReturn() {
        #expect(Task.whenAll([Task(1), Task(2)]).isCompleted)
        #expect(Task.whenAllResult([Task(1), Task(2)]).result == [1, 2])
        #expect(Task.whenAll([Task(1), Task<Int>(error: TestError(1))]).isFaulted)
    }

    @Test func whenAllWithOneErrorPassesItThrough() {
        let all = Task.whenAll([Task(1), Task<Int>(error: TestError(3)), Task<Int>.cancelledTask()])
        #expect(all.error as? TestError == TestError(3))
    }

    @Test func whenAllWithSeveralErrorsAggregatesThemInInputOrder() {
        let a = TaskCompletionSource<Int>()
        let b = TaskCompletionSource<Int>()
        let c = TaskCompletionSource<Int>()
        let all = Task.whenAll([a.task, b.task, c.task])
        c.set(error: TestError(3))
        b.set(result: 0)
        a.set(error: TestError(1))
        let aggregate = all.error as? AggregateError
        #expect(aggregate?.errors.compactMap { ($0 as? TestError)?.code } == [1, 3])
    }

    @Test func whenAllWithCancellationAndNoErrorIsCancelled() {
        let all = Task.whenAll([Task(1), Task<Int>.cancelledTask()])
        #expect(all.isCancelled)
    }

    @Test func emptyAggregates() {
        #expect(Task<Int>.whenAll([]).isCompleted)
        #expect(Task<Int>.whenAll([]).result != nil)
        #expect(Task<Int>.whenAllResult([]).result == [])
        #expect(Task<Int>.whenAny([]).isCancelled)
        #expect(Task<Int>.whenAnySuccess([]).isCancelled)
    }

    @Test func whenAllResultKeepsInputOrder() {
        let sources = (0..<4).map { _ in TaskCompletionSource<Int>() }
        let all = Task.whenAllResult(sources.map(\.task))
        for i in [3, 1, 0, 2] { sources[i].set(result: i * 10) }
        #expect(all.result == [0, 10, 20, 30])
    }

    @Test func whenAllFromManyThreads() {
        let count = 1000
        let sources = (0..<count).map { _ in TaskCompletionSource<Int>() }
        let all = Task.whenAllResult(sources.map(\.task))
        DispatchQueue.concurrentPerform(iterations: count) { sources[$0].set(result: $0) }
        all.waitUntilCompleted()
        #expect(all.result == Array(0..<count))
    }

    @Test func whenAnyGivesTheFirstToFinishWhateverItsOutcome() {
        let a = TaskCompletionSource<Int>()
        let b = TaskCompletionSource<Int>()
        let any = Task.whenAny([a.task, b.task])
        #expect(!any.isCompleted)
        b.set(error: TestError(2))
        #expect(any.result === b.task)
        a.set(result: 1)
        #expect(any.result === b.task)
    }

    @Test func whenAnyWithCompletedInputsPicksTheFirstInInputOrder() {
        let pending = TaskCompletionSource<Int>()
        let done = Task(5)
        let any = Task.whenAny([pending.task, done, Task(6)])
        #expect(any.result === done)
        pending.set(result: 0)  // complete what we create (see TaskCompletionSource's docs)
    }

    @Test func whenAnySuccessSkipsFailures() {
        let a = TaskCompletionSource<Int>()
        let b = TaskCompletionSource<Int>()
        let any = Task.whenAnySuccess([a.task, b.task])
        a.set(error: TestError(1))
        #expect(!any.isCompleted)
        b.set(result: 7)
        #expect(any.result == 7)
    }

    @Test func whenAnySuccessWhenNothingSucceeds() {
        let one = Task.whenAnySuccess([Task<Int>(error: TestError(1)), Task<Int>.cancelledTask()])
        #expect(one.error as? TestError == TestError(1))
        let two = Task.whenAnySuccess([Task<Int>(error: TestError(1)), Task<Int>(error: TestError(2))])
        #expect((two.error as? AggregateError)?.errors.count == 2)
        let none = Task.whenAnySuccess([Task<Int>.cancelledTask(), Task<Int>.cancelledTask()])
        #expect(none.isCancelled)
    }

    @Test func variadicWhenAllMixesTypes() {
        let a = TaskCompletionSource<Int>()
        let b = TaskCompletionSource<String>()
        let all = Task.whenAll(a.task, b.task, Task(true))
        #expect(!all.isCompleted)
        a.set(result: 1)
        b.set(result: "two")
        let values = all.result
        #expect(values?.0 == 1)
        #expect(values?.1 == "two")
        #expect(values?.2 == true)
    }

    @Test func variadicWhenAllFailureAndCancellation() {
        let failed = Task.whenAll(Task(1), Task<String>(error: TestError(4)))
        #expect(failed.error as? TestError == TestError(4))
        let cancelled = Task.whenAll(Task(1), Task<String>.cancelledTask())
        #expect(cancelled.isCancelled)
        let two = Task.whenAll(Task<Int>(error: TestError(1)), Task<String>(error: TestError(2)))
        #expect((two.error as? AggregateError)?.errors.count == 2)
    }

    /// The aggregate waits for one input at a time, from the last: whatever order the inputs
    /// complete in (first to last, last to first, or shuffled), it completes exactly when
    /// the last pending one does, with every value in input order.
    @Test(arguments: ["first to last", "last to first", "shuffled", "middle out"])
    func whenAllResultCompletesOnlyAfterEveryInputInAnyOrder(_ order: String) {
        let count = 200
        let sources = (0..<count).map { _ in TaskCompletionSource<Int>() }
        let all = Task.whenAllResult(sources.map(\.task))
        let both = Task.whenAll(sources[0].task, sources[count - 1].task)
        var indices = Array(0..<count)
        switch order {
        case "last to first": indices.reverse()
        case "shuffled":
            var generator = SplitMix(seed: 7)
            indices.shuffle(using: &generator)
        case "middle out": indices.sort { abs($0 - count / 2) < abs($1 - count / 2) }
        default: break
        }
        for (done, index) in indices.enumerated() {
            #expect(!all.isCompleted, "complete after \(done) of \(count) inputs")
            sources[index].set(result: index * 3)
        }
        #expect(all.result == (0..<count).map { $0 * 3 })
        #expect(both.result.map { [$0.0, $0.1] } == [0, (count - 1) * 3])
    }

    /// Inputs completed from the last to the first make the aggregate register on each in
    /// turn (each registration by the completion before): a long sequence must neither
    /// nest on the stack nor lose an input.
    @Test func whenAllOverAHundredThousandInputsCompletedFromTheLast() {
        let count = 100_000
        let sources = (0..<count).map { _ in TaskCompletionSource<Int>() }
        let all = Task.whenAll(sources.map(\.task))
        for index in (0..<count).reversed() {
            sources[index].set(result: index)
        }
        #expect(all.isCompleted && !all.isFaulted && !all.isCancelled)
    }

    /// Errors and cancellations seen by the backward walk keep their rules: errors in input
    /// order whatever order they arrived in, cancellation only without an error.
    @Test func whenAllGathersErrorsInInputOrderWhenTheyArriveLastToFirst() {
        let sources = (0..<6).map { _ in TaskCompletionSource<Int>() }
        let all = Task.whenAll(sources.map(\.task))
        for index in (0..<6).reversed() {
            switch index {
            case 1, 4: sources[index].set(error: TestError(index))
            case 2: sources[index].cancel()
            default: sources[index].set(result: index)
            }
        }
        #expect((all.error as? AggregateError)?.errors.compactMap { ($0 as? TestError)?.code } == [1, 4])
        let cancelled = (0..<3).map { _ in TaskCompletionSource<Int>() }
        let allCancelled = Task.whenAllResult(cancelled.map(\.task))
        cancelled[2].cancel()
        cancelled[1].set(result: 1)
        #expect(!allCancelled.isCompleted)
        cancelled[0].set(result: 0)
        #expect(allCancelled.isCancelled)
    }
}

/// A small deterministic generator for shuffles in tests.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
