import BoltsTestSupport
import CBoltsRuntime
import Testing

@testable import Bolts

/// A chain of a million synchronous continuations must complete on a 256 KiB stack, on the
/// completing thread, with no thread hop.
@Suite struct TrampolineTests {
    static let links = 1_000_000

    func runChain(_ executor: Executor) {
        let tcs = TaskCompletionSource<Int>()
        let threads = Recorder<UInt>()
        var task = tcs.task
        for _ in 0..<Self.links {
            task = task.continueWith(executor) { $0.result! + 1 }
        }
        let last = task.continueWith(executor) { task -> Int in
            threads.append(currentThreadID())
            return task.result!
        }
        runOnThread(stackSize: 256 * 1024) {
            threads.append(currentThreadID())
            tcs.set(result: 0)
        }
        #expect(last.result == Self.links)
        #expect(threads.values.count == 2)
        #expect(threads.values.first == threads.values.last)
    }

    @Test func millionLinkChainOnImmediateExecutor() { runChain(.immediate) }

    @Test func millionLinkChainOnDefaultExecutor() { runChain(.default) }

    @Test func millionNestedUnwrapsOnSmallStack() {
        // continueWithTask returning an already-completed task: each link completes the next
        // while still inside the previous one.
        let tcs = TaskCompletionSource<Int>()
        var task = tcs.task
        for _ in 0..<200_000 {
            task = task.continueWithTask { Task($0.result! + 1) }
        }
        let last = task
        runOnThread(stackSize: 256 * 1024) { tcs.set(result: 0) }
        #expect(last.result == 200_000)
    }

    @Test func shortChainsRunFullyInline() {
        // Below the inline depth nothing is deferred: each continuation runs before set returns
        // and nested ones run inside their parent, as Bolts users expect.
        let tcs = TaskCompletionSource<Int>()
        let depths = Recorder<Int>()
        var task = tcs.task
        for _ in 0..<10 {
            task = task.continueWith { t -> Int in
                depths.append(Int(bolts_trampoline_depth()))
                return t.result! + 1
            }
        }
        tcs.set(result: 0)
        #expect(task.result == 10)
        #expect(depths.values == Array(1...10))
    }

    @Test func waitingOnDeferredWorkDoesNotDeadlock() {
        // Link i of a chain runs at trampoline depth i. The 19th link completes `y`, whose
        // first continuation runs at depth 20 and completes `z`; `z`'s continuation (which
        // sets the probe) is therefore deferred to this thread's run queue. `y`'s second
        // continuation then blocks on the probe while that deferred job is still queued:
        // the wait must run it instead of sleeping forever.
        let tcs = TaskCompletionSource<Int>()
        let probe = TaskCompletionSource<Int>()
        let waited = Recorder<Int>()
        let deferredBefore = Recorder<UInt64>()
        var y = tcs.task
        for _ in 0..<19 { y = y.continueWith { $0.result! } }
        let z = y.continueWith { $0.result! }
        z.continueWith { _ in probe.set(result: 1) }
        y.continueWith { _ in
            #expect(!probe.task.isCompleted)
            probe.task.waitUntilCompleted()
            waited.append(probe.task.result!)
        }
        runOnThread(stackSize: 256 * 1024) {
            deferredBefore.append(bolts_trampoline_deferred_count())
            tcs.set(result: 0)
            deferredBefore.append(bolts_trampoline_deferred_count())
        }
        #expect(waited.values == [1])
        #expect(deferredBefore.values[1] > deferredBefore.values[0])
    }
}
