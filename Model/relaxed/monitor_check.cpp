/*
 * Relacy checks of the pool's blocked-worker monitor (invariant I12 of bolts_pool.h;
 * pool_monitor.c) under Relacy's full relaxed memory model, on the project's own C code:
 * job.c, task.c, the pool's files (shim/pool_sources.h) and pool_monitor.c compiled into
 * this file through the shim
 * (shim/relacy_shim.h: futex, clock, spin hint, allocators, per-thread variables;
 * shim/urcu/wfcqueue.h: liburcu's queue; shim/pool_stubs.h: threads as Relacy dynamic
 * threads; shim/monitor_stubs.h: the thread CPU clock and /proc reads, answered as for a
 * thread that never runs and is always asleep).
 *
 * Three tunables are set for these checks (all are overridable: BOLTS_POOL_BLOCKED_NS and
 * BOLTS_POOL_SPARE_IDLE_NS in bolts_tuning.h, BOLTS_POOL_MAX_EXTRA_THREADS in bolts_pool.h):
 * BOLTS_POOL_BLOCKED_NS is 2 us, two reads of the shim's clock, so that a job is marked
 * within a few looks instead of a thousand; BOLTS_POOL_SPARE_IDLE_NS is 4 us, so that a
 * spare's idle spell runs out within a few clock reads (the shim's timed futex wait may
 * also return at any moment, and `wait_for_wake_until` reads the clock on each round, so
 * the wait always ends) and the exit (CAS SPARE -> FREE, `shrink_range` lowering hwm and
 * folding the slot's counters) races activations and the monitor's looks;
 * BOLTS_POOL_MAX_EXTRA_THREADS is 2, which bounds the compensating threads (Relacy needs a
 * bound on dynamic threads; a thread started in a slot a spare left is one more). The
 * monitor's growth allowance (BOLTS_POOL_GROWTH_FREE, 4) then never binds.
 *
 * Usage: monitor_check CHECK ITERATIONS
 */
#include "shim/relacy_shim.h"

#define BOLTS_POOL_BLOCKED_NS 2000
#define BOLTS_POOL_SPARE_IDLE_NS 4000
#define BOLTS_POOL_MAX_EXTRA_THREADS 2

#define tls (*shim_job_tls())
#include "job.c"
#undef tls
static thread_state_t shim_job_tls_copies[16];
static thread_state_t *shim_job_tls() { return &shim_job_tls_copies[rl::thread_index()]; }

#include "task.c"
#include "shim/pool_stubs.h"

/* The pool's per-thread variables that the protocols read, one copy per Relacy thread (as in
 * pool_check.cpp, which says why the accessor is declared first). */
static struct bolts_pool_slot **shim_tl_slot();
#define bolts__pool_tl_slot (*shim_tl_slot())
#define tl_block_depth (*shim_tl_block_depth())
#include "shim/pool_sources.h"
static struct bolts_pool_slot *shim_tl_slot_copies[16];
static uint32_t shim_tl_block_depth_copies[16];
static struct bolts_pool_slot **shim_tl_slot() { return &shim_tl_slot_copies[rl::thread_index()]; }
static uint32_t *shim_tl_block_depth() { return &shim_tl_block_depth_copies[rl::thread_index()]; }

#include "shim/monitor_stubs.h"
#include "pool_monitor.c"
#undef open
#undef read
#undef close
#undef bolts__pool_tl_slot
#undef tl_block_depth

/* ---- Allocators ------------------------------------------------------------------------- */
void *bolts_pool_block_alloc(void) { return shim_alloc(BOLTS_POOL_BLOCK_SIZE, SHIM_POOL_BLOCK); }
void bolts_pool_block_free(void *block) { shim_release(block, SHIM_POOL_BLOCK, $); }
void *bolts__block_alloc(void) { return shim_alloc(BOLTS_BLOCK_SIZE, SHIM_BLOCK); }
void bolts__block_free(void *block) { shim_release(block, SHIM_BLOCK, $); }

/* ---- One iteration's state -------------------------------------------------------------- */
enum { JOBS = 2 };

/* How job 1 spends its time after a few steps (`steps`): job 2 is queued behind it on a
 * pool of one worker. */
enum job1_kind {
    STEPS,        /* nothing more: its end races the monitor's mark */
    POOL_WAIT,    /* asleep until job 2 has run, inside the hooks `bolts_task_wait` calls
                     around its sleep (I6): `bolts__pool_blocking_begin` takes a mark over */
    HIDDEN_BLOCK, /* asleep until job 2 has run: only the monitor's mark can help */
};

