/*
 * Relacy checks of the thread pool under Relacy's full relaxed memory model, on the
 * project's own C code: job.c, task.c and the pool's files (shim/pool_sources.h) compiled
 * into this file through the shim (shim/relacy_shim.h: futex, clock, spin hint, allocators, per-thread variables;
 * shim/urcu/wfcqueue.h: liburcu's wait-free queue as documented; shim/pool_stubs.h: worker
 * threads as Relacy dynamic threads). The monitor of I12 (pool_monitor.c) is left out here:
 * its start reports failure and its hooks do nothing (the stubs below); monitor_check.cpp
 * checks it.
 *
 * One tunable is set for these checks (overridable, bolts_tuning.h): BOLTS_POOL_SPARE_IDLE_NS
 * is 4 us, so that a spare's idle spell runs out within a few reads of the shim's clock (its
 * timed futex wait may also return at any moment, and `wait_for_wake_until` reads the clock
 * on each round, so the wait always ends): a compensating thread that retired may then
 * exit (CAS SPARE -> FREE) and lower hwm past its slot (`shrink_range`, folding its counters
 * into the pool's retired counts under the `stats_gen` sequence lock), racing an activation,
 * shutdown's wake-up of spares and `bolts__pool_add_worker` starting a thread in the slot it
 * left. relaxed-pool-spare-exit picks 4 us, 30 us or 1 ms per iteration, so that an
 * activation also finds the spare still waiting, or in its time-out.
 *
 * Every check asserts, in every explored execution:
 * - each job runs exactly once, and sees what its submitter wrote before submitting (a
 *   Relacy variable: a missing happens-before edge is a data race);
 * - no job waits in a queue while every worker sleeps: the submitters wait for their jobs
 *   on tasks (futex), so a job left behind with every worker parked leaves every thread
 *   asleep, which Relacy reports as a deadlock;
 * - shutdown reaches the end of every worker (`bolts_pool_shutdown(pool, true)` returns);
 * - no block is used after its free or freed twice, and every block is freed at the end;
 * - in relaxed-pool-spare-exit, the totals `job_totals` reads (what the metrics and
 *   backpressure see) never decrease from one read to the next, across the folds.
 *
 * Usage: pool_check CHECK ITERATIONS
 */
#include "shim/relacy_shim.h"

/* Per iteration (see the header): 4 us unless a check picks another spell. */
static int64_t shim_spare_idle_ns = 4000;
#define BOLTS_POOL_SPARE_IDLE_NS shim_spare_idle_ns

#define tls (*shim_job_tls())
#include "job.c"
#undef tls
static thread_state_t shim_job_tls_copies[16];
static thread_state_t *shim_job_tls() { return &shim_job_tls_copies[rl::thread_index()]; }

#include "task.c"
#include "shim/pool_stubs.h"

/* The pool's per-thread variables that the protocols read: the worker's slot
 * (pool_worker.c) and its blocking depth (I6, pool_compensate.c). One copy per Relacy thread; the others (submission rotation,
 * backpressure sampling, the hop heuristic) stay shared, which only changes which queue or
 * which wait a heuristic picks. The slot is declared in pool_internal.h as well, which the
 * macro turns into a declaration of the accessor: hence the accessor's own declaration
 * first. */
static struct bolts_pool_slot **shim_tl_slot();
#define bolts__pool_tl_slot (*shim_tl_slot())
#define tl_block_depth (*shim_tl_block_depth())
#include "shim/pool_sources.h"
#undef bolts__pool_tl_slot
#undef tl_block_depth
static struct bolts_pool_slot *shim_tl_slot_copies[16];
static uint32_t shim_tl_block_depth_copies[16];
static struct bolts_pool_slot **shim_tl_slot() { return &shim_tl_slot_copies[rl::thread_index()]; }
static uint32_t *shim_tl_block_depth() { return &shim_tl_block_depth_copies[rl::thread_index()]; }

/* ---- Stubs: allocators, the monitor ---------------------------------------------------- */
void *bolts_pool_block_alloc(void) { return shim_alloc(BOLTS_POOL_BLOCK_SIZE, SHIM_POOL_BLOCK); }
void bolts_pool_block_free(void *block) { shim_release(block, SHIM_POOL_BLOCK, $); }
void *bolts__block_alloc(void) { return shim_alloc(BOLTS_BLOCK_SIZE, SHIM_BLOCK); }
void bolts__block_free(void *block) { shim_release(block, SHIM_BLOCK, $); }
bool bolts__pool_monitor_start(struct bolts_pool *pool) {
    (void)pool;
    return false;
}
void bolts__pool_monitor_resume(struct bolts_pool *pool) { (void)pool; }
void bolts__pool_monitor_close(struct bolts_pool *pool) { (void)pool; }
void bolts__pool_stall_over(struct bolts_pool_slot *slot) { (void)slot; }

