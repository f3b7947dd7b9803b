#ifndef BOLTS_POOL_INTERNAL_H
#define BOLTS_POOL_INTERNAL_H
/* Private definitions shared by the pool's files: pool.c (lifecycle), pool_steal.c (where a
 * worker finds its next job), pool_worker.c (the worker loop), pool_spin.c (the idle spin),
 * pool_park.c (parking and waking), pool_submit.c (submission, backpressure),
 * pool_compensate.c (blocked workers, I6), pool_monitor.c (the blocked-worker monitor, I12),
 * pool_hop.c (hops), pool_serial.c and pool_blocks.c. What more than one of them calls on a
 * job's path (the dequeue, the wake-ups, the scan for work) is `static inline` here, so that
 * the compiler inlines it as it did when the pool was one file; what they call otherwise is
 * declared here with hidden visibility. The invariants they cite (I1-I12) are in
 * include/bolts_pool.h, the tunable constants in bolts_tuning.h. The platform
 * primitives they use (futex, clock, spin hint) are in platform.h, through internal.h. */
#include "internal.h"

#include <pthread.h>
#include <urcu/wfcqueue.h>

/* For the pool's functions and thread-local that more than one of its files uses: not
 * exported from a shared library, and called directly (no PLT) from the other files. */
#define BOLTS_HIDDEN __attribute__((visibility("hidden")))

/* Destructive-interference size used to keep producer, consumer and owner fields apart. */
#define BOLTS_CACHE_LINE 64

enum { POOL_OPEN = 0, POOL_CLOSING = 1, POOL_CLOSED = 2 };
enum { SLOT_FREE = 0, SLOT_ACTIVE = 1, SLOT_SPARE = 2 };

/* What a worker last saw of a counter of another slot's owner, and since when it has
 * seen that value (the steal grace of I10, the restraint of I11). */
struct watch {
    uint32_t slot; /* UINT32_MAX: none yet */
    uint64_t seen;
    int64_t since;
};

/* One worker slot. A slot's queue outlives its thread: slots are never freed before
 * the pool, so a scan of [0, hwm) may look at any of them. */
