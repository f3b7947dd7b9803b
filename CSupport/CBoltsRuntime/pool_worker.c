/* A worker thread: its start, its loop (find a job, run it, spin, park, retire) and the
 * running of one job, with the sampling of job lengths that the restraint reads (I11).
 * The invariants are in include/bolts_pool.h.
 */
#define _GNU_SOURCE
#include "pool_internal.h"

#include <urcu/wfcqueue.h>

#include <limits.h>
#include <pthread.h>
#include <stdio.h>

/* The slot of the pool worker running on this thread, if any (declared in pool_internal.h). */
_Thread_local struct bolts_pool_slot *bolts__pool_tl_slot;

static void *worker_main(void *arg);

int bolts__pool_start_thread(bolts_pool_t *pool, struct bolts_pool_slot *slot) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    int rc = pthread_create(&thread, &attr, worker_main, slot);
    pthread_attr_destroy(&attr);
    if (rc == 0) {
        char name[16];
        bolts__pool_thread_name(pool, slot->index, name);
        pthread_setname_np(thread, name);
    }
    return rc;
}

/* The probe job (JOB_TIMED) is starting on this worker: its submit-to-start delay goes in
 * the histogram, and the probe is free again. Relaxed exchange: the probe's time is a
 * value, published by nothing else; a stale probe taken over by a later submitter (see
 * `take_probe`) may lend its job the newer time, once. */
static void note_delay(struct bolts_pool_slot *self) {
    int64_t at = atomic_exchange_explicit(&self->pool->probe_at, 0, memory_order_relaxed);
    if (at != 0) bolts__owner_count(&self->delay_histogram[bolts__histogram_bucket(bolts__now_ns() - at)]);
}

