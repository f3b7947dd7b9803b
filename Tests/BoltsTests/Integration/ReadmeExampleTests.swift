import BoltsTestSupport
import Foundation
import Testing

@testable import Bolts

/// The README's example, kept compiling and true.
@Suite struct ReadmeExampleTests {
    @Test func readmeExample() async throws {
        let source = TaskCompletionSource<Data>()
        let size = source.task
            .continueOnSuccessWith(.pool(.shared)) { data in data.count }  // on a pool worker
            .continueWith { task in task.result.map { "\($0) bytes" } ?? "failed" }  // inline
        let cts = CancellationTokenSource()
        let slow = Task<Void>.withDelay(.seconds(60), cancellationToken: cts.token).timeout(after: .seconds(30))
        source.set(result: Data(count: 3))
        cts.cancel()  // `slow` is cancelled at once
        #expect(slow.isCancelled)
        #expect(try await size.value == "3 bytes")
    }

    @Test func poolExecutorRunsContinuationsOnAWorker() {
        let pool = ThreadPool(threadCount: 2, name: "readme")
        let caller = currentThreadID()
        let tcs = TaskCompletionSource<Int>()
        let next = tcs.task.continueWith(.pool(pool)) { task -> Bool in currentThreadID() != caller }
        tcs.set(result: 1)
        next.waitUntilCompleted()
        #expect(next.result == true)
        #expect(Executor.pool(pool).description == "ThreadPool Executor: readme")
        pool.shutdown()
    }
}
