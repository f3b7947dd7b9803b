/* The thread pool's lifecycle and its public queries: creating a pool and its workers,
 * shutdown (I7), waiting for the workers to end, the reference count, the metrics, and
 * which pool the calling thread works for. The rest of the pool is one concern a file:
 * pool_steal.c (where a worker finds its next job), pool_worker.c (the worker loop),
 * pool_spin.c (the idle spin), pool_park.c (parking and waking), pool_submit.c (submission
 * and backpressure), pool_compensate.c (blocked workers, I6), pool_monitor.c (blocked
 * workers the pool cannot see, I12), pool_report.c (its stall reports and the snapshot),
 * pool_hop.c (hops), pool_serial.c (serial executors)
 * and pool_blocks.c (job blocks). The invariants (I1-I12) and the synchronization table are
 * at the top of include/bolts_pool.h, the tunable constants in bolts_tuning.h;
 * comments cite them. liburcu is used only for its wait-free concurrent queue
 * (urcu/wfcqueue.h), always through the `_nonblocking` dequeue: the blocking one sleeps
 * 10 ms when a producer is pre-empted mid-enqueue.
 */
#define _GNU_SOURCE
#include "pool_internal.h"

#include <urcu/wfcqueue.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t bolts_cpu_count(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return (uint32_t)n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (uint32_t)n : 1;
}

static void pool_free(bolts_pool_t *pool) {
    bolts__stall_reports_free(pool);
    pthread_mutex_destroy(&pool->spawn_lock);
    free(pool->parked);
    free(pool->slots);
    free(pool);
}

void bolts__pool_unref(bolts_pool_t *pool) {
    /* Acq_rel: the last owner sees every other owner's writes before freeing. */
    if (atomic_fetch_sub_explicit(&pool->refs, 1, memory_order_acq_rel) == 1) pool_free(pool);
}

bolts_pool_t *bolts_pool_create(uint32_t thread_count, const char *name) {
    if (thread_count == 0) thread_count = bolts_cpu_count();
    if (thread_count > BOLTS_POOL_MAX_THREADS) {
        errno = EINVAL;
        return NULL;
    }
    bolts_pool_t *pool = aligned_alloc(BOLTS_CACHE_LINE, sizeof *pool);
    if (pool == NULL) return NULL;
    memset(pool, 0, sizeof *pool);
    pool->target = thread_count;
    pool->cpus = bolts_cpu_count();
    pool->capacity = thread_count + BOLTS_POOL_MAX_EXTRA_THREADS;
    pool->mask_words = (pool->capacity + 63) / 64;
    snprintf(pool->name, sizeof pool->name, "%s", name != NULL && name[0] != 0 ? name : "bolts");
    pool->slots = aligned_alloc(BOLTS_CACHE_LINE, sizeof(struct bolts_pool_slot) * pool->capacity);
    pool->parked = calloc(pool->mask_words, sizeof(uint64_t));
    if (pool->slots == NULL || pool->parked == NULL) {
        free(pool->slots);
        free(pool->parked);
        free(pool);
        errno = ENOMEM;
        return NULL;
    }
    memset(pool->slots, 0, sizeof(struct bolts_pool_slot) * pool->capacity);
    for (uint32_t i = 0; i < pool->capacity; i++) {
        struct bolts_pool_slot *slot = &pool->slots[i];
        __cds_wfcq_init(&slot->head, &slot->tail);
        slot->index = i;
        slot->pool = pool;
        slot->grace.slot = UINT32_MAX;     /* giving no steal grace yet (I10) */
        slot->restraint.slot = UINT32_MAX; /* keeping no restraint yet (I11) */
        slot->restrained_park = BOLTS_POOL_RESTRAIN_NS;
        slot->until_sample = BOLTS_POOL_SAMPLE_INTERVAL;
    }
    pthread_mutex_init(&pool->spawn_lock, NULL);
    /* Relaxed, all of them: nothing else can see the pool yet; pthread_create publishes. */
    atomic_store_explicit(&pool->refs, 1, memory_order_relaxed);
    atomic_store_explicit(&pool->hwm, thread_count, memory_order_relaxed);
    atomic_store_explicit(&pool->unblocked, (int)thread_count, memory_order_relaxed);
    for (uint32_t i = 0; i < thread_count; i++) {
        atomic_store_explicit(&pool->slots[i].state, SLOT_ACTIVE, memory_order_relaxed);
    }
    for (uint32_t i = 0; i < thread_count; i++) {
        /* Relaxed: counts published by pthread_create. */
        atomic_fetch_add_explicit(&pool->refs, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&pool->live_threads, 1, memory_order_relaxed);
        int rc = bolts__pool_start_thread(pool, &pool->slots[i]);
        if (rc != 0) {
            atomic_fetch_sub_explicit(&pool->refs, 1, memory_order_relaxed);
            atomic_fetch_sub_explicit(&pool->live_threads, 1, memory_order_relaxed);
            for (uint32_t j = i; j < thread_count; j++) {
                atomic_store_explicit(&pool->slots[j].state, SLOT_FREE, memory_order_relaxed);
            }
            atomic_fetch_sub_explicit(&pool->unblocked, (int)(thread_count - i), memory_order_relaxed);
            bolts_pool_shutdown(pool, i > 0);
            bolts__pool_unref(pool);
            errno = rc;
            return NULL;
        }
    }
    if (!bolts__pool_monitor_start(pool) && BOLTS_POOL_BLOCKED_NS > 0) {
        fprintf(stderr, "bolts: pool '%s' could not start its monitor; workers blocked in a job go uncompensated\n",
                pool->name);
    }
    return pool;
}

