import BoltsTestSupport
import Dispatch
import Testing

@testable import Bolts

/// Regression tests for findings of the model checker (Model/FINDINGS.md) that the Swift API
/// reproduces deterministically. While a finding is open, wrap its test in `withKnownIssue`
/// (the suite stays green, and fails with "known issue was not recorded" once it is fixed).
///
/// F2 (a blocking wait made 20 dispatches deep could sleep through its own wake-up) needs a
/// completion inside a window of a few instructions; it is replayed deterministically on the C
/// code by Model/regress/deep_wait.c instead.
@Suite struct SoakFindingsTests {
    /// F1 (fixed in 5bacbf8): one thread registers A while the task is pending, then B once
    /// the task is complete but the completer is still dispatching the jobs pushed before
    /// completion. Continuations run in registration order (X, A, B); before the fix, B would
    /// run at once on the registering thread, before A (the model's trail; the log would be
    /// B, X, A). Written after the fix: it passes on 5bacbf8 and later.
    @Test func continuationsFromOneThreadRunInRegistrationOrder() {
        let source = TaskCompletionSource<Int>()
        let log = Recorder<String>()
        let completerInsideX = DispatchSemaphore(value: 0)
        let releaseX = DispatchSemaphore(value: 0)

        let x = source.task.continueWith { _ in
            completerInsideX.signal()
            releaseX.wait()
            log.append("X")
        }
        let a = source.task.continueWith { _ in log.append("A") }
        DispatchQueue.global().async { source.set(result: 1) }
        // The task is complete; the completer is running X, and A is next on its list.
        completerInsideX.wait()
        let b = source.task.continueWith { _ in log.append("B") }
        releaseX.signal()
        for task in [x, a, b] { task.waitUntilCompleted() }

        #expect(log.values == ["X", "A", "B"])
    }
}
