/* Where a worker finds its next job: its own queue first, then the other workers' queues,
 * and the heuristics that choose among them: the fairness turn (I9), the steal grace (I10)
 * and the restraint (I11). They share a file because `bolts__pool_find_work` runs for every
 * job and inlines them; the dequeue itself (`take`) and `any_work` are inline in
 * pool_internal.h, for the sweep after shutdown and for parking. The invariants are in
 * include/bolts_pool.h.
 *
 * The tunable constants are defined, with their values, in bolts_tuning.h; this
 * is what this file's are for and why each is sized as it is.
 *
 * Fairness (I9: BOLTS_POOL_FAIR_INTERVAL, BOLTS_POOL_STALL_NS). A worker whose own queue a
 * closed cycle keeps refilling (an event loop that submits a request's jobs, sleeps until
 * they are done, answers, and submits the next request's) would otherwise never look at
 * another queue, and a queue whose worker is parked, blocked or pre-empted would wait for
 * as long as the cycle lasts (finding F5, Model/FINDINGS.md). Every BOLTS_POOL_FAIR_INTERVAL
 * jobs in a row from its own queue, a worker looks at the others first: small enough that
 * a queue next to a parked owner is served within a few jobs of any running worker, large
 * enough to keep the look off most jobs' path. BOLTS_POOL_STALL_NS is how long an owner
 * that is not parked may run no job, with work queued, before a turn serves its queue: an
 * owner that is merely pre-empted for a moment or busy in one job keeps its queue (see
 * `stalled`).
 *
 * Steal grace (I10: BOLTS_POOL_STEAL_GRACE_NS). A job that a worker submits to its own
 * queue just before its current job ends (an async caller that starts a child and
 * suspends, a completion that resumes the awaiting task) is best run by that worker, where
 * its data is in cache; an idle worker that spins would otherwise steal every such hop and
 * move its data across CPUs. The grace is about the length of the end of a short job: long
 * enough for the owner to get back to its queue, short enough that a job whose owner went
 * on with long work hardly waits. A queue holding more than one job (a fan-out), or whose
 * owner is parked, is stolen from at once.
 *
 * Restraint (I11: BOLTS_POOL_SHORT_JOB_NS, BOLTS_POOL_SAMPLE_INTERVAL, BOLTS_POOL_RESTRAIN_NS,
 * BOLTS_POOL_RESTRAIN_PARK_MAX_NS). A worker running a task that starts tiny tasks (Swift
 * Concurrency with the pool as its global executor: `Task {}` in a loop, a task group's
 * children, a chain of resumptions) puts them in its own queue. A job that crosses CPUs
 * takes its cache lines along and frees its memory on the other CPU, where glibc's
 * allocator then contends for the creator's arena lock; for tiny jobs that costs more than
 * running them in parallel gains, so they stay with their owner while it makes progress.
 * A job of a few microseconds already pays for the move, hence the line
 * BOLTS_POOL_SHORT_JOB_NS; timing a job costs two clock reads, hence only one job in
 * BOLTS_POOL_SAMPLE_INTERVAL is timed. Jobs from outside (an event loop's fan-out) are
 * never held back. BOLTS_POOL_RESTRAIN_NS bounds what a job waits when its owner stops
 * (blocked where the pool cannot see, or in a long job of its own); it is long enough to
 * cover an owner starting a batch of a few hundred tasks. The restrained worker parks
 * meanwhile, and parks of that length would wake it over and over while a long batch
 * drains, spending CPU for nothing; so each park that runs out while the owner still moves
 * doubles the next, up to BOLTS_POOL_RESTRAIN_PARK_MAX_NS. The price: an owner that stops
 * after moving for a while has its jobs taken up to BOLTS_POOL_RESTRAIN_PARK_MAX_NS after it
 * stopped (a claimer's wake ends the park at once). */
#define _GNU_SOURCE
#include "pool_internal.h"

#include <urcu/system.h> /* CMM_LOAD_SHARED */
#include <urcu/wfcqueue.h>

/* On a fairness turn (I9): whether `slot`'s queue holds work that its owner is not
 * taking: the owner is parked (the server stall of finding F5), or its count of jobs run
 * has not moved for BOLTS_POOL_STALL_NS (blocked outside the pool's knowledge, or
 * pre-empted for that long). An owner that is merely pre-empted for a moment, or busy, is
 * left its queue: taking from it makes it find its queue empty, park, and need a futex
 * wake for its next job, which lengthens the hand-off's tail when turns take from any
 * owner whose count has not moved since the previous turn. Relaxed loads and stores: a
 * heuristic whose worst case is one steal more or fewer; racing turns may both look. */
