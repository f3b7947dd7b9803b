/* Submission: the queue a job goes to, the enqueue and the wake-up it may owe (I3, I5),
 * the race with shutdown (I7), and backpressure on submitters from outside the pool (I8).
 * The invariants are in include/bolts_pool.h.
 *
 * The tunable constants are defined, with their values, in bolts_tuning.h; this
 * is what this file's are for and why each is sized as it is.
 *
 * Backpressure (I8: BOLTS_POOL_BACKLOG_PER_WORKER, BOLTS_POOL_BACKLOG_SAMPLE). A thread that
 * is not one of the pool's workers reads the backlog once every BOLTS_POOL_BACKLOG_SAMPLE
 * submissions, so that an unloaded submitter rarely touches the counters' lines; once it
 * finds more than BOLTS_POOL_BACKLOG_PER_WORKER queued jobs per worker, it gives up its
 * time slice on each submission, checking each time, until the backlog is under the bound.
 * It never blocks and never refuses a job: it only lets the workers have the CPU when
 * submitters outnumber cores and would otherwise queue jobs faster than the workers get to
 * run them, so the queued jobs (a BOLTS_POOL_BLOCK_SIZE block each) stay in cache and the
 * time a job spends queued stays bounded.
 */
#define _GNU_SOURCE
#include "pool_internal.h"

#include <urcu/wfcqueue.h>

#include <sched.h>

/* Rotation for submissions from threads that are not this pool's workers: the index
 * of the last slot used (reset when it is past a pool's N). */
static _Thread_local uint32_t tl_rotation;
/* Submissions from this thread to pools it is not a worker of (backpressure sampling). */
static _Thread_local uint32_t tl_outside_submits;
/* The pool whose backlog this thread last found over the bound (backpressure), if any. */
static _Thread_local bolts_pool_t *tl_throttled;
/* Submissions from this thread, to any pool, for the submit-to-start probe. */
static _Thread_local uint32_t tl_probe_submits;

/* Nanoseconds after which a probe that never came back (its job ran outside a worker's
 * loop: swept after shutdown) is taken over by the next offer. */
#define PROBE_STALE_NS 1000000000

/* Offers `job` as the pool's submit-to-start probe (scheduler health): it becomes the
 * probe, flagged JOB_TIMED, if no other probe is in flight. Relaxed load and CAS: the
 * CAS alone decides which job is the probe; its time is the value handed over. */
static void take_probe(bolts_pool_t *pool, bolts_job_t *job) {
    int64_t now = bolts__now_ns();
    int64_t at = atomic_load_explicit(&pool->probe_at, memory_order_relaxed);
    if (at != 0 && now - at < PROBE_STALE_NS) return;
    if (atomic_compare_exchange_strong_explicit(&pool->probe_at, &at, now, memory_order_relaxed,
                                                memory_order_relaxed)) {
        job->flags |= JOB_TIMED;
    }
}

/* Runs a job that the pool will not run on a worker (shut down): on this thread,
 * through the trampoline so a chain of them cannot grow the stack (I1). */
static void run_here(bolts_job_t *job) {
    job->pool = NULL;
    bolts_dispatch(job);
}

/* Empties every queue on this thread, after the pool was seen CLOSED (I7). Never holds
 * a consumer flag while a job runs: a job may submit, and so sweep, again. */
static void sweep(bolts_pool_t *pool) {
    /* Acquire: pairs with the release in `bolts__pool_add_worker`. */
    uint32_t hwm = atomic_load_explicit(&pool->hwm, memory_order_acquire);
    for (uint32_t i = 0; i < hwm; i++) {
        struct bolts_pool_slot *slot = &pool->slots[i];
        for (;;) {
            bolts_job_t *job = take(slot);
            if (job == FOUND_NOTHING) break;
            if (job == FOUND_BUSY) {
                bolts__yield_cpu(); /* a pre-empted producer: let it finish its enqueue */
                continue;
            }
            if (job == FOUND_HELD) {
                bolts__cpu_relax(); /* another consumer: it drops the flag after one dequeue */
                continue;
            }
            /* Relaxed: a statistic. */
            atomic_fetch_add_explicit(&pool->swept, 1, memory_order_relaxed);
            run_here(job);
        }
    }
}

/* The queue for a job from a thread that is not one of the pool's workers: the one of
 * the CPU the thread runs on (sched_getcpu reads the kernel's rseq area here, no system
 * call), so submitters on one CPU feed one queue, whose worker finds the jobs in that
 * CPU's cache, and a job is not left behind a worker that the scheduler has just
 * pre-empted on another CPU to run its submitter. A pool with more workers than CPUs
 * (or a failed lookup) uses a per-thread rotation instead. */
static uint32_t outside_slot(bolts_pool_t *pool) {
    if (pool->target <= pool->cpus) {
        int cpu = sched_getcpu();
        if (cpu >= 0) return (uint32_t)cpu % pool->target;
    }
    uint32_t r = tl_rotation + 1;
    if (r >= pool->target) r = 0;
    tl_rotation = r;
    return r;
}