/* ---- One iteration's state -------------------------------------------------------------- */
enum { JOBS = 4 };

struct pool_job {
    int ran;
    rl::var<int> *mark;    /* written by the submitter before submitting */
    bolts_task_t *done;    /* completed by the job */
    bolts_task_t *wait_on; /* the job waits for this task first (compensation), or NULL */
};

static struct {
    pool_job jobs[JOBS];
    rl::atomic<bolts_pool_t *> *pool; /* handed from the creating thread to the others */
} g;

static void reset_iteration(bool destroy) {
    shim_iteration_reset(destroy);
    memset(shim_job_tls_copies, 0, sizeof shim_job_tls_copies);
    memset(shim_tl_slot_copies, 0, sizeof shim_tl_slot_copies);
    memset(shim_tl_block_depth_copies, 0, sizeof shim_tl_block_depth_copies);
}

/* The pool's static atomics (pool_spin.c, pool_hop.c), initialized where every thread sees
 * them (see the shim). */
static void init_pool_statics(void) {
    atomic_init(&awaiter_suspended_ns, INT64_MIN / 2);
#if BOLTS_POOL_SPIN_YIELD
    atomic_init(&awaiter_seen_ns, INT64_MIN / 2);
    atomic_init(&awaiters_suspended, 0);
#endif
    atomic_init(&hops_finished, 0);
}

static void pool_job_run(void *context) {
    pool_job *j = (pool_job *)context;
    RL_ASSERT((*j->mark)($) == 1);
    if (j->wait_on != NULL) RL_ASSERT(bolts_task_wait(j->wait_on, -1));
    j->ran++;
    RL_ASSERT(bolts_task_claim(j->done));
    bolts_task_publish(j->done, BOLTS_SUCCESS);
}

static void submit(bolts_pool_t *pool, int k, bool hop) {
    (*g.jobs[k].mark)($) = 1;
    bolts_job_t *job = bolts_job_create(pool_job_run, &g.jobs[k]);
    if (hop) bolts_pool_submit_hop(pool, job);
    else bolts_pool_submit(pool, job);
}

static bolts_pool_t *await_pool(void) {
    bolts_pool_t *pool;
    while ((pool = g.pool->load(mo_acquire, $)) == NULL) rl::yield(1, $);
    return pool;
}

template <class Derived, int Threads, int Dynamic> struct pool_test : rl::test_suite<Derived, Threads> {
    static const rl::thread_id_t dynamic_thread_count = Dynamic;
    rl::var<int> marks[JOBS];
    rl::atomic<bolts_pool_t *> pool_handoff;
    int njobs;
    void setup(int n) {
        reset_iteration(false);
        shim_dynamic_threads_left = Dynamic;
        shim_spare_idle_ns = 4000;
        init_pool_statics();
        njobs = n;
        pool_handoff.store(NULL, mo_relaxed, $);
        g.pool = &pool_handoff;
        for (int k = 0; k < JOBS; k++) {
            marks[k]($) = 0;
            g.jobs[k].ran = 0;
            g.jobs[k].mark = &marks[k];
            g.jobs[k].done = k < n ? bolts_task_create() : NULL;
            g.jobs[k].wait_on = NULL;
        }
    }
    void finish() {
        for (int k = 0; k < njobs; k++) {
            RL_ASSERT(g.jobs[k].ran == 1);
            bolts_task_destroy(g.jobs[k].done);
        }
        RL_ASSERT(shim_live_blocks() == 0);
        reset_iteration(true);
    }
};

/* relaxed-pool-two-submitters: a pool of 2 workers; two threads submit two jobs each (one of them
 * as hops from off the pool), racing the workers' spins, parks and steals; the creator
 * waits for every job, then shuts the pool down and waits for its workers to end. */
struct check_two_submitters : pool_test<check_two_submitters, 2, 2> {
    void before() { setup(4); }
    void thread(unsigned i) {
        if (i == 0) {
            bolts_pool_t *pool = bolts_pool_create(2, "relacy");
            g.pool->store(pool, mo_release, $);
            submit(pool, 0, false);
            submit(pool, 1, false);
            for (int k = 0; k < 4; k++) RL_ASSERT(bolts_task_wait(g.jobs[k].done, -1));
            RL_ASSERT(bolts_pool_shutdown(pool, true) == 0);
            bolts_pool_release(pool);
        } else {
            bolts_pool_t *pool = await_pool();
            submit(pool, 2, true);
            submit(pool, 3, true);
        }
    }
    void after() { finish(); }
};

/* relaxed-pool-one-worker: a pool of 1; one job from outside races the worker's spin and
 * park: the smallest setting of I3's store-buffering pair (the submitter's enqueue against
 * the parker's published bit, each followed by a read of the other side). */
