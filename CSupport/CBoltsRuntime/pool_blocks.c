/* The runtime's block allocator, in two size classes: 64-byte blocks (BOLTS_POOL_BLOCK_SIZE)
 * for job records, with or without a 16-byte payload (the Swift front end's closures,
 * Swift Concurrency jobs, the core's continuation and aggregate records), and 128-byte
 * blocks (BOLTS_BLOCK_SIZE) for task cores. Each class has its own magazines and depot;
 * everything below applies to each class alone.
 *
 * The pattern to serve: producer threads allocate, workers free. A per-thread cache
 * alone degenerates into "producers malloc, workers free", which glibc serves through
 * contended arena locks that then cost more than the rest of a job. So each thread
 * keeps two magazines of up to BATCH blocks; a thread that frees more than two full
 * magazines pushes one to a shared depot, and a thread whose magazines are empty takes
 * one from the depot. malloc is reached only when the depot is empty (a burst), and
 * free only when the depot already holds DEPOT_CAP magazines (memory kept for reuse is
 * bounded by that: 16 MiB).
 *
 * The depot is liburcu's lock-free stack, used only with push and pop-all, which need
 * no RCU and no mutual exclusion (urcu/lfstack.h synchronization table); a single pop
 * would need either (ABA). So an entry of the stack is a chain of magazines: a thread
 * takes the whole stack in one exchange, keeps the first magazine, and pushes all the
 * others back as one chain with one compare-and-swap. Chain heads know their tails, so
 * joining the entries it took costs one step per entry, and each entry was one push.
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

#ifdef BOLTS_SANITIZED
#define BOLTS_POOL_NO_BLOCK_CACHE 1
#endif

_Static_assert(sizeof(bolts_job_t) + BOLTS_POOL_JOB_PAYLOAD <= BOLTS_POOL_BLOCK_SIZE,
               "a pool block must hold a job record and BOLTS_POOL_JOB_PAYLOAD bytes after it");

/* Blocks per magazine. */
#define BATCH 64
/* Magazines a class's depot keeps at most (BATCH blocks each: 16 MiB of 64-byte blocks,
 * 32 MiB of 128-byte ones). */
#define DEPOT_CAP 4096

/* The size classes: 0 for pool blocks, 1 for task cores. */
enum { CLASS_JOB = 0, CLASS_TASK = 1, CLASSES = 2 };
static const size_t class_size[CLASSES] = {BOLTS_POOL_BLOCK_SIZE, BOLTS_BLOCK_SIZE};

/* A free block. The first block of a magazine also carries the magazine's fields. */
struct free_block {
    struct free_block *next;        /* next block of the same magazine */
    struct cds_lfs_node depot_link; /* chain head only: the depot's link */
    struct free_block *next_mag;    /* next magazine of the same chain */
    struct free_block *chain_tail;  /* chain head only: last magazine of the chain */
    uint32_t chain_length;          /* chain head only: magazines in the chain */
    uint32_t count;                 /* blocks in this magazine */
    struct free_block *skip;        /* next->next, read while it is hot (see alloc) */
};
_Static_assert(sizeof(struct free_block) <= BOLTS_POOL_BLOCK_SIZE, "a free block must fit in a block");
_Static_assert(BOLTS_BLOCK_SIZE >= BOLTS_POOL_BLOCK_SIZE, "the task class holds a free block too");

/* Blocks are aligned to their size, so a job record never straddles two cache lines:
 * a worker that takes a job from another CPU then pays one line transfer, not two
 * (malloc's 16-byte alignment would split three blocks out of four). */
static void *block_malloc(int class) {
    /* Task cores need malloc's 16-byte alignment only, and aligned_alloc costs more per
     * call: a long chain of pending continuations, which allocates a core per link once
     * the depot is empty, would pay it on every link. */
    size_t align = class == CLASS_JOB ? class_size[class] : 0;
    return bolts__alloc_or_abort(align, class_size[class], "a runtime block");
}

#ifndef BOLTS_POOL_NO_BLOCK_CACHE

static struct __cds_lfs_stack depot[CLASSES] = {{.head = NULL}, {.head = NULL}};
/* Magazines in each depot (approximate: a bound, not an invariant). */
static atomic_uint depot_size[CLASSES];

struct magazines {
    struct free_block *loaded;
    uint32_t loaded_count;
    struct free_block *previous;
    uint32_t previous_count;
};

static _Thread_local struct magazines mags_of[CLASSES];
static _Thread_local bool exit_armed; /* the thread-exit destructor is registered */
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

/* Pushes a chain of magazines (head ... tail, `n` of them) as one depot entry. */
static void depot_push_chain(int class, struct free_block *head, struct free_block *tail, unsigned n) {
    head->chain_tail = tail;
    head->chain_length = n;
    tail->next_mag = NULL;
    /* Relaxed: a bound on memory kept, not an ordering. */
    atomic_fetch_add_explicit(&depot_size[class], n, memory_order_relaxed);
    cds_lfs_node_init(&head->depot_link);
    cds_lfs_push(&depot[class], &head->depot_link); /* B2 */
}

