/*
 * The task state machine: see include/bolts_task.h for the encoding, the transitions
 * and what may run concurrently. This file holds no locks and makes no system call on
 * the add / claim / publish paths; `bolts_task_wait` is the only place that sleeps.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#define STATE_CLAIMED ((uintptr_t)1)
#define STATE_DONE ((uintptr_t)2)
#define STATE_TAGS ((uintptr_t)3)
/* DONE|CLAIMED with a (maybe empty) stack: complete, and the completer is still
 * dispatching; jobs added now are pushed so that it runs them after the earlier ones. */
#define STATE_DISPATCHING (STATE_DONE | STATE_CLAIMED)

_Static_assert(_Alignof(bolts_job_t) >= 4, "job addresses must leave two tag bits free");
_Static_assert((STATE_DONE & STATE_CLAIMED) == 0, "DONE and CLAIMED are distinct bits");
_Static_assert(BOLTS_PENDING == 0 && BOLTS_SUCCESS == 1 && BOLTS_ERROR == 2 && BOLTS_CANCELLED == 3,
               "outcome values are part of the Swift layer's contract");

/* The own job's state (`own_job_state`). */
enum { OWN_JOB_UNQUEUED = 0, OWN_JOB_QUEUED = 1, OWN_JOB_BEGUN = 2 };

struct bolts_task {
    /* The state word (see the header). */
    _Atomic(uintptr_t) state;
    /* Written once by the claimer before `publish`'s release; read after an acquire
     * that observed DONE. Plain: the state word orders it. */
    uint8_t outcome;
    /* Diagnostic only; no other memory is ordered by it. */
    _Atomic(uint8_t) observed;
    /* OWN_JOB_*: whether `bolts_task_submit_own_job` queued the own job on a pool, and
     * whether its step has begun (claimed by the worker that dequeues the job, or by a
     * worker of that pool that awaits the task first). The own job of any other task is
     * re-parked as its owner waits on one task after another; this word, not the job's
     * fields, is what an awaiter reads first. */
    _Atomic(uint8_t) own_job_state;
    /* The owner's job record for waiting on one task at a time. */
    bolts_job_t own_job;
    /* Storage for the layer above's success value (written by the claimer before
     * publish, like `outcome`). */
    _Alignas(16) unsigned char payload[BOLTS_TASK_PAYLOAD_SIZE];
};
_Static_assert(sizeof(struct bolts_task) <= BOLTS_BLOCK_SIZE, "a task must fit in a block");
/* The header's inline readers rely on these. */
_Static_assert(offsetof(struct bolts_task, state) == 0, "the state word comes first");
_Static_assert(offsetof(struct bolts_task, outcome) == BOLTS_TASK_OUTCOME_OFFSET, "outcome offset");
_Static_assert(offsetof(struct bolts_task, payload) == BOLTS_TASK_PAYLOAD_OFFSET, "payload offset");
_Static_assert(offsetof(struct bolts_task, own_job) == BOLTS_TASK_OWN_JOB_OFFSET, "job offset");
_Static_assert(sizeof(_Atomic(uintptr_t)) == sizeof(uintptr_t), "the state word is a plain word");
_Static_assert(STATE_DONE == BOLTS_TASK_STATE_DONE, "the DONE tag");

static bolts_task_t *task_alloc(uintptr_t state, bolts_outcome_t outcome) {
    bolts_task_t *task = bolts__block_alloc();
    /* Relaxed: the task is not yet shared; whoever receives it does so through a
     * synchronizing hand-over of its own. */
    atomic_init(&task->state, state);
    task->outcome = (uint8_t)outcome;
    atomic_init(&task->observed, 0);
    atomic_init(&task->own_job_state, OWN_JOB_UNQUEUED);
    task->own_job = (bolts_job_t){0};
    return task;
}

bolts_task_t *bolts_task_create(void) { return task_alloc(0, BOLTS_PENDING); }

bolts_task_t *bolts_task_create_completed(bolts_outcome_t outcome) {
    return task_alloc(STATE_DONE, outcome);
}

void bolts_task_destroy(bolts_task_t *task) {
    /* Relaxed: destroy races nothing (see the header); the owner's last release already
     * ordered every earlier access before this point. */
    uintptr_t s = atomic_load_explicit(&task->state, memory_order_relaxed);
    if (!(s & STATE_DONE)) {
        /* Abandoned while pending: the jobs can never run. Let each release what it holds,
         * and free the records the runtime owns. */
        bolts_job_t *job = (bolts_job_t *)(s & ~STATE_TAGS);
        while (job) {
            bolts_job_t *next = job->next;
            bolts_job_fn drop = job->drop;
            void *context = job->context;
            bolts_job_destroy(job); /* frees the record only if the runtime owns it */
            if (drop) drop(context);
            job = next;
        }
    }
    bolts__block_free(task);
}

