/* The thread pool. The invariants (I1-I12) and the synchronization table are at the top
 * of include/bolts_pool.h; comments below cite them. liburcu is used only for its
 * wait-free concurrent queue (urcu/wfcqueue.h), always through the `_nonblocking`
 * dequeue: the blocking one sleeps 10 ms when a producer is pre-empted mid-enqueue. */
#define _GNU_SOURCE
#include "pool_internal.h"

#include <urcu/system.h> /* CMM_LOAD_SHARED */
#include <urcu/wfcqueue.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The queue links jobs through their first field; these are the facts that cast uses. */
_Static_assert(offsetof(bolts_job_t, next) == 0, "a job's link word must be its first field");
_Static_assert(sizeof(struct cds_wfcq_node) == sizeof(void *), "a wfcqueue node is one pointer");
_Static_assert(sizeof(((bolts_job_t *)0)->next) == sizeof(struct cds_wfcq_node),
               "a job's link word has the size of a wfcqueue node");
_Static_assert(_Alignof(bolts_job_t) >= _Alignof(struct cds_wfcq_node),
               "a job is aligned at least like a wfcqueue node");

/* What `take` and `find_work` return besides a job: nothing; a queue whose job cannot
 * be taken yet because its producer was pre-empted between its tail exchange and its
 * link store (BUSY); or a queue whose consumer flag another thread holds (HELD). */
#define FOUND_NOTHING ((bolts_job_t *)NULL)
#define FOUND_BUSY ((bolts_job_t *)(uintptr_t)1)
#define FOUND_HELD ((bolts_job_t *)(uintptr_t)2)
#define IS_JOB(j) ((uintptr_t)(j) > 2)

/* A job's flag bit, set by `bolts_pool_try_submit` on a job submitted to a queue by a
 * thread that is not the queue's worker, cleared on the worker's own submissions (I11). */
#define JOB_FROM_OUTSIDE ((uintptr_t)2)
_Static_assert((JOB_FROM_OUTSIDE & BOLTS_JOB_OWNED) == 0, "the pool's flag bit is free");

/* The tunable constants are defined, with their values, in include/bolts_pool.h; this is
 * what each is for and why it is sized as it is. The runs that chose the values are in
 * the commit messages that set them.
 *
 * Backpressure (I8: BOLTS_POOL_BACKLOG_PER_WORKER, BOLTS_POOL_BACKLOG_SAMPLE). A thread that
 * is not one of the pool's workers reads the backlog once every BOLTS_POOL_BACKLOG_SAMPLE
 * submissions, so that an unloaded submitter rarely touches the counters' lines; once it
 * finds more than BOLTS_POOL_BACKLOG_PER_WORKER queued jobs per worker, it gives up its
 * time slice on each submission, checking each time, until the backlog is under the bound.
 * It never blocks and never refuses a job: it only lets the workers have the CPU when
 * submitters outnumber cores and would otherwise queue jobs faster than the workers get to
 * run them, so the queued jobs (a BOLTS_POOL_BLOCK_SIZE block each) stay in cache and the
 * time a job spends queued stays bounded.
 *
 * Idle spin (BOLTS_POOL_SPIN_NS). An idle worker keeps scanning for that long before it
 * parks, because a futex wake-up costs far more than a scan: a submitter that waits for
 * each job's result before it submits the next (a request loop) then finds the worker
 * still scanning instead of paying a wake-up per job. A longer spin takes the CPU from
 * submitters when threads outnumber cores, and burns CPU while jobs only trickle in; only
 * one worker spins per trickle, since a submission wakes a parked worker only when none
 * is searching (I5). The bound is a time, not a number of pauses, because a pause costs
 * anything from a few to a few hundred nanoseconds depending on the CPU (a virtual machine
 * may trap it).
 *
 * Spin after an awaiter suspended (BOLTS_POOL_SPIN_AWAITED_NS). An async awaiter off the
 * pools (`try await task.value` on Swift's default executor) spins BOLTS_TASK_AWAIT_SPIN_NS
 * for a pool's task and suspends only when no worker ran the task in time, i.e. when the
 * workers were parked. Its executor then resumes it with a wake-up that outlasts
 * BOLTS_POOL_SPIN_NS, so its next task would find the workers parked again, and every
 * await of such a loop would pay a wake-up on both sides. After such a suspension
 * (`bolts_task_await_suspend_begin` notes it, process-wide) idle workers spin for
 * BOLTS_POOL_SPIN_AWAITED_NS instead, longer than that resumption, so that the next task
 * finds one awake and the awaiter's spin sees it complete. Event loops that join with
 * continuations never suspend this way, and an awaiter on a pool worker is never noted (it
 * does not spin, and runs a task of its own pool inline), so servers of that shape spin as
 * before; the longer spin's CPU is spent only while such awaits happen.
 *
 * The idle yield (BOLTS_POOL_SPIN_YIELD, a build option, off by default). With it, an idle
 * worker whose eager scans are over gives its CPU once to any thread waiting for it
 * (`yield_cpu_while_idle`), then spins on when it gets the CPU back, or parks if the spin's
 * time has passed meanwhile. Inside a server the workers share the CPUs with event loops,
 * and a spinning worker holds a CPU that a pre-empted loop waits for: letting the loop go
 * first lowers the CPU spent per request. The price is the hand-off's tail latency:
 * producers that block until their job ran are threads waiting for a CPU too, and a worker
 * that yields to them is behind all of them when their next jobs come. Hence off by
 * default, for servers that value CPU per request over that tail. The yielding worker
 * leaves the searching count of I5 for that moment: counted, it would make producers on
 * its CPU skip waking a parked worker for a searcher that is not running. Yielding only
 * while another worker still searches keeps the tail but loses the gain.
 *
 * BOLTS_POOL_SPIN_YIELD_AWAITED_NS (with the yield). The yield is skipped while an awaiter
 * off the pools is suspended on a pool's task, and for this long after one began awaiting
 * (`bolts_task_spin_for_completion`): that awaiter spins for a worker to run its task, and
 * a worker that yielded to a runnable thread is off its CPU until that thread blocks or its
 * time slice ends, longer than the awaiter's spin. Process-wide, because an awaiter knows
 * a task's pool only while its job is queued.
 *
 * Spin density (BOLTS_POOL_SPIN_EAGER_NS, BOLTS_POOL_SPIN_BACKOFF_PAUSES). A scan reads
 * every queue's tail and head, and the steal grace (I10) reads the owner's `executed`
 * count and the clock: lines that a busy worker writes on every submission to its own
 * queue and after every job. Scanning after every pause keeps those lines moving between
 * CPUs, and the busy worker pays a coherence miss on each of those writes, which slows
 * exactly the work where one worker hands itself every step (an await round trip through
 * the pool installed as the global executor). So a worker scans after every pause only for
 * the first BOLTS_POOL_SPIN_EAGER_NS of its spin, where a submitter that hands over one job
 * at a time finds it, and then doubles the pauses between scans up to
 * BOLTS_POOL_SPIN_BACKOFF_PAUSES, which bounds the extra delay of a job that arrives late
 * in a spin to that many pauses.
 *
 * Hops (`bolts_pool_submit_hop`: BOLTS_POOL_HOP_WAIT_NS, BOLTS_POOL_HOP_PERIOD and the
 * constants after it). A Swift task that prefers the pool, started or resumed from another
 * executor's thread, is usually awaited by a task of that executor right after. If the
 * awaiter suspends, the task's end resumes it through its own executor, which wakes a
 * thread for it (Dispatch's idle threads sleep at once); that wake-up costs many times
 * the task itself. So the submitting thread waits, spinning, up to BOLTS_POOL_HOP_WAIT_NS
 * for the job to end, and the awaiter then finds the task completed. A thread that starts
 * many tasks without awaiting each would lose by waiting, and the submission cannot tell
 * the two apart; so each thread measures the mean time between its hops over runs of
 * BOLTS_POOL_HOP_PERIOD, tries the other way for one run now and then
 * (BOLTS_POOL_HOP_RETRY_WAITING, BOLTS_POOL_HOP_RETRY_NOT_WAITING: trying not to wait
 * costs an awaiting loop a wake-up per hop, so it is tried more rarely), and keeps the
 * cheaper way. Hops further apart than BOLTS_POOL_HOP_LULL_NS are not a loop and start a
 * new run. Waits that run out (long jobs, parked workers) make the thread skip most waits
 * (BOLTS_POOL_HOP_MISSES, BOLTS_POOL_HOP_SKIP), as the await spin in task.c does. The end
 * is seen through a process-wide count of ended hops: another thread's hop may end a wait
 * early, which only costs that wait's gain.
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

/* The slot of the pool worker running on this thread, if any. */
static _Thread_local struct bolts_pool_slot *tl_slot;
/* Rotation for submissions from threads that are not this pool's workers: the index
 * of the last slot used (reset when it is past a pool's N). */
