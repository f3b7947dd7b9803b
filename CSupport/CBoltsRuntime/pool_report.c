/* What the pool says about itself: the stall reports of I12 and `bolts_pool_snapshot`.
 *
 * A report is made where the news is: the monitor makes the found report when it marks a
 * worker, capturing the blocked thread there and then (diagnostics.c), and whichever of the
 * worker and the monitor undoes the mark makes the ended report. Neither delivers it: each
 * copies the record into a bounded ring under a mutex (held for a copy, never while an
 * observer runs) and signals the pool's reporter thread, which calls the observer. So an
 * observer that blocks, or is slow (a logger writing to a full pipe), delays only the
 * reports after it; detection and compensation go on. Reports that find the ring full, and
 * found reports over BOLTS_POOL_STALL_REPORTS_PER_S (a token bucket of that many per second
 * and as many at once, spent by the monitor alone), are dropped and counted
 * (`stall_reports_dropped`); an ended report is made only for a mark whose found report
 * was queued (see `post`), so an observer never sees an end without its start.
 *
 * Nothing here runs on an unmarked job's path: a worker reaches this file only after a job
 * the monitor marked (at least BOLTS_POOL_BLOCKED_NS long).
 *
 * The reporter thread outlives nothing it reads: the records are copies, and when the pool
 * is freed (`bolts__stall_reports_free`) the thread is told to stop, drains what is queued,
 * releases the observer's context and frees the ring itself.
 */
#define _GNU_SOURCE
#include "pool_internal.h"

#include <pthread.h>
#include <string.h>

/* Reports queued for the reporter at most: a burst of marks beyond it is counted, not kept. */
#define RING 64

struct bolts_stall_reports {
    pthread_mutex_t lock;
    pthread_cond_t ready;
    bolts_stall_record_t ring[RING]; /* under lock */
    uint32_t head, count;            /* under lock */
    bool stop;                       /* under lock */
    bolts_stall_observer_fn observer;
    void (*release)(void *context);
    void *context;
    /* The token bucket of found reports: the monitor's alone. */
    double tokens;
    int64_t refilled_at;
};

/* Task ids of Swift jobs (concurrency.c); 0 when it cannot tell. Weak: the C core is also
 * built without concurrency.c (its C stress test), and then knows no Swift job. */
BOLTS_HIDDEN uint64_t bolts__swift_job_task_id(void *job) __attribute__((weak));

void bolts__pool_thread_name(const struct bolts_pool *pool, uint32_t index, char name[16]) {
    snprintf(name, 16, "%.8s-%u", pool->name, index);
}

static void *reporter_main(void *arg) {
    struct bolts_stall_reports *r = arg;
    bolts_stall_record_t record;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        while (r->count == 0 && !r->stop) pthread_cond_wait(&r->ready, &r->lock);
        if (r->count == 0) break; /* stopping, and drained */
        record = r->ring[r->head];
        r->head = (r->head + 1) % RING;
        r->count--;
        pthread_mutex_unlock(&r->lock);
        r->observer(r->context, &record);
        pthread_mutex_lock(&r->lock);
    }
    pthread_mutex_unlock(&r->lock);
    if (r->release != NULL) r->release(r->context);
    pthread_cond_destroy(&r->ready);
    pthread_mutex_destroy(&r->lock);
    free(r);
    return NULL;
}

bool bolts_pool_observe_stalls(bolts_pool_t *pool, bolts_stall_observer_fn observer, void (*release)(void *),
                               void *context) {
    if (BOLTS_POOL_BLOCKED_NS <= 0) return false; /* a build without the monitor */
    struct bolts_stall_reports *r = calloc(1, sizeof *r);
    if (r == NULL) return false;
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->ready, NULL);
    r->observer = observer;
    r->release = release;
    r->context = context;
    r->tokens = BOLTS_POOL_STALL_REPORTS_PER_S;
    r->refilled_at = bolts__now_ns();
    pthread_mutex_lock(&pool->spawn_lock); /* one setter at a time; never on a job's path */
    /* Relaxed: read under spawn_lock, the only place that stores it. */
    bool taken = atomic_load_explicit(&pool->reports, memory_order_relaxed) != NULL;
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    bool started = !taken && pthread_create(&thread, &attr, reporter_main, r) == 0;
    pthread_attr_destroy(&attr);
    if (started) {
        char name[16];
        snprintf(name, sizeof name, "%.8s-rep", pool->name);
        pthread_setname_np(thread, name);
        /* Release: the monitor's and workers' acquire loads then see the ring set up. */
        atomic_store_explicit(&pool->reports, r, memory_order_release);
    }
    pthread_mutex_unlock(&pool->spawn_lock);
    if (!started) {
        pthread_cond_destroy(&r->ready);
        pthread_mutex_destroy(&r->lock);
        free(r);
    }
    return started;
}

