/* Where an idle worker sleeps and what wakes it: parking on its slot's futex word (I3, I4),
 * retiring to a spare when it is a compensating thread no longer needed (I6), a spare's
 * exit after an idle spell with the scan range shrinking behind it, and the
 * closing of a draining pool by the last worker to go idle (I7). The wake-ups that producers
 * issue (`wake_slot`, `wake_one`, `notify`) are inline in pool_internal.h: a submission calls
 * them. The invariants are in include/bolts_pool.h.
 */
#define _GNU_SOURCE
#include "pool_internal.h"

#include <urcu/wfcqueue.h>

#include <pthread.h>

static void wait_for_wake(struct bolts_pool_slot *slot) {
    /* Acquire: pairs with the release in `wake_slot`. */
    while (atomic_load_explicit(&slot->wake, memory_order_acquire) == 0) {
        bolts__futex_wait(&slot->wake, 0, -1);
    }
}

/* As `wait_for_wake`, but gives up at `deadline` (bolts__now_ns); true if woken. */
static bool wait_for_wake_until(struct bolts_pool_slot *slot, int64_t deadline) {
    for (;;) {
        /* Acquire: pairs with the release in `wake_slot`. */
        if (atomic_load_explicit(&slot->wake, memory_order_acquire) != 0) return true;
        int64_t left = deadline - bolts__now_ns();
        if (left <= 0) return false;
        bolts__futex_wait(&slot->wake, 0, left);
    }
}

/* Wakes every parked worker (not the spares). */
void bolts__pool_wake_parked(bolts_pool_t *pool) {
    while (wake_one(pool)) {
    }
}

/* Wakes every parked worker, every spare and the monitor (I12), once the pool is CLOSED. */
static void wake_all(bolts_pool_t *pool) {
    bolts__pool_wake_parked(pool);
    bolts__pool_monitor_close(pool);
    /* Acquire: pairs with the release in `bolts__pool_add_worker`. */
    uint32_t hwm = atomic_load_explicit(&pool->hwm, memory_order_acquire);
    for (uint32_t i = pool->target; i < hwm; i++) {
        /* Acquire: pairs with the retiring thread's release of SLOT_SPARE. */
        if (atomic_load_explicit(&pool->slots[i].state, memory_order_acquire) == SLOT_SPARE) {
            wake_slot(&pool->slots[i]);
        }
    }
}

/* CLOSING -> CLOSED once every active worker is parked (I7). Called by a worker that
 * just published its parked bit, or its retirement to a spare, and then fenced: with
 * the seq_cst loads in `bolts__pool_all_active_parked`, the last of several racing parkers sees
 * all the others. Wakes everyone, so they make their final scans and exit. */
static void maybe_close(bolts_pool_t *pool) {
    if (!bolts__pool_all_active_parked(pool)) return;
    unsigned expected = POOL_CLOSING;
    /* Seq_cst: the CLOSED store of I7; submitters re-read it after their fence. */
    if (atomic_compare_exchange_strong_explicit(&pool->state, &expected, POOL_CLOSED, memory_order_seq_cst,
                                                memory_order_relaxed)) {
        /* Seq_cst fence: as after the CLOSING store in shutdown, the pairing with a
         * parker that reads the state after its own fence. */
        atomic_thread_fence(memory_order_seq_cst);
        wake_all(pool);
    }
}

/* Parks the calling worker (I3, I4). Returns whether it is now counted as searching:
 * true when a claimer woke it, or when it took its own bit back to run work and had come
 * in searching (I5); false when it took its bit back and had not. */
