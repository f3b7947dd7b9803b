/* Compensation (I6): a worker about to block in a wait the pool knows of
 * (`bolts_task_wait`) leaves the count of unblocked workers, and below N a spare thread is
 * woken or a new one started. The monitor (pool_monitor.c, I12) brings threads in through
 * the same `bolts__pool_add_worker` for workers blocked where the pool cannot see.
 * Retiring a thread that is no longer needed, and a spare's exit after its idle spell, are
 * idle-side work: pool_park.c. The invariants
 * are in include/bolts_pool.h.
 */
#define _GNU_SOURCE
#include "pool_internal.h"

#include <pthread.h>
#include <stdio.h>

/* Nesting of blocking waits on this worker (only the outermost counts). */
static _Thread_local uint32_t tl_block_depth;

/* Counts `slot` (FREE, past N) in service before its thread starts: ACTIVE, unblocked and
 * alive. Under spawn_lock. `undo_extra` takes it back if the thread cannot be started. */
static void start_extra(bolts_pool_t *pool, struct bolts_pool_slot *slot) {
    /* Relaxed, these four: published to the new thread by pthread_create and to scanners
     * by the caller's hwm release (a slot past hwm) or by the scanners' own acquire load
     * of hwm (a slot below it, whose fields a FREE state leaves alone); the counts need no
     * order of their own (I6), and a new reference is taken by a holder of one. */
    atomic_store_explicit(&slot->state, SLOT_ACTIVE, memory_order_relaxed);
    atomic_fetch_add_explicit(&pool->unblocked, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&pool->live_threads, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&pool->refs, 1, memory_order_relaxed);
}

static void undo_extra(bolts_pool_t *pool, struct bolts_pool_slot *slot) {
    /* Relaxed, these four: undo the counts; nobody saw the thread. The slot stays FREE
     * with an empty queue. */
    atomic_store_explicit(&slot->state, SLOT_FREE, memory_order_relaxed);
    atomic_fetch_sub_explicit(&pool->unblocked, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&pool->live_threads, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&pool->refs, 1, memory_order_relaxed);
    fprintf(stderr, "bolts: pool '%s' could not start a compensating worker\n", pool->name);
}

/* Brings one more thread into service because a worker blocked (I6): a spare if there
 * is one, else a new thread in the lowest FREE slot past N (one whose spare exited after
 * its idle spell, below hwm), else in a fresh slot at hwm. Returns whether a thread came
 * in. */