static bool stalled(bolts_pool_t *pool, struct bolts_pool_slot *slot, int64_t now) {
    if (cds_wfcq_empty(&slot->head, &slot->tail)) return false;
    if (bolts__pool_owner_parked(pool, slot)) return true;
    uint64_t executed = atomic_load_explicit(&slot->executed, memory_order_relaxed);
    if (executed != atomic_load_explicit(&slot->fair_seen, memory_order_relaxed)) {
        atomic_store_explicit(&slot->fair_seen, executed, memory_order_relaxed);
        atomic_store_explicit(&slot->fair_seen_at, now, memory_order_relaxed);
        return false;
    }
    return now - atomic_load_explicit(&slot->fair_seen_at, memory_order_relaxed) >= BOLTS_POOL_STALL_NS;
}

/* The reason to report when no job was found: BUSY beats HELD beats nothing. */
static inline bolts_job_t *worse(bolts_job_t *why, bolts_job_t *found) {
    return found == FOUND_BUSY || (found == FOUND_HELD && why == FOUND_NOTHING) ? found : why;
}

/* Whether `value`, a counter of `other`'s owner, has stood still for less than `bound` ns
 * at `now` as `w` has watched it: a first look at `other`, or a changed value, starts the
 * watch over (and counts as less). */
static bool still_for_less_than(struct watch *w, const struct bolts_pool_slot *other, uint64_t value, int64_t now,
                                int64_t bound) {
    if (w->slot != other->index || w->seen != value) {
        w->slot = other->index;
        w->seen = value;
        w->since = now;
        return true;
    }
    return now - w->since < bound;
}

/* Whether `w` watches an owner other than `other`'s whose bound has not passed at `now`.
 * A worker gives its grace (I10) and its restraint (I11) to one owner at a time: a watch
 * moves to another owner only once its bound has passed, and meanwhile the other owners'
 * queues are taken from as any. Otherwise, looking at two owners in turn would start each
 * one's watch over at every look, and their bounds would never pass: with three workers or
 * more, two owners busy in long jobs, each with one job queued, kept an idle worker
 * scanning without taking either job until an owner's long job ended. */
static inline bool watching_another(const struct watch *w, const struct bolts_pool_slot *other, int64_t now,
                                    int64_t bound) {
    return w->slot != UINT32_MAX && w->slot != other->index && now - w->since < bound;
}

/* Whether to leave `other`'s queue to its owner for now (I10): it holds exactly one job
 * (its head's link names the node the tail names: two pointer loads, nothing
 * dereferenced), its owner is not parked, this worker gives no grace to another owner
 * whose bound has not passed (`watching_another`), and since this worker first saw that,
 * the owner has run no other job for less than BOLTS_POOL_STEAL_GRACE_NS. Never after
 * CLOSED: the final scans take everything. Relaxed loads: a heuristic; a stale view
 * delays a steal by at most the grace, or steals early, and loses nothing (the job stays
 * queued, `any_work` sees it, and the searcher keeps scanning or re-checks at parking). */
static bool give_grace(bolts_pool_t *pool, struct bolts_pool_slot *self, struct bolts_pool_slot *other) {
    if (BOLTS_POOL_STEAL_GRACE_NS == 0) return false; /* a build without the grace */
    struct cds_wfcq_node *first = CMM_LOAD_SHARED(other->head.node.next);
    if (first == NULL || first != CMM_LOAD_SHARED(other->tail.p)) return false;
    if (bolts__pool_owner_parked(pool, other)) return false;
    if (atomic_load_explicit(&pool->state, memory_order_relaxed) == POOL_CLOSED) return false;
    int64_t now = bolts__now_ns();
    if (watching_another(&self->grace, other, now, BOLTS_POOL_STEAL_GRACE_NS)) return false;
    return still_for_less_than(&self->grace, other, atomic_load_explicit(&other->executed, memory_order_relaxed), now,
                               BOLTS_POOL_STEAL_GRACE_NS);
}

/* Whether to leave `other`'s queue to its owner (I11): its owner is neither parked nor
 * inside a blocking wait, its sampled jobs are short, every job in the queue is one it
 * submitted to itself (none from outside is left in it), its activity (jobs run plus such
 * submissions) moved less than BOLTS_POOL_RESTRAIN_NS ago as far as this worker has seen
 * (a first look counts as a move), and this worker keeps no restraint toward another owner
 * whose bound has not passed (`watching_another`). How long ago the owner last submitted
 * to itself says nothing: a batch it handed itself earlier (a large task group's
 * children) may still be draining, and its jobs should stay where their data is.
 * Relaxed loads: a heuristic; the owner runs its own queue before it parks, and the
 * bound makes a stuck owner's queue fair game again. The outside counts only err one way:
 * a submission counts itself before its job is in the queue, and a job taken from it
 * counts after, so an outside job is never missed (at worst one is seen that is gone). */