bool bolts_task_claim(bolts_task_t *task) {
    /* Relaxed: the claim only decides who may write the outcome; nothing written
     * before it is published by it (publish's release does the publishing). */
    uintptr_t s = atomic_load_explicit(&task->state, memory_order_relaxed);
    for (;;) {
        if (s & (STATE_CLAIMED | STATE_DONE)) return false;
        /* Relaxed on success and failure, for the same reason: the CAS is the
         * ownership decision; its atomicity, not its ordering, is what matters. */
        if (atomic_compare_exchange_weak_explicit(&task->state, &s, s | STATE_CLAIMED, memory_order_relaxed,
                                                  memory_order_relaxed))
            return true;
    }
}

/* Dispatches a stack taken from the state word, oldest job first. */
static void dispatch_stack(uintptr_t s) {
    /* The stack is newest-first: reverse it so jobs run in the order they were added. */
    bolts_job_t *list = (bolts_job_t *)(s & ~STATE_TAGS);
    bolts_job_t *ordered = NULL;
    while (list) {
        bolts_job_t *next = list->next;
        list->next = ordered;
        ordered = list;
        list = next;
    }
    while (ordered) {
        /* Read the link first: once dispatched, the job may be freed or re-queued. */
        bolts_job_t *next = ordered->next;
        bolts_dispatch(ordered);
        ordered = next;
    }
}

void bolts_task_publish(bolts_task_t *task, bolts_outcome_t outcome) {
    task->outcome = (uint8_t)outcome;
    /* acq_rel: release publishes the outcome and the payload to every later acquire of
     * the state word (bolts_task_state, bolts_task_add); acquire pairs with the release
     * of each add's CAS so the pushed jobs' fields are visible here. */
    uintptr_t s = atomic_exchange_explicit(&task->state, STATE_DISPATCHING, memory_order_acq_rel);
    if (!(s & STATE_CLAIMED) || (s & STATE_DONE)) {
        fputs("bolts: task published without a claim, or twice\n", stderr);
        abort();
    }
    dispatch_stack(s);
    /* Jobs added while we dispatched were pushed (they saw DISPATCHING), so that they run
     * after the earlier ones: keep taking them until the word can settle to DONE. */
    for (;;) {
        uintptr_t expected = STATE_DISPATCHING;
        /* Success, acq_rel (release is what matters): orders our dispatching before any adder that sees DONE and
         * runs its job itself (it belongs to the release sequence of the exchange above
         * anyway). Failure, acquire: pairs with the adders' release CAS, so the late jobs'
         * fields are visible before we take them. */
        if (atomic_compare_exchange_strong_explicit(&task->state, &expected, STATE_DONE, memory_order_acq_rel,
                                                    memory_order_acquire))
            return;
        /* Acquire: same pairing as the failure order above, for the jobs we now take. */
        dispatch_stack(atomic_exchange_explicit(&task->state, STATE_DISPATCHING, memory_order_acquire));
    }
}

/* Pushes a job unless the task has settled (DONE, nothing being dispatched); returns
 * whether it pushed. A push onto DISPATCHING is run by the completer after its earlier
 * jobs. */
static bool task_push(bolts_task_t *task, bolts_job_t *job) {
    /* Acquire: if the task has settled, pairs with publish's release so the caller (which
     * then runs the job, and the job reads the outcome) sees it. */
    uintptr_t s = atomic_load_explicit(&task->state, memory_order_acquire);
    for (;;) {
        if (s == STATE_DONE) return false;
        job->next = (bolts_job_t *)(s & ~STATE_TAGS);
        /* Success, release: publishes job's fields to the exchange that takes the stack.
         * Failure, acquire: the new value may be DONE, which then needs the same pairing as
         * the initial load. */
        if (atomic_compare_exchange_weak_explicit(&task->state, &s, (uintptr_t)job | (s & STATE_TAGS),
                                                  memory_order_release, memory_order_acquire))
            return true;
    }
}

void bolts_task_add(bolts_task_t *task, bolts_job_t *job) {
    if (!task_push(task, job)) bolts_dispatch(job);
}

void bolts_task_mark_observed(bolts_task_t *task) {
    /* Relaxed: a diagnostic flag; it orders nothing else. */
    atomic_store_explicit(&task->observed, 1, memory_order_relaxed);
}

bool bolts_task_observed(const bolts_task_t *task) {
    /* Relaxed: read in the owner's deinit, after every user of the task is gone. */
    return atomic_load_explicit(&((bolts_task_t *)task)->observed, memory_order_relaxed) != 0;
}