int bolts_pool_shutdown(bolts_pool_t *pool, bool wait) {
    unsigned expected = POOL_OPEN;
    /* Seq_cst: the CLOSING store of I7, in the same total order as the fences. */
    if (atomic_compare_exchange_strong_explicit(&pool->state, &expected, POOL_CLOSING, memory_order_seq_cst,
                                                memory_order_relaxed)) {
        /* Seq_cst fence: the other half of I7's store-buffering pair with a parker (its
         * bit, a fence, then its state load), so `wake_one`'s relaxed mask load below
         * sees the bit or the parker sees CLOSING. The locked CAS is already a full
         * barrier on x86; C11 promises the pairing only with a fence on both sides. */
        atomic_thread_fence(memory_order_seq_cst);
        /* Parked workers would not notice: wake them so the last to park again closes
         * the pool once the queues are empty. */
        bolts__pool_wake_parked(pool);
    }
    if (!wait) return 0;
    struct bolts_pool_slot *self = bolts__pool_tl_slot;
    if (self != NULL && self->pool == pool) return EDEADLK;
    bolts_pool_await_termination(pool, -1);
    return 0;
}

bool bolts_pool_await_termination(bolts_pool_t *pool, int64_t timeout_ns) {
    int64_t deadline = bolts__deadline_after(timeout_ns);
    for (;;) {
        /* Acquire: pairs with the release decrement of each exiting worker. */
        unsigned live = atomic_load_explicit(&pool->live_threads, memory_order_acquire);
        if (live == 0) return true;
        int64_t left = -1;
        if (deadline >= 0) {
            left = deadline - bolts__now_ns();
            if (left <= 0) return false;
        }
        bolts__futex_wait(&pool->live_threads, live, left);
    }
}

void bolts_pool_release(bolts_pool_t *pool) {
    bolts_pool_shutdown(pool, false);
    bolts__pool_unref(pool);
}

void bolts_pool_get_metrics(const bolts_pool_t *pool, bolts_pool_metrics_t *out) {
    bolts_pool_t *p = (bolts_pool_t *)pool; /* relaxed loads only; C11 wants non-const */
    memset(out, 0, sizeof *out);
    job_totals(p, &out->submitted, &out->executed, &out->stolen, &out->parks);
    /* Relaxed, every load here: a snapshot of statistics, not a consistent cut. The
     * acquire pairs with the release in `bolts__pool_add_worker`. */
    uint32_t hwm = atomic_load_explicit(&p->hwm, memory_order_acquire);
    uint32_t active = 0;
    for (uint32_t i = 0; i < hwm; i++) {
        struct bolts_pool_slot *slot = &p->slots[i];
        if (atomic_load_explicit(&slot->state, memory_order_relaxed) == SLOT_ACTIVE) active++;
        if (atomic_load_explicit(&slot->stalled, memory_order_relaxed) != 0) out->stalled++;
    }
    out->rejected = atomic_load_explicit(&p->rejected, memory_order_relaxed);
    out->backpressure_yields = atomic_load_explicit(&p->yields, memory_order_relaxed);
    out->compensations = atomic_load_explicit(&p->compensations, memory_order_relaxed);
    out->stalls = atomic_load_explicit(&p->stalls, memory_order_relaxed);
    out->stall_reports_dropped = atomic_load_explicit(&p->reports_dropped, memory_order_relaxed);
    out->spares_exited = atomic_load_explicit(&p->spares_exited, memory_order_relaxed);
    out->growth_refused = atomic_load_explicit(&p->growth_refused, memory_order_relaxed);
    out->queue_depth = out->submitted > out->executed ? out->submitted - out->executed : 0;
    out->threads = atomic_load_explicit(&p->live_threads, memory_order_relaxed);
    int unblocked = atomic_load_explicit(&p->unblocked, memory_order_relaxed);
    out->blocked = (int)active > unblocked ? active - (uint32_t)unblocked : 0;
}

