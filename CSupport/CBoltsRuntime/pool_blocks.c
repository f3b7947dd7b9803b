/* Job blocks for work submitted to a pool from outside the C core (the Swift front end's
 * closures and Swift Concurrency jobs).
 *
 * The pattern to serve: producer threads allocate, workers free. A per-thread cache
 * alone degenerates into "producers malloc, workers free", which glibc serves through
 * arena locks (measured here: ~300 ns per job, most of a job's cost). So each thread
 * keeps two magazines of up to BATCH blocks; a thread that frees more than two full
 * magazines pushes one to a shared depot, and a thread whose magazines are empty takes
 * the whole depot in one exchange and keeps one magazine of it. The depot is liburcu's
 * lock-free stack used only with push and pop-all, which need no RCU and no mutual
 * exclusion (urcu/lfstack.h synchronization table). malloc is reached only when the
 * depot is empty too.
 *
 *   B1  A block is on at most one list: a thread's magazine, or a magazine in the depot.
 *   B2  Magazines move between threads only through the depot: `cds_lfs_push` is a
 *       full barrier before its compare-and-swap and `__cds_lfs_pop_all` one around its
 *       exchange, so the links written by the pushing thread are visible to the taker.
 *   B3  Under AddressSanitizer and ThreadSanitizer the caches are compiled out: every
 *       block is a malloc/free that the sanitizers can see.
 */
#define _GNU_SOURCE
#include "pool_internal.h"

#include <urcu/compiler.h>
#include <urcu/lfstack.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define BOLTS_POOL_NO_BLOCK_CACHE 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BOLTS_POOL_NO_BLOCK_CACHE 1
#endif

_Static_assert(sizeof(bolts_job_t) <= BOLTS_POOL_BLOCK_SIZE, "a job must fit in a pool block");

/* Blocks per magazine. */
#define BATCH 64

/* A free block. The first magazine block also carries the depot link and the count. */
struct free_block {
    struct free_block *next;
    struct cds_lfs_node depot_link;
    uint32_t count;
};
_Static_assert(sizeof(struct free_block) <= BOLTS_POOL_BLOCK_SIZE, "a free block must fit in a block");

static void *block_malloc(void) {
    void *p = aligned_alloc(BOLTS_CACHE_LINE, BOLTS_POOL_BLOCK_SIZE);
    if (p == NULL) {
        fputs("bolts: out of memory for a pool job\n", stderr);
        abort();
    }
    return p;
}

#ifndef BOLTS_POOL_NO_BLOCK_CACHE

static struct __cds_lfs_stack depot = {.head = NULL};

struct magazines {
    struct free_block *loaded;
    uint32_t loaded_count;
    struct free_block *previous;
    uint32_t previous_count;
    bool armed; /* the thread-exit destructor is registered */
};

static _Thread_local struct magazines mags;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void depot_push(struct free_block *head, uint32_t count) {
    head->count = count;
    cds_lfs_node_init(&head->depot_link);
    cds_lfs_push(&depot, &head->depot_link); /* B2 */
}

/* Hands the exiting thread's blocks to the depot so other threads reuse them. */
static void flush_at_exit(void *unused) {
    (void)unused;
    if (mags.loaded != NULL) depot_push(mags.loaded, mags.loaded_count);
    if (mags.previous != NULL) depot_push(mags.previous, mags.previous_count);
    mags = (struct magazines){0};
}

static void exit_key_create(void) {
    if (pthread_key_create(&exit_key, flush_at_exit) != 0) {
        fputs("bolts: pthread_key_create failed\n", stderr);
        abort();
    }
}

/* Takes every magazine in the depot; keeps one loaded and one previous, gives back the
 * rest. Returns false when the depot was empty. */
static bool refill(void) {
    struct cds_lfs_head *all = __cds_lfs_pop_all(&depot); /* B2 */
    if (all == NULL) return false;
    struct cds_lfs_node *node, *next;
    cds_lfs_for_each_safe(all, node, next) {
        struct free_block *head = caa_container_of(node, struct free_block, depot_link);
        if (mags.loaded == NULL) {
            mags.loaded = head;
            mags.loaded_count = head->count;
        } else if (mags.previous == NULL) {
            mags.previous = head;
            mags.previous_count = head->count;
        } else {
            depot_push(head, head->count);
        }
    }
    return true;
}

void *bolts_pool_block_alloc(void) {
    if (mags.loaded == NULL) {
        if (mags.previous != NULL) {
            mags.loaded = mags.previous;
            mags.loaded_count = mags.previous_count;
            mags.previous = NULL;
            mags.previous_count = 0;
        } else if (!refill()) {
            return block_malloc();
        }
    }
    struct free_block *b = mags.loaded;
    mags.loaded = b->next;
    mags.loaded_count--;
    return b;
}

void bolts_pool_block_free(void *block) {
    if (!mags.armed) {
        pthread_once(&exit_key_once, exit_key_create);
        pthread_setspecific(exit_key, (void *)1);
        mags.armed = true;
    }
    if (mags.loaded_count == BATCH) {
        if (mags.previous != NULL) depot_push(mags.previous, mags.previous_count);
        mags.previous = mags.loaded;
        mags.previous_count = mags.loaded_count;
        mags.loaded = NULL;
        mags.loaded_count = 0;
    }
    struct free_block *b = block;
    b->next = mags.loaded;
    mags.loaded = b;
    mags.loaded_count++;
}

#else /* BOLTS_POOL_NO_BLOCK_CACHE */

void *bolts_pool_block_alloc(void) { return block_malloc(); }

void bolts_pool_block_free(void *block) { free(block); }

#endif

bolts_job_t *bolts_pool_job_alloc(bolts_job_fn fn) {
    bolts_job_t *job = bolts_pool_block_alloc();
    job->next = NULL;
    job->fn = fn;
    job->context = job; /* the payload follows the record */
    job->pool = NULL;
    job->flags = 0; /* not BOLTS_JOB_OWNED: `fn` frees the block when it is done with it */
    return job;
}