struct check_one_worker : pool_test<check_one_worker, 1, 1> {
    void before() { setup(1); }
    void thread(unsigned i) {
        (void)i;
        bolts_pool_t *pool = bolts_pool_create(1, "relacy");
        g.pool->store(pool, mo_release, $);
        submit(pool, 0, false);
        RL_ASSERT(bolts_task_wait(g.jobs[0].done, -1));
        RL_ASSERT(bolts_pool_shutdown(pool, true) == 0);
        bolts_pool_release(pool);
    }
    void after() { finish(); }
};

/* relaxed-pool-shutdown-race: a job submitted while the pool shuts down runs exactly once (on a
 * worker, in the shutdown's sweep, or in place after a refusal: I7), and every worker
 * ends. */
struct check_shutdown_race : pool_test<check_shutdown_race, 2, 2> {
    void before() { setup(2); }
    void thread(unsigned i) {
        if (i == 0) {
            bolts_pool_t *pool = bolts_pool_create(2, "relacy");
            g.pool->store(pool, mo_release, $);
            submit(pool, 0, false);
            RL_ASSERT(bolts_pool_shutdown(pool, true) == 0);
            bolts_pool_release(pool);
        } else {
            bolts_pool_t *pool = await_pool();
            submit(pool, 1, false);
        }
    }
    void after() { finish(); }
};

/* relaxed-pool-compensation: a pool of 1; job 0 waits for the task that job 1, queued behind it,
 * completes (I6): the blocking hook brings a compensating thread that runs job 1. */
struct check_compensation : pool_test<check_compensation, 1, 3> {
    void before() {
        setup(2);
        g.jobs[0].wait_on = g.jobs[1].done;
    }
    void thread(unsigned i) {
        (void)i;
        bolts_pool_t *pool = bolts_pool_create(1, "relacy");
        g.pool->store(pool, mo_release, $);
        submit(pool, 0, false);
        submit(pool, 1, false);
        RL_ASSERT(bolts_task_wait(g.jobs[0].done, -1));
        RL_ASSERT(bolts_pool_shutdown(pool, true) == 0);
        bolts_pool_release(pool);
    }
    void after() { finish(); }
};

/* relaxed-pool-spare-exit: a pool of 1 and two blocking episodes (I6): job 0 waits for job 1,
 * queued behind it; once job 0 is done (its compensating thread may then retire to a spare,
 * time out, exit and lower hwm), job 2 waits for job 3, queued behind it. The second
 * episode's `bolts__pool_add_worker` activates the spare (racing its time-out: the state's
 * CAS decides), or starts a thread in the FREE slot it left (below hwm, before the shrink;
 * or at hwm after it), or the blocking hook's F4 wake-up brings in a compensating thread
 * still parked. Meanwhile another thread reads `job_totals` (the counters of every slot in
 * [0, hwm) plus the retired counts, under the sequence lock) and asserts that jobs run,
 * steals and parks never decrease. */
static struct {
    unsigned iterations, exited, compensated_twice, both;
} spare_paths;