static struct {
    int ran[JOBS];
    bolts_task_t *done[JOBS];
    _Atomic(uint32_t) job2_ran; /* futex word of job 1's hidden block */
    enum job1_kind kind;
    int steps;
    rl::atomic<bolts_pool_t *> *pool; /* handed from the creating thread to the others */
} g;

/* Per-run figures, printed at the end: how often the explored executions reached the
 * paths the checks are about. */
static struct {
    unsigned iterations, marked, marked_twice, outstanding_at_settle, slept, woken, spare_exited;
} seen_paths;

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

static void job1_run(void *context) {
    (void)context;
    g.ran[0]++;
    for (int k = 0; k < g.steps; k++) rl::yield(1, $);
    if (g.kind != STEPS) {
        /* The hooks without bolts_task_wait itself: its spin lets the thread that a mark
         * brings in run job 2 before the hook, which then hardly ever takes a mark over. */
        if (g.kind == POOL_WAIT) bolts__pool_blocking_begin();
        /* Acquire: pairs with job 2's release. */
        while (atomic_load_explicit(&g.job2_ran, memory_order_acquire) == 0) bolts__futex_wait(&g.job2_ran, 0, -1);
        if (g.kind == POOL_WAIT) bolts__pool_blocking_end();
    }
    RL_ASSERT(bolts_task_claim(g.done[0]));
    bolts_task_publish(g.done[0], BOLTS_SUCCESS);
}

static void job2_run(void *context) {
    (void)context;
    g.ran[1]++;
    if (g.kind == STEPS) {
        /* A wait of I6 that ends at once (its task already complete), on the worker that
         * may still carry a mark from job 1 that its check after job 1 missed: the hook
         * takes it over while the monitor, seeing the worker between its jobs, may undo it. */
        bolts__pool_blocking_begin();
        bolts__pool_blocking_end();
    }
    RL_ASSERT(bolts_task_claim(g.done[1]));
    bolts_task_publish(g.done[1], BOLTS_SUCCESS);
    atomic_store_explicit(&g.job2_ran, 1, memory_order_release);
    bolts__futex_wake(&g.job2_ran, 1);
}

static bolts_pool_t *await_pool(void) {
    bolts_pool_t *pool;
    while ((pool = g.pool->load(mo_acquire, $)) == NULL) rl::yield(1, $);
    return pool;
}

/* Whether no slot's I6 flag is set: `blocked` is the flag of a wait of I6, written only by
 * its worker (bolts__pool_blocking_begin/end), so with no such wait under way it is clear
 * on every slot, past hwm too. A mark written there (as `stall` did before the fix) can
 * land after the job's end cleared it, and stay set for good. */
static void assert_no_blocked_flag(bolts_pool_t *pool) {
    for (uint32_t i = 0; i < pool->capacity; i++) {
        RL_ASSERT(!atomic_load_explicit(&pool->slots[i].blocked, memory_order_relaxed));
    }
}

template <class Derived, int Threads, int Dynamic> struct monitor_test : rl::test_suite<Derived, Threads> {
    static const rl::thread_id_t dynamic_thread_count = Dynamic;
    rl::atomic<bolts_pool_t *> pool_handoff;
    void setup(void *(*played)(void *)) {
        reset_iteration(false);
        shim_dynamic_threads_left = Dynamic;
        shim_counted_sleeps = 0;
        shim_counted_wakes = 0;
        init_pool_statics();
        shim_played_thread = played;
        pool_handoff.store(NULL, mo_relaxed, $);
        g.pool = &pool_handoff;
        atomic_init(&g.job2_ran, 0);
        g.steps = 0;
        for (int k = 0; k < JOBS; k++) {
            g.ran[k] = 0;
            g.done[k] = bolts_task_create();
        }
        seen_paths.iterations++;
    }
    /* Creates the pool of one worker and queues job 1, then job 2 behind it. */
    bolts_pool_t *start(void) {
        bolts_pool_t *pool = bolts_pool_create(1, "relacy");
        g.pool->store(pool, mo_release, $);
        bolts_pool_submit(pool, bolts_job_create(job1_run, NULL));
        bolts_pool_submit(pool, bolts_job_create(job2_run, NULL));
        return pool;
    }
    void await_jobs(void) {
        for (int k = 0; k < JOBS; k++) RL_ASSERT(bolts_task_wait(g.done[k], -1));
    }
    void finish() {
        for (int k = 0; k < JOBS; k++) {
            RL_ASSERT(g.ran[k] == 1);
            bolts_task_destroy(g.done[k]);
        }
        RL_ASSERT(shim_live_blocks() == 0);
        reset_iteration(true);
    }
};

