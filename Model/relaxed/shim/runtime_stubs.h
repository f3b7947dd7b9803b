/*
 * What the task and token harnesses link in place of the pool (the pool's files are not
 * compiled into them): the block allocators are the shim's (every block is tracked,
 * see relacy_shim.h); no job of these checks names a pool, and no harness thread is a pool
 * worker, so the pool's hooks are empty and a submission fails the check.
 */
#ifndef BOLTS_RELACY_RUNTIME_STUBS_H
#define BOLTS_RELACY_RUNTIME_STUBS_H

/* Set by a harness that wants to know when `bolts_task_wait` is past its spin: the waiter
 * record is the only pool block a wait allocates, right before pushing it (the same point
 * Model/regress/deep_wait.c uses). Relaxed: a scheduling signal that orders nothing. */
static rl::atomic<int> *shim_waiter_allocated;

void *bolts_pool_block_alloc(void) {
    if (shim_waiter_allocated != NULL) shim_waiter_allocated->store(1, mo_relaxed, $);
    return shim_alloc(BOLTS_POOL_BLOCK_SIZE, SHIM_POOL_BLOCK);
}
void bolts_pool_block_free(void *block) { shim_release(block, SHIM_POOL_BLOCK, $); }
void *bolts__block_alloc(void) { return shim_alloc(BOLTS_BLOCK_SIZE, SHIM_BLOCK); }
void bolts__block_free(void *block) { shim_release(block, SHIM_BLOCK, $); }

void bolts_pool_submit(bolts_pool_t *pool, bolts_job_t *job) {
    (void)pool;
    (void)job;
    RL_ASSERT(!"no job of these checks names a pool");
}
void bolts__pool_blocking_begin(void) {}
void bolts__pool_blocking_end(void) {}
bolts_pool_t *bolts_pool_current(void) { return NULL; }
void bolts__pool_note_awaiter(int64_t now) { (void)now; }
void bolts__pool_awaiters_suspended(int delta) { (void)delta; }
void bolts__pool_note_suspended_awaiter(int64_t now) { (void)now; }

#endif
