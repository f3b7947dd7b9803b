/*
 * Job records and the trampoline.
 *
 * Everything here is thread-local except the records themselves, which move between
 * threads only through a task's state word or a pool queue (each of which orders the
 * hand-over with its own release/acquire pair). No atomics are needed in this file.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>


_Static_assert(offsetof(bolts_job_t, next) == 0, "queues link jobs through their first word");

/* The trampoline's per-thread state, in one initial-exec TLS block: each access is one
 * %fs-relative load, with no __tls_get_addr call on the hot path. (Blocks for jobs and
 * task cores come from pool_blocks.c.) */
typedef struct thread_state {
    int depth;               /* trampoline: dispatch frames running a job right now */
    struct bolts_job *head;  /* trampoline: FIFO of deferred jobs */
    struct bolts_job *tail;
    uint64_t deferred;       /* trampoline: jobs deferred so far (for tests) */
} thread_state_t;

static __thread thread_state_t tls __attribute__((tls_model("initial-exec")));

/* ---- Jobs ---------------------------------------------------------------------------- */

/* Job records (48 bytes) come from the 64-byte class of pool_blocks.c, whose magazines
 * are recycled across threads (a job made on one thread is usually freed on another: the
 * completer's or a pool worker's). */
_Static_assert(sizeof(bolts_job_t) <= BOLTS_POOL_BLOCK_SIZE, "a job must fit in a pool block");

bolts_job_t *bolts_job_create(bolts_job_fn fn, void *context) {
    bolts_job_t *job = bolts_pool_block_alloc();
    job->next = NULL;
    job->fn = fn;
    job->context = context;
    job->pool = NULL;
    job->flags = BOLTS_JOB_OWNED;
    job->drop = NULL;
    return job;
}

void bolts_job_destroy(bolts_job_t *job) {
    if (job->flags & BOLTS_JOB_OWNED) bolts_pool_block_free(job);
}

/* Reads the job, frees it when the runtime owns it, then runs it. After this returns
 * (or even while fn runs) the record may be reused by its owner. */
static inline void job_invoke(bolts_job_t *job) {
    bolts_job_fn fn = job->fn;
    void *context = job->context;
    if (job->flags & BOLTS_JOB_OWNED) bolts_pool_block_free(job);
    fn(context);
}

/* ---- Trampoline ----------------------------------------------------------------------
 * depth: how many dispatch frames of this thread are running a job right now.
 * head/tail: FIFO of jobs deferred because depth reached BOLTS_INLINE_DEPTH. Only the
 * owning thread touches them. */

#define tramp_depth tls.depth
#define tramp_head tls.head
#define tramp_tail tls.tail
#define tramp_deferred tls.deferred

static inline bolts_job_t *tramp_pop(void) {
    bolts_job_t *job = tramp_head;
    if (job) {
        tramp_head = job->next;
        if (!tramp_head) tramp_tail = NULL;
    }
    return job;
}

/* Runs one job as a new trampoline level; the outermost level drains the queue. */
static void run_level(bolts_job_t *job) {
    tramp_depth++;
    job_invoke(job);
    tramp_depth--;
    if (tramp_depth == 0) {
        bolts_job_t *next;
        while ((next = tramp_pop()) != NULL) {
            tramp_depth++;
            job_invoke(next);
            tramp_depth--;
        }
    }
}

void bolts_job_run(bolts_job_t *job) { run_level(job); }

void bolts_dispatch(bolts_job_t *job) {
    if (job->pool) {
        bolts_pool_submit(job->pool, job);
        return;
    }
    if (tramp_depth >= BOLTS_INLINE_DEPTH) {
        job->next = NULL;
        if (tramp_tail) tramp_tail->next = job;
        else tramp_head = job;
        tramp_tail = job;
        tramp_deferred++;
        return;
    }
    run_level(job);
}

size_t bolts_trampoline_drain(void) {
    size_t ran = 0;
    bolts_job_t *job;
    while ((job = tramp_pop()) != NULL) {
        tramp_depth++;
        job_invoke(job);
        tramp_depth--;
        ran++;
    }
    return ran;
}

int bolts_trampoline_depth(void) { return tramp_depth; }

bool bolts_runtime_sanitized(void) {
#ifdef BOLTS_SANITIZED
    return true;
#else
    return false;
#endif
}

uint64_t bolts_trampoline_deferred_count(void) { return tramp_deferred; }
