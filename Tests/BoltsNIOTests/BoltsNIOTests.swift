@_spi(Bridges) import Bolts
import BoltsNIO
import NIOCore
import NIOPosix
import Testing

private struct Boom: Error, Equatable {
    let code: Int
}

/// One event-loop thread per suite run; shut down by the last test that needs it.
private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)

@Suite("BoltsNIO")
struct BoltsNIOTests {
    let loop = group.next()

    // MARK: EventLoop as an executor

    @Test func eventLoopExecutorRunsJobsOnTheLoop() throws {
        let task = BoltsTask<Bool>.execute(.eventLoop(loop)) { [loop] in loop.inEventLoop }
        #expect(task.waitUntilCompleted(timeout: 10))
        #expect(task.result == true)
    }

    @Test func continuationsOnTheLoopRunThere() throws {
        let source = TaskCompletionSource<Int>()
        let executor = loop.boltsExecutor
        let tasks = (0..<100).map { i in
            source.task.continueWith(executor) { [loop] task -> Int in
                precondition(loop.inEventLoop)
                return task.result! + i
            }
        }
        source.set(result: 1)
        let all = BoltsTask<Int>.whenAllResult(tasks)
        #expect(all.waitUntilCompleted(timeout: 10))
        #expect(all.result == Array(1...100))
    }

    @Test func aLongChainOnTheLoopDoesNotGrowTheStack() throws {
        var task = BoltsTask<Int>(0)
        for _ in 0..<10_000 {
            task = task.continueOnSuccessWith(.eventLoop(loop)) { $0 + 1 }
        }
        #expect(task.waitUntilCompleted(timeout: 30))
        #expect(task.result == 10_000)
    }

    // MARK: EventLoopFuture -> Task

    @Test func succeededFutureBecomesATaskWithTheValue() throws {
        let promise = loop.makePromise(of: String.self)
        let task = promise.futureResult.boltsTask()
        #expect(!task.completed)
        promise.succeed("hello")
        #expect(task.waitUntilCompleted(timeout: 10))
        #expect(task.result == "hello")
    }

    @Test func failedFutureBecomesAFaultedTaskWithTheSameError() throws {
        let task = loop.makeFailedFuture(Boom(code: 7)).map { 1 }.boltsTask()
        #expect(task.waitUntilCompleted(timeout: 10))
        #expect(task.faulted)
        #expect(task.error as? Boom == Boom(code: 7))
    }

    @Test func futureFailingWithACancellationErrorBecomesACancelledTask() throws {
        let a = loop.makeFailedFuture(CancelledError()).map { 1 }.boltsTask()
        let b = loop.makeFailedFuture(CancellationError()).map { 1 }.boltsTask()
        #expect(a.waitUntilCompleted(timeout: 10) && b.waitUntilCompleted(timeout: 10))
        #expect(a.cancelled && b.cancelled)
        #expect(!a.faulted && !b.faulted)
    }

    @Test func cancellingTheTokenCancelsTheTaskAtOnceAndIgnoresTheLaterValue() throws {
        let promise = loop.makePromise(of: Int.self)
        let cts = CancellationTokenSource()
        let task = promise.futureResult.boltsTask(cancellationToken: cts.token)
        cts.cancel()
        #expect(task.cancelled, "cancelled before cancel() returned")
        promise.succeed(5)
        _ = try promise.futureResult.wait()
        #expect(task.cancelled && task.result == nil)
    }

    @Test func anAlreadyCancelledTokenGivesACancelledTask() throws {
        let cts = CancellationTokenSource()
        cts.cancel()
        let task = loop.makeSucceededFuture(1).boltsTask(cancellationToken: cts.token)
        #expect(task.cancelled)
    }

    // MARK: Task -> EventLoopFuture

    @Test func succeededTaskBecomesASucceededFuture() throws {
        let source = TaskCompletionSource<Int>()
        let future = source.task.eventLoopFuture(on: loop)
        source.set(result: 42)
        #expect(try future.wait() == 42)
    }

