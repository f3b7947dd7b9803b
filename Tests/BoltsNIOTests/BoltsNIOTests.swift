import Bolts
import BoltsNIO
import BoltsTestSupport
import Dispatch
import Glibc
import NIOCore
import NIOPosix
import Synchronization
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
        #expect(!task.isCompleted)
        promise.succeed("hello")
        #expect(task.waitUntilCompleted(timeout: 10))
        #expect(task.result == "hello")
    }

    @Test func failedFutureBecomesAFaultedTaskWithTheSameError() throws {
        let task = loop.makeFailedFuture(Boom(code: 7)).map { 1 }.boltsTask()
        #expect(task.waitUntilCompleted(timeout: 10))
        #expect(task.isFaulted)
        #expect(task.error as? Boom == Boom(code: 7))
    }

    @Test func futureFailingWithACancellationErrorBecomesACancelledTask() throws {
        let a = loop.makeFailedFuture(CancelledError()).map { 1 }.boltsTask()
        let b = loop.makeFailedFuture(CancellationError()).map { 1 }.boltsTask()
        #expect(a.waitUntilCompleted(timeout: 10) && b.waitUntilCompleted(timeout: 10))
        #expect(a.isCancelled && b.isCancelled)
        #expect(!a.isFaulted && !b.isFaulted)
    }

    @Test func cancellingTheTokenCancelsTheTaskAtOnceAndIgnoresTheLaterValue() throws {
        let promise = loop.makePromise(of: Int.self)
        let cts = CancellationTokenSource()
        let task = promise.futureResult.boltsTask(cancellationToken: cts.token)
        cts.cancel()
        #expect(task.isCancelled, "cancelled before cancel() returned")
        promise.succeed(5)
        _ = try promise.futureResult.wait()
        #expect(task.isCancelled && task.result == nil)
    }

    @Test func anAlreadyCancelledTokenGivesACancelledTask() throws {
        let cts = CancellationTokenSource()
        cts.cancel()
        let task = loop.makeSucceededFuture(1).boltsTask(cancellationToken: cts.token)
        #expect(task.isCancelled)
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

    /// A task completed on a pool worker whose queue holds jobs: the future is completed by
    /// a job queued behind them (the worker runs its queued work first), and still with the
    /// task's value, error or cancellation.
    @Test func aWorkerWithQueuedJobsCompletesTheFutureBehindThem() throws {
        let pool = ThreadPool(threadCount: 2, name: "nio-hop")
        let order = Mutex<[String]>([])
        let queuedJobRan = Mutex(false)
        let source = TaskCompletionSource<Int>()
        let errorSource = TaskCompletionSource<Int>()
        let cancelSource = TaskCompletionSource<Int>()
        let futures = [source, errorSource, cancelSource].map { source in
            source.task.eventLoopFuture(on: loop).always { _ in
                let behind = queuedJobRan.withLock { $0 }
                order.withLock { $0.append(behind ? "future after the queued job" : "future first") }
            }
        }
        let held = HeldWorker(of: pool)
        let done = BoltsTask<Void>.execute(.pool(pool)) {
            // Queued on this worker's own queue (the other worker is held: nobody takes it
            // meanwhile). It computes for 50 ms (a sleep would be a blocked job, whose queue
            // the pool hands to another thread), so that futures completed inline would
            // reach the loop first.
            pool.execute {
                busy(nanoseconds: 50_000_000)
                queuedJobRan.withLock { $0 = true }
            }
            source.set(result: 7)
            errorSource.set(error: Boom(code: 4))
            cancelSource.cancel()
            order.withLock { $0.append("completions returned") }
        }
        #expect(done.waitUntilCompleted(timeout: 10))
        #expect(try futures[0].wait() == 7)
        #expect(throws: Boom(code: 4)) { try futures[1].wait() }
        #expect(throws: CancelledError()) { try futures[2].wait() }
        held.release()
        // Each of `futures` completes after its `always` callback has recorded its order.
        let recorded = order.withLock { $0 }
        #expect(recorded.first == "completions returned")
        #expect(recorded.filter { $0 == "future after the queued job" }.count == 3)
        pool.shutdown()
    }

    /// On a pool of one, a queued job that waits for the future with `wait()` (a wait the
    /// pool cannot see) gets it: the completion does not queue behind it, where nobody
    /// would ever run it.
    @Test func aQueuedJobOnAPoolOfOneCanWaitForTheFuture() {
        let pool = ThreadPool(threadCount: 1, name: "nio-one")
        let source = TaskCompletionSource<Int>()
        let future = source.task.eventLoopFuture(on: loop)
        let waiter = Mutex<BoltsTask<Int>?>(nil)
        let completer = BoltsTask<Void>.execute(.pool(pool)) {
            // Queued on the only worker's queue, behind which a deferred completion would go.
            waiter.withLock { $0 = BoltsTask<Int>.execute(.pool(pool)) { try future.wait() } }
            source.set(result: 7)
        }
        #expect(completer.waitUntilCompleted(timeout: 10))
        let seen = waiter.withLock { $0 }
        let ended = seen?.waitUntilCompleted(timeout: 10) ?? false
        #expect(ended)
        #expect(seen?.result == 7)
        if ended {
            pool.shutdown()
        } else {
            source.cancel()  // too late for the stuck worker; leave the pool behind
            pool.shutdown(wait: false)
        }
    }

    /// A task already completed when `eventLoopFuture(on:)` is called completes the future
    /// there and then, even on a worker whose queue holds jobs: its caller may wait for
    /// it at once, where the pool cannot see.
    @Test func aCompletedTaskCompletesTheFutureAtOnceOnABusyWorker() {
        let pool = ThreadPool(threadCount: 2, name: "nio-done")
        let held = HeldWorker(of: pool)
        let seen = BoltsTask<Int>.execute(.pool(pool)) {
            pool.execute {}  // queued on this worker's own queue; the other worker is held
            return try BoltsTask(5).eventLoopFuture(on: loop).wait()
        }
        let ended = seen.waitUntilCompleted(timeout: 10)
        #expect(ended)
        held.release()
        #expect(seen.waitUntilCompleted(timeout: 10))
        #expect(seen.result == 5)
        pool.shutdown()
    }

    @Test func roundTripKeepsValuesErrorsAndCancellation() throws {
        #expect(try BoltsTask(5).eventLoopFuture(on: loop).boltsTask().eventLoopFuture(on: loop).wait() == 5)
        let faulted = BoltsTask<Int>(error: Boom(code: 1)).eventLoopFuture(on: loop).boltsTask()
        #expect(faulted.waitUntilCompleted(timeout: 10))
        #expect(faulted.error as? Boom == Boom(code: 1))
        let cancelled = BoltsTask<Int>.cancelledTask().eventLoopFuture(on: loop).boltsTask()
        #expect(cancelled.waitUntilCompleted(timeout: 10))
        #expect(cancelled.isCancelled)
    }

    @Test func asyncCodeCanAwaitTheBridgedTask() async throws {
        let value = try await loop.makeSucceededFuture(11).boltsTask().value
        #expect(value == 11)
        await #expect(throws: CancellationError.self) {
            _ = try await loop.makeFailedFuture(CancelledError()).map { 0 }.boltsTask().value
        }
    }
}
