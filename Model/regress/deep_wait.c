/*
 * Regression test for FINDINGS.md F2 (the counterexample of `task-deep-waiter`): a blocking
 * wait made BOLTS_INLINE_DEPTH dispatches deep, on a task that completes between the
 * wait's last check of the state and the push of its waiter job.
 *
 * The model's trail, replayed deterministically on the real task.c and job.c: this file
 * provides the pool's block allocator (the pool is not linked), and its allocation of the
 * waiter record (bolts_task_wait, right after the spin) completes the task first. That is
 * exactly the interleaving of the trail (the completer's exchange lands after the waiter's
 * last acquire load and before its push), with the completer's steps run on the waiting
 * thread itself, which changes nothing for the waiter. Before the fix (5bacbf8),
 * bolts_task_add then saw DONE and handed the waiter job to bolts_dispatch, which at depth
 * BOLTS_INLINE_DEPTH queued it on this thread's trampoline instead of running it, and the
 * thread slept on a futex that only that queued job would wake.
 *
 * The wait is timed (2 s) so that the test ends either way. Expected: it returns true at
 * once. With the bug: only when the timeout expires (an untimed wait never returns).
 * Exit status 0 = ok, 1 = the bug reproduces, 2 = the hook did not fire (task.c changed
 * how it allocates the waiter: update this test).
 *
 * Built and run by Model/run.sh: cc -O1 -pthread deep_wait.c task.c job.c.
 */
#include "../../CSupport/CBoltsRuntime/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The pool is not part of this test: no job here names a pool, and no thread is a worker. */
void bolts_pool_submit(bolts_pool_t *pool, bolts_job_t *job) {
    (void)pool;
    (void)job;
    fputs("deep_wait: unexpected pool submit\n", stderr);
    abort();
}
void bolts__pool_blocking_begin(void) {}
void bolts__pool_blocking_end(void) {}
/* No thread here is a pool worker (bolts_task_begin_own_job_here asks). */
bolts_pool_t *bolts_pool_current(void) { return NULL; }
/* No task here runs on a pool, so no awaiter is noted or counted (task.c's hooks for the
 * pool's idle spin after a suspended awaiter and for its idle yield, BOLTS_POOL_SPIN_YIELD). */
void bolts__pool_note_awaiter(int64_t now) { (void)now; }
void bolts__pool_awaiters_suspended(int delta) { (void)delta; }
void bolts__pool_note_suspended_awaiter(int64_t now) { (void)now; }

static bolts_task_t *target;
static int complete_on_next_alloc;
static int completed_in_window;

void *bolts_pool_block_alloc(void) {
    if (complete_on_next_alloc) {
        /* The only pool block bolts_task_wait allocates is the waiter record: this is the
         * point between the spin's last acquire load and the push of the waiter job. */
        complete_on_next_alloc = 0;
        if (bolts_task_claim(target)) {
            bolts_task_publish(target, BOLTS_SUCCESS);
            completed_in_window = 1;
        }
    }
    void *block = malloc(BOLTS_POOL_BLOCK_SIZE);
    if (!block) abort();
    return block;
}

void bolts_pool_block_free(void *block) { free(block); }

/* Task cores (pool_blocks.c's 128-byte class, BOLTS_BLOCK_SIZE in internal.h): plain
 * malloc here, outside the completion window above. */
void *bolts__block_alloc(void);
void bolts__block_free(void *block);
void *bolts__block_alloc(void) {
    void *block = malloc(128);
    if (!block) abort();
    return block;
}
void bolts__block_free(void *block) { free(block); }

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double waited;
static bool wait_result;
static int depth_at_wait;

static void nest(void *context) {
    (void)context;
    if (bolts_trampoline_depth() < BOLTS_INLINE_DEPTH) {
        /* One more nested synchronous dispatch (runs inline while below the limit). */
        bolts_dispatch(bolts_job_create(nest, NULL));
        return;
    }
    depth_at_wait = bolts_trampoline_depth();
    complete_on_next_alloc = 1;
    double start = now_s();
    wait_result = bolts_task_wait(target, 2000000000LL);
    waited = now_s() - start;
}

int main(void) {
    target = bolts_task_create();
    bolts_dispatch(bolts_job_create(nest, NULL));
    /* Back at depth 0: the trampoline has drained. */
    printf("deep_wait: wait at depth %d, task completed in the window: %s, returned %s after %.3f s\n",
           depth_at_wait, completed_in_window ? "yes" : "no", wait_result ? "true" : "false", waited);
    bolts_task_destroy(target);
    if (!completed_in_window || depth_at_wait != BOLTS_INLINE_DEPTH) {
        puts("deep_wait: BROKEN (the hook did not fire where expected; task.c changed?)");
        return 2;
    }
    if (waited >= 1.0 || !wait_result) {
        puts("deep_wait: REPRODUCED (F2): the waiter's own job sat on its trampoline while it slept");
        return 1;
    }
    puts("deep_wait: ok");
    return 0;
}