/* ---- Blocking wait ---------------------------------------------------------------------
 * A waiter is a job plus a futex word, shared by the sleeping thread and the task's
 * completion: two references, dropped by whichever of them finishes last, so a timed
 * wait that gives up never leaves the completer writing into freed memory. */

typedef struct waiter {
    bolts_job_t job;
    _Atomic(uint32_t) woken;
    _Atomic(uint32_t) refs;
} waiter_t;
/* Waiters use the pool's 64-byte blocks: their last reference is often dropped on another
 * thread (the completer's), and those blocks are recycled across threads. */
_Static_assert(sizeof(waiter_t) <= BOLTS_POOL_BLOCK_SIZE, "a waiter must fit in a pool block");

static void waiter_unref(waiter_t *w) {
    /* acq_rel: the release orders this side's last use of w before the free; the
     * acquire (taken by the side that frees) sees the other side's last use. */
    if (atomic_fetch_sub_explicit(&w->refs, 1, memory_order_acq_rel) == 1) bolts_pool_block_free(w);
}

static void waiter_fire(void *context) {
    waiter_t *w = context;
    /* Release: pairs with the sleeper's acquire load of `woken`; the sleeper then also
     * sees DONE through its own acquire of the state word. */
    atomic_store_explicit(&w->woken, 1, memory_order_release);
    bolts__futex_wake(&w->woken, 1);
    waiter_unref(w);
}

/* The task was destroyed while still pending: only the sleeper's reference remains. */
static void waiter_drop(void *context) { waiter_unref(context); }

/* Pause hints a waiter spins through before it sleeps (a microsecond or two): enough
 * for a completion already being published, far less than a futex round trip. */
#define TASK_WAIT_SPIN_ITERATIONS 200

bool bolts_task_wait(bolts_task_t *task, int64_t timeout_ns) {
    if (bolts_task_state(task) != BOLTS_PENDING) return true;
    /* Deferred work on this thread may be what completes the task: run it first. */
    while (bolts_trampoline_drain() > 0) {
        if (bolts_task_state(task) != BOLTS_PENDING) return true;
    }
    int64_t deadline = bolts__deadline_after(timeout_ns);

    /* Spin briefly: a completion that is already under way is far cheaper to wait
     * for than a futex round trip. */
    for (int i = 0; i < TASK_WAIT_SPIN_ITERATIONS; i++) {
        if (bolts_task_state(task) != BOLTS_PENDING) return true;
        bolts__cpu_relax();
    }

    waiter_t *w = bolts_pool_block_alloc();
    w->job = (bolts_job_t){.fn = waiter_fire, .context = w, .drop = waiter_drop};
    /* Relaxed: w is private until bolts_task_add's release CAS publishes it. */
    atomic_init(&w->woken, 0);
    atomic_init(&w->refs, 2);
    if (!task_push(task, &w->job)) {
        /* Settled meanwhile. Never dispatch the waiter's own job here: 20 levels deep it
         * would be deferred to this thread's run queue, which nobody drains while we sleep
         * (found by the model, Model/FINDINGS.md F2). */
        bolts_pool_block_free(w);
        return true;
    }

    bolts__pool_blocking_begin();
    bool done = true;
    /* Acquire: pairs with waiter_fire's release store. */
    while (atomic_load_explicit(&w->woken, memory_order_acquire) == 0) {
        int64_t left = -1;
        if (deadline >= 0) {
            left = deadline - bolts__now_ns();
            if (left <= 0) {
                done = false;
                break;
            }
        }
        bolts__futex_wait(&w->woken, 0, left);
    }
    bolts__pool_blocking_end();
    waiter_unref(w);
    return done || bolts_task_state(task) != BOLTS_PENDING;
}

void bolts_task_submit_own_job(bolts_task_t *task, bolts_pool_t *pool) {
    /* Plain, and relaxed: written before the submission, whose enqueue (a full barrier)
     * publishes them to the worker; an awaiter reads them after getting the task, which
     * its creator hands over only after this call. A queued own job is never re-parked,
     * so `pool` does not change while the state says QUEUED. */
    task->own_job.pool = pool;
    atomic_store_explicit(&task->own_job_state, OWN_JOB_QUEUED, memory_order_relaxed);
    bolts_pool_submit(pool, &task->own_job);
}