/* Queues `record` for the reporter, counting it dropped if the ring is full. A found
 * report opens its slot's mark (`report_open`), an ended one is queued only for an open
 * mark, and closes it; the flag is read and written under the ring's lock alone. The
 * monitor queues a found report before it marks the worker, and whoever undoes the mark
 * queues the ended one after: the undoing read the mark's store, which follows the found
 * report's unlock, so its lock comes after that unlock, and it sees the mark open. */
static void post(bolts_pool_t *pool, struct bolts_stall_reports *r, struct bolts_pool_slot *slot,
                 const bolts_stall_record_t *record) {
    bool found = record->phase == BOLTS_STALL_FOUND;
    pthread_mutex_lock(&r->lock);
    /* Relaxed, both: under the lock, which orders them. */
    bool open = atomic_load_explicit(&slot->report_open, memory_order_relaxed) != 0;
    bool room = r->count < RING && !r->stop;
    if (found ? room : open) {
        atomic_store_explicit(&slot->report_open, found, memory_order_relaxed);
        if (room) {
            r->ring[(r->head + r->count) % RING] = *record;
            r->count++;
            pthread_cond_signal(&r->ready);
        }
    }
    pthread_mutex_unlock(&r->lock);
    /* Relaxed: a statistic. */
    if (!room && (found || open)) atomic_fetch_add_explicit(&pool->reports_dropped, 1, memory_order_relaxed);
}

/* The Swift task of the job `slot`'s worker runs, or 0. The job's record is alive while
 * its worker runs it; the caller has seen the worker in that job (a marked, sleeping one). */
static uint64_t task_of(struct bolts_pool_slot *slot) {
    /* Relaxed: a hint the worker writes around each Swift job (concurrency.c). */
    void *job = atomic_load_explicit(&slot->swift_job, memory_order_relaxed);
    return job != NULL && bolts__swift_job_task_id != NULL ? bolts__swift_job_task_id(job) : 0;
}

static void fill(bolts_pool_t *pool, struct bolts_pool_slot *slot, uint32_t phase, bolts_stall_record_t *record) {
    record->phase = phase;
    record->worker = slot->index;
    /* Acquire: pairs with the worker's release of its id at its start. */
    record->tid = atomic_load_explicit(&slot->tid, memory_order_acquire);
    bolts__pool_thread_name(pool, slot->index, record->thread_name);
}

void bolts__stall_report_found(bolts_pool_t *pool, struct bolts_pool_slot *slot, int64_t now, uint32_t queued) {
    /* Acquire: pairs with the release in `bolts_pool_observe_stalls`. */
    struct bolts_stall_reports *r = atomic_load_explicit(&pool->reports, memory_order_acquire);
    if (r == NULL) return;
    r->tokens += (double)(now - r->refilled_at) * BOLTS_POOL_STALL_REPORTS_PER_S / 1e9;
    if (r->tokens > BOLTS_POOL_STALL_REPORTS_PER_S) r->tokens = BOLTS_POOL_STALL_REPORTS_PER_S;
    r->refilled_at = now;
    if (r->tokens < 1) {
        /* Relaxed: a statistic. */
        atomic_fetch_add_explicit(&pool->reports_dropped, 1, memory_order_relaxed);
        return;
    }
    r->tokens -= 1;
    bolts_stall_record_t record = {0};
    fill(pool, slot, BOLTS_STALL_FOUND, &record);
    /* Relaxed, all three: hints the monitor itself wrote, or the thread wrote at its start. */
    record.held_ns = now - atomic_load_explicit(&slot->job_since, memory_order_relaxed);
    record.queued = queued;
    record.task_id = task_of(slot);
    bolts_capture_thread(record.tid, atomic_load_explicit(&slot->stack_low, memory_order_relaxed),
                         atomic_load_explicit(&slot->stack_high, memory_order_relaxed), &record.capture);
    post(pool, r, slot, &record);
}