    @Test func faultedTaskBecomesAFailedFutureWithTheSameError() throws {
        let future = BoltsTask<Int>(error: Boom(code: 3)).eventLoopFuture(on: loop)
        #expect(throws: Boom(code: 3)) { try future.wait() }
    }

    @Test func cancelledTaskBecomesAFutureFailedWithCancelledError() throws {
        let future = BoltsTask<Int>.cancelledTask().eventLoopFuture(on: loop)
        #expect(throws: CancelledError()) { try future.wait() }
    }

    @Test func futureCallbacksRunOnTheLoopEvenWhenTheTaskEndsElsewhere() throws {
        let pool = ThreadPool(threadCount: 1, name: "nio-pool")
        let task = BoltsTask<Int>.execute(.pool(pool)) { 9 }
        let onLoop = task.eventLoopFuture(on: loop).map { [loop] value in (value, loop.inEventLoop) }
        let (value, wasOnLoop) = try onLoop.wait()
        #expect(value == 9 && wasOnLoop)
        pool.shutdown()
    }

    /// The deferred completion (a pool worker with jobs in its queue queues the promise's
    /// completion behind them): every outcome still arrives, on the loop.
    @Test(arguments: ["shared", "own"])
    func tasksEndingOnABusyWorkerStillCompleteTheirFutures(poolKind: String) throws {
        let pool = poolKind == "shared" ? ThreadPool.shared : ThreadPool(threadCount: 2, name: "busy")
        defer { if pool !== ThreadPool.shared { pool.shutdown() } }
        #expect(!ThreadPool.currentWorkerHasQueuedJobs, "not a worker here")
        var deferred = 0
        for round in 0..<50 {
            let value = TaskCompletionSource<Int>()
            let failure = TaskCompletionSource<Int>()
            let cancellation = TaskCompletionSource<Int>()
            let futures = (
                value.task.eventLoopFuture(on: loop).map { [loop] in ($0, loop.inEventLoop) },
                failure.task.eventLoopFuture(on: loop),
                cancellation.task.eventLoopFuture(on: loop)
            )
            let sawQueue = TaskCompletionSource<Bool>()
            pool.execute {
                // Jobs submitted by a worker go to its own queue, so it now holds some.
                for _ in 0..<8 { pool.execute {} }
                sawQueue.set(result: ThreadPool.currentWorkerHasQueuedJobs)
                value.set(result: round)
                failure.set(error: Boom(code: round))
                cancellation.cancel()
            }
            let (result, onLoop) = try futures.0.wait()
            #expect(result == round && onLoop)
            #expect(throws: Boom(code: round)) { try futures.1.wait() }
            #expect(throws: CancelledError()) { try futures.2.wait() }
            #expect(sawQueue.task.waitUntilCompleted(timeout: 10))
            if sawQueue.task.result == true { deferred += 1 }
        }
        // Another worker may steal the eight jobs first now and then, but not every time.
        #expect(deferred > 0, "the deferred path was never taken")
    }

    @Test func roundTripKeepsValuesErrorsAndCancellation() throws {
        #expect(try BoltsTask(5).eventLoopFuture(on: loop).boltsTask().eventLoopFuture(on: loop).wait() == 5)
        let faulted = BoltsTask<Int>(error: Boom(code: 1)).eventLoopFuture(on: loop).boltsTask()
        #expect(faulted.waitUntilCompleted(timeout: 10))
        #expect(faulted.error as? Boom == Boom(code: 1))
        let cancelled = BoltsTask<Int>.cancelledTask().eventLoopFuture(on: loop).boltsTask()
        #expect(cancelled.waitUntilCompleted(timeout: 10))
        #expect(cancelled.cancelled)
    }

    @Test func asyncCodeCanAwaitTheBridgedTask() async throws {
        let value = try await loop.makeSucceededFuture(11).boltsTask().value
        #expect(value == 11)
        await #expect(throws: CancellationError.self) {
            _ = try await loop.makeFailedFuture(CancelledError()).map { 0 }.boltsTask().value
        }
    }
}