static _Thread_local uint32_t tl_rotation;
/* Submissions from this thread to pools it is not a worker of (backpressure sampling). */
static _Thread_local uint32_t tl_outside_submits;
/* The pool whose backlog this thread last found over the bound (backpressure), if any. */
static _Thread_local bolts_pool_t *tl_throttled;
/* Nesting of blocking waits on this worker (only the outermost counts). */
static _Thread_local uint32_t tl_block_depth;
/* Set by `bolts_pool_yield_after_job` inside a job; `run_job` reads and clears it. */
static _Thread_local bool tl_yield_after_job;

static void *worker_main(void *arg);

uint32_t bolts_cpu_count(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return (uint32_t)n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (uint32_t)n : 1;
}

/* ---------------------------------------------------------------------------------- */
/* Queues                                                                             */

/* Takes one job from `slot`'s queue, or says why not (I2). */
static bolts_job_t *take(struct bolts_pool_slot *slot) {
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
static bool restrain(bolts_pool_t *pool, struct bolts_pool_slot *self, struct bolts_pool_slot *other) {
    if (BOLTS_POOL_RESTRAIN_NS == 0) return false; /* a build without the restraint */
    if (!atomic_load_explicit(&other->short_jobs, memory_order_relaxed)) return false;
    if (atomic_load_explicit(&other->blocked, memory_order_relaxed)) return false;
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
static bolts_job_t *find_work(bolts_pool_t *pool, struct bolts_pool_slot *self, bool *stolen) {
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
        if (!fair_turn && !cds_wfcq_empty(&other->head, &other->tail) && restrain(pool, self, other)) {
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

/* Whether any queue holds a job (possibly one still being linked in). With `self`, a
 * parking worker: only a job it should not leave to its queue's owner (I11) counts, and
 * `self->restrained` says whether it left one. */
static bool any_work(bolts_pool_t *pool, struct bolts_pool_slot *self) {
    if (self == NULL) return bolts__pool_jobs_queued(pool);
    self->restrained = false;
    /* Acquire: pairs with the release in `bolts__pool_add_worker`. */
    uint32_t hwm = atomic_load_explicit(&pool->hwm, memory_order_acquire);
    for (uint32_t i = 0; i < hwm; i++) {
        struct bolts_pool_slot *slot = &pool->slots[i];
        if (cds_wfcq_empty(&slot->head, &slot->tail)) continue;
        if (!restrain(pool, self, slot)) return true;
        self->restrained = true;
    }
    return false;
}

/* Runs a job that the pool will not run on a worker (shut down): on this thread,
 * through the trampoline so a chain of them cannot grow the stack (I1). */
static void run_here(bolts_job_t *job) {
    job->pool = NULL;
    bolts_dispatch(job);
}

/* Empties every queue on this thread, after the pool was seen CLOSED (I7). Never holds
 * a consumer flag while a job runs: a job may submit, and so sweep, again. */
static void sweep(bolts_pool_t *pool) {
    /* Acquire: pairs with the release in `bolts__pool_add_worker`. */
    uint32_t hwm = atomic_load_explicit(&pool->hwm, memory_order_acquire);
    for (uint32_t i = 0; i < hwm; i++) {
        struct bolts_pool_slot *slot = &pool->slots[i];
        for (;;) {
            bolts_job_t *job = take(slot);
            if (job == FOUND_NOTHING) break;
            if (job == FOUND_BUSY) {
                bolts__yield_cpu(); /* a pre-empted producer: let it finish its enqueue */
                continue;
            }
            if (job == FOUND_HELD) {
                bolts__cpu_relax(); /* another consumer: it drops the flag after one dequeue */
                continue;
            }
            /* Relaxed: a statistic. */
            atomic_fetch_add_explicit(&pool->swept, 1, memory_order_relaxed);
            run_here(job);
        }
    }
}

/* ---------------------------------------------------------------------------------- */
/* Parking and waking                                                                 */

/* Tells a claimed or released thread to wake (I4). */
static void wake_slot(struct bolts_pool_slot *slot) {
    /* Release: pairs with the acquire in `wait_for_wake`; what the waker did before
     * (the searching count it took on the thread's behalf, a state change) is visible. */
    atomic_store_explicit(&slot->wake, 1, memory_order_release);
    bolts__futex_wake(&slot->wake, 1);
}

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

/* Claims one parked worker, counts it as searching, and wakes it. */
static bool wake_one(bolts_pool_t *pool) {
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
static void notify(bolts_pool_t *pool) {
    /* Relaxed: ordered after the caller's enqueue by the full barrier above. */
    if (atomic_load_explicit(&pool->searching, memory_order_relaxed) != 0) return;
    wake_one(pool);
}

/* Wakes every parked worker (not the spares). */
static void wake_parked(bolts_pool_t *pool) {
    while (wake_one(pool)) {
    }
}

/* Wakes every parked worker, every spare and the monitor (I12), once the pool is CLOSED. */
static void wake_all(bolts_pool_t *pool) {
    wake_parked(pool);
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
static bool park(bolts_pool_t *pool, struct bolts_pool_slot *self, bool searching) {
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
        if (!self->restrained) {
            self->restrained_park = BOLTS_POOL_RESTRAIN_NS;
            wait_for_wake(self);
            return true;
        }
        /* Parked under a restraint (I11): until a claimer wakes us, or the restraint's
         * bound passes and we look at the queue we left again. Relaxed, both: a hint for
         * the owners' submissions, which may skip waking us (their own queue is theirs to
         * run). */
        atomic_fetch_add_explicit(&pool->restrained_parked, 1, memory_order_relaxed);
        int64_t length = self->restrained_park;
        bool woken = wait_for_wake_until(self, self->restraint.since + length);
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

/* ---------------------------------------------------------------------------------- */
/* Threads                                                                            */

static int start_thread(bolts_pool_t *pool, struct bolts_pool_slot *slot) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    int rc = pthread_create(&thread, &attr, worker_main, slot);
    pthread_attr_destroy(&attr);
    if (rc == 0) {
        char name[16];
        snprintf(name, sizeof name, "%.8s-%u", pool->name, slot->index);
        pthread_setname_np(thread, name);
    }
    return rc;
}

/* Brings one more thread into service because a worker blocked (I6): a spare if there
 * is one, else a new thread in a fresh slot. */
void bolts__pool_add_worker(bolts_pool_t *pool) {
    pthread_mutex_lock(&pool->spawn_lock);
    /* Relaxed: hwm is only written under spawn_lock, which we hold. */
    uint32_t hwm = atomic_load_explicit(&pool->hwm, memory_order_relaxed);
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
            return;
        }
    }
    if (hwm >= pool->capacity) {
        /* Relaxed: warn once; an idempotent flag. */
        if (!atomic_exchange_explicit(&pool->warned_capacity, true, memory_order_relaxed)) {
            fprintf(stderr, "bolts: pool '%s' has %u blocked workers and no room for another thread\n", pool->name,
                    pool->capacity);
        }
        pthread_mutex_unlock(&pool->spawn_lock);
        return;
    }
    struct bolts_pool_slot *slot = &pool->slots[hwm];
    /* Relaxed, these four: published to the new thread by pthread_create and to scanners
     * by the hwm release below; the counts need no order of their own (I6), and a new
     * reference is taken by a holder of one (this worker's thread). */
    atomic_store_explicit(&slot->state, SLOT_ACTIVE, memory_order_relaxed);
    atomic_fetch_add_explicit(&pool->unblocked, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&pool->live_threads, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&pool->refs, 1, memory_order_relaxed);
    /* Seq_cst: releases the slot to the acquire loads of hwm in scans, and is in the total
     * order that the monitor's fence reads it in (I12). */
    atomic_store_explicit(&pool->hwm, hwm + 1, memory_order_seq_cst);
    if (start_thread(pool, slot) != 0) {
        /* Relaxed, these four: undo the counts; nobody saw the thread. The slot stays in
         * [0, hwm) with an empty queue. */
        atomic_store_explicit(&slot->state, SLOT_FREE, memory_order_relaxed);
        atomic_fetch_sub_explicit(&pool->unblocked, 1, memory_order_relaxed);
        atomic_fetch_sub_explicit(&pool->live_threads, 1, memory_order_relaxed);
        atomic_fetch_sub_explicit(&pool->refs, 1, memory_order_relaxed);
        fprintf(stderr, "bolts: pool '%s' could not start a compensating worker\n", pool->name);
    } else {
        atomic_fetch_add_explicit(&pool->compensations, 1, memory_order_relaxed); /* a statistic */
    }
    pthread_mutex_unlock(&pool->spawn_lock);
}

/* An extra thread that is no longer needed becomes a spare (I6). */
static bool try_retire(bolts_pool_t *pool, struct bolts_pool_slot *self) {
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

/* A spare sleeps until `bolts__pool_add_worker` activates it (true) or the pool closes (false).
 * Only those two set a spare's `wake` (shutdown's first pass wakes parked workers, not
 * spares), so one wake-up is always decisive. */
static bool spare_wait(bolts_pool_t *pool, struct bolts_pool_slot *self) {
    (void)pool;
    wait_for_wake(self);
    /* Acquire: pairs with the acq_rel CAS in `bolts__pool_add_worker` (wake_slot's release follows it). */
    if (atomic_load_explicit(&self->state, memory_order_acquire) == SLOT_ACTIVE) return true;
    unsigned expected = SLOT_SPARE;
    /* Acq_rel: races an activation; if the activation wins, this thread works on. */
    return !atomic_compare_exchange_strong_explicit(&self->state, &expected, SLOT_FREE, memory_order_acq_rel,
                                                    memory_order_acquire);
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
        bool fast = bolts__now_ns() - start < BOLTS_POOL_SHORT_JOB_NS;
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
    if (tl_yield_after_job) {
        /* The job handed work back to a thread off the pool (`bolts_pool_yield_after_job`):
         * let that thread have the CPU before this worker spins, unless its own queue holds
         * its next job. After the timing above, so a yield never makes a job look long (I11).
         * cds_wfcq_empty: two CMM_LOAD_SHARED reads of the queue's ends, no ordering (a hint:
         * a job queued meanwhile runs after one yield). */
        tl_yield_after_job = false;
        if (cds_wfcq_empty(&self->head, &self->tail)) bolts__yield_cpu();
    }
}

/* When an async awaiter off the pools last suspended on a pool's task
 * (`bolts__pool_note_suspended_awaiter`): idle workers that start spinning within
 * BOLTS_POOL_SPIN_AWAITED_NS of it spin that long. Process-wide, as `awaiter_seen_ns`
 * below: the awaiter knows the task's pool only while the task's job is queued. */
static _Atomic(int64_t) awaiter_suspended_ns = INT64_MIN / 2;

void bolts__pool_note_suspended_awaiter(int64_t now) {
    /* Relaxed, both: a hint for the length of idle spins, which orders no other memory (a
     * stale value makes one spin shorter or longer). Stored only when an eighth of the
     * window has passed since the last store, so that awaiters on several threads do not
     * pass the line between them at every suspension. */
    int64_t seen = atomic_load_explicit(&awaiter_suspended_ns, memory_order_relaxed);
    if (now - seen >= BOLTS_POOL_SPIN_AWAITED_NS / 8) {
        atomic_store_explicit(&awaiter_suspended_ns, now, memory_order_relaxed);
    }
}

int64_t bolts__pool_idle_spin_ns(int64_t now) {
    /* Relaxed: see `bolts__pool_note_suspended_awaiter`. */
    int64_t suspended = atomic_load_explicit(&awaiter_suspended_ns, memory_order_relaxed);
    bool awaited = BOLTS_POOL_SPIN_AWAITED_NS > BOLTS_POOL_SPIN_NS && now - suspended < BOLTS_POOL_SPIN_AWAITED_NS;
    return awaited ? BOLTS_POOL_SPIN_AWAITED_NS : BOLTS_POOL_SPIN_NS;
}

int64_t bolts_pool_idle_spin_ns(void) { return bolts__pool_idle_spin_ns(bolts__now_ns()); }

int64_t bolts_pool_awaiter_suspended_ns(void) {
    /* Relaxed: see `bolts__pool_note_suspended_awaiter`. */
    return atomic_load_explicit(&awaiter_suspended_ns, memory_order_relaxed);
}

#if BOLTS_POOL_SPIN_YIELD
/* When a thread that is not a pool worker last began awaiting a pool's task
 * (`bolts__pool_note_awaiter`); idle workers do not yield for BOLTS_POOL_SPIN_YIELD_AWAITED_NS
 * after it. Process-wide, not per pool: an awaiter reads a task's pool only while its job
 * is queued, and a pool may be gone by the time its task is awaited. */
static _Atomic(int64_t) awaiter_seen_ns = INT64_MIN / 2;

void bolts__pool_note_awaiter(int64_t now) {
    /* Relaxed, both: a hint for the idle workers' choice to yield, which orders no other
     * memory (a stale value costs one yield or one kept spin). Stored only when an eighth
     * of the hold has passed since the last store, so that awaiters on several threads
     * do not pass the line between them at every await. */
    int64_t seen = atomic_load_explicit(&awaiter_seen_ns, memory_order_relaxed);
    if (now - seen >= BOLTS_POOL_SPIN_YIELD_AWAITED_NS / 8) {
        atomic_store_explicit(&awaiter_seen_ns, now, memory_order_relaxed);
    }
}

/* Async awaiters of pool tasks, off the pools, that are suspended now
 * (`bolts__pool_awaiters_suspended`). Process-wide, as `awaiter_seen_ns`. */
static _Atomic(int32_t) awaiters_suspended;

void bolts__pool_awaiters_suspended(int delta) {
    /* Relaxed: a count read only as a hint by idle workers (as `awaiter_seen_ns`). */
    atomic_fetch_add_explicit(&awaiters_suspended, delta, memory_order_relaxed);
}

/* Whether no awaiter off the pools waits for a pool task now (suspended) nor began
 * awaiting within BOLTS_POOL_SPIN_YIELD_AWAITED_NS of `now`: such an awaiter spins
 * (BOLTS_TASK_AWAIT_SPIN_NS) for a worker to run its task, now or at its next await once
 * resumed, and a worker that gave its CPU away is not back in time. */
static bool no_awaiter_lately(int64_t now) {
    /* Relaxed, both: see `bolts__pool_note_awaiter`. */
    return atomic_load_explicit(&awaiters_suspended, memory_order_relaxed) == 0 &&
           now - atomic_load_explicit(&awaiter_seen_ns, memory_order_relaxed) >= BOLTS_POOL_SPIN_YIELD_AWAITED_NS;
}
#else
/* Without the yield there is nothing to keep: the workers never give their CPUs away. */
void bolts__pool_note_awaiter(int64_t now) { (void)now; }
void bolts__pool_awaiters_suspended(int delta) { (void)delta; }
static bool no_awaiter_lately(int64_t now) {
    (void)now;
    return false;
}
#endif

/* Between the eager scans and the late ones of a spin (BOLTS_POOL_SPIN_YIELD): gives the
 * CPU to any thread waiting for it, once. For that moment the worker leaves the searching
 * count (I5), as a parker does: a producer that finds its queue empty meanwhile wakes a
 * parked worker instead of counting on this one, which may not get the CPU back for a
 * while. Work already queued is taken at once, without yielding. Either way the worker
 * counts itself back and goes on scanning, so every queue is scanned again before it
 * parks (I5 holds for whatever a producer left to it before the decrement). */
static void yield_cpu_while_idle(bolts_pool_t *pool) {
    /* Seq_cst: as the searching count's other decrements (I5). No fence before the check:
     * it only decides whether to yield, and a job it misses is found by the scans after. */
    atomic_fetch_sub_explicit(&pool->searching, 1, memory_order_seq_cst);
    if (!any_work(pool, NULL)) bolts__yield_cpu();
    /* Relaxed: a count, as when a worker starts searching (I5). */
    atomic_fetch_add_explicit(&pool->searching, 1, memory_order_relaxed);
}

/* Spins for up to BOLTS_POOL_SPIN_NS (BOLTS_POOL_SPIN_AWAITED_NS just after an async
 * awaiter off the pools suspended: `bolts__pool_idle_spin_ns`) looking for work: a scan
 * after every pause for the
 * first BOLTS_POOL_SPIN_EAGER_NS, then (after giving the CPU away once, if built with
 * BOLTS_POOL_SPIN_YIELD and no awaiter off the pools waits or began awaiting lately)
 * scans further apart, the pauses between them doubling up to
 * BOLTS_POOL_SPIN_BACKOFF_PAUSES (see the rationale above). Called by a searching worker. */
static bolts_job_t *spin_for_work(bolts_pool_t *pool, struct bolts_pool_slot *self, bool *stolen) {
    int64_t start = bolts__now_ns();
    int64_t deadline = start + bolts__pool_idle_spin_ns(start);
    int64_t now = start;
    unsigned pauses = 1;
    for (;;) {
        /* The first late scan. */
        if (BOLTS_POOL_SPIN_YIELD && pauses == 2 && no_awaiter_lately(now)) yield_cpu_while_idle(pool);
        for (unsigned i = 0; i < pauses; i++) bolts__cpu_relax();
        bolts_job_t *job = find_work(pool, self, stolen);
        if (IS_JOB(job) || self->restrained) return job;
        now = bolts__now_ns();
        if (now >= deadline) return job;
        if (pauses < BOLTS_POOL_SPIN_BACKOFF_PAUSES && now - start >= BOLTS_POOL_SPIN_EAGER_NS) pauses *= 2;
    }
}

static void *worker_main(void *arg) {
    struct bolts_pool_slot *self = arg;
    bolts_pool_t *pool = self->pool;
    tl_slot = self;
    /* Release: pairs with the monitor's acquire load; it reads this thread's CPU clock and
     * state by this id (I12). */
    atomic_store_explicit(&self->tid, (int)gettid(), memory_order_release);
    bolts__pool_monitor_resume(pool); /* a new thread is out of any park (I12) */
    bool searching = false;
    for (;;) {
        bool stolen = false;
        bolts_job_t *job = find_work(pool, self, &stolen);
        if (!IS_JOB(job)) {
            if (!searching) {
                /* Relaxed: a count (I5); parkers and notifiers fence around it. */
                atomic_fetch_add_explicit(&pool->searching, 1, memory_order_relaxed);
                searching = true;
            }
            if (!self->restrained) job = spin_for_work(pool, self, &stolen);
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
            job = find_work(pool, self, &stolen);
            if (job == FOUND_NOTHING) break;
            if (IS_JOB(job)) run_job(self, job, stolen);
            continue;
        }
        if (try_retire(pool, self)) {
            if (searching) {
                searching = false;
                /* Seq_cst, then a fence: a notifier that skipped waking because it
                 * counted us must have its job seen by the re-check below (I5). */
                atomic_fetch_sub_explicit(&pool->searching, 1, memory_order_seq_cst);
                atomic_thread_fence(memory_order_seq_cst);
                if (any_work(pool, NULL)) notify(pool);
            }
            if (!spare_wait(pool, self)) break;
            bolts__pool_monitor_resume(pool); /* back in service (I12) */
            continue;
        }
        searching = park(pool, self, searching);
        bolts__pool_monitor_resume(pool); /* out of its park: the monitor must look (I12) */
    }
    if (searching) {
        /* Relaxed: a count; the pool is closed. */
        atomic_fetch_sub_explicit(&pool->searching, 1, memory_order_relaxed);
    }
    tl_slot = NULL;
    /* Release: pairs with the acquire in `bolts_pool_await_termination`: every job this
     * thread ran happened before the waiter returns. */
    atomic_fetch_sub_explicit(&pool->live_threads, 1, memory_order_release);
    bolts__futex_wake(&pool->live_threads, INT_MAX);
    bolts__pool_unref(pool); /* last touch of the pool by this thread */
    return NULL;
}

/* ---------------------------------------------------------------------------------- */
/* Public API                                                                         */

static void pool_free(bolts_pool_t *pool) {
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
        int rc = start_thread(pool, &pool->slots[i]);
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

/* The queue for a job from a thread that is not one of the pool's workers: the one of
 * the CPU the thread runs on (sched_getcpu reads the kernel's rseq area here, no system
 * call), so submitters on one CPU feed one queue, whose worker finds the jobs in that
 * CPU's cache, and a job is not left behind a worker that the scheduler has just
 * pre-empted on another CPU to run its submitter. A pool with more workers than CPUs
 * (or a failed lookup) uses a per-thread rotation instead. */
static uint32_t outside_slot(bolts_pool_t *pool) {
    if (pool->target <= pool->cpus) {
        int cpu = sched_getcpu();
        if (cpu >= 0) return (uint32_t)cpu % pool->target;
    }
    uint32_t r = tl_rotation + 1;
    if (r >= pool->target) r = 0;
    tl_rotation = r;
    return r;
}

/* Jobs accepted, and jobs run (by workers, or by sweepers after shutdown), summed over
 * the slots: what the metrics report and what backpressure compares. */
static void job_totals(bolts_pool_t *pool, uint64_t *submitted, uint64_t *executed) {
    /* Acquire: pairs with the release in `bolts__pool_add_worker`. */
    uint32_t hwm = atomic_load_explicit(&pool->hwm, memory_order_acquire);
    uint64_t in = 0, out = 0;
    for (uint32_t i = 0; i < hwm; i++) {
        /* Relaxed, both: statistics; a snapshot, not a consistent cut. */
        in += atomic_load_explicit(&pool->slots[i].submitted, memory_order_relaxed) +
              atomic_load_explicit(&pool->slots[i].own_submitted, memory_order_relaxed);
        out += atomic_load_explicit(&pool->slots[i].executed, memory_order_relaxed);
    }
    /* Relaxed: a statistic. */
    out += atomic_load_explicit(&pool->swept, memory_order_relaxed);
    *submitted = in;
    *executed = out;
}

/* Jobs accepted and not yet run (an estimate: see `job_totals`). */
static uint64_t backlog(bolts_pool_t *pool) {
    uint64_t submitted, executed;
    job_totals(pool, &submitted, &executed);
    return submitted > executed ? submitted - executed : 0;
}

/* Backpressure on a thread that is not one of the pool's workers (see
 * BOLTS_POOL_BACKLOG_PER_WORKER). Sampled while the backlog was last seen under the
 * bound, so the counters are read once per BOLTS_POOL_BACKLOG_SAMPLE submissions; once
 * over, every submission checks and yields. One yield per sample is not enough: when
 * submitters outnumber CPUs the scheduler often hands a yielding thread the CPU straight
 * back, and the backlog keeps growing. */
static void backpressure(bolts_pool_t *pool) {
    if (tl_throttled != pool && ++tl_outside_submits % BOLTS_POOL_BACKLOG_SAMPLE != 0) return;
    if (backlog(pool) > (uint64_t)BOLTS_POOL_BACKLOG_PER_WORKER * pool->target) {
        tl_throttled = pool;
        /* Relaxed: a statistic. */
        atomic_fetch_add_explicit(&pool->yields, 1, memory_order_relaxed);
        bolts__yield_cpu();
    } else {
        tl_throttled = NULL;
    }
}

bool bolts_pool_try_submit(bolts_pool_t *pool, bolts_job_t *job) {
    struct bolts_pool_slot *self = tl_slot;
    bool own = self != NULL && self->pool == pool;
    /* Relaxed: an early refusal only; the re-read after the fence below is the one I7
     * relies on. */
    unsigned st = atomic_load_explicit(&pool->state, memory_order_relaxed);
    if (st == POOL_CLOSED || (st == POOL_CLOSING && !own)) return false;
    struct bolts_pool_slot *slot = self;
    if (!own) slot = &pool->slots[outside_slot(pool)];
    job->next = NULL; /* what cds_wfcq_node_init does: the queue's link starts empty */
    job->flags = own ? job->flags & ~JOB_FROM_OUTSIDE : job->flags | JOB_FROM_OUTSIDE; /* I11 */
    BOLTS_TSAN_RELEASE(job);
    if (own) {
        /* Relaxed load and store: written only by this thread (the owner's line). */
        atomic_store_explicit(&slot->own_submitted,
                              atomic_load_explicit(&slot->own_submitted, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    } else {
        /* Relaxed: a count (on a producers-only line; see the slot). */
        atomic_fetch_add_explicit(&slot->submitted, 1, memory_order_relaxed);
    }
    /* The tail exchange inside the enqueue is liburcu's uatomic_xchg, a full memory
     * barrier before and after (a locked XCHG on x86): the job's fields are visible to
     * whoever dequeues it, and the exchange is ordered before the loads below as a
     * seq_cst fence would order it. It is the store of the store-buffering pair of I3
     * (a parker's `any_work` reads the tail) and of I7 (a final scan reads it too), so
     * no fence of our own is needed. The link store that follows the exchange needs no
     * such order: a reader that sees the new tail and no link yet reports the queue
     * busy, not empty. Leaving that store in the store buffer matters: it writes the
     * previous job, which a worker on another CPU is often reading. */
    bool was_nonempty = cds_wfcq_enqueue(&slot->head, &slot->tail, (struct cds_wfcq_node *)job);
#ifdef BOLTS_TSAN
    /* ThreadSanitizer cannot see liburcu's barrier; give it the C11 one. */
    atomic_thread_fence(memory_order_seq_cst);
#endif
    /* Relaxed: ordered after the exchange by its full barrier (above). */
    if (atomic_load_explicit(&pool->state, memory_order_relaxed) == POOL_CLOSED) {
        sweep(pool); /* our job may have landed after the last worker's final scan */
    } else if (!was_nonempty && !(own && atomic_load_explicit(&pool->restrained_parked, memory_order_relaxed) != 0)) {
        /* Relaxed load: a hint (I11). A worker's job in its own queue needs no wake while
         * another worker is parked under a restraint: this thread runs it before it parks
         * (its parking check sees its own queue), unless a searcher takes it first. */
        notify(pool);
    }
    if (!own) backpressure(pool);
    return true;
}

void bolts_pool_submit(bolts_pool_t *pool, bolts_job_t *job) {
    if (bolts_pool_try_submit(pool, job)) return;
    /* Relaxed: a statistic. */
    atomic_fetch_add_explicit(&pool->rejected, 1, memory_order_relaxed);
    run_here(job);
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
        wake_parked(pool);
    }
    if (!wait) return 0;
    struct bolts_pool_slot *self = tl_slot;
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
    job_totals(p, &out->submitted, &out->executed);
    /* Relaxed, every load here: a snapshot of statistics, not a consistent cut. The
     * acquire pairs with the release in `bolts__pool_add_worker`. */
    uint32_t hwm = atomic_load_explicit(&p->hwm, memory_order_acquire);
    uint32_t active = 0;
    for (uint32_t i = 0; i < hwm; i++) {
        struct bolts_pool_slot *slot = &p->slots[i];
        out->stolen += atomic_load_explicit(&slot->stolen, memory_order_relaxed);
        out->parks += atomic_load_explicit(&slot->parks, memory_order_relaxed);
        if (atomic_load_explicit(&slot->state, memory_order_relaxed) == SLOT_ACTIVE) active++;
        if (atomic_load_explicit(&slot->stalled, memory_order_relaxed) != 0) out->stalled++;
    }
    out->rejected = atomic_load_explicit(&p->rejected, memory_order_relaxed);
    out->backpressure_yields = atomic_load_explicit(&p->yields, memory_order_relaxed);
    out->compensations = atomic_load_explicit(&p->compensations, memory_order_relaxed);
    out->stalls = atomic_load_explicit(&p->stalls, memory_order_relaxed);
    out->queue_depth = out->submitted > out->executed ? out->submitted - out->executed : 0;
    out->threads = atomic_load_explicit(&p->live_threads, memory_order_relaxed);
    int unblocked = atomic_load_explicit(&p->unblocked, memory_order_relaxed);
    out->blocked = (int)active > unblocked ? active - (uint32_t)unblocked : 0;
}

uint32_t bolts_pool_thread_count(const bolts_pool_t *pool) { return pool->target; }

bool bolts_pool_is_shut_down(const bolts_pool_t *pool) {
    /* Relaxed: a status query; callers that race shutdown get either answer. */
    return atomic_load_explicit(&((bolts_pool_t *)pool)->state, memory_order_relaxed) != POOL_OPEN;
}

bolts_pool_t *bolts_pool_current(void) { return tl_slot != NULL ? tl_slot->pool : NULL; }

bolts_pool_t *bolts_pool_current_behind_queued_jobs(void) {
    struct bolts_pool_slot *self = tl_slot;
    /* A pool of one has nobody to take the job from a queue whose owner blocks where the
     * pool cannot see (the header says why that matters). */
    if (self == NULL || self->pool->target < 2) return NULL;
    /* cds_wfcq_empty: two CMM_LOAD_SHARED reads of the queue's ends, no ordering (a hint). */
    return cds_wfcq_empty(&self->head, &self->tail) ? NULL : self->pool;
}

void bolts_pool_yield_after_job(void) {
    /* Only on a worker: `run_job` clears the flag after the job that set it. A job that a
     * worker runs outside `run_job` (a sweep after shutdown) may leave it set: that costs
     * one yield after the worker's next job, no more. */
    if (tl_slot != NULL) tl_yield_after_job = true;
}

/* Hops (`bolts_pool_submit_hop`), see the rationale at the top. */

/* Hop jobs that have run, on every pool: a hint that ends a submitter's wait. */
static _Atomic uint64_t hops_finished;

/* A thread's choice between waiting for its hops and not, and what each cost it lately. */
struct hop_choice {
    int64_t last_ns;         /* its previous hop's submission */
    int64_t period_start_ns; /* the current period's first hop */
    uint32_t in_period;      /* hops submitted in the current period after its first */
    uint32_t periods;        /* periods measured since the other way last was */
    int64_t cost_ns[2];      /* mean time between hops in the last period of each way
                              * ([1]: waiting, [0]: not); 0: not measured yet */
    bool waits;              /* the way of the current period */
    bool probing;            /* whether the current period tries the way not taken */
    uint8_t misses;          /* waits in a row that ran out before their job ended */
    uint8_t skipped;         /* hops not waited for since the misses reached the limit */
};
static _Thread_local struct hop_choice tl_hop = {.waits = true};

void bolts_pool_hop_finished(void) {
    /* Relaxed: ends a wait, which orders nothing: the submitter learns the job's effects
     * (a task's completion) through their own synchronization. */
    atomic_fetch_add_explicit(&hops_finished, 1, memory_order_relaxed);
}

/* Ends a period of BOLTS_POOL_HOP_PERIOD hops in a row: notes its cost and picks the next
 * period's way. A thread tries the way not taken for one period (a probe) after
 * BOLTS_POOL_HOP_RETRY_WAITING periods of waiting, or BOLTS_POOL_HOP_RETRY_NOT_WAITING of
 * not waiting, and after its first period; at the probe's end it keeps the cheaper of the
 * two ways, each measured over one of the last two periods. */
static void hop_period_ended(struct hop_choice *c, int64_t now) {
    c->cost_ns[c->waits] = (now - c->period_start_ns) / BOLTS_POOL_HOP_PERIOD;
    c->periods++;
    bool switches;
    if (c->probing) {
        c->probing = false;
        switches = c->cost_ns[c->waits] > c->cost_ns[!c->waits];
    } else {
        uint32_t retry = c->waits ? BOLTS_POOL_HOP_RETRY_WAITING : BOLTS_POOL_HOP_RETRY_NOT_WAITING;
        switches = c->periods >= retry || c->cost_ns[!c->waits] == 0;
        c->probing = switches;
    }
    if (switches) {
        c->waits = !c->waits;
        c->periods = 0;
    }
    c->in_period = 0;
    c->period_start_ns = now;
}

bool bolts_pool_submit_hop(bolts_pool_t *pool, bolts_job_t *job) {
    struct hop_choice *c = &tl_hop;
    int64_t now = bolts__now_ns();
    if (now - c->last_ns > BOLTS_POOL_HOP_LULL_NS) {
        c->in_period = 0; /* a lull: what came before says nothing of this loop */
        c->period_start_ns = now;
    } else if (++c->in_period == BOLTS_POOL_HOP_PERIOD) {
        hop_period_ended(c, now);
    }
    c->last_ns = now;
    bool waits = c->waits;
    if (waits && c->misses >= BOLTS_POOL_HOP_MISSES) {
        waits = ++c->skipped >= BOLTS_POOL_HOP_SKIP;
        if (waits) c->skipped = 0;
    }
    /* Relaxed: see `bolts_pool_hop_finished`. Read before the submission: the count moves
     * once the job (or another thread's hop) has run. */
    uint64_t before = atomic_load_explicit(&hops_finished, memory_order_relaxed);
    bolts_pool_submit(pool, job);
    if (!waits) return false;
    int64_t deadline = bolts__now_ns() + BOLTS_POOL_HOP_WAIT_NS;
    for (;;) {
        /* A clock read per eight pauses, as the await spin (task.c). */
        for (int i = 0; i < 8; i++) {
            /* Relaxed: see `bolts_pool_hop_finished`. */
            if (atomic_load_explicit(&hops_finished, memory_order_relaxed) != before) {
                c->misses = 0;
                return true;
            }
            bolts__cpu_relax();
        }
        if (bolts__now_ns() >= deadline) break;
    }
    if (c->misses < BOLTS_POOL_HOP_MISSES) c->misses++;
    return false;
}

/* ---------------------------------------------------------------------------------- */
/* Blocking hooks (internal.h), called by bolts_task_wait around its sleep            */

void bolts__pool_blocking_begin(void) {
    struct bolts_pool_slot *self = tl_slot;
    if (self == NULL || tl_block_depth++ != 0) return;
    bolts_pool_t *pool = self->pool;
    /* Relaxed: a hint for the restraint (I11); the count below decides compensation. */
    atomic_store_explicit(&self->blocked, true, memory_order_relaxed);
    /* The monitor already counts this worker as blocked in its job (I12): the wait takes
     * that count over, and `bolts__pool_blocking_end` puts the worker back. Relaxed: the
     * exchange's atomicity decides, as in `bolts__pool_stall_over`. */
    if (atomic_exchange_explicit(&self->stalled, 0, memory_order_relaxed) != 0) return;
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
    struct bolts_pool_slot *self = tl_slot;
    if (self == NULL || --tl_block_depth != 0) return;
    /* Relaxed: a hint (I11), as above. */
    atomic_store_explicit(&self->blocked, false, memory_order_relaxed);
    /* Relaxed: a count (I6). */
    atomic_fetch_add_explicit(&self->pool->unblocked, 1, memory_order_relaxed);
}