struct bolts_pool_slot {
    /* Producers' line: written by every submission to this slot, read by consumers
     * (an empty check reads the tail). */
    _Alignas(BOLTS_CACHE_LINE) struct cds_wfcq_tail tail;
    /* Submissions from threads that are not this slot's worker, on a line of its own: a
     * lone producer keeps it in its cache instead of fetching the tail's line back for
     * it; only a restraint check (I11) and statistics read it. */
    _Alignas(BOLTS_CACHE_LINE) _Atomic uint64_t submitted;
    /* Jobs from outside that other workers took from this queue (I11). */
    _Atomic uint64_t outside_stolen;
    /* Consumers' line: the owner, thieves, and sweepers after shutdown. */
    _Alignas(BOLTS_CACHE_LINE) struct __cds_wfcq_head head;
    atomic_uint consumer;
    _Atomic uint64_t fair_seen;   /* `executed` as a fairness turn last saw it change (I9) */
    _Atomic int64_t fair_seen_at; /* when that turn saw it (bolts__now_ns) */
    /* Owner's line. */
    _Alignas(BOLTS_CACHE_LINE) _Atomic uint64_t executed;
    /* Jobs it has begun: one more than `executed` while it runs a job (I12). */
    _Atomic uint64_t started;
    /* 1 while the monitor counts this worker as blocked in a job (I12): the monitor set it
     * and took the worker out of `unblocked`; whoever swaps it back to 0 puts it back. */
    atomic_uint stalled;
    /* The worker thread's kernel id, for the monitor's look at its state (I12); 0 until
     * the thread has started. */
    atomic_int tid;
    _Atomic uint64_t own_submitted; /* submissions of this slot's worker to its own queue */
    _Atomic uint64_t outside_run;   /* jobs from outside it took from its own queue (I11) */
    atomic_bool short_jobs;         /* its sampled jobs are short (I11) */
    atomic_bool blocked;            /* it is inside a blocking wait (I6, I11) */
    uint32_t until_sample;          /* jobs until the next timed one; the owner's alone */
    uint32_t samples;               /* the last timed jobs, a bit each, 1 = short; ditto */
    _Atomic uint64_t stolen;
    _Atomic uint64_t parks;
    atomic_uint wake;  /* futex word: 1 once a claimer (I4) or shutdown woke the thread */
    atomic_uint state; /* SLOT_* */
    uint32_t own_run;  /* jobs taken from the own queue in a row (I9); the owner's alone */
    /* The steal grace this worker is giving (I10): to which slot, the owner's `executed`
     * when it began, and when. The owner's alone. */
    struct watch grace;
    /* The restraint this worker keeps (I11): the queue it last looked at under it, that
     * queue's owner's activity as it last saw it and when it last moved; and whether its
     * last look left a non-empty queue to its owner. The owner's alone. */
    struct watch restraint;
    bool restrained;
    /* How long its next park under a restraint lasts at most (I11): BOLTS_POOL_RESTRAIN_NS,
     * doubled by every such park that ran out while the owner kept moving, up to
     * BOLTS_POOL_RESTRAIN_PARK_MAX_NS; back to the bound once it runs a job, a claimer
     * wakes it, or it parks without a restraint. The owner's alone. */
    int64_t restrained_park;
    uint32_t victim; /* the slot of the last job this worker stole; the owner's alone */
    uint32_t index;
    struct bolts_pool *pool;
    /* Diagnostics (I12's reports, `bolts_pool_snapshot`), on a line of their own: written
     * by the thread at its start, by the monitor when it first sees a job and when it marks
     * one, and by the worker at the end of a marked job; never on an unmarked job's path
     * but for `swift_job`. */
    /* The thread's stack bounds, for a capture of its frames; 0 until it has started. */
    _Alignas(BOLTS_CACHE_LINE) _Atomic uintptr_t stack_low;
    _Atomic uintptr_t stack_high;
    /* The monitor's estimate of when the job it last saw running began (bolts__now_ns),
     * and that job's `started` count: the midpoint between the look that first saw it and
     * the look before. */
    _Atomic int64_t job_since;
    _Atomic uint64_t job_seen;
    /* The Swift Concurrency job that the worker last began (concurrency.c), for its task's
     * id in a report; a hint read only while `started` shows the same job still running. */
    _Atomic(void *) swift_job;
    /* 1 while a found report of the current mark awaits its ended report; read and written
     * under the stall reports' lock only (pool_report.c). */
    atomic_uint report_open;
    /* Scheduler health (`bolts_pool_get_histograms`), owner-written with relaxed loads and
     * stores: the run times of the jobs it times for I11 (one in BOLTS_POOL_SAMPLE_INTERVAL)
     * and the submit-to-start delays of the probe jobs it runs (JOB_TIMED), a log2 bucket
     * each (see `bolts__histogram_bucket`); when its thread started, and how long it has
     * slept parked or as a spare since (its busy time is the rest). */
    _Alignas(BOLTS_CACHE_LINE) _Atomic uint64_t run_histogram[BOLTS_POOL_HISTOGRAM_BUCKETS];
    _Atomic uint64_t delay_histogram[BOLTS_POOL_HISTOGRAM_BUCKETS];
    _Atomic int64_t thread_started_at;
    _Atomic int64_t asleep_ns;    /* in sleeps that have ended */
    _Atomic int64_t asleep_since; /* when the sleep under way began; 0: awake */
};

/* The log2 bucket of a duration for the histograms: bucket b counts [2^b, 2^(b+1)) ns,
 * the last everything longer. */
static inline uint32_t bolts__histogram_bucket(int64_t ns) {
    if (ns < 2) return 0;
    uint32_t b = 63u - (uint32_t)__builtin_clzll((uint64_t)ns);
    return b < BOLTS_POOL_HISTOGRAM_BUCKETS ? b : BOLTS_POOL_HISTOGRAM_BUCKETS - 1;
}

/* A worker's sleep (a park, a spare's wait) begins and ends: its busy-time accounting. */
static inline void bolts__sleep_begin(struct bolts_pool_slot *self) {
    /* Relaxed: owner-written; `bolts_pool_worker_busy` reads it as a hint. */
    atomic_store_explicit(&self->asleep_since, bolts__now_ns(), memory_order_relaxed);
}
static inline void bolts__sleep_end(struct bolts_pool_slot *self) {
    /* Relaxed, all three: owner-written, as above. */
    int64_t since = atomic_load_explicit(&self->asleep_since, memory_order_relaxed);
    int64_t total = atomic_load_explicit(&self->asleep_ns, memory_order_relaxed) + (bolts__now_ns() - since);
    atomic_store_explicit(&self->asleep_ns, total, memory_order_relaxed);
    atomic_store_explicit(&self->asleep_since, 0, memory_order_relaxed);
}