/* relaxed-monitor-hidden-block: a pool of one worker and its monitor (monitor_main, as
 * bolts_pool_create starts it). Job 1 sleeps on a futex until job 2, queued behind it, has
 * run: a block the pool cannot see, so job 2 runs only if the monitor marks the worker and
 * brings a thread in. The creator queues the jobs either at once or once the worker has parked
 * (so that the claim that wakes it races the monitor's sleep). A monitor that sleeps while
 * the worker is out of its park (the store-buffering pair of `sleep_while_parked` and
 * `bolts__pool_monitor_resume`) never looks again: every thread then sleeps for good, a
 * deadlock. Then shutdown ends every thread, the monitor included. */
struct check_hidden_block : monitor_test<check_hidden_block, 1, 4> {
    void before() {
        setup(NULL);
        g.kind = HIDDEN_BLOCK;
    }
    void thread(unsigned i) {
        (void)i;
        bool after_park = rl::rand(2) != 0;
        bolts_pool_t *pool = bolts_pool_create(1, "relacy");
        g.pool->store(pool, mo_release, $);
        shim_counted_word = &pool->monitor_asleep;
        if (after_park) {
            /* Relaxed: a scheduling condition, which orders nothing the check relies on. */
            while ((atomic_load_explicit(&pool->parked[0], memory_order_relaxed) & 1) == 0) rl::yield(1, $);
        }
        bolts_pool_submit(pool, bolts_job_create(job1_run, NULL));
        bolts_pool_submit(pool, bolts_job_create(job2_run, NULL));
        await_jobs();
        if (atomic_load_explicit(&pool->stalls, memory_order_relaxed) != 0) seen_paths.marked++;
        if (shim_counted_sleeps != 0) seen_paths.slept++;
        if (shim_counted_wakes != 0) seen_paths.woken++; /* by a worker: the pool is still open */
        RL_ASSERT(bolts_pool_shutdown(pool, true) == 0);
        /* Every worker has ended (each job's end, and its check, happened before): no wait
         * of I6 ran here, so no slot's flag is set. */
        assert_no_blocked_flag(pool);
        if (atomic_load_explicit(&pool->spares_exited, memory_order_relaxed) != 0) seen_paths.spare_exited++;
        bolts_pool_release(pool);
    }
    void after() { finish(); }
    static void print_paths() {
        printf("paths: of %u iterations, the monitor marked the worker in %u, slept in %u, was woken by a "
               "worker leaving its park in %u; a spare exited after its idle spell in %u\n",
               seen_paths.iterations, seen_paths.marked, seen_paths.slept, seen_paths.woken, seen_paths.spare_exited);
    }
};

/* Whether the monitor's marks are all undone and counted back once: `unblocked` equals the
 * ACTIVE slots and no `stalled` flag is set; and no I6 flag is left. */
static void assert_settled_counts(bolts_pool_t *pool) {
    uint32_t hwm = atomic_load_explicit(&pool->hwm, memory_order_acquire);
    int active = 0;
    for (uint32_t i = 0; i < hwm; i++) {
        if (atomic_load_explicit(&pool->slots[i].state, memory_order_relaxed) == SLOT_ACTIVE) active++;
        RL_ASSERT(atomic_load_explicit(&pool->slots[i].stalled, memory_order_relaxed) == 0);
    }
    RL_ASSERT(atomic_load_explicit(&pool->unblocked, memory_order_relaxed) == active);
    assert_no_blocked_flag(pool);
}

/* relaxed-monitor-accounting: a pool of one worker whose monitor thread this check plays,
 * with pool_monitor.c's own `look` (and so `stall`, `bolts__pool_stall_over` and
 * `bolts__pool_add_worker`): it looks at the worker until both jobs have run, racing
 * job 1's end (after some steps; or after a wait for job 2 inside I6's hooks, whose
 * `bolts__pool_blocking_begin` takes a mark over; or after a hidden block that only the
 * mark compensates) with the worker's check after its job, job 2's wait of I6 taking over a
 * mark that check missed while the monitor, seeing the worker between its jobs, undoes it,
 * and compensating threads brought in and retiring. Then, once every ACTIVE worker is parked, one more look (the
 * monitor's undo for a worker out of its job, as its next look would do), and the counts
 * must have settled: `unblocked` equals the ACTIVE slots and every `stalled` flag is 0,
 * each mark undone exactly once. Then shutdown ends every worker. */
