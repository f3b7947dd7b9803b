import CBoltsRuntime
import Testing

@testable import Bolts

/// `isCompleted`, `isFaulted` and `isCancelled` (the Swift API Design Guidelines' form) in each
/// state a task can be in, and Bolts-Swift's `completed`, `faulted` and `cancelled`, which still
/// compile (deprecated) and always agree with them.
@Suite struct TaskStateNamesTests {
    /// A task in each state: pending, succeeded, faulted, cancelled.
    private static func tasksInEveryState() -> (TaskCompletionSource<Int>, [Task<Int>]) {
        let pending = TaskCompletionSource<Int>()
        let faulted = Task<Int>(error: TestError(1))
        _ = faulted.error  // observed, so that no unobserved-error report follows the test
        return (pending, [pending.task, Task(5), faulted, .cancelledTask()])
    }

    @Test func eachStateReadsAsItsOwnAssertion() {
        let (source, tasks) = Self.tasksInEveryState()
        let states = tasks.map { [$0.isCompleted, $0.isFaulted, $0.isCancelled] }
        #expect(
            states == [
                [false, false, false],  // pending
                [true, false, false],  // success
                [true, true, false],  // error
                [true, false, true],  // cancelled
            ]
        )
        source.cancel()
        #expect(tasks[0].isCompleted && tasks[0].isCancelled && !tasks[0].isFaulted)
    }

    @Test func isFaultedDoesNotMarkTheErrorObserved() {
        let task = Task<Int>(error: TestError(2))
        #expect(task.isFaulted)
        #expect(!bolts_task_observed(task._core))
        _ = task.error
        #expect(bolts_task_observed(task._core))
    }

    @Test func aContinuationSeesItsAntecedentFaulted() {
        let source = TaskCompletionSource<Int>()
        let seen = source.task.continueWith { task in [task.isCompleted, task.isFaulted, task.isCancelled] }
        source.set(error: TestError(3))
        #expect(seen.result == [true, true, false])
    }

    /// Calls the deprecated spellings on purpose: deprecated itself, so that doing so raises no
    /// warning (Swift Testing runs a deprecated test like any other).
    @available(*, deprecated, message: "reads Bolts-Swift's deprecated spellings on purpose")
    @Test func boltsSwiftSpellingsStillCompileAndAgree() {
        let (source, tasks) = Self.tasksInEveryState()
        for task in tasks {
            #expect(task.completed == task.isCompleted)
            #expect(task.faulted == task.isFaulted)
            #expect(task.cancelled == task.isCancelled)
        }
        source.set(result: 1)
        #expect(tasks[0].completed && !tasks[0].faulted && !tasks[0].cancelled)
    }
}