/* Adds one to an owner-written counter: a relaxed load and store, no RMW (only the owner
 * writes it; readers want a recent value, not an order). */
static inline void bolts__owner_count(_Atomic uint64_t *counter) {
    atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + 1, memory_order_relaxed);
}

struct bolts_pool {
    uint32_t target;     /* N */
    uint32_t cpus;       /* bolts_cpu_count() when the pool was made */
    uint32_t capacity;   /* slots */
    uint32_t mask_words; /* 64-bit words of the parked mask */
    char name[12];
    /* Set when the pool is made; read by every path that touches a slot or the mask. */
    _Atomic uint64_t *parked;   /* bit i: slot i is parked and unclaimed */
    struct bolts_pool_slot *slots;
    /* Read by every submission: keep it on a line nothing hot writes. */
    _Alignas(BOLTS_CACHE_LINE) atomic_uint state;
    atomic_uint hwm; /* slots [0, hwm) have been used */
    _Alignas(BOLTS_CACHE_LINE) atomic_uint searching;
    atomic_uint restrained_parked; /* workers parked under a restraint (I11) */
    _Alignas(BOLTS_CACHE_LINE) atomic_int unblocked; /* active threads not blocked (I6) */
    atomic_uint live_threads;                        /* futex word for await_termination */
    atomic_uint refs;
    _Atomic uint64_t rejected;
    _Atomic uint64_t swept;
    _Atomic uint64_t yields; /* backpressure yields of outside submitters */
    _Atomic uint64_t compensations;
    _Atomic uint64_t stalls; /* workers the monitor judged blocked in a job (I12) */
    atomic_bool warned_capacity;
    pthread_mutex_t spawn_lock; /* thread creation only: never on the job path */
    /* The monitor (I12), on a line of its own: `monitor_asleep` is its futex word while it
     * sleeps for want of a worker out of its park (1), `monitor_stop` its word for ticks
     * (1 once the pool is CLOSED). */
    _Alignas(BOLTS_CACHE_LINE) atomic_uint monitor_asleep;
    atomic_uint monitor_stop;
    /* The top of the monitor's last scan, the monitor's alone: its next look scans up to
     * the larger of this and hwm, so that a mark made on a slot that hwm shrank past
     * meanwhile is still undone (model finding F7). */
    _Alignas(BOLTS_CACHE_LINE) uint32_t monitor_scan_top; /* own line: the one above is read by every unpark */
    /* When the monitor last looked (bolts__now_ns), for `bolts_pool_snapshot`. */
    _Atomic int64_t last_look;
    /* The stall reports (pool_report.c): NULL until an observer is set. */
    _Atomic(struct bolts_stall_reports *) reports;
    _Atomic uint64_t reports_dropped; /* reports not delivered: over the rate, or the ring full */
    _Atomic uint64_t spares_exited;   /* spares that exited after BOLTS_POOL_SPARE_IDLE_NS */
    _Atomic uint64_t growth_refused;  /* marks the growth rule left uncompensated (I12) */
    /* The counters of slots past hwm, folded in when hwm shrank (`bolts__pool_spare_wait`),
     * so that the sums stay monotonic: jobs queued to them, run by them, stolen by them,
     * and their parks. Written under spawn_lock inside a write of `stats_gen`, a sequence
     * lock: odd while a fold is under way; readers retry when it moved (`job_totals`). */
    atomic_uint stats_gen;
    _Atomic uint64_t retired_submitted;
    _Atomic uint64_t retired_executed;
    _Atomic uint64_t retired_stolen;
    _Atomic uint64_t retired_parks;
    _Atomic uint64_t retired_run_histogram[BOLTS_POOL_HISTOGRAM_BUCKETS];
    _Atomic uint64_t retired_delay_histogram[BOLTS_POOL_HISTOGRAM_BUCKETS];
    /* The submit-to-start probe (`bolts_pool_get_histograms`), on a line of its own: when
     * the probe job in flight was submitted (bolts__now_ns), 0 when none is. A submitter
     * takes it with a CAS once in BOLTS_POOL_DELAY_SAMPLE of its submissions; the worker
     * that runs the job (marked JOB_TIMED) gives it back with an exchange. */
    _Alignas(BOLTS_CACHE_LINE) _Atomic int64_t probe_at;
};