bool bolts__pool_add_worker(bolts_pool_t *pool) {
    pthread_mutex_lock(&pool->spawn_lock);
    /* Relaxed: hwm is only written under spawn_lock, which we hold. */
    uint32_t hwm = atomic_load_explicit(&pool->hwm, memory_order_relaxed);
    struct bolts_pool_slot *hole = NULL;
    for (uint32_t i = pool->target; i < hwm; i++) {
        struct bolts_pool_slot *slot = &pool->slots[i];
        unsigned expected = SLOT_SPARE;
        /* Seq_cst: acquires the retiring thread's release of SPARE, releases ACTIVE to
         * scanners' acquire loads, and is in the total order of the monitor's seq_cst
         * state loads (I12). */
        if (atomic_compare_exchange_strong_explicit(&slot->state, &expected, SLOT_ACTIVE, memory_order_seq_cst,
                                                    memory_order_relaxed)) {
            /* Relaxed: counts (I6); the spare reads nothing from them. */
            atomic_fetch_add_explicit(&pool->unblocked, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&pool->compensations, 1, memory_order_relaxed);
            wake_slot(slot);
            pthread_mutex_unlock(&pool->spawn_lock);
            return true;
        }
        /* Only a spare leaves SPARE without spawn_lock (for FREE, see `bolts__pool_spare_wait`),
         * and a FREE slot is made ACTIVE only here. */
        if (hole == NULL && expected == SLOT_FREE) hole = slot;
    }
    if (hole != NULL) {
        start_extra(pool, hole);
        bool started = bolts__pool_start_thread(pool, hole) == 0;
        if (started) {
            atomic_fetch_add_explicit(&pool->compensations, 1, memory_order_relaxed); /* a statistic */
        } else {
            undo_extra(pool, hole);
        }
        pthread_mutex_unlock(&pool->spawn_lock);
        return started;
    }
    if (hwm >= pool->capacity) {
        /* Relaxed: warn once; an idempotent flag. */
        if (!atomic_exchange_explicit(&pool->warned_capacity, true, memory_order_relaxed)) {
            fprintf(stderr, "bolts: pool '%s' has %u blocked workers and no room for another thread\n", pool->name,
                    pool->capacity);
        }
        pthread_mutex_unlock(&pool->spawn_lock);
        return false;
    }
    struct bolts_pool_slot *slot = &pool->slots[hwm];
    start_extra(pool, slot);
    /* Seq_cst: releases the slot to the acquire loads of hwm in scans, and is in the total
     * order that the monitor's fence reads it in (I12). */
    atomic_store_explicit(&pool->hwm, hwm + 1, memory_order_seq_cst);
    bool started = bolts__pool_start_thread(pool, slot) == 0;
    if (started) {
        atomic_fetch_add_explicit(&pool->compensations, 1, memory_order_relaxed); /* a statistic */
    } else {
        undo_extra(pool, slot); /* the slot stays in [0, hwm), FREE, with an empty queue */
    }
    pthread_mutex_unlock(&pool->spawn_lock);
    return started;
}

/* ---------------------------------------------------------------------------------- */
/* Blocking hooks (internal.h), called by bolts_task_wait around its sleep            */

void bolts__pool_blocking_begin(void) {
    struct bolts_pool_slot *self = bolts__pool_tl_slot;
    if (self == NULL || tl_block_depth++ != 0) return;
    bolts_pool_t *pool = self->pool;
    /* Relaxed: a hint for the restraint (I11); the count below decides compensation. */
    atomic_store_explicit(&self->blocked, true, memory_order_relaxed);
    /* The monitor already counts this worker as blocked in its job (I12): the wait takes
     * that count over, and `bolts__pool_blocking_end` puts the worker back. Relaxed: the
     * exchange's atomicity decides, as in `bolts__pool_stall_over`. */
    if (atomic_exchange_explicit(&self->stalled, 0, memory_order_relaxed) != 0) {
        bolts__stall_report_ended(pool, self); /* the mark ends; the wait goes on */
        return;
    }
    /* Relaxed: a count; the RMW's result alone decides (I6). */
    int left = atomic_fetch_sub_explicit(&pool->unblocked, 1, memory_order_relaxed) - 1;
    if (left < (int)pool->target) {
        bolts__pool_add_worker(pool);
        return;
    }
    /* Enough threads count as unblocked, but they may all be parked (a compensating
     * thread stays ACTIVE until its next idle scan), while jobs wait behind this one
     * that no submission announced: they went into a queue that was not empty. Wake one
     * if any queue holds work (model finding F4). Seq_cst fence: this thread's view of
     * the queues and of the parked mask is then ordered as a submitter's after its
     * exchange (I3's pairing with a parker's bit, fence and scan). */
    atomic_thread_fence(memory_order_seq_cst);
    if (any_work(pool, NULL)) notify(pool);
}

void bolts__pool_blocking_end(void) {
    struct bolts_pool_slot *self = bolts__pool_tl_slot;
    if (self == NULL || --tl_block_depth != 0) return;
    /* Relaxed: a hint (I11), as above. */
    atomic_store_explicit(&self->blocked, false, memory_order_relaxed);
    /* Relaxed: a count (I6). */
    atomic_fetch_add_explicit(&self->pool->unblocked, 1, memory_order_relaxed);
}
