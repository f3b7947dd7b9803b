#ifndef BOLTS_POOL_INTERNAL_H
#define BOLTS_POOL_INTERNAL_H
/* Private definitions shared by the pool's files: pool.c (queues, workers, parking, submit,
 * compensation, hops), pool_monitor.c (the blocked-worker monitor, I12), pool_serial.c and
 * pool_blocks.c. The invariants they cite (I1-I12) are in include/bolts_pool.h. The platform
 * primitives they use (futex, clock, spin hint) are in platform.h, through internal.h. */
#include "internal.h"

#include <pthread.h>
#include <urcu/wfcqueue.h>

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
};

struct bolts_pool {
    uint32_t target;     /* N */
    uint32_t cpus;       /* bolts_cpu_count() when the pool was made */
    uint32_t capacity;   /* slots */
    uint32_t mask_words; /* 64-bit words of the parked mask */
    char name[12];
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
    _Atomic uint64_t *parked;   /* bit i: slot i is parked and unclaimed */
    struct bolts_pool_slot *slots;
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
 * notifier re-checks (pool.c's `any_work` without a parking worker) and what the monitor
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
 * there is one, else a new thread in a fresh slot, up to the pool's capacity. pool.c. */
void bolts__pool_add_worker(struct bolts_pool *pool);

/* Drops a reference to the pool; the last one frees it. pool.c. */
void bolts__pool_unref(struct bolts_pool *pool);

/* The monitor (I12), pool_monitor.c. `bolts__pool_monitor_start` starts its thread, which
 * holds a reference to the pool until it exits once the pool is CLOSED; false if the thread
 * could not be started (the pool then runs without it). `bolts__pool_monitor_resume` is
 * called by a worker whose parked bit was just cleared (it is about to look for work):
 * it wakes the monitor if it sleeps. `bolts__pool_monitor_close` wakes it for good once
 * the pool is CLOSED. `bolts__pool_stall_over` is called by a worker that finds its
 * `stalled` flag set after a job: it puts itself back into `unblocked`. */
bool bolts__pool_monitor_start(struct bolts_pool *pool);
void bolts__pool_monitor_resume(struct bolts_pool *pool);
void bolts__pool_monitor_close(struct bolts_pool *pool);
void bolts__pool_stall_over(struct bolts_pool_slot *slot);

#endif