/* Whether `slot`'s worker has its parked bit set. Relaxed: for heuristics only (I9, I10,
 * I11, I12); parking itself relies on the seq_cst accesses of I3. */
static inline bool bolts__pool_owner_parked(struct bolts_pool *pool, const struct bolts_pool_slot *slot) {
    uint64_t bit = (uint64_t)1 << (slot->index % 64);
    return (atomic_load_explicit(&pool->parked[slot->index / 64], memory_order_relaxed) & bit) != 0;
}

/* Whether every ACTIVE slot has its parked bit set: the CLOSING -> CLOSED test of I7, and
 * the monitor's test for sleeping until a worker leaves its park (I12). Seq_cst loads, so
 * that a caller that published a flag and fenced reads the bits in the same total order
 * as parkers publish them. */
static inline bool bolts__pool_all_active_parked(struct bolts_pool *pool) {
    /* Acquire: pairs with the release in `bolts__pool_add_worker`. */
    uint32_t hwm = atomic_load_explicit(&pool->hwm, memory_order_acquire);
    for (uint32_t i = 0; i < hwm; i++) {
        /* Seq_cst: against a retiring thread's seq_cst SPARE store (see `maybe_close`). */
        if (atomic_load_explicit(&pool->slots[i].state, memory_order_seq_cst) != SLOT_ACTIVE) continue;
        /* Seq_cst: reads the parkers' seq_cst bit publications in the same total order
         * as this thread's own. */
        uint64_t m = atomic_load_explicit(&pool->parked[i / 64], memory_order_seq_cst);
        if (!(m & ((uint64_t)1 << (i % 64)))) return false;
    }
    return true;
}

/* Whether any queue of `pool` holds a job (possibly one still being linked in): what a
 * notifier re-checks (`any_work` below, without a parking worker) and what the monitor
 * requires before it compensates (I12). */
static inline bool bolts__pool_jobs_queued(struct bolts_pool *pool) {
    /* Acquire: pairs with the release in `bolts__pool_add_worker`. */
    uint32_t hwm = atomic_load_explicit(&pool->hwm, memory_order_acquire);
    for (uint32_t i = 0; i < hwm; i++) {
        if (!cds_wfcq_empty(&pool->slots[i].head, &pool->slots[i].tail)) return true;
    }
    return false;
}

/* Brings one more thread into service because a worker blocked (I6, I12): a spare if
 * there is one, else a new thread in a fresh slot, up to the pool's capacity.
 * pool_compensate.c. */
BOLTS_HIDDEN bool bolts__pool_add_worker(struct bolts_pool *pool);

/* Extra threads (slots past N) that are ACTIVE now. Relaxed loads: a count for the
 * monitor's growth rule (I12), which needs no exact value. */
static inline uint32_t bolts__pool_extra_active(struct bolts_pool *pool) {
    /* Acquire: pairs with the release in `bolts__pool_add_worker`. */
    uint32_t hwm = atomic_load_explicit(&pool->hwm, memory_order_acquire);
    uint32_t n = 0;
    for (uint32_t i = pool->target; i < hwm; i++) {
        n += atomic_load_explicit(&pool->slots[i].state, memory_order_relaxed) == SLOT_ACTIVE;
    }
    return n;
}

/* Stall reports (I12), pool_report.c: the monitor's report of a worker it just
 * marked, and the report of that mark's end (by whichever of the worker and the monitor
 * undid it). Both return at once when no observer is set; the found report captures the
 * blocked thread (diagnostics.c) and is rate-limited. `bolts__stall_reports_free` ends the
 * reporter thread; pool.c calls it when the pool is freed. */
BOLTS_HIDDEN void bolts__stall_report_found(struct bolts_pool *pool, struct bolts_pool_slot *slot, int64_t now,
                                            uint32_t queued);
BOLTS_HIDDEN void bolts__stall_report_ended(struct bolts_pool *pool, struct bolts_pool_slot *slot);
BOLTS_HIDDEN void bolts__stall_reports_free(struct bolts_pool *pool);

