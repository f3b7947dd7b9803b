/* A submission from a thread off the pool that waits a moment for its job to end, so that
 * an awaiter coming next finds its task completed, and each thread's choice of whether
 * that wait pays. The invariants are in include/bolts_pool.h.
 *
 * The tunable constants are defined, with their values, in bolts_tuning.h; this
 * is what this file's are for and why each is sized as it is.
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
 */
#define _GNU_SOURCE
#include "pool_internal.h"

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
