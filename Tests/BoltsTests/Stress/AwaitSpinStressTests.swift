import BoltsTestSupport
import CBoltsRuntime
import CBoltsTuning
import Dispatch
import Glibc
import Synchronization
import Testing

@testable import Bolts

/// The calling thread's counts of awaiter spins (`bolts_task_await_spin_counts`).
private func spinCounts() -> (begun: UInt64, completed: UInt64) {
    var begun: UInt64 = 0
    var completed: UInt64 = 0
    bolts_task_await_spin_counts(&begun, &completed)
    return (begun, completed)
}

/// Whether one call of `_spinForCompletion` on this thread began a spin, and its answer.
private func spinOnce(_ task: BoltsTask<Int>) -> (began: Bool, completed: Bool) {
    let before = spinCounts().begun
    let completed = task._spinForCompletion()
    return (spinCounts().begun == before + 1, completed)
}

/// A task that `pool` runs and that stays pending until the flag is set: its closure holds
/// its worker, spinning without a system call. Its closure, not a job queued ahead of it, is
/// what keeps it pending, so that a thread the pool brings in (a sanitizer's runtime may put a
/// spinning thread to sleep on a lock, which the blocked-worker monitor compensates for)
/// cannot complete it early.
private func pendingTask(on pool: ThreadPool) -> (BoltsTask<Int>, Flag) {
    let released = Flag()
    let task = BoltsTask<Int>.execute(.pool(pool)) {
        while !released.isSet {}
        return 7
    }
    return (task, released)
}

/// `try await task.value` off the pool, for a task that a pool runs (`Task.execute(.pool)`),
/// first spins a few microseconds for its completion (`bolts_task_spin_for_completion`), and
/// a thread whose spins keep running out stops spinning for a while.
@Suite("Awaiting a pool task off the pool (bounded, adaptive spin before suspending)")
struct AwaitSpinStressTests {
    /// Awaits from Swift's default executor of tiny closures racing the workers that run
    /// them: every value arrives, and some awaits got theirs by spinning, without a
    /// suspension (the thread did not change and its count of completed spins grew by one).
    /// Rounds of 5,000 awaits, until one round has such an await, for at most 180 s: whether
    /// a worker runs the closure within the awaiter's spin depends on who holds the CPUs, and
    /// beside the other suites on two CPUs whole rounds can pass without one; a quiet machine
    /// decides in the first round, and the other suites end well within the bound, so only a
    /// spin that never sees the completion fails. The second claim is judged only in a build
    /// without sanitizers: under ThreadSanitizer beside the CPU-bound stress suites the workers
    /// and this thread wait for CPUs far longer than the spin, so a round may hold no spun
    /// await; there the test checks the values and the runs of one round, racing the spin, for
    /// TSan to see.
    @Test(arguments: [1, 2])
    func shortClosuresAreAwaitedWithoutSuspending(threadCount: Int) async throws {
        let pool = ThreadPool(threadCount: threadCount, name: "spin")
        let runs = Counter()
        let judged = !bolts_runtime_sanitized()
        var rounds = 0
        var withoutSuspending = 0
        let deadline = ContinuousClock.now + .seconds(180)
        repeat {
            rounds += 1
            var sum = 0
            var expected = 0
            for i in 0..<5_000 {
                let task = BoltsTask<Int>.execute(.pool(pool)) {
                    runs.increment()
                    return i &* 3
                }
                let thread = pthread_self()
                let before = spinCounts().completed
                let value = try await task.value
                if pthread_equal(thread, pthread_self()) != 0, spinCounts().completed == before + 1 {
                    withoutSuspending += 1
                }
                sum &+= value
                expected &+= i &* 3
            }
            #expect(sum == expected)
        } while judged && withoutSuspending == 0 && ContinuousClock.now < deadline
        if judged {
            #expect(withoutSuspending > 0, "no await of \(rounds * 5_000) got its value by spinning")
        }
        pool.shutdown(wait: true)
        #expect(runs.value == rounds * 5_000)
    }