bool bolts__pool_restrain(bolts_pool_t *pool, struct bolts_pool_slot *self, struct bolts_pool_slot *other) {
    if (BOLTS_POOL_RESTRAIN_NS == 0) return false; /* a build without the restraint */
    if (!atomic_load_explicit(&other->short_jobs, memory_order_relaxed)) return false;
    if (atomic_load_explicit(&other->blocked, memory_order_relaxed)) return false;
    if (atomic_load_explicit(&other->stalled, memory_order_relaxed) != 0) return false; /* marked (I12) */
    if (bolts__pool_owner_parked(pool, other)) return false;
    if (atomic_load_explicit(&pool->state, memory_order_relaxed) != POOL_OPEN) return false;
    int64_t now = bolts__now_ns();
    if (watching_another(&self->restraint, other, now, BOLTS_POOL_RESTRAIN_NS)) return false;
    /* This reads the producers' line; when the queue holds outside jobs (a server's),
     * the steal that follows mostly takes one and writes `outside_stolen` on that line
     * anyway. */
    uint64_t own = atomic_load_explicit(&other->own_submitted, memory_order_relaxed);
    uint64_t taken = atomic_load_explicit(&other->outside_run, memory_order_relaxed) +
                     atomic_load_explicit(&other->outside_stolen, memory_order_relaxed);
    if (atomic_load_explicit(&other->submitted, memory_order_relaxed) != taken) return false;
    uint64_t activity = atomic_load_explicit(&other->executed, memory_order_relaxed) + own;
    return still_for_less_than(&self->restraint, other, activity, now, BOLTS_POOL_RESTRAIN_NS);
}

/* Counts a job from outside that this worker took from `slot`'s queue (I11). */
static inline void count_outside(struct bolts_pool_slot *self, struct bolts_pool_slot *slot, bolts_job_t *job) {
    if ((job->flags & JOB_FROM_OUTSIDE) == 0) return;
    if (slot == self) {
        /* Relaxed load and store: written only by this thread (the owner's line). */
        atomic_store_explicit(&self->outside_run, atomic_load_explicit(&self->outside_run, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    } else {
        /* Relaxed: a count; thieves may race on it. */
        atomic_fetch_add_explicit(&slot->outside_stolen, 1, memory_order_relaxed);
    }
}

/* Own queue first, then every other slot in [0, hwm), starting after our own, leaving a
 * busy owner's only job to it for a moment (I10); but every
 * BOLTS_POOL_FAIR_INTERVAL-th time in a row that the own queue had a job, the other slots
 * first (I9). Reports BUSY if a queue was mid-enqueue, else HELD if a queue's flag was
 * taken or its job was left to its owner, else nothing. The worker loop treats HELD as
 * nothing (the holder is draining that queue, or its owner will take the job, and a
 * worker still cannot park while a queue is non-empty: `any_work`);
 * final scans after CLOSED treat it as "try again", or two scanners could each leave a
 * queue to the other. `stolen` is set when the job came from another slot's queue. */
bolts_job_t *bolts__pool_find_work(bolts_pool_t *pool, struct bolts_pool_slot *self, bool *stolen) {
    bolts_job_t *why = FOUND_NOTHING;
    self->restrained = false;
    bool fair_turn = self->own_run >= BOLTS_POOL_FAIR_INTERVAL;
    if (!fair_turn) {
        bolts_job_t *job = take(self);
        if (IS_JOB(job)) {
            self->own_run++;
            count_outside(self, self, job);
            return job;
        }
        why = job;
    }
    self->own_run = 0;
    /* Acquire: pairs with the release in `bolts__pool_add_worker`, so a new slot's fields are set. */
    uint32_t hwm = atomic_load_explicit(&pool->hwm, memory_order_acquire);
    uint32_t i = self->index;
    int64_t now = fair_turn ? bolts__now_ns() : 0;
    for (uint32_t k = 1; k < hwm; k++) {
        if (++i >= hwm) i = 0;
        struct bolts_pool_slot *other = &pool->slots[i];
        if (fair_turn && !stalled(pool, other, now)) continue;
        if (!fair_turn && !cds_wfcq_empty(&other->head, &other->tail) && bolts__pool_restrain(pool, self, other)) {
            /* Only a queue that still holds work counts: one drained meanwhile is no
             * reason to skip the spin or to park for a while. */
            if (!cds_wfcq_empty(&other->head, &other->tail)) self->restrained = true;
            continue;
        }
        if (!fair_turn && give_grace(pool, self, other)) {
            why = worse(why, FOUND_HELD); /* "someone will take it": never a reason to yield */
            continue;
        }
        bolts_job_t *job = take(other);
        if (IS_JOB(job)) {
            *stolen = true;
            self->victim = i;
            count_outside(self, other, job);
            return job;
        }
        why = worse(why, job);
    }
    if (fair_turn) {
        bolts_job_t *job = take(self);
        if (IS_JOB(job)) {
            count_outside(self, self, job);
            return job;
        }
        why = worse(why, job);
    }
    return why;
}