/* Gives one magazine to the depot, or back to malloc when the depot is full. */
static void depot_give(int class, struct free_block *mag, uint32_t count) {
    mag->count = count;
    /* Relaxed: see depot_size. */
    if (atomic_load_explicit(&depot_size[class], memory_order_relaxed) >= DEPOT_CAP) {
        while (mag != NULL) {
            struct free_block *next = mag->next;
            free(mag);
            mag = next;
        }
        return;
    }
    depot_push_chain(class, mag, mag, 1);
}

/* Hands the exiting thread's blocks to the depot so other threads reuse them. */
static void flush_at_exit(void *unused) {
    (void)unused;
    for (int class = 0; class < CLASSES; class++) {
        struct magazines *mags = &mags_of[class];
        if (mags->loaded != NULL) depot_give(class, mags->loaded, mags->loaded_count);
        if (mags->previous != NULL) depot_give(class, mags->previous, mags->previous_count);
        *mags = (struct magazines){0};
    }
    exit_armed = false;
}

static void exit_key_create(void) {
    if (pthread_key_create(&exit_key, flush_at_exit) != 0) {
        fputs("bolts: pthread_key_create failed\n", stderr);
        abort();
    }
}

/* Takes one magazine from the depot into `loaded`; every other magazine taken with it
 * goes back as one chain. Returns false when the depot was empty. */
static bool refill(int class, struct magazines *mags) {
    struct cds_lfs_head *all = __cds_lfs_pop_all(&depot[class]); /* B2 */
    if (all == NULL) return false;
    struct free_block *rest_head = NULL, *rest_tail = NULL;
    unsigned rest = 0, taken = 0;
    struct cds_lfs_node *node, *next;
    cds_lfs_for_each_safe(all, node, next) {
        struct free_block *chain = caa_container_of(node, struct free_block, depot_link);
        struct free_block *chain_tail = chain->chain_tail;
        unsigned length = chain->chain_length;
        if (mags->loaded == NULL) {
            mags->loaded = chain;
            mags->loaded_count = chain->count;
            taken = 1;
            chain = chain->next_mag; /* the rest of this chain, if any */
            length--;
            if (chain == NULL) continue;
        }
        rest += length;
        if (rest_head == NULL) {
            rest_head = chain;
        } else {
            rest_tail->next_mag = chain;
        }
        rest_tail = chain_tail;
    }
    /* Relaxed: see depot_size. */
    atomic_fetch_sub_explicit(&depot_size[class], taken + rest, memory_order_relaxed);
    if (rest_head != NULL) depot_push_chain(class, rest_head, rest_tail, rest);
    return true;
}

static inline void *class_alloc(int class) {
    struct magazines *mags = &mags_of[class];
    if (mags->loaded == NULL) {
        if (mags->previous != NULL) {
            mags->loaded = mags->previous;
            mags->loaded_count = mags->previous_count;
            mags->previous = NULL;
            mags->previous_count = 0;
        } else if (!refill(class, mags)) {
            return block_malloc(class);
        }
    }
    struct free_block *b = mags->loaded;
    mags->loaded = b->next;
    mags->loaded_count--;
    /* Blocks were last written by the thread that freed them, on another CPU. Start
     * fetching the one after next now (its address sits in this block, so no miss on a
     * chain): by the time it is handed out, it has arrived. */
    if (b->skip != NULL) __builtin_prefetch(b->skip, 1);
    return b;
}

static inline void class_free(int class, void *block) {
    if (!exit_armed) {
        pthread_once(&exit_key_once, exit_key_create);
        pthread_setspecific(exit_key, (void *)1);
        exit_armed = true;
    }
    struct magazines *mags = &mags_of[class];
    if (mags->loaded_count == BATCH) {
        if (mags->previous != NULL) depot_give(class, mags->previous, mags->previous_count);
        mags->previous = mags->loaded;
        mags->previous_count = mags->loaded_count;
        mags->loaded = NULL;
        mags->loaded_count = 0;
    }
    struct free_block *b = block;
    b->next = mags->loaded;
    b->skip = mags->loaded != NULL ? mags->loaded->next : NULL; /* freed here: hot */
    mags->loaded = b;
    mags->loaded_count++;
}

void *bolts_pool_block_alloc(void) { return class_alloc(CLASS_JOB); }

void bolts_pool_block_free(void *block) { class_free(CLASS_JOB, block); }

void *bolts__block_alloc(void) { return class_alloc(CLASS_TASK); }

void bolts__block_free(void *block) { class_free(CLASS_TASK, block); }

#else /* BOLTS_POOL_NO_BLOCK_CACHE */

void *bolts_pool_block_alloc(void) { return block_malloc(CLASS_JOB); }

void bolts_pool_block_free(void *block) { free(block); }

void *bolts__block_alloc(void) { return block_malloc(CLASS_TASK); }

void bolts__block_free(void *block) { free(block); }

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
