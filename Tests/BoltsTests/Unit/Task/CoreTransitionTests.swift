import CBoltsRuntime
import Testing

/// The C state machine, edge by edge (see bolts_task.h's transition table), driven directly
/// through the C API with plain C callbacks.
@Suite struct CoreTransitionTests {
    /// A C callback context: counts runs and records order through a shared log.
    final class Probe {
        var runs = 0
        var log: [Int] = []
    }

    struct Context {
        let probe: Probe
        let id: Int
    }

    static let record: bolts_job_fn = { raw in
        let context = raw!.assumingMemoryBound(to: Context.self)
        context.pointee.probe.runs += 1
        context.pointee.probe.log.append(context.pointee.id)
    }

    func makeJob(_ probe: Probe, _ id: Int, _ keep: inout [UnsafeMutablePointer<Context>]) -> UnsafeMutablePointer<
        bolts_job_t
    > {
        let context = UnsafeMutablePointer<Context>.allocate(capacity: 1)
        context.initialize(to: Context(probe: probe, id: id))
        keep.append(context)
        return bolts_job_create(Self.record, context)
    }

    func free(_ contexts: [UnsafeMutablePointer<Context>]) {
        for c in contexts {
            c.deinitialize(count: 1)
            c.deallocate()
        }
    }

    @Test func pendingToClaimedToDone() {
        let task = bolts_task_create()
        #expect(bolts_task_state(task) == BOLTS_PENDING)
        #expect(bolts_task_claim(task))
        #expect(!bolts_task_claim(task))  // claimed → claim fails
        #expect(bolts_task_state(task) == BOLTS_PENDING)  // claimed is still pending to readers
        bolts_task_publish(task, BOLTS_ERROR)
        #expect(bolts_task_state(task) == BOLTS_ERROR)
        #expect(!bolts_task_claim(task))  // done → claim fails
        bolts_task_destroy(task)
    }

    @Test func addWhilePendingAndWhileClaimedRunAtPublishInOrder() {
        let probe = Probe()
        var contexts: [UnsafeMutablePointer<Context>] = []
        let task = bolts_task_create()
        bolts_task_add(task, makeJob(probe, 1, &contexts))  // pending: pushed
        bolts_task_add(task, makeJob(probe, 2, &contexts))
        #expect(bolts_task_claim(task))
        bolts_task_add(task, makeJob(probe, 3, &contexts))  // claimed: still pushed
        #expect(probe.runs == 0)
        bolts_task_publish(task, BOLTS_SUCCESS)
        #expect(probe.log == [1, 2, 3])  // registration order, each once
        bolts_task_add(task, makeJob(probe, 4, &contexts))  // done: runs at once
        #expect(probe.log == [1, 2, 3, 4])
        bolts_task_destroy(task)
        free(contexts)
    }

    @Test func completedAtCreationRunsJobsAtOnce() {
        let probe = Probe()
        var contexts: [UnsafeMutablePointer<Context>] = []
        let task = bolts_task_create_completed(BOLTS_CANCELLED)
        #expect(bolts_task_state(task) == BOLTS_CANCELLED)
        #expect(!bolts_task_claim(task))
        bolts_task_add(task, makeJob(probe, 7, &contexts))
        #expect(probe.log == [7])
        bolts_task_destroy(task)
        free(contexts)
    }

    @Test func destroyingAPendingTaskDropsItsJobsInsteadOfRunningThem() {
        let probe = Probe()
        var contexts: [UnsafeMutablePointer<Context>] = []
        let task = bolts_task_create()
        for id in 0..<3 {
            let job = makeJob(probe, id, &contexts)
            job.pointee.drop = { raw in
                let context = raw!.assumingMemoryBound(to: Context.self)
                context.pointee.probe.log.append(-context.pointee.id - 1)
            }
            bolts_task_add(task, job)
        }
        bolts_task_destroy(task)
        #expect(probe.runs == 0)
        #expect(Set(probe.log) == [-1, -2, -3])
        free(contexts)
    }

    @Test func observedFlag() {
        let task = bolts_task_create_completed(BOLTS_ERROR)
        #expect(!bolts_task_observed(task))
        bolts_task_mark_observed(task)
        #expect(bolts_task_observed(task))
        bolts_task_destroy(task)
    }

    @Test func waitOnCompletedAndTimedWaitOnPending() {
        let done = bolts_task_create_completed(BOLTS_SUCCESS)
        #expect(bolts_task_wait(done, -1))
        bolts_task_destroy(done)
        let pending = bolts_task_create()
        #expect(!bolts_task_wait(pending, 1_000_000))
        #expect(bolts_task_claim(pending))
        bolts_task_publish(pending, BOLTS_SUCCESS)  // runs the abandoned waiter's job safely
        #expect(bolts_task_wait(pending, 0))
        bolts_task_destroy(pending)
    }

    final class Nest {
        var maxDepth: Int32 = 0
        var ran = 0
        var remaining = 30
    }

    /// Each run dispatches the next job from inside itself, 30 levels deep.
    static let nestStep: bolts_job_fn = { raw in
        let nest = Unmanaged<Nest>.fromOpaque(raw!).takeUnretainedValue()
        nest.ran += 1
        nest.maxDepth = max(nest.maxDepth, bolts_trampoline_depth())
        nest.remaining -= 1
        if nest.remaining > 0 { bolts_dispatch(bolts_job_create(CoreTransitionTests.nestStep, raw)) }
    }

    @Test func trampolineDefersPastTheInlineDepth() {
        // The first BOLTS_INLINE_DEPTH nested dispatches run inline; the rest are deferred
        // and run by the outermost frame before it returns.
        let nest = Nest()
        let raw = Unmanaged.passRetained(nest).toOpaque()
        let before = bolts_trampoline_deferred_count()
        bolts_dispatch(bolts_job_create(Self.nestStep, raw))
        #expect(nest.ran == 30)
        #expect(nest.maxDepth == BOLTS_INLINE_DEPTH)
        #expect(bolts_trampoline_deferred_count() > before)
        #expect(bolts_trampoline_depth() == 0)
        Unmanaged<Nest>.fromOpaque(raw).release()
    }
}
