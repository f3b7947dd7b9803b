#ifndef BOLTS_TASK_H
#define BOLTS_TASK_H
/**
 * The task state machine.
 *
 * One atomic word per task, `state`:
 *
 *   | value                          | meaning                                         |
 *   |--------------------------------|-------------------------------------------------|
 *   | head pointer (maybe NULL) | 0  | pending; `head` is the newest waiting job        |
 *   | head pointer (maybe NULL) | 1  | pending and CLAIMED: one completer owns the      |
 *   |                                |   outcome fields; jobs may still be pushed       |
 *   | head pointer (maybe NULL) | 3  | DISPATCHING: complete (the outcome is immutable  |
 *   |                                |   and visible); the completer is still running   |
 *   |                                |   jobs; late jobs are pushed so it runs them next |
 *   | BOLTS_STATE_DONE (2)           | settled: complete, nothing left to dispatch      |
 *
 * Job records are 8-byte aligned, so the two low bits are free for the tags.
 *
 * Transitions:
 *   add      pending|claimed|dispatching → same tag, head = job (CAS, release: publishes
 *            job->next); settled → run the job now (acquire load, pairs with the release
 *            of the exchange in `publish`)
 *   claim    pending(0) → claimed(1)                  (CAS; fails if claimed or complete)
 *   publish  claimed → dispatching(empty), returns the stack (exchange, acq_rel: release
 *            makes the outcome visible to every later acquire; acquire makes the pushed
 *            jobs visible); then, until a CAS dispatching(empty) → settled succeeds, takes
 *            and runs the jobs pushed meanwhile (exchange, acquire)
 *
 * Why this detects a push racing completion: the push is a CAS on the same word that
 * `publish` exchanges. A push that lands before the first exchange is in the returned
 * stack; one that lands while the completer dispatches is taken by its next exchange; a
 * push that sees the word settled runs its job itself. No job can be lost (the completer
 * only settles from an empty DISPATCHING state), and none is run twice.
 *
 * Order: jobs run in the order they were added, including jobs added while the completer
 * is still dispatching (they are run after the earlier ones, by the completer). A job
 * added after the task settled runs at once, on the adding thread.
 *
 * The stack is LIFO; `publish` reverses each batch so jobs run in registration order.
 *
 * What may run concurrently: any number of `add`, `claim`, `state` and `wait` calls,
 * from any threads, with each other and with one `publish`. `publish` must be called
 * exactly once, by the thread whose `claim` succeeded. `destroy` must not race anything.
 *
 * The outcome payload (the value or the error) is owned by the layer above and is
 * written by the claiming thread between `claim` and `publish`; `publish`'s release
 * and the acquire in `bolts_task_state` make it visible.
 */
#include "bolts_job.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bolts_task bolts_task_t;

/** Outcome kinds. Values are stable; `_Static_assert`ed in task.c. */
typedef enum bolts_outcome {
    BOLTS_PENDING = 0,
    BOLTS_SUCCESS = 1,
    BOLTS_ERROR = 2,
    BOLTS_CANCELLED = 3,
} bolts_outcome_t;

/** Makes a pending task with no jobs. Never NULL (aborts on exhausted memory). */
bolts_task_t *_Nonnull bolts_task_create(void);

/** Makes a task that is already complete with `outcome` (no atomics needed later). */
bolts_task_t *_Nonnull bolts_task_create_completed(bolts_outcome_t outcome);

/** Frees a task. Every job pushed on it must have been run (the task is complete), or
 *  the caller must know none is waiting. Must not race any other call on the task. */
void bolts_task_destroy(bolts_task_t *_Nonnull task);

/** Tries to become the task's one completer. Returns true exactly once per task. */
bool bolts_task_claim(bolts_task_t *_Nonnull task);

/** Completes a claimed task with `outcome` and dispatches every waiting job, in the
 *  order they were added, through the trampoline. Called once, by the claimer. */
void bolts_task_publish(bolts_task_t *_Nonnull task, bolts_outcome_t outcome);

