/*
 * Job records, the per-thread block cache, and the trampoline.
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

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define BOLTS_NO_BLOCK_CACHE 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BOLTS_NO_BLOCK_CACHE 1
#endif

_Static_assert(sizeof(bolts_job_t) <= BOLTS_BLOCK_SIZE, "a job must fit in a block");
_Static_assert(offsetof(bolts_job_t, next) == 0, "queues link jobs through their first word");

/* ---- Block cache -------------------------------------------------------------------
 * A bounded LIFO of free 64-byte blocks per thread. A block freed on another thread
 * than the one that allocated it simply joins the freeing thread's cache. Under
 * AddressSanitizer and ThreadSanitizer the cache is compiled out, so every block is a
 * real malloc/free and the sanitizers see every lifetime. */

#define BOLTS_BLOCK_CACHE_MAX 256

typedef struct free_block {
    struct free_block *next;
} free_block_t;

/* All of this file's per-thread state in one initial-exec TLS block: each access is one
 * %fs-relative load, with no __tls_get_addr call on the hot path. */
typedef struct thread_state {
    free_block_t *cache_head;
    unsigned cache_count;
    bool cache_armed;        /* the thread-exit destructor is registered */
    int depth;               /* trampoline: dispatch frames running a job right now */
    struct bolts_job *head;  /* trampoline: FIFO of deferred jobs */
    struct bolts_job *tail;
    uint64_t deferred;       /* trampoline: jobs deferred so far (for tests) */
} thread_state_t;

static __thread thread_state_t tls __attribute__((tls_model("initial-exec")));
#define cache_head tls.cache_head
#define cache_count tls.cache_count
#ifndef BOLTS_NO_BLOCK_CACHE
static pthread_key_t cache_key;
static pthread_once_t cache_key_once = PTHREAD_ONCE_INIT;

static void cache_release_at_exit(void *unused) {
    (void)unused;
    free_block_t *b = cache_head;
    while (b) {
        free_block_t *next = b->next;
        free(b);
        b = next;
    }
    cache_head = NULL;
    cache_count = 0;
    tls.cache_armed = false;
}

static void cache_key_create(void) {
    if (pthread_key_create(&cache_key, cache_release_at_exit) != 0) {
        fputs("bolts: pthread_key_create failed\n", stderr);
        abort();
    }
}
#endif

static void *block_malloc(void) {
    void *p = malloc(BOLTS_BLOCK_SIZE);
    if (!p) {
        fputs("bolts: out of memory\n", stderr);
        abort();
    }
    return p;
}

void *bolts__block_alloc(void) {
#ifndef BOLTS_NO_BLOCK_CACHE
    free_block_t *b = cache_head;
    if (b) {
        cache_head = b->next;
        cache_count--;
        return b;
    }
#endif
    return block_malloc();
}

void bolts__block_free(void *block) {
#ifndef BOLTS_NO_BLOCK_CACHE
    if (cache_count < BOLTS_BLOCK_CACHE_MAX) {
        if (!tls.cache_armed) {
            /* First block this thread caches: make sure the exit destructor runs. */
            pthread_once(&cache_key_once, cache_key_create);
            pthread_setspecific(cache_key, (void *)1);
            tls.cache_armed = true;
        }
        free_block_t *b = block;
        b->next = cache_head;
        cache_head = b;
        cache_count++;
        return;
    }
#endif
    free(block);
}

/* ---- Jobs ---------------------------------------------------------------------------- */

/* Job records (48 bytes) come from the pool's 64-byte blocks rather than the 128-byte task
 * blocks above: those are recycled across threads (a job made on one thread is usually
 * freed on another: the completer's or a pool worker's), where this file's per-thread
 * cache would fall back to malloc. */
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

uint64_t bolts_trampoline_deferred_count(void) { return tramp_deferred; }