void bolts__stall_report_ended(bolts_pool_t *pool, struct bolts_pool_slot *slot) {
    /* Acquire: pairs with the release in `bolts_pool_observe_stalls`. */
    struct bolts_stall_reports *r = atomic_load_explicit(&pool->reports, memory_order_acquire);
    if (r == NULL) return;
    bolts_stall_record_t record = {0};
    fill(pool, slot, BOLTS_STALL_ENDED, &record);
    /* Relaxed: a hint the monitor wrote when it first saw the job. */
    record.held_ns = bolts__now_ns() - atomic_load_explicit(&slot->job_since, memory_order_relaxed);
    record.capture.system_call = -3;
    post(pool, r, slot, &record);
}

void bolts__stall_reports_free(bolts_pool_t *pool) {
    /* Relaxed: the pool is being freed; nobody else touches it. */
    struct bolts_stall_reports *r = atomic_load_explicit(&pool->reports, memory_order_relaxed);
    if (r == NULL) return;
    pthread_mutex_lock(&r->lock);
    r->stop = true;
    pthread_cond_signal(&r->ready);
    pthread_mutex_unlock(&r->lock); /* the reporter frees `r` once it has drained it */
}

uint32_t bolts_pool_snapshot(bolts_pool_t *pool, bolts_pool_worker_snapshot_t *workers, uint32_t capacity,
                             uint64_t *queued, uint32_t *extra) {
    *queued = bolts__pool_jobs_waiting(pool);
    *extra = bolts__pool_extra_active(pool);
    int64_t now = bolts__now_ns();
    /* Relaxed: a hint the monitor writes at each look. */
    int64_t last_look = atomic_load_explicit(&pool->last_look, memory_order_relaxed);
    /* Acquire: pairs with the release in `bolts__pool_add_worker`. */
    uint32_t hwm = atomic_load_explicit(&pool->hwm, memory_order_acquire);
    uint32_t n = 0;
    for (uint32_t i = 0; i < hwm && n < capacity; i++) {
        struct bolts_pool_slot *slot = &pool->slots[i];
        /* Relaxed, these loads: a description, not a consistent cut. */
        unsigned state = atomic_load_explicit(&slot->state, memory_order_relaxed);
        if (state == SLOT_FREE) continue;
        bolts_pool_worker_snapshot_t *w = &workers[n++];
        memset(w, 0, sizeof *w);
        w->index = i;
        /* Acquire: pairs with the worker's release of its id at its start. */
        w->tid = atomic_load_explicit(&slot->tid, memory_order_acquire);
        bolts__pool_thread_name(pool, i, w->thread_name);
        w->in_job_ns = -1;
        w->capture.system_call = -3;
        if (state == SLOT_SPARE) {
            w->state = BOLTS_WORKER_SPARE;
            continue;
        }
        uint64_t started = atomic_load_explicit(&slot->started, memory_order_relaxed);
        bool in_job = started != atomic_load_explicit(&slot->executed, memory_order_relaxed);
        if (bolts__pool_owner_parked(pool, slot)) {
            w->state = BOLTS_WORKER_PARKED;
            continue;
        }
        if (!in_job) {
            w->state = BOLTS_WORKER_SEARCHING;
            continue;
        }
        bool blocked = atomic_load_explicit(&slot->stalled, memory_order_relaxed) != 0 ||
                       atomic_load_explicit(&slot->blocked, memory_order_relaxed);
        w->state = blocked ? BOLTS_WORKER_BLOCKED : BOLTS_WORKER_RUNNING;
        /* The monitor's estimate of the job's start if it has seen this job; else the job
         * began after its last look. */
        int64_t since = atomic_load_explicit(&slot->job_seen, memory_order_relaxed) == started
                            ? atomic_load_explicit(&slot->job_since, memory_order_relaxed)
                            : last_look;
        w->in_job_ns = now > since ? now - since : 0;
        if (w->tid != 0) {
            bolts_capture_thread(w->tid, atomic_load_explicit(&slot->stack_low, memory_order_relaxed),
                                 atomic_load_explicit(&slot->stack_high, memory_order_relaxed), &w->capture);
        }
    }
    return n;
}