bool bolts__pool_park(bolts_pool_t *pool, struct bolts_pool_slot *self, bool searching) {
    uint32_t w = self->index / 64;
    uint64_t bit = (uint64_t)1 << (self->index % 64);
    /* Relaxed: nobody writes `wake` while our bit is clear (I4); the seq_cst RMW below
     * orders this reset before the bit becomes visible. */
    atomic_store_explicit(&self->wake, 0, memory_order_relaxed);
    /* Seq_cst: half of the store-buffering pair with a producer's fence (I3). */
    atomic_fetch_or_explicit(&pool->parked[w], bit, memory_order_seq_cst);
    if (searching) {
        /* Seq_cst: a notifier that read the old count relies on our re-check (I5). */
        atomic_fetch_sub_explicit(&pool->searching, 1, memory_order_seq_cst);
    }
    /* Seq_cst fence: the queue loads below (liburcu's, not C11 atomics) must see any
     * enqueue that preceded a producer's fence which read our bit as clear (I3). */
    atomic_thread_fence(memory_order_seq_cst);
    /* Relaxed: ordered by the fence above; pairs with the seq_cst state stores. */
    unsigned st = atomic_load_explicit(&pool->state, memory_order_relaxed);
    bool cancel = st == POOL_CLOSED || any_work(pool, self);
    if (!cancel) {
        if (st == POOL_CLOSING) maybe_close(pool); /* may claim our own bit: the wait returns */
        /* Relaxed: a statistic written only by this thread. */
        atomic_store_explicit(&self->parks, atomic_load_explicit(&self->parks, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        if (!self->restrained && (self->index < pool->target || BOLTS_POOL_SPARE_IDLE_NS <= 0)) {
            self->restrained_park = BOLTS_POOL_RESTRAIN_NS;
            bolts__sleep_begin(self);
            wait_for_wake(self);
            bolts__sleep_end(self);
            return true;
        }
        if (!self->restrained) {
            /* An extra thread that parked while the worker it stood in for was still
             * counted as blocked: once that worker is back nobody wakes it, so it looks
             * again after BOLTS_POOL_SPARE_IDLE_NS, and then retires (I6) and exits. */
            bolts__sleep_begin(self);
            bool woken = wait_for_wake_until(self, bolts__now_ns() + BOLTS_POOL_SPARE_IDLE_NS);
            bolts__sleep_end(self);
            if (woken) return true;
            /* Seq_cst: races a claimer's fetch_and, as in the cancel path below. */
            uint64_t old = atomic_fetch_and_explicit(&pool->parked[w], ~bit, memory_order_seq_cst);
            if (old & bit) return false; /* our own bit back: not a searcher */
            wait_for_wake(self);         /* a claimer beat us: its wake is coming (I4) */
            return true;
        }
        /* Parked under a restraint (I11): until a claimer wakes us, or the restraint's
         * bound passes and we look at the queue we left again. Relaxed, both: a hint for
         * the owners' submissions, which may skip waking us (their own queue is theirs to
         * run). */
        atomic_fetch_add_explicit(&pool->restrained_parked, 1, memory_order_relaxed);
        int64_t length = self->restrained_park;
        bolts__sleep_begin(self);
        bool woken = wait_for_wake_until(self, self->restraint.since + length);
        bolts__sleep_end(self);
        atomic_fetch_sub_explicit(&pool->restrained_parked, 1, memory_order_relaxed);
        if (!woken) {
            /* Seq_cst: races a claimer's fetch_and, as in the cancel path below. */
            uint64_t old = atomic_fetch_and_explicit(&pool->parked[w], ~bit, memory_order_seq_cst);
            if (old & bit) {
                /* Our own bit back: not a searcher. If the owner has moved meanwhile, the
                 * next park under this restraint may last twice as long (I11). */
                self->restrained_park = length * 2 < BOLTS_POOL_RESTRAIN_PARK_MAX_NS ? length * 2
                                                                                     : BOLTS_POOL_RESTRAIN_PARK_MAX_NS;
                return false;
            }
            wait_for_wake(self); /* a claimer beat us: its wake is coming (I4) */
        }
        self->restrained_park = BOLTS_POOL_RESTRAIN_NS;
        return true;
    }
    /* Seq_cst: races a claimer's fetch_and on the same word; exactly one clears the bit,
     * in the total order the monitor's bit loads read (I12). */
    uint64_t old = atomic_fetch_and_explicit(&pool->parked[w], ~bit, memory_order_seq_cst);
    if (old & bit) {
        if (!searching) return false;
        /* A producer may have skipped its wake-up because it counted us: stay a searcher,
         * so that taking a job makes the last-searcher check of I5 (else a job queued
         * behind the one we take waits for ours to finish while a worker sleeps).
         * Relaxed: a count, as when a claimer adds a woken worker; until it lands a
         * notifier may wake one worker too many, never one too few. */
        atomic_fetch_add_explicit(&pool->searching, 1, memory_order_relaxed);
        return true;
    }
    /* A claimer beat us: it counted us as searching and is about to set `wake` (I4). */
    wait_for_wake(self);
    return true;
}

/* An extra thread that is no longer needed becomes a spare (I6). */
bool bolts__pool_try_retire(bolts_pool_t *pool, struct bolts_pool_slot *self) {
    if (self->index < pool->target) return false;
    /* Relaxed, the load and the CAS: a count (I6); the CAS alone decides who retires,
     * and retiring publishes nothing through it. */
    int u = atomic_load_explicit(&pool->unblocked, memory_order_relaxed);
    while (u > (int)pool->target) {
        if (atomic_compare_exchange_weak_explicit(&pool->unblocked, &u, u - 1, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            /* Relaxed: `bolts__pool_add_worker` writes `wake` only after it sees SPARE, which the
             * release below publishes after this reset. */
            atomic_store_explicit(&self->wake, 0, memory_order_relaxed);
            /* Seq_cst: pairs with the acquire CAS in `bolts__pool_add_worker` and the acquire load in
             * `wake_all`, and orders against parkers' bits for `maybe_close`. */
            atomic_store_explicit(&self->state, SLOT_SPARE, memory_order_seq_cst);
            atomic_thread_fence(memory_order_seq_cst);
            /* Relaxed: ordered by the fence; pairs with the seq_cst CLOSING store. */
            if (atomic_load_explicit(&pool->state, memory_order_relaxed) == POOL_CLOSING) maybe_close(pool);
            return true;
        }
    }
    return false;
}

/* Lowers hwm past the FREE slots at its top (their threads have exited), down to N, and
 * folds their counters into the pool's retired counts, so that every scan of [0, hwm)
 * (the parking check, the searchers, the monitor, submissions' backpressure) costs again
 * what it cost before the burst that raised it. A FREE slot's queue is empty: only its
 * own worker submits to it (outside submissions go to slots below N), and a worker
 * retires to a spare only after finding its queue empty. Under spawn_lock, which
 * orders it with `bolts__pool_add_worker`, the only other writer of hwm. */
static void shrink_range(bolts_pool_t *pool) {
    /* Relaxed: hwm is only written under spawn_lock, which the caller holds. */
    uint32_t hwm = atomic_load_explicit(&pool->hwm, memory_order_relaxed);
    uint32_t top = hwm;
    /* Acquire: pairs with the exiting spare's acq_rel CAS to FREE; its last writes to the
     * slot's counters are then visible. */
    while (top > pool->target &&
           atomic_load_explicit(&pool->slots[top - 1].state, memory_order_acquire) == SLOT_FREE &&
           cds_wfcq_empty(&pool->slots[top - 1].head, &pool->slots[top - 1].tail)) {
        top--;
    }
    if (top == hwm) return;
    /* The sequence lock's write side: the odd generation (relaxed), then a release fence, so
     * that a reader that sees any store below also sees the odd generation. */
    unsigned gen = atomic_load_explicit(&pool->stats_gen, memory_order_relaxed);
    atomic_store_explicit(&pool->stats_gen, gen + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    for (uint32_t i = top; i < hwm; i++) {
        struct bolts_pool_slot *slot = &pool->slots[i];
        /* Relaxed, these: statistics moved under the sequence lock; the slot has no thread,
         * and a thread started in it later sees them through pthread_create. */
        uint64_t in = atomic_exchange_explicit(&slot->submitted, 0, memory_order_relaxed) +
                      atomic_exchange_explicit(&slot->own_submitted, 0, memory_order_relaxed);
        atomic_fetch_add_explicit(&pool->retired_submitted, in, memory_order_relaxed);
        atomic_fetch_add_explicit(&pool->retired_executed, atomic_exchange_explicit(&slot->executed, 0, memory_order_relaxed),
                                  memory_order_relaxed);
        atomic_fetch_add_explicit(&pool->retired_stolen, atomic_exchange_explicit(&slot->stolen, 0, memory_order_relaxed),
                                  memory_order_relaxed);
        atomic_fetch_add_explicit(&pool->retired_parks, atomic_exchange_explicit(&slot->parks, 0, memory_order_relaxed),
                                  memory_order_relaxed);
        for (uint32_t b = 0; b < BOLTS_POOL_HISTOGRAM_BUCKETS; b++) {
            atomic_fetch_add_explicit(&pool->retired_run_histogram[b],
                                      atomic_exchange_explicit(&slot->run_histogram[b], 0, memory_order_relaxed),
                                      memory_order_relaxed);
            atomic_fetch_add_explicit(&pool->retired_delay_histogram[b],
                                      atomic_exchange_explicit(&slot->delay_histogram[b], 0, memory_order_relaxed),
                                      memory_order_relaxed);
        }
        atomic_store_explicit(&slot->started, 0, memory_order_relaxed);
        atomic_store_explicit(&slot->outside_stolen, 0, memory_order_relaxed);
        atomic_store_explicit(&slot->outside_run, 0, memory_order_relaxed);
    }
    /* Seq_cst: as every hwm store (the monitor's fence reads it in the total order, I12);
     * scanners that still read the old value look at slots that are FREE and empty. */
    atomic_store_explicit(&pool->hwm, top, memory_order_seq_cst);
    /* Release: ends the sequence lock's write (pairs with the readers' acquire load). */
    atomic_store_explicit(&pool->stats_gen, gen + 2, memory_order_release);
}

/* A spare sleeps until `bolts__pool_add_worker` activates it (true), the pool closes
 * (false), or BOLTS_POOL_SPARE_IDLE_NS pass with nobody needing it (false): its thread
 * then exits, and the scan range shrinks past it if it was at the top. Only activation
 * and the pool's closing set a spare's `wake` (shutdown's first pass wakes parked workers,
 * not spares), and the state's CAS below decides any race between its exit and an
 * activation. */
bool bolts__pool_spare_wait(bolts_pool_t *pool, struct bolts_pool_slot *self) {
    bolts__sleep_begin(self);
    bool woken = BOLTS_POOL_SPARE_IDLE_NS > 0 ? wait_for_wake_until(self, bolts__now_ns() + BOLTS_POOL_SPARE_IDLE_NS)
                                              : (wait_for_wake(self), true);
    bolts__sleep_end(self);
    /* Acquire: pairs with the seq_cst CAS in `bolts__pool_add_worker` (wake_slot's release follows it). */
    if (atomic_load_explicit(&self->state, memory_order_acquire) == SLOT_ACTIVE) {
        if (!woken) wait_for_wake(self); /* activated as the wait ran out: its wake is coming */
        return true;
    }
    unsigned expected = SLOT_SPARE;
    /* Acq_rel: races an activation; if the activation wins, this thread works on (its
     * wake is then coming, or came). Release: the exit's last counter writes reach
     * `shrink_range`'s acquire load of FREE. */
    if (!atomic_compare_exchange_strong_explicit(&self->state, &expected, SLOT_FREE, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        if (!woken) wait_for_wake(self);
        return true;
    }
    if (!woken) {
        /* Relaxed: a statistic. */
        atomic_fetch_add_explicit(&pool->spares_exited, 1, memory_order_relaxed);
        pthread_mutex_lock(&pool->spawn_lock);
        shrink_range(pool);
        pthread_mutex_unlock(&pool->spawn_lock);
    }
    return false;
}