struct check_spare_exit : pool_test<check_spare_exit, 2, 4> {
    rl::atomic<int> stop, stopped;
    void before() {
        setup(4);
        g.jobs[0].wait_on = g.jobs[1].done;
        g.jobs[2].wait_on = g.jobs[3].done;
        stop.store(0, mo_relaxed, $);
        stopped.store(0, mo_relaxed, $);
    }
    void thread(unsigned i) {
        if (i == 0) {
            /* When the second episode comes (below), and the spare's idle spell: 4 us (it
             * mostly exits first), 30 us (the two race) or 1 ms (it is mostly activated). */
            static const int64_t spells[] = {4000, 30000, 1000000};
            unsigned when = rl::rand(4);
            shim_spare_idle_ns = spells[rl::rand(when == 3 ? 2 : 3)];
            bolts_pool_t *pool = bolts_pool_create(1, "relacy");
            g.pool->store(pool, mo_release, $);
            submit(pool, 0, false);
            submit(pool, 1, false);
            RL_ASSERT(bolts_task_wait(g.jobs[0].done, -1));
            /* The second episode at once; or once the compensating thread has retired to a
             * spare (or parked as ACTIVE, when it went idle before job 0's worker was back:
             * then it stays so); or, if it retired, once it has also timed out and exited
             * (its exit and shrink may still be under way). Relaxed loads: scheduling
             * conditions, which order nothing the check relies on. */
            struct bolts_pool_slot *extra = &pool->slots[1];
            if (when >= 1) {
                while (atomic_load_explicit(&extra->state, memory_order_relaxed) == SLOT_ACTIVE &&
                       !bolts__pool_owner_parked(pool, extra)) {
                    rl::yield(1, $);
                }
            }
            if (when == 2) {
                while (atomic_load_explicit(&extra->state, memory_order_relaxed) == SLOT_SPARE &&
                       atomic_load_explicit(&pool->spares_exited, memory_order_relaxed) == 0) {
                    rl::yield(1, $);
                }
            }
            /* Or bring a thread in from here, as the monitor's top-up does from its own
             * thread, a few steps later: the activation races the spare's time-out (or finds
             * the slot it left). The extra thread retires again at its next idle scan. */
            if (when == 3) {
                for (int k = (int)rl::rand(48); k > 0; k--) rl::yield(1, $); /* into the spare's time-out */
                RL_ASSERT(bolts__pool_add_worker(pool));
            }
            submit(pool, 2, false);
            submit(pool, 3, false);
            for (int k = 1; k < 4; k++) RL_ASSERT(bolts_task_wait(g.jobs[k].done, -1));
            /* Once every ACTIVE worker is parked, `unblocked` is the number of ACTIVE slots:
             * an activation counted a thread that is there. Seq_cst loads of the bits, as
             * monitor_check's settle. */
            while (!bolts__pool_all_active_parked(pool)) rl::yield(1, $);
            int active = 0;
            for (uint32_t k = 0; k < atomic_load_explicit(&pool->hwm, memory_order_acquire); k++) {
                active += atomic_load_explicit(&pool->slots[k].state, memory_order_relaxed) == SLOT_ACTIVE;
            }
            RL_ASSERT(atomic_load_explicit(&pool->unblocked, memory_order_relaxed) == active);
            stop.store(1, mo_release, $);
            while (stopped.load(mo_acquire, $) == 0) rl::yield(1, $);
            bool exited = atomic_load_explicit(&pool->spares_exited, memory_order_relaxed) != 0;
            bool twice = atomic_load_explicit(&pool->compensations, memory_order_relaxed) >= 2;
            spare_paths.iterations++;
            spare_paths.exited += exited;
            spare_paths.compensated_twice += twice;
            spare_paths.both += exited && twice;
            RL_ASSERT(bolts_pool_shutdown(pool, true) == 0);
            bolts_pool_release(pool);
        } else {
            bolts_pool_t *pool = await_pool();
            uint64_t last_executed = 0, last_stolen = 0, last_parks = 0;
            /* A bounded number of reads, so that a job left queued with every worker asleep
             * leaves every thread asleep (a deadlock), not this one spinning. */
            for (int reads = 0; reads < 200 && stop.load(mo_acquire, $) == 0; reads++) {
                uint64_t submitted, executed, stolen, parks;
                job_totals(pool, &submitted, &executed, &stolen, &parks);
                RL_ASSERT(executed >= last_executed && "jobs run went down");
                RL_ASSERT(stolen >= last_stolen && "steals went down");
                RL_ASSERT(parks >= last_parks && "parks went down");
                last_executed = executed;
                last_stolen = stolen;
                last_parks = parks;
                rl::yield(1, $);
            }
            stopped.store(1, mo_release, $);
        }
    }
    void after() { finish(); }
    static void print_paths() {
        printf("paths: of %u iterations, a spare exited after its idle spell (by the end of the jobs) in %u, "
               "two compensations in %u, both in %u\n",
               spare_paths.iterations, spare_paths.exited, spare_paths.compensated_twice, spare_paths.both);
    }
};

template <class T> static bool run_check(const char *name, int iterations) {
    rl::test_params p;
    p.iteration_count = iterations;
    p.search_type = rl::random_scheduler_type;
    p.execution_depth_limit = 200000;
    printf("%s: %d iterations, random scheduler\n", name, iterations);
    fflush(stdout);
    return rl::simulate<T>(p);
}

int main(int argc, char **argv) {
    /* bolts_pool_create says on stderr, for every pool, that its monitor could not start (the stub's
     * answer); Relacy reports on stdout. */
    if (freopen("/dev/null", "w", stderr) == NULL) return 2;
    if (argc != 3) {
        fprintf(stderr, "usage: %s CHECK ITERATIONS\n", argv[0]);
        return 2;
    }
    const char *name = argv[1];
    int n = atoi(argv[2]);
    bool ok;
    if (!strcmp(name, "relaxed-pool-two-submitters")) ok = run_check<check_two_submitters>(name, n);
    else if (!strcmp(name, "relaxed-pool-one-worker")) ok = run_check<check_one_worker>(name, n);
    else if (!strcmp(name, "relaxed-pool-shutdown-race")) ok = run_check<check_shutdown_race>(name, n);
    else if (!strcmp(name, "relaxed-pool-compensation")) ok = run_check<check_compensation>(name, n);
    else if (!strcmp(name, "relaxed-pool-spare-exit")) {
        ok = run_check<check_spare_exit>(name, n);
        check_spare_exit::print_paths();
    }
    else {
        fprintf(stderr, "unknown check %s\n", name);
        return 2;
    }
    return ok ? 0 : 1;
}