/* Writes the name of `slot`'s thread ("<pool name, 8 bytes>-<index>") into `name` (16 bytes). */
BOLTS_HIDDEN void bolts__pool_thread_name(const struct bolts_pool *pool, uint32_t index, char name[16]);

/* Drops a reference to the pool; the last one frees it. pool.c. */
BOLTS_HIDDEN void bolts__pool_unref(struct bolts_pool *pool);

/* The monitor (I12), pool_monitor.c. `bolts__pool_monitor_start` starts its thread, which
 * holds a reference to the pool until it exits once the pool is CLOSED; false if the thread
 * could not be started (the pool then runs without it). `bolts__pool_monitor_resume` is
 * called by a worker whose parked bit was just cleared (it is about to look for work):
 * it wakes the monitor if it sleeps. `bolts__pool_monitor_close` wakes it for good once
 * the pool is CLOSED. `bolts__pool_stall_over` is called by a worker that finds its
 * `stalled` flag set after a job: it puts itself back into `unblocked`. */
BOLTS_HIDDEN bool bolts__pool_monitor_start(struct bolts_pool *pool);
BOLTS_HIDDEN void bolts__pool_monitor_resume(struct bolts_pool *pool);
BOLTS_HIDDEN void bolts__pool_monitor_close(struct bolts_pool *pool);
BOLTS_HIDDEN void bolts__pool_stall_over(struct bolts_pool_slot *slot);

/* The slot of the pool worker running on this thread, if any: set by the worker loop
 * (pool_worker.c), read by submissions, shutdown, the blocking hooks and the queries. */
BOLTS_HIDDEN extern _Thread_local struct bolts_pool_slot *bolts__pool_tl_slot;

/* Starts the worker thread of `slot` (detached, named after the pool); pthread_create's
 * result. pool_worker.c. */
BOLTS_HIDDEN int bolts__pool_start_thread(struct bolts_pool *pool, struct bolts_pool_slot *slot);

/* Where a worker finds its next job, and whether it leaves `other`'s queue to its owner
 * (I11). pool_steal.c, where each says more. */
BOLTS_HIDDEN bolts_job_t *bolts__pool_find_work(struct bolts_pool *pool, struct bolts_pool_slot *self, bool *stolen);
BOLTS_HIDDEN bool bolts__pool_restrain(struct bolts_pool *pool, struct bolts_pool_slot *self,
                                       struct bolts_pool_slot *other);

/* An idle searching worker's spin for work. pool_spin.c. */
BOLTS_HIDDEN bolts_job_t *bolts__pool_spin_for_work(struct bolts_pool *pool, struct bolts_pool_slot *self,
                                                    bool *stolen);

/* Parking (I3, I4), retiring to a spare and a spare's sleep (I6), and the wake-up of every
 * parked worker that shutdown sends (I7). pool_park.c, where each says more. */
BOLTS_HIDDEN bool bolts__pool_park(struct bolts_pool *pool, struct bolts_pool_slot *self, bool searching);
BOLTS_HIDDEN bool bolts__pool_try_retire(struct bolts_pool *pool, struct bolts_pool_slot *self);
BOLTS_HIDDEN bool bolts__pool_spare_wait(struct bolts_pool *pool, struct bolts_pool_slot *self);
BOLTS_HIDDEN void bolts__pool_wake_parked(struct bolts_pool *pool);

/* The queue links jobs through their first field; these are the facts that cast uses. */
_Static_assert(offsetof(bolts_job_t, next) == 0, "a job's link word must be its first field");
_Static_assert(sizeof(struct cds_wfcq_node) == sizeof(void *), "a wfcqueue node is one pointer");
_Static_assert(sizeof(((bolts_job_t *)0)->next) == sizeof(struct cds_wfcq_node),
               "a job's link word has the size of a wfcqueue node");
_Static_assert(_Alignof(bolts_job_t) >= _Alignof(struct cds_wfcq_node),
               "a job is aligned at least like a wfcqueue node");

/* What `take` and `bolts__pool_find_work` return besides a job: nothing; a queue whose
 * job cannot be taken yet because its producer was pre-empted between its tail exchange
 * and its link store (BUSY); or a queue whose consumer flag another thread holds (HELD). */