bool bolts_task_begin_own_job(bolts_task_t *task) {
    uint8_t expected = OWN_JOB_QUEUED;
    /* Acq_rel CAS: exactly one caller moves QUEUED to BEGUN; the winner reads the step its
     * submitter parked (ordered by the submission's enqueue, or by the hand-over of the
     * task to the awaiter), the loser touches nothing of the task but its reference.
     * Relaxed on failure: the loser reads nothing the winner wrote. */
    if (!atomic_compare_exchange_strong_explicit(&task->own_job_state, &expected, OWN_JOB_BEGUN,
                                                 memory_order_acq_rel, memory_order_relaxed)) {
        return false;
    }
    /* The step is about to run, and its completion will walk the jobs waiting on the task
     * (a join's record, an awaiter's), which the thread that attached them wrote on
     * another CPU: start fetching the newest now, so that it has arrived by then. Relaxed:
     * only an address to prefetch (a prefetch never faults, and a job pushed later is
     * simply not prefetched); `publish`'s exchange is what reads the stack. */
    uintptr_t s = atomic_load_explicit(&task->state, memory_order_relaxed);
    bolts_job_t *newest = (bolts_job_t *)(s & ~STATE_TAGS);
    if (newest != NULL) __builtin_prefetch(newest, 1);
    return true;
}

bool bolts_task_begin_own_job_here(bolts_task_t *task) {
    /* Relaxed: a pre-check; the CAS in `bolts_task_begin_own_job` decides. Only a QUEUED
     * own job's `pool` is stable enough to read (see `bolts_task_submit_own_job`). */
    if (atomic_load_explicit(&task->own_job_state, memory_order_relaxed) != OWN_JOB_QUEUED) return false;
    bolts_pool_t *pool = task->own_job.pool;
    if (pool == NULL || pool != bolts_pool_current()) return false;
    return bolts_task_begin_own_job(task);
}

/* The calling thread's adaptive state for `bolts_task_spin_for_completion` (see the header)
 * and its counts. Per thread: an awaiter's thread is what a spin occupies. */
static _Thread_local uint32_t tl_spin_misses;  /* spins in a row that ended pending */
static _Thread_local uint32_t tl_spin_skipped; /* awaits let pass since the last try */
static _Thread_local uint64_t tl_spins_begun, tl_spins_completed;

/* Whether the calling thread awaits `task` as an awaiter off the pools: a pool runs the
 * task's own job (or is about to), and the caller is not a pool worker. */
static bool awaited_off_pool(bolts_task_t *task) {
    /* Relaxed: whether a pool runs the task decides only whether spinning (or keeping the
     * workers' CPUs) is worth it; the completion itself is read through
     * `bolts_task_state`'s acquire. */
    if (atomic_load_explicit(&task->own_job_state, memory_order_relaxed) == OWN_JOB_UNQUEUED) return false;
    /* A worker awaiting a task of its own pool ran it inline if it could; one that
     * spins would hold a worker that the task may be queued behind. */
    return bolts_pool_current() == NULL;
}

bool bolts_task_spin_for_completion(bolts_task_t *task) {
    if (!awaited_off_pool(task)) return false;
    /* Whether or not this await spins: the workers keep their CPUs for awaiters like it
     * (BOLTS_POOL_SPIN_YIELD_AWAITED_NS; nothing to keep without BOLTS_POOL_SPIN_YIELD). */
    if (BOLTS_POOL_SPIN_YIELD) bolts__pool_note_awaiter(bolts__now_ns());
    if (tl_spin_misses >= BOLTS_TASK_AWAIT_SPIN_MISSES) {
        if (++tl_spin_skipped < BOLTS_TASK_AWAIT_SPIN_SKIP) return false;
        tl_spin_skipped = 0;
    }
    tl_spins_begun++;
    int64_t deadline = bolts__now_ns() + BOLTS_TASK_AWAIT_SPIN_NS;
    for (;;) {
        /* A clock read per eight pauses: a pause's cost varies widely between CPUs,
         * so the bound is a time (the idle spin's rationale in pool_spin.c). */
        for (int i = 0; i < 8; i++) {
            if (bolts_task_state(task) != BOLTS_PENDING) {
                tl_spin_misses = 0;
                tl_spins_completed++;
                return true;
            }
            bolts__cpu_relax();
        }
        if (bolts__now_ns() >= deadline) break;
    }
    tl_spin_misses++;
    return false;
}

bool bolts_task_await_suspend_begin(bolts_task_t *task) {
    if (!awaited_off_pool(task)) return false;
    /* The worker that runs the task spins longer once it is idle: the awaiter's next task
     * comes after its executor has woken a thread to resume it (BOLTS_POOL_SPIN_AWAITED_NS). */
    bolts__pool_note_suspended_awaiter(bolts__now_ns());
    if (!BOLTS_POOL_SPIN_YIELD) return false;
    bolts__pool_awaiters_suspended(+1);
    return true;
}

void bolts_task_await_suspend_end(void) { bolts__pool_awaiters_suspended(-1); }

void bolts_task_await_spin_counts(uint64_t *begun, uint64_t *completed) {
    *begun = tl_spins_begun;
    *completed = tl_spins_completed;
}
