/* How long and how densely an idle worker looks for work before it parks, and the hints
 * from awaiters off the pools that lengthen its spin or keep it from giving its CPU away.
 * The hints are process-wide, not per pool: an awaiter knows a task's pool only while the
 * task's job is queued.
 *
 * The tunable constants are defined, with their values, in bolts_tuning.h; this
 * is what this file's are for and why each is sized as it is.
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
 */
#define _GNU_SOURCE
#include "pool_internal.h"

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
bolts_job_t *bolts__pool_spin_for_work(bolts_pool_t *pool, struct bolts_pool_slot *self, bool *stolen) {
    int64_t start = bolts__now_ns();
    int64_t deadline = start + bolts__pool_idle_spin_ns(start);
    int64_t now = start;
    unsigned pauses = 1;
    for (;;) {
        /* The first late scan. */
        if (BOLTS_POOL_SPIN_YIELD && pauses == 2 && no_awaiter_lately(now)) yield_cpu_while_idle(pool);
        for (unsigned i = 0; i < pauses; i++) bolts__cpu_relax();
        bolts_job_t *job = bolts__pool_find_work(pool, self, stolen);
        if (IS_JOB(job) || self->restrained) return job;
        now = bolts__now_ns();
        if (now >= deadline) return job;
        if (pauses < BOLTS_POOL_SPIN_BACKOFF_PAUSES && now - start >= BOLTS_POOL_SPIN_EAGER_NS) pauses *= 2;
    }
}