/* Jobs accepted and not yet run (an estimate: see `job_totals`). */
static uint64_t backlog(bolts_pool_t *pool) {
    uint64_t submitted, executed;
    job_totals(pool, &submitted, &executed, NULL, NULL);
    return submitted > executed ? submitted - executed : 0;
}

/* Backpressure on a thread that is not one of the pool's workers (see
 * BOLTS_POOL_BACKLOG_PER_WORKER). Sampled while the backlog was last seen under the
 * bound, so the counters are read once per BOLTS_POOL_BACKLOG_SAMPLE submissions; once
 * over, every submission checks and yields. One yield per sample is not enough: when
 * submitters outnumber CPUs the scheduler often hands a yielding thread the CPU straight
 * back, and the backlog keeps growing. */
static void backpressure(bolts_pool_t *pool) {
    if (tl_throttled != pool && ++tl_outside_submits % BOLTS_POOL_BACKLOG_SAMPLE != 0) return;
    if (backlog(pool) > (uint64_t)BOLTS_POOL_BACKLOG_PER_WORKER * pool->target) {
        tl_throttled = pool;
        /* Relaxed: a statistic. */
        atomic_fetch_add_explicit(&pool->yields, 1, memory_order_relaxed);
        bolts__yield_cpu();
    } else {
        tl_throttled = NULL;
    }
}

bool bolts_pool_try_submit(bolts_pool_t *pool, bolts_job_t *job) {
    struct bolts_pool_slot *self = bolts__pool_tl_slot;
    bool own = self != NULL && self->pool == pool;
    /* Relaxed: an early refusal only; the re-read after the fence below is the one I7
     * relies on. */
    unsigned st = atomic_load_explicit(&pool->state, memory_order_relaxed);
    if (st == POOL_CLOSED || (st == POOL_CLOSING && !own)) return false;
    struct bolts_pool_slot *slot = self;
    if (!own) slot = &pool->slots[outside_slot(pool)];
    job->next = NULL; /* what cds_wfcq_node_init does: the queue's link starts empty */
    job->flags = own ? job->flags & ~(JOB_FROM_OUTSIDE | JOB_TIMED) : (job->flags | JOB_FROM_OUTSIDE) & ~JOB_TIMED; /* I11 */
    if (++tl_probe_submits % BOLTS_POOL_DELAY_SAMPLE == 0) take_probe(pool, job);
    BOLTS_TSAN_RELEASE(job);
    if (own) {
        /* Relaxed load and store: written only by this thread (the owner's line). */
        atomic_store_explicit(&slot->own_submitted,
                              atomic_load_explicit(&slot->own_submitted, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    } else {
        /* Relaxed: a count (on a producers-only line; see the slot). */
        atomic_fetch_add_explicit(&slot->submitted, 1, memory_order_relaxed);
    }
    /* The tail exchange inside the enqueue is liburcu's uatomic_xchg, a full memory
     * barrier before and after (a locked XCHG on x86): the job's fields are visible to
     * whoever dequeues it, and the exchange is ordered before the loads below as a
     * seq_cst fence would order it. It is the store of the store-buffering pair of I3
     * (a parker's `any_work` reads the tail) and of I7 (a final scan reads it too), so
     * no fence of our own is needed. The link store that follows the exchange needs no
     * such order: a reader that sees the new tail and no link yet reports the queue
     * busy, not empty. Leaving that store in the store buffer matters: it writes the
     * previous job, which a worker on another CPU is often reading. */
    bool was_nonempty = cds_wfcq_enqueue(&slot->head, &slot->tail, (struct cds_wfcq_node *)job);
#ifdef BOLTS_TSAN
    /* ThreadSanitizer cannot see liburcu's barrier; give it the C11 one. */
    atomic_thread_fence(memory_order_seq_cst);
#endif
    /* Relaxed: ordered after the exchange by its full barrier (above). */
    if (atomic_load_explicit(&pool->state, memory_order_relaxed) == POOL_CLOSED) {
        sweep(pool); /* our job may have landed after the last worker's final scan */
    } else if (!was_nonempty && !(own && atomic_load_explicit(&pool->restrained_parked, memory_order_relaxed) != 0)) {
        /* Relaxed load: a hint (I11). A worker's job in its own queue needs no wake while
         * another worker is parked under a restraint: this thread runs it before it parks
         * (its parking check sees its own queue), unless a searcher takes it first. */
        notify(pool);
    }
    if (!own) backpressure(pool);
    return true;
}

void bolts_pool_submit(bolts_pool_t *pool, bolts_job_t *job) {
    if (bolts_pool_try_submit(pool, job)) return;
    /* Relaxed: a statistic. */
    atomic_fetch_add_explicit(&pool->rejected, 1, memory_order_relaxed);
    run_here(job);
}