void bolts_pool_get_histograms(const bolts_pool_t *pool, bolts_pool_histograms_t *out) {
    bolts_pool_t *p = (bolts_pool_t *)pool; /* relaxed loads only; C11 wants non-const */
    for (;;) {
        memset(out, 0, sizeof *out);
        /* Acquire: the sequence lock's read side, as in `job_totals`. */
        unsigned gen = atomic_load_explicit(&p->stats_gen, memory_order_acquire);
        /* Acquire: pairs with the release in `bolts__pool_add_worker`. */
        uint32_t hwm = atomic_load_explicit(&p->hwm, memory_order_acquire);
        /* Relaxed, every load below: statistics; a snapshot, not a consistent cut. */
        for (uint32_t b = 0; b < BOLTS_POOL_HISTOGRAM_BUCKETS; b++) {
            out->run[b] = atomic_load_explicit(&p->retired_run_histogram[b], memory_order_relaxed);
            out->delay[b] = atomic_load_explicit(&p->retired_delay_histogram[b], memory_order_relaxed);
            for (uint32_t i = 0; i < hwm; i++) {
                out->run[b] += atomic_load_explicit(&p->slots[i].run_histogram[b], memory_order_relaxed);
                out->delay[b] += atomic_load_explicit(&p->slots[i].delay_histogram[b], memory_order_relaxed);
            }
        }
        /* Acquire fence, then the generation again: the sequence lock's read side. */
        atomic_thread_fence(memory_order_acquire);
        if ((gen & 1) == 0 && atomic_load_explicit(&p->stats_gen, memory_order_relaxed) == gen) return;
    }
}

uint32_t bolts_pool_worker_busy(const bolts_pool_t *pool, int64_t *busy_ns, uint32_t capacity) {
    bolts_pool_t *p = (bolts_pool_t *)pool; /* relaxed loads only; C11 wants non-const */
    /* Acquire: pairs with the release in `bolts__pool_add_worker`. */
    uint32_t hwm = atomic_load_explicit(&p->hwm, memory_order_acquire);
    int64_t now = bolts__now_ns();
    uint32_t n = 0;
    for (uint32_t i = 0; i < hwm && n < capacity; i++, n++) {
        struct bolts_pool_slot *slot = &p->slots[i];
        /* Relaxed, these: owner-written hints (a description, not a consistent cut). The
         * acquire load of the id pairs with its release at the thread's start. */
        if (atomic_load_explicit(&slot->state, memory_order_relaxed) == SLOT_FREE ||
            atomic_load_explicit(&slot->tid, memory_order_acquire) == 0) {
            busy_ns[n] = -1;
            continue;
        }
        int64_t started = atomic_load_explicit(&slot->thread_started_at, memory_order_relaxed);
        int64_t asleep = atomic_load_explicit(&slot->asleep_ns, memory_order_relaxed);
        int64_t since = atomic_load_explicit(&slot->asleep_since, memory_order_relaxed);
        if (since != 0 && since < now) asleep += now - since;
        int64_t busy = now - started - asleep;
        busy_ns[n] = busy > 0 ? busy : 0;
    }
    return n;
}

uint32_t bolts_pool_thread_count(const bolts_pool_t *pool) { return pool->target; }

bool bolts_pool_is_shut_down(const bolts_pool_t *pool) {
    /* Relaxed: a status query; callers that race shutdown get either answer. */
    return atomic_load_explicit(&((bolts_pool_t *)pool)->state, memory_order_relaxed) != POOL_OPEN;
}

bolts_pool_t *bolts_pool_current(void) { return bolts__pool_tl_slot != NULL ? bolts__pool_tl_slot->pool : NULL; }

bolts_pool_t *bolts_pool_current_behind_queued_jobs(void) {
    struct bolts_pool_slot *self = bolts__pool_tl_slot;
    /* A pool of one has nobody to take the job from a queue whose owner blocks where the
     * pool cannot see (the header says why that matters). */
    if (self == NULL || self->pool->target < 2) return NULL;
    /* cds_wfcq_empty: two CMM_LOAD_SHARED reads of the queue's ends, no ordering (a hint). */
    return cds_wfcq_empty(&self->head, &self->tail) ? NULL : self->pool;
}