/** Adds a job to run once the task completes; runs it now (through the trampoline) if
 *  it already has. The caller sets job->fn, ->context and ->pool first. */
void bolts_task_add(bolts_task_t *_Nonnull task, bolts_job_t *_Nonnull job);

/** Submits the task's own job record (fn and context set by the caller, its step parked)
 *  straight to `pool`'s queue and marks it queued: the job's function must call
 *  `bolts_task_begin_own_job` first and run the step only if it returns true, because a
 *  worker of `pool` that awaits the task may run the step before the job is dequeued
 *  (`bolts_task_begin_own_job_here`). A task's own job is submitted this way at most once,
 *  and never re-parked afterwards. */
void bolts_task_submit_own_job(bolts_task_t *_Nonnull task, struct bolts_pool *_Nonnull pool);

/** Whether the caller is the first to begin the step of a job submitted with
 *  `bolts_task_submit_own_job`: true exactly once per task. */
bool bolts_task_begin_own_job(bolts_task_t *_Nonnull task);

/** `bolts_task_begin_own_job`, for an awaiter: false without trying unless the task's own
 *  job was submitted with `bolts_task_submit_own_job` to the pool whose worker is the
 *  calling thread. True: the caller runs the step now, on this worker, and the queued job
 *  will find it begun and only release what its context holds. */
bool bolts_task_begin_own_job_here(bolts_task_t *_Nonnull task);

/** For an async awaiter on a thread that is not a pool worker (a Swift Concurrency thread,
 *  an event loop): whether the task completed while the caller spun for up to
 *  BOLTS_TASK_AWAIT_SPIN_NS, which it does only when the task's own job was submitted with
 *  `bolts_task_submit_own_job` (a pool runs it, or is about to) and the task is pending.
 *  True saves the suspension and the resumption, whose wake-up of a parked thread of the
 *  awaiter's executor costs more than a short job. Adaptive, per thread:
 *  after BOLTS_TASK_AWAIT_SPIN_MISSES spins in a row that ended with the task still
 *  pending, the thread skips the spin for BOLTS_TASK_AWAIT_SPIN_SKIP awaits, then tries
 *  one again (a success resets the count). Every call that gets past the first two checks,
 *  spinning or not, also keeps the pools' idle workers from giving their CPUs away for a
 *  while, in a runtime built with BOLTS_POOL_SPIN_YIELD (BOLTS_POOL_SPIN_YIELD_AWAITED_NS in
 *  bolts_pool.h). */
bool bolts_task_spin_for_completion(bolts_task_t *_Nonnull task);

/** For an async awaiter about to suspend on `task` after its spin. When the awaiter is
 *  one that `bolts_task_spin_for_completion` spins for (a pool runs the task, the caller
 *  is not a pool worker), notes the suspension: idle workers that start spinning within
 *  BOLTS_POOL_SPIN_AWAITED_NS of it spin that long (bolts_tuning.h). True, in a runtime
 *  built with BOLTS_POOL_SPIN_YIELD and for such an awaiter: it is also counted among the
 *  suspended awaiters of pool tasks, while which the pools' idle workers keep their CPUs
 *  (BOLTS_POOL_SPIN_YIELD_AWAITED_NS); the caller then calls
 *  `bolts_task_await_suspend_end` once, when it has resumed. False: nothing counted,
 *  nothing to end. */
bool bolts_task_await_suspend_begin(bolts_task_t *_Nonnull task);

/** Ends what a `bolts_task_await_suspend_begin` that returned true began. Any thread. */
void bolts_task_await_suspend_end(void);

/** The calling thread's counts of `bolts_task_spin_for_completion` spins begun and of
 *  those that saw the task complete (for tests and diagnostics). */
void bolts_task_await_spin_counts(uint64_t *_Nonnull begun, uint64_t *_Nonnull completed);

/* The spin's bounds (BOLTS_TASK_AWAIT_SPIN_NS, _MISSES, _SKIP) are in bolts_tuning.h. */

/** Blocks until the task completes or `timeout_ns` passes (negative: no limit).
 *  Costs nothing until called: it pushes a waiter job and sleeps on a futex. Before
 *  sleeping it drains this thread's trampoline queue, and tells the pool (if this is a
 *  pool worker) that the worker is blocking. Returns true if the task is complete. */