static void run_job(struct bolts_pool_slot *self, bolts_job_t *job, bool stolen) {
    /* A dequeued job's link is stable (the dequeue either saw it set or moved the tail
     * off the job) and names the next job of that queue, written by its producer on
     * another CPU: start fetching it while this one runs. */
    if (job->next != NULL) __builtin_prefetch(job->next);
    /* Relaxed, the load and the store: written only by this thread; the monitor reads the
     * two counts as a hint of which job runs (I12). */
    uint64_t number = atomic_load_explicit(&self->executed, memory_order_relaxed) + 1;
    atomic_store_explicit(&self->started, number, memory_order_relaxed);
    /* The submit-to-start probe (scheduler health): the flag word shares the link's line,
     * already read above. */
    if (job->flags & JOB_TIMED) note_delay(self);
    if (--self->until_sample != 0) {
        bolts_job_run(job);
    } else {
        /* One job in BOLTS_POOL_SAMPLE_INTERVAL is timed (I11). From the own queue, it
         * counts unless it submitted to that queue (a job that hands itself work, such as
         * a task starting tasks, says nothing about the length of that work): the jobs
         * are short while two of the last three that counted took less than
         * BOLTS_POOL_SHORT_JOB_NS. A stolen one that was short marks its victim's jobs
         * short; a long one says nothing (a job that moved CPUs is slower there), but a
         * short one ends a mistaken verdict that the victim, its jobs all taken, could
         * not revise itself. */
        self->until_sample = BOLTS_POOL_SAMPLE_INTERVAL;
        /* Relaxed: written only by this thread. */
        uint64_t submitted = atomic_load_explicit(&self->own_submitted, memory_order_relaxed);
        int64_t start = bolts__now_ns();
        bolts_job_run(job);
        int64_t length = bolts__now_ns() - start;
        bool fast = length < BOLTS_POOL_SHORT_JOB_NS;
        bolts__owner_count(&self->run_histogram[bolts__histogram_bucket(length)]); /* scheduler health */
        if (stolen) {
            /* Relaxed: a hint; the victim's own verdicts may overwrite it. */
            if (fast) atomic_store_explicit(&self->pool->slots[self->victim].short_jobs, true, memory_order_relaxed);
        } else if (atomic_load_explicit(&self->own_submitted, memory_order_relaxed) == submitted) {
            self->samples = ((self->samples << 1) | (fast ? 1u : 0u)) & 7u;
            /* Relaxed: a hint for the restraint's heuristic, written only by this thread. */
            atomic_store_explicit(&self->short_jobs, __builtin_popcount(self->samples) >= 2, memory_order_relaxed);
        }
    }
    /* Relaxed, both: statistics written only by this thread (so load + store, no RMW);
     * readers want a recent value, not an ordering. */
    atomic_store_explicit(&self->executed, number, memory_order_relaxed);
    /* Relaxed: the monitor counted this worker as blocked in the job (I12); the exchange in
     * `bolts__pool_stall_over` decides. */
    if (atomic_load_explicit(&self->stalled, memory_order_relaxed) != 0) bolts__pool_stall_over(self);
    if (stolen) {
        atomic_store_explicit(&self->stolen, atomic_load_explicit(&self->stolen, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    }
}

static void *worker_main(void *arg) {
    struct bolts_pool_slot *self = arg;
    bolts_pool_t *pool = self->pool;
    bolts__pool_tl_slot = self;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        void *low = NULL;
        size_t size = 0;
        if (pthread_attr_getstack(&attr, &low, &size) == 0) {
            /* Relaxed, both: published by the release of the id below. */
            atomic_store_explicit(&self->stack_low, (uintptr_t)low, memory_order_relaxed);
            atomic_store_explicit(&self->stack_high, (uintptr_t)low + size, memory_order_relaxed);
        }
        pthread_attr_destroy(&attr);
    }
    /* Relaxed, all three: owner-written hints for `bolts_pool_worker_busy`, published to
     * its readers no sooner than the id below. */
    atomic_store_explicit(&self->asleep_ns, 0, memory_order_relaxed);
    atomic_store_explicit(&self->asleep_since, 0, memory_order_relaxed);
    atomic_store_explicit(&self->thread_started_at, bolts__now_ns(), memory_order_relaxed);
    /* Release: pairs with the monitor's acquire load; it reads this thread's CPU clock,
     * state and stack by this id (I12). */
    atomic_store_explicit(&self->tid, (int)gettid(), memory_order_release);
    bolts__pool_monitor_resume(pool); /* a new thread is out of any park (I12) */
    bool searching = false;
    for (;;) {
        bool stolen = false;
        bolts_job_t *job = bolts__pool_find_work(pool, self, &stolen);
        if (!IS_JOB(job)) {
            if (!searching) {
                /* Relaxed: a count (I5); parkers and notifiers fence around it. */
                atomic_fetch_add_explicit(&pool->searching, 1, memory_order_relaxed);
                searching = true;
            }
            if (!self->restrained) job = bolts__pool_spin_for_work(pool, self, &stolen);
        }
        if (IS_JOB(job)) {
            self->restrained_park = BOLTS_POOL_RESTRAIN_NS; /* it runs a job: no park grows (I11) */
            if (searching) {
                searching = false;
                /* Acq_rel: the last searcher to find work wakes one more worker if work
                 * remains, so parallelism ramps up (I5). */
                if (atomic_fetch_sub_explicit(&pool->searching, 1, memory_order_acq_rel) == 1) {
                    atomic_thread_fence(memory_order_seq_cst); /* as a producer would (I3) */
                    if (any_work(pool, NULL)) notify(pool);
                }
                run_job(self, job, stolen);
                continue;
            }
            /* Took a job from another queue that holds more: its owner is parked, blocked
             * or busy, and a producer that found that queue non-empty woke nobody. Bring a
             * parked worker in unless one is searching (I9); after the job has run, so the
             * job's start does not wait for the wake-up's system call. */
            bool backlog = stolen && job->next != NULL;
            run_job(self, job, stolen);
            if (backlog) notify(pool);
            continue;
        }
        if (job == FOUND_BUSY) {
            bolts__yield_cpu(); /* work is there but not takeable yet: give its owner the CPU */
            continue;
        }
        /* Acquire: pairs with the seq_cst CLOSED store; then a fence, so the final scan
         * sees every enqueue whose submitter did not see CLOSED (I7). */
        if (atomic_load_explicit(&pool->state, memory_order_acquire) == POOL_CLOSED) {
            atomic_thread_fence(memory_order_seq_cst);
            job = bolts__pool_find_work(pool, self, &stolen);
            if (job == FOUND_NOTHING) break;
            if (IS_JOB(job)) run_job(self, job, stolen);
            continue;
        }
        if (bolts__pool_try_retire(pool, self)) {
            if (searching) {
                searching = false;
                /* Seq_cst, then a fence: a notifier that skipped waking because it
                 * counted us must have its job seen by the re-check below (I5). */
                atomic_fetch_sub_explicit(&pool->searching, 1, memory_order_seq_cst);
                atomic_thread_fence(memory_order_seq_cst);
                if (any_work(pool, NULL)) notify(pool);
            }
            if (!bolts__pool_spare_wait(pool, self)) break;
            bolts__pool_monitor_resume(pool); /* back in service (I12) */
            continue;
        }
        searching = bolts__pool_park(pool, self, searching);
        bolts__pool_monitor_resume(pool); /* out of its park: the monitor must look (I12) */
    }
    if (searching) {
        /* Relaxed: a count; the pool is closed. */
        atomic_fetch_sub_explicit(&pool->searching, 1, memory_order_relaxed);
    }
    bolts__pool_tl_slot = NULL;
    /* Release: pairs with the acquire in `bolts_pool_await_termination`: every job this
     * thread ran happened before the waiter returns. */
    atomic_fetch_sub_explicit(&pool->live_threads, 1, memory_order_release);
    bolts__futex_wake(&pool->live_threads, INT_MAX);
    bolts__pool_unref(pool); /* last touch of the pool by this thread */
    return NULL;
}