#define FOUND_NOTHING ((bolts_job_t *)NULL)
#define FOUND_BUSY ((bolts_job_t *)(uintptr_t)1)
#define FOUND_HELD ((bolts_job_t *)(uintptr_t)2)
#define IS_JOB(j) ((uintptr_t)(j) > 2)

/* A job's flag bit, set by `bolts_pool_try_submit` on a job submitted to a queue by a
 * thread that is not the queue's worker, cleared on the worker's own submissions (I11). */
#define JOB_FROM_OUTSIDE ((uintptr_t)2)
_Static_assert((JOB_FROM_OUTSIDE & BOLTS_JOB_OWNED) == 0, "the pool's flag bit is free");

/* A job's flag bit, set by `bolts_pool_try_submit` on the submit-to-start probe job
 * (`probe_at`); the worker that runs it reads the clock and clears the probe. */
#define JOB_TIMED ((uintptr_t)4)
_Static_assert((JOB_TIMED & (BOLTS_JOB_OWNED | JOB_FROM_OUTSIDE)) == 0, "the probe's flag bit is free");

/* Takes one job from `slot`'s queue, or says why not (I2). */
static inline bolts_job_t *take(struct bolts_pool_slot *slot) {
    if (cds_wfcq_empty(&slot->head, &slot->tail)) return FOUND_NOTHING;
    /* Acquire: pairs with the release below in the previous consumer, so the head it
     * moved is what this dequeue starts from (I2). */
    if (atomic_exchange_explicit(&slot->consumer, 1, memory_order_acquire) != 0) return FOUND_HELD;
    struct cds_wfcq_node *node = __cds_wfcq_dequeue_nonblocking(&slot->head, &slot->tail);
    /* Release: publishes this dequeue's head update to the next consumer's acquire. */
    atomic_store_explicit(&slot->consumer, 0, memory_order_release);
    if (node == CDS_WFCQ_WOULDBLOCK) return FOUND_BUSY;
    if (node != NULL) BOLTS_TSAN_ACQUIRE(node);
    return (bolts_job_t *)node;
}

/* Tells a claimed or released thread to wake (I4). */
static inline void wake_slot(struct bolts_pool_slot *slot) {
    /* Release: pairs with the acquire in `wait_for_wake`; what the waker did before
     * (the searching count it took on the thread's behalf, a state change) is visible. */
    atomic_store_explicit(&slot->wake, 1, memory_order_release);
    bolts__futex_wake(&slot->wake, 1);
}

/* Claims one parked worker, counts it as searching, and wakes it. */
static inline bool wake_one(bolts_pool_t *pool) {
    for (uint32_t w = 0; w < pool->mask_words; w++) {
        /* Relaxed: the callers fenced (seq_cst) after their enqueue (I3); the RMW below
         * is what decides the claim. */
        uint64_t m = atomic_load_explicit(&pool->parked[w], memory_order_relaxed);
        while (m != 0) {
            uint64_t bit = m & (~m + 1);
            /* Seq_cst: the claim must not be reordered with the wake below, it reads the
             * parker's seq_cst publication of the bit, and it is the clear that the
             * monitor's seq_cst bit loads are ordered against (I12). */
            uint64_t old = atomic_fetch_and_explicit(&pool->parked[w], ~bit, memory_order_seq_cst);
            if (old & bit) {
                /* Relaxed: a count; the woken thread sees it through `wake_slot`'s
                 * release, and other notifiers only need the eventual value (I5). */
                atomic_fetch_add_explicit(&pool->searching, 1, memory_order_relaxed);
                wake_slot(&pool->slots[w * 64 + (uint32_t)__builtin_ctzll(bit)]);
                return true;
            }
            m = old & ~bit;
        }
    }
    return false;
}

/* After an enqueue into an empty queue (ordered before this by a full barrier: the
 * caller's seq_cst fence, or a submitter's tail exchange): wake a parked worker unless
 * one is searching (I3, I5). Also called, without such a barrier, by a worker that stole
 * from a backlog (I9): there it is a hint, and a stale count only delays the wake-up. */
static inline void notify(bolts_pool_t *pool) {
    /* Relaxed: ordered after the caller's enqueue by the full barrier above. */
    if (atomic_load_explicit(&pool->searching, memory_order_relaxed) != 0) return;
    wake_one(pool);
}