    /// Against a task that stays pending (its closure runs until released): at most the first
    /// few calls spin, then one call in BOLTS_TASK_AWAIT_SPIN_SKIP does; once the task has
    /// completed, a spin sees it and the thread spins at every call again.
    @Test func aThreadWhoseSpinsRunOutSkipsThemThenTriesAgain() {
        let pool = ThreadPool(threadCount: 1, name: "spin1")
        let (task, held) = pendingTask(on: pool)
        let skip = Int(BOLTS_TASK_AWAIT_SPIN_SKIP)
        let misses = Int(BOLTS_TASK_AWAIT_SPIN_MISSES)
        var began: [Int] = []
        for call in 0..<(skip * 6) {
            let result = spinOnce(task)
            #expect(!result.completed)
            if result.began { began.append(call) }
        }
        // Whatever earlier tests left in this thread's state: at most `misses` spins in a
        // row at first, then exactly one every `skip` calls.
        #expect(began.count >= 5 && began.count <= misses + 7, "spins begun at calls \(began)")
        let late = began.suffix(3)
        #expect(zip(late, late.dropFirst()).allSatisfy { $1 - $0 == skip }, "spins begun at calls \(began)")

        held.set()
        #expect(task.waitUntilCompleted(timeout: 10))
        var sawCompletion = false
        for _ in 0..<skip {
            let result = spinOnce(task)
            if result.began {
                #expect(result.completed)
                sawCompletion = true
                break
            }
        }
        #expect(sawCompletion, "a spin within one skip period saw the completion")
        let next = spinOnce(task)
        #expect(next.began && next.completed, "a success lets the next call spin at once")
        pool.shutdown(wait: true)
    }

    /// A cancelled awaiter does not spin (it throws at once), and neither does a worker of a
    /// pool (it may be what the task is queued behind).
    @Test func cancelledAwaitersAndWorkersDoNotSpin() async throws {
        let pool = ThreadPool(threadCount: 1, name: "spin2")
        let other = ThreadPool(threadCount: 1, name: "spin3")
        let (task, held) = pendingTask(on: pool)

        // A task that a pool ran: a spin on it completes at once, which resets the calling
        // thread's count of misses, so the checks below would spin if they were allowed to.
        let primer = BoltsTask<Int>.execute(.pool(other)) { 1 }
        let skip = Int(BOLTS_TASK_AWAIT_SPIN_SKIP)
        let cancelled = _Concurrency.Task {
            _ = try? await primer.value
            // From here on, no suspension until the check: the same thread.
            var primed = false
            for _ in 0..<skip where !primed { primed = spinOnce(primer).began }
            withUnsafeCurrentTask { $0?.cancel() }
            let result = spinOnce(task)
            var threw = false
            do { _ = try await task.value } catch { threw = error is CancellationError }
            return (primed, result.began, threw)
        }
        let (primed, began, threw) = await cancelled.value
        #expect(primed, "a spin on a completed pool task began before the cancellation")
        #expect(!began, "a cancelled awaiter does not spin")
        #expect(threw, "a cancelled awaiter throws CancellationError at once")

        let onWorker = BoltsTask<Bool>.execute(.pool(other)) {
            for _ in 0..<skip { _ = spinOnce(primer) }  // would reset this thread's misses, if it spun
            let result = spinOnce(task)
            return !result.began && !result.completed
        }
        let workerDidNotSpin = try await onWorker.value
        #expect(workerDidNotSpin, "a worker of another pool does not spin")

        held.set()
        let value = try await task.value
        #expect(value == 7)
        pool.shutdown(wait: true)
        other.shutdown(wait: true)
    }

    /// An awaiter off the pool that suspends on a pool's task makes the idle spins that start
    /// soon after last BOLTS_POOL_SPIN_AWAITED_NS instead of BOLTS_POOL_SPIN_NS, so that its
    /// next task, which comes once its own executor has woken a thread to resume it, finds a
    /// worker still looking for work. The suspension is noted with its time: the task's
    /// closure holds its worker until a note newer than the one this test saw before it
    /// submitted the task appears, which its await (on Swift's default executor) makes when
    /// it suspends. (How long the spin then lasts is judged by the C stress test.)
    /// No timing window is judged (beside the other suites a worker may wait longer than the
    /// long spin for a CPU): a note less than an eighth of the spin after another is not
    /// stored, so a round without a new note is repeated (a second apart), at most five.
    /// Without the note every round ends without one.
    @Test func anAwaiterThatSuspendsLengthensTheIdleSpin() async throws {
        let pool = ThreadPool(threadCount: 1, name: "spin4")
        var noted = false
        var rounds = 0
        repeat {
            rounds += 1
            let before = bolts_pool_awaiter_suspended_ns()
            let task = BoltsTask<Bool>.execute(.pool(pool)) {
                let deadline = DispatchTime.now().uptimeNanoseconds + 1_000_000_000
                while DispatchTime.now().uptimeNanoseconds < deadline {
                    if bolts_pool_awaiter_suspended_ns() != before { return true }
                    sched_yield()
                }
                return false
            }
            noted = try await task.value
        } while !noted && rounds < 5
        #expect(noted, "no suspension noted in \(rounds) rounds")
        pool.shutdown(wait: true)
    }
}