struct check_accounting : monitor_test<check_accounting, 2, 3> {
    rl::atomic<int> jobs_done, settled;
    void before() {
        setup(monitor_main);
        jobs_done.store(0, mo_relaxed, $);
        settled.store(0, mo_relaxed, $);
    }
    void thread(unsigned i) {
        if (i == 0) {
            g.kind = (enum job1_kind)rl::rand(3);
            g.steps = 6 * (int)rl::rand(5);
            bolts_pool_t *pool = start();
            await_jobs();
            jobs_done.store(1, mo_release, $);
            while (settled.load(mo_acquire, $) == 0) rl::yield(1, $);
            RL_ASSERT(bolts_pool_shutdown(pool, true) == 0);
            bolts_pool_release(pool);
        } else {
            bolts_pool_t *pool = await_pool();
            struct sighting *sightings = (struct sighting *)calloc(pool->capacity, sizeof *sightings);
            /* monitor_main's loop, without its sleeps: a look, the growth rule, the top-up. */
            struct growth growth = {};
            growth.allowance = BOLTS_POOL_GROWTH_FREE;
            int64_t previous = bolts__now_ns();
            while (jobs_done.load(mo_acquire, $) == 0) {
                int64_t now = bolts__now_ns();
                struct look found = look(pool, sightings, now, previous);
                previous = now;
                judge_growth(pool, &growth, now, &found);
                if (found.marked) top_up(pool, &growth);
                rl::yield(1, $);
            }
            /* Seq_cst loads of the bits (and of SPARE): each read of a bit synchronizes
             * with the worker's seq_cst publication, after its job and its check. */
            while (!bolts__pool_all_active_parked(pool)) rl::yield(1, $);
            uint64_t stalls = atomic_load_explicit(&pool->stalls, memory_order_relaxed);
            if (stalls != 0) seen_paths.marked++;
            if (stalls > 1) seen_paths.marked_twice++;
            for (uint32_t k = 0; k < atomic_load_explicit(&pool->hwm, memory_order_acquire); k++) {
                if (atomic_load_explicit(&pool->slots[k].stalled, memory_order_relaxed) != 0) {
                    seen_paths.outstanding_at_settle++;
                }
            }
            look(pool, sightings, bolts__now_ns(), previous);
            assert_settled_counts(pool);
            if (atomic_load_explicit(&pool->spares_exited, memory_order_relaxed) != 0) seen_paths.spare_exited++;
            settled.store(1, mo_release, $);
            free(sightings);
            bolts__pool_unref(pool); /* the reference `bolts__pool_monitor_start` took for it */
        }
    }
    void after() { finish(); }
    static void print_paths() {
        printf("paths: of %u iterations, a mark in %u (two or more in %u), a mark left for the monitor's "
               "undo at the settle in %u, a spare exited after its idle spell by the settle in %u\n",
               seen_paths.iterations, seen_paths.marked, seen_paths.marked_twice,
               seen_paths.outstanding_at_settle, seen_paths.spare_exited);
    }
};

template <class T> static bool run_check(const char *name, int iterations) {
    rl::test_params p;
    p.iteration_count = iterations;
    p.search_type = rl::random_scheduler_type;
    p.execution_depth_limit = 200000;
    printf("%s: %d iterations, random scheduler\n", name, iterations);
    fflush(stdout);
    bool ok = rl::simulate<T>(p);
    T::print_paths();
    return ok;
}

int main(int argc, char **argv) {
    /* The pool warns on stderr when a compensating thread finds no room; Relacy reports
     * on stdout. */
    if (freopen("/dev/null", "w", stderr) == NULL) return 2;
    if (argc != 3) {
        fprintf(stderr, "usage: %s CHECK ITERATIONS\n", argv[0]);
        return 2;
    }
    const char *name = argv[1];
    int n = atoi(argv[2]);
    bool ok;
    if (!strcmp(name, "relaxed-monitor-hidden-block")) ok = run_check<check_hidden_block>(name, n);
    else if (!strcmp(name, "relaxed-monitor-accounting")) ok = run_check<check_accounting>(name, n);
    else {
        fprintf(stderr, "unknown check %s\n", name);
        return 2;
    }
    return ok ? 0 : 1;
}