/* Whether any queue holds a job (possibly one still being linked in). With `self`, a
 * parking worker: only a job it should not leave to its queue's owner (I11) counts, and
 * `self->restrained` says whether it left one. */
static inline bool any_work(bolts_pool_t *pool, struct bolts_pool_slot *self) {
    if (self == NULL) return bolts__pool_jobs_queued(pool);
    self->restrained = false;
    /* Acquire: pairs with the release in `bolts__pool_add_worker`. */
    uint32_t hwm = atomic_load_explicit(&pool->hwm, memory_order_acquire);
    for (uint32_t i = 0; i < hwm; i++) {
        struct bolts_pool_slot *slot = &pool->slots[i];
        if (cds_wfcq_empty(&slot->head, &slot->tail)) continue;
        if (!bolts__pool_restrain(pool, self, slot)) return true;
        self->restrained = true;
    }
    return false;
}

/* Jobs accepted, and jobs run (by workers, or by sweepers after shutdown), summed over
 * the slots and the folded counts of retired ones: what the metrics report and what
 * backpressure compares. With `stolen` and `parks` (may be NULL), the same for those. */
static inline void job_totals(bolts_pool_t *pool, uint64_t *submitted, uint64_t *executed, uint64_t *stolen,
                              uint64_t *parks) {
    for (;;) {
        /* Acquire: pairs with the release that ends a fold, so a reader that saw it sees
         * the fold's stores (the sequence lock's read side). */
        unsigned gen = atomic_load_explicit(&pool->stats_gen, memory_order_acquire);
        /* Acquire: pairs with the release in `bolts__pool_add_worker`. */
        uint32_t hwm = atomic_load_explicit(&pool->hwm, memory_order_acquire);
        uint64_t in = 0, out = 0, st = 0, pk = 0;
        /* Relaxed, every load below: statistics; a snapshot, not a consistent cut. */
        for (uint32_t i = 0; i < hwm; i++) {
            in += atomic_load_explicit(&pool->slots[i].submitted, memory_order_relaxed) +
                  atomic_load_explicit(&pool->slots[i].own_submitted, memory_order_relaxed);
            out += atomic_load_explicit(&pool->slots[i].executed, memory_order_relaxed);
            if (stolen != NULL) {
                st += atomic_load_explicit(&pool->slots[i].stolen, memory_order_relaxed);
                pk += atomic_load_explicit(&pool->slots[i].parks, memory_order_relaxed);
            }
        }
        out += atomic_load_explicit(&pool->swept, memory_order_relaxed);
        in += atomic_load_explicit(&pool->retired_submitted, memory_order_relaxed);
        out += atomic_load_explicit(&pool->retired_executed, memory_order_relaxed);
        st += atomic_load_explicit(&pool->retired_stolen, memory_order_relaxed);
        pk += atomic_load_explicit(&pool->retired_parks, memory_order_relaxed);
        /* Acquire fence: orders the loads above before the re-read of the generation, so a
         * fold that overlapped them is seen (the sequence lock's read side). */
        atomic_thread_fence(memory_order_acquire);
        /* Relaxed: ordered by the fence above. */
        if ((gen & 1) != 0 || atomic_load_explicit(&pool->stats_gen, memory_order_relaxed) != gen) continue;
        *submitted = in;
        *executed = out;
        if (stolen != NULL) {
            *stolen = st;
            *parks = pk;
        }
        return;
    }
}

/* Jobs accepted and not yet begun: submitted less run, less those running now. Relaxed
 * loads (a statistic, not a consistent cut); for reports and snapshots, never a job's path. */
static inline uint64_t bolts__pool_jobs_waiting(struct bolts_pool *pool) {
    uint64_t submitted, executed, running = 0;
    job_totals(pool, &submitted, &executed, NULL, NULL);
    /* Acquire: pairs with the release in `bolts__pool_add_worker`. */
    uint32_t hwm = atomic_load_explicit(&pool->hwm, memory_order_acquire);
    for (uint32_t i = 0; i < hwm; i++) {
        running += atomic_load_explicit(&pool->slots[i].started, memory_order_relaxed) !=
                   atomic_load_explicit(&pool->slots[i].executed, memory_order_relaxed);
    }
    return submitted > executed + running ? submitted - executed - running : 0;
}

#endif