bool bolts_task_wait(bolts_task_t *_Nonnull task, int64_t timeout_ns);

/* ---- Inline readers -------------------------------------------------------------------
 * The readers every continuation and every task's deinit call, inline so that the
 * Swift layer pays no call for them. They read the task through these layout facts, which
 * task.c asserts against its struct: the state word is the first field, the outcome byte
 * sits at BOLTS_TASK_OUTCOME_OFFSET, the owner's job record at BOLTS_TASK_OWN_JOB_OFFSET
 * and the payload at BOLTS_TASK_PAYLOAD_OFFSET. */

/** Bytes of payload storage in every task, 16-byte aligned. */
#define BOLTS_TASK_PAYLOAD_SIZE 64
#define BOLTS_TASK_OUTCOME_OFFSET 8
#define BOLTS_TASK_PAYLOAD_OFFSET 64
#define BOLTS_TASK_OWN_JOB_OFFSET 16
/** The DONE tag of the state word, and the whole word once settled (see the table). */
#define BOLTS_TASK_STATE_DONE ((uintptr_t)2)

/** The state word, with acquire order (see the callers). */
static inline uintptr_t bolts__task_load_state(const bolts_task_t *_Nonnull task) {
    /* Acquire: pairs with the release half of publish's exchange, so the outcome and the
     * payload written before it are visible once DONE is seen. */
    return __atomic_load_n((const uintptr_t *)(const void *)task, __ATOMIC_ACQUIRE);
}

/** The task's outcome, BOLTS_PENDING while not complete. Acquire: pairs with the
 *  release in `bolts_task_publish`, so a non-pending answer makes the payload that the
 *  completer wrote visible to the caller. */
static inline bolts_outcome_t bolts_task_state(const bolts_task_t *_Nonnull task) {
    if (!(bolts__task_load_state(task) & BOLTS_TASK_STATE_DONE)) return BOLTS_PENDING;
    /* Plain: written once before publish's release, read after the acquire above. */
    return (bolts_outcome_t)((const unsigned char *)task)[BOLTS_TASK_OUTCOME_OFFSET];
}

/** Whether the task is complete and its completer has finished dispatching (acquire,
 *  like `bolts_task_state`). A continuation may be run directly, bypassing `add`, only
 *  when this is true; otherwise it could overtake jobs added before it. */
static inline bool bolts_task_settled(const bolts_task_t *_Nonnull task) {
    return bolts__task_load_state(task) == BOLTS_TASK_STATE_DONE;
}

/** The task's payload storage: BOLTS_TASK_PAYLOAD_SIZE bytes, 16-byte aligned, owned by
 *  the layer above (which keeps its success value there, written by the claimer before
 *  `bolts_task_publish` and read after an acquire that saw the task complete; a pending
 *  task's owner may park other data there until it completes). */
static inline void *_Nonnull bolts_task_payload(bolts_task_t *_Nonnull task) {
    return (unsigned char *)task + BOLTS_TASK_PAYLOAD_OFFSET;
}

/** The job record embedded in the task, for the task's owner to wait on one other task
 *  at a time (a continuation waits on its antecedent, then maybe on a returned task). */
static inline bolts_job_t *_Nonnull bolts_task_own_job(bolts_task_t *_Nonnull task) {
    return (bolts_job_t *)(void *)((unsigned char *)task + BOLTS_TASK_OWN_JOB_OFFSET);
}

/** Marks the task's outcome as observed (relaxed: a diagnostic flag only). */
void bolts_task_mark_observed(bolts_task_t *_Nonnull task);

/** Whether `bolts_task_mark_observed` was called (relaxed). */
bool bolts_task_observed(const bolts_task_t *_Nonnull task);

/** Counters of the calling thread's trampoline, for tests: jobs deferred to the run
 *  queue so far. */
uint64_t bolts_trampoline_deferred_count(void);

#ifdef __cplusplus
}
#endif
#endif
