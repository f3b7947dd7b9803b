/*
 * liburcu's memb flavour, as its documentation specifies it, for the Relacy harness (the
 * library itself is not compiled in). What token.c relies on:
 * - a read-side critical section (`urcu_memb_read_lock` … `urcu_memb_read_unlock`) that
 *   began before a grace period began has ended before that grace period ends, with every
 *   access of the section ordered before the end (and the grace period's start ordered
 *   before any section that starts after it);
 * - `urcu_memb_call_rcu(head, fn)` runs `fn(head)` on another thread after a grace period
 *   that began after the call (the caller's earlier accesses happen before `fn`).
 * The model: each Relacy thread has a section counter (odd while inside a section);
 * entering stores it and issues a full fence, leaving issues a full fence and stores it.
 * (memb's reader issues only compiler barriers, and the updater's membarrier(2) places a
 * full barrier in every running reader: a fence in each reader at lock and unlock is the
 * symmetric form of that pair, and is what the model can express.) A grace period is a
 * full fence, a wait for every thread seen inside a section to leave that section (not for
 * later sections: as early as liburcu may end it), and a full fence. Callbacks run on the
 * harness's reclaimer thread (`shim_rcu_reclaimer`), as soon as a grace period after their
 * queuing allows.
 */
#ifndef BOLTS_SHIM_URCU_MEMB_H
#define BOLTS_SHIM_URCU_MEMB_H

struct rcu_head {
    struct rcu_head *next;
    void (*func)(struct rcu_head *head);
};

enum { SHIM_RCU_THREADS = 8, SHIM_RCU_CALLBACKS = 16 };
static _Atomic(unsigned) shim_rcu_ctr[SHIM_RCU_THREADS];
static unsigned shim_rcu_local[SHIM_RCU_THREADS];
static _Atomic(struct rcu_head *) shim_rcu_queue[SHIM_RCU_CALLBACKS];
static _Atomic(unsigned) shim_rcu_reserved;
static _Atomic(unsigned) shim_rcu_workers_done;

static inline void urcu_memb_register_thread(void) {}
static inline void urcu_memb_unregister_thread(void) {}

static inline void urcu_memb_read_lock(void) {
    unsigned self = rl::thread_index();
    RL_ASSERT(!(shim_rcu_local[self] & 1) && "token.c never nests read-side sections");
    atomic_store_explicit(&shim_rcu_ctr[self], ++shim_rcu_local[self], memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
}

static inline void urcu_memb_read_unlock(void) {
    unsigned self = rl::thread_index();
    RL_ASSERT((shim_rcu_local[self] & 1) && "unlock outside a read-side section");
    atomic_thread_fence(memory_order_seq_cst);
    atomic_store_explicit(&shim_rcu_ctr[self], ++shim_rcu_local[self], memory_order_relaxed);
}

static inline void urcu_memb_call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head)) {
    head->func = func;
    /* The queue is the model's, not liburcu's wait-free queue: a slot per call, reserved by
     * a relaxed increment and filled by a release store (the callback sees what its caller
     * did before the call). */
    unsigned k = atomic_fetch_add_explicit(&shim_rcu_reserved, 1u, memory_order_relaxed);
    RL_ASSERT(k < SHIM_RCU_CALLBACKS);
    atomic_store_explicit(&shim_rcu_queue[k], head, memory_order_release);
}

static inline void urcu_memb_barrier(void) { RL_ASSERT(!"rcu_barrier is not modelled"); }

/* A grace period, run by the reclaimer thread. */
static void shim_rcu_grace_period(unsigned threads) {
    unsigned self = rl::thread_index();
    atomic_thread_fence(memory_order_seq_cst);
    for (unsigned t = 0; t < threads; t++) {
        if (t == self) continue;
        unsigned seen = atomic_load_explicit(&shim_rcu_ctr[t], memory_order_relaxed);
        if (!(seen & 1)) continue;
        while (atomic_load_explicit(&shim_rcu_ctr[t], memory_order_relaxed) == seen) rl::yield(1, $);
    }
    atomic_thread_fence(memory_order_seq_cst);
}

/* Each worker thread of a harness calls this last. */
static void shim_rcu_worker_done(void) {
    atomic_fetch_add_explicit(&shim_rcu_workers_done, 1, memory_order_release);
}

/* The reclaimer thread's body: runs queued callbacks after a grace period, until every
 * worker is done and nothing is queued. */
static void shim_rcu_reclaimer(unsigned workers, unsigned threads) {
    unsigned processed = 0;
    for (;;) {
        /* Acquire: every call_rcu of a finished worker is then visible. */
        unsigned done = atomic_load_explicit(&shim_rcu_workers_done, memory_order_acquire);
        unsigned ready = processed;
        while (ready < SHIM_RCU_CALLBACKS && atomic_load_explicit(&shim_rcu_queue[ready], memory_order_acquire) != NULL)
            ready++;
        if (ready > processed) {
            shim_rcu_grace_period(threads);
            for (; processed < ready; processed++) {
                struct rcu_head *head = atomic_load_explicit(&shim_rcu_queue[processed], memory_order_relaxed);
                head->func(head);
            }
            continue;
        }
        if (done == workers) return;
        rl::yield(1, $);
    }
}

/* Called from the harness's `before` (atomics made there are visible to every thread). */
static void shim_rcu_reset(void) {
    for (int t = 0; t < SHIM_RCU_THREADS; t++) atomic_init(&shim_rcu_ctr[t], 0u);
    for (int k = 0; k < SHIM_RCU_CALLBACKS; k++) atomic_init(&shim_rcu_queue[k], (struct rcu_head *)NULL);
    atomic_init(&shim_rcu_reserved, 0u);
    atomic_init(&shim_rcu_workers_done, 0u);
    memset(shim_rcu_local, 0, sizeof shim_rcu_local);
}

#endif
