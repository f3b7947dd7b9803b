/*
 * Relacy checks of the task state word and continuation stack (task.c) and of the
 * trampoline it dispatches through (job.c), under Relacy's full relaxed memory model, on
 * the project's own C code: task.c and job.c are compiled into this file through the shim
 * (shim/relacy_shim.h says what it maps and what it models: the futex system call, the
 * clock, the spin hint, the allocators, per-thread variables). Also the whenAll join
 * (Sources/Bolts/Task+WhenAll.swift, `_Join.waitForNext`) driven through the C functions it
 * calls, and the whenAnySuccess countdown's one read-modify-write.
 *
 * Every check asserts, in every explored execution:
 * - each job runs exactly once (counted), and no block is freed twice or used after its
 *   free; the blocks the runtime owns are all freed by the end;
 * - visibility: what the completer wrote before `publish` (a Relacy variable standing for
 *   the payload) and what each adder wrote before `add` (one per job) are read by the job
 *   without a data race, i.e. with a happens-before edge that the C code's orders provide;
 * - registration order for one thread's jobs;
 * - no thread blocks for ever (Relacy reports a deadlock when every thread sleeps).
 *
 * Usage: task_check CHECK ITERATIONS   (CHECK: one of the names `main` accepts)
 */
#include "shim/relacy_shim.h"

/* job.c's trampoline state is per thread (a TLS block): one copy per Relacy thread. The
 * declaration `static __thread thread_state_t tls …` becomes a declaration of the accessor
 * function below, every use a call of it. */
#define tls (*shim_job_tls())
#include "job.c"
#undef tls
static thread_state_t shim_job_tls_copies[8];
static thread_state_t *shim_job_tls() { return &shim_job_tls_copies[rl::thread_index()]; }

#include "task.c"
#include "shim/runtime_stubs.h"

#ifndef WHEN_ANY_ORDER
#error "run.sh passes WHEN_ANY_ORDER: the order of _Countdown.arrive in Task+WhenAll.swift"
#endif

/* ---- Shared state of one iteration ---------------------------------------------------- */

enum { MAX_JOBS = 8 };

struct probe {
    int id;
    int ran;            /* times its job ran */
    int seq;            /* position in the global run order */
    rl::var<int> *mark; /* written by its adder before the add */
};

static struct {
    bolts_task_t *task, *task2;
    rl::var<int> *payload;  /* written by the completer before publish */
    rl::var<int> *payload2; /* the same for task2 */
    probe probes[MAX_JOBS];
    int nprobes;
    int run_seq;
    int winners;
    int expect_outcome;
} g;

static void reset_iteration(bool destroy) {
    shim_iteration_reset(destroy);
    memset(shim_job_tls_copies, 0, sizeof shim_job_tls_copies);
    g.task = g.task2 = NULL;
    g.nprobes = 0;
    g.run_seq = 0;
    g.winners = 0;
    g.expect_outcome = BOLTS_SUCCESS;
}

/* A job that checks what it may see: the task complete, the payload and its adder's mark
 * written before. */
static void probe_job(void *context) {
    probe *p = (probe *)context;
    RL_ASSERT(bolts_task_state(g.task) != BOLTS_PENDING);
    RL_ASSERT((*g.payload)($) == 42);
    RL_ASSERT((*p->mark)($) == p->id);
    p->ran++;
    p->seq = g.run_seq++;
}

static probe *new_probe(void) {
    probe *p = &g.probes[g.nprobes];
    p->id = g.nprobes + 1;
    p->ran = 0;
    p->seq = -1;
    g.nprobes++;
    return p;
}

/* Adds a job through the public API, after writing the probe's mark. */
static void add_probe(bolts_task_t *task, probe *p) {
    (*p->mark)($) = p->id;
    bolts_task_add(task, bolts_job_create(probe_job, p));
}

static void complete(bolts_task_t *task, rl::var<int> *payload, int value, bolts_outcome_t outcome) {
    if (bolts_task_claim(task)) {
        (*payload)($) = value;
        g.winners++;
        bolts_task_publish(task, outcome);
    }
}

template <class Derived, int Threads> struct task_test : rl::test_suite<Derived, Threads> {
    rl::var<int> payload, payload2;
    rl::var<int> marks[MAX_JOBS];
    void before() {
        reset_iteration(false);
        g.payload = &payload;
        g.payload2 = &payload2;
        for (int i = 0; i < MAX_JOBS; i++) g.probes[i].mark = &marks[i];
        payload($) = 0;
        payload2($) = 0;
        g.task = bolts_task_create();
    }
    void check_all_ran_once_in_order() {
        for (int i = 0; i < g.nprobes; i++) RL_ASSERT(g.probes[i].ran == 1);
    }
    void finish() {
        if (g.task) bolts_task_destroy(g.task);
        if (g.task2) bolts_task_destroy(g.task2);
        g.task = g.task2 = NULL;
        RL_ASSERT(shim_live_blocks() == 0);
        reset_iteration(true);
    }
};

/* relaxed-task-adders: two adders (the first adds two jobs) race one completer. */
struct check_adders : task_test<check_adders, 3> {
    probe *a1, *a2, *b1;
    void before() {
        task_test::before();
        a1 = new_probe();
        a2 = new_probe();
        b1 = new_probe();
    }
    void thread(unsigned i) {
        if (i == 0) {
            add_probe(g.task, a1);
            add_probe(g.task, a2);
        } else if (i == 1) {
            add_probe(g.task, b1);
        } else {
            complete(g.task, &payload, 42, BOLTS_SUCCESS);
        }
    }
    void after() {
        check_all_ran_once_in_order();
        RL_ASSERT(a1->seq < a2->seq); /* one thread's jobs run in its registration order */
        RL_ASSERT(bolts_task_settled(g.task));
        finish();
    }
};

/* relaxed-task-race: three completers (success, error, cancel) race; one wins; each loser waits
 * for the task and then reads the winner's payload. Plus an adder. */
struct check_race : task_test<check_race, 3> {
    probe *a;
    void before() {
        task_test::before();
        a = new_probe();
    }
    void thread(unsigned i) {
        if (i == 0) add_probe(g.task, a);
        if (bolts_task_claim(g.task)) {
            payload($) = 42;
            g.winners++;
            bolts_task_publish(g.task, (bolts_outcome_t)(BOLTS_SUCCESS + i));
            return;
        }
        RL_ASSERT(bolts_task_wait(g.task, -1));
        RL_ASSERT(bolts_task_state(g.task) != BOLTS_PENDING);
        RL_ASSERT(payload($) == 42);
    }
    void after() {
        RL_ASSERT(g.winners == 1);
        check_all_ran_once_in_order();
        finish();
    }
};

/* Waits (relaxed, yielding) until the waiter thread has allocated its record, i.e. is
 * past its spin and about to push: the `-sleep` checks complete only then, so that every
 * execution takes the push, sleep and wake path (most completions otherwise land during
 * the spin). */
static void await_waiter_past_spin(void) {
    while (shim_waiter_allocated->load(mo_relaxed, $) == 0) rl::yield(1, $);
}

/* relaxed-task-waiter: an untimed waiter, an adder and a completer; the waiter returns (no lost
 * wake-up) and sees the payload; its record is freed once. relaxed-task-waiter-sleep: the
 * completer starts once the waiter is past its spin. */
template <bool Sleep> struct check_waiter : task_test<check_waiter<Sleep>, 3> {
    typedef task_test<check_waiter<Sleep>, 3> base;
    probe *a;
    rl::atomic<int> allocated;
    void before() {
        base::before();
        a = new_probe();
        allocated.store(0, mo_relaxed, $);
        shim_waiter_allocated = Sleep ? &allocated : NULL;
    }
    void thread(unsigned i) {
        if (i == 0) {
            add_probe(g.task, a);
        } else if (i == 1) {
            if (Sleep) await_waiter_past_spin();
            complete(g.task, &this->payload, 42, BOLTS_SUCCESS);
        } else {
            RL_ASSERT(bolts_task_wait(g.task, -1));
            RL_ASSERT(this->payload($) == 42);
        }
    }
    void after() {
        shim_waiter_allocated = NULL;
        this->check_all_ran_once_in_order();
        this->finish();
    }
};

/* relaxed-task-timed-waiter: a wait that may give up (timeout of a few clock reads; the modelled
 * futex may also time out at any moment) while the completer fires: the waiter record is
 * freed exactly once, by whichever side drops the last reference. */
template <bool Sleep> struct check_timed_waiter : task_test<check_timed_waiter<Sleep>, 3> {
    typedef task_test<check_timed_waiter<Sleep>, 3> base;
    probe *a;
    rl::atomic<int> allocated;
    void before() {
        base::before();
        a = new_probe();
        allocated.store(0, mo_relaxed, $);
        shim_waiter_allocated = Sleep ? &allocated : NULL;
    }
    void thread(unsigned i) {
        if (i == 0) {
            add_probe(g.task, a);
        } else if (i == 1) {
            if (Sleep) await_waiter_past_spin();
            complete(g.task, &this->payload, 42, BOLTS_SUCCESS);
        } else {
            if (bolts_task_wait(g.task, 3000)) RL_ASSERT(this->payload($) == 42);
        }
    }
    void after() {
        shim_waiter_allocated = NULL;
        this->check_all_ran_once_in_order();
        this->finish();
    }
};

/* relaxed-task-trampoline: thread 0 nests synchronous dispatches to BOLTS_INLINE_DEPTH, adds a
 * continuation there (run inline at publish, or deferred to its trampoline queue when the
 * task is already settled, and run when the outer level unwinds), then waits on a second
 * task (finding F2's case: the waiter's job must not be deferred to the queue it cannot
 * drain while it sleeps). Threads 1 and 2 complete the two tasks. */
static probe *deep_probe;
static int depth_reached;
static void nest(void *context) {
    (void)context;
    if (bolts_trampoline_depth() < BOLTS_INLINE_DEPTH) {
        bolts_dispatch(bolts_job_create(nest, NULL));
        return;
    }
    depth_reached = bolts_trampoline_depth();
    add_probe(g.task, deep_probe);
    RL_ASSERT(bolts_task_wait(g.task2, -1));
    RL_ASSERT((*g.payload2)($) == 7);
}
struct check_trampoline : task_test<check_trampoline, 3> {
    void before() {
        task_test::before();
        g.task2 = bolts_task_create();
        deep_probe = new_probe();
        depth_reached = 0;
    }
    void thread(unsigned i) {
        if (i == 0) {
            bolts_dispatch(bolts_job_create(nest, NULL));
            RL_ASSERT(bolts_trampoline_depth() == 0);
        } else if (i == 1) {
            complete(g.task, &payload, 42, BOLTS_SUCCESS);
        } else {
            complete(g.task2, &payload2, 7, BOLTS_SUCCESS);
        }
    }
    void after() {
        RL_ASSERT(depth_reached == BOLTS_INLINE_DEPTH);
        check_all_ran_once_in_order();
        finish();
    }
};

/* relaxed-whenall-join: `_Join.waitForNext` (Task+WhenAll.swift) over two inputs, each completed
 * by its own thread while thread 2 starts the join. Transcribed from the Swift method, line
 * for line, onto the C calls it makes (`bolts_task_state` for `_TaskRef.outcome`,
 * `bolts_job_create`/`bolts_task_add` for `_waitForNext`): its orders are those C calls'.
 * `remaining` is a plain Swift field, so it is a Relacy variable here: the claim of the
 * class's comment (the add's release and the completion's acquire order it) is checked
 * as a data race. `onDone` reads both inputs' payloads. */
struct join_state {
    bolts_task_t *inputs[2];
    rl::var<int> *payloads[2];
    rl::var<int> remaining;
    int done;
};
static join_state *the_join;
static void join_wait_for_next(join_state *j);
static void join_job(void *context) { join_wait_for_next((join_state *)context); }
static void join_wait_for_next(join_state *j) {
    int index = j->remaining($);
    bolts_task_t *pending = NULL;
    while (index > 0) {
        bolts_task_t *input = j->inputs[index - 1];
        if (bolts_task_state(input) == BOLTS_PENDING) {
            pending = input;
            break;
        }
        index -= 1;
    }
    if (pending == NULL) {
        /* onDone: every input complete, its payload visible. */
        for (int k = 0; k < 2; k++) {
            RL_ASSERT(bolts_task_state(j->inputs[k]) == BOLTS_SUCCESS);
            RL_ASSERT((*j->payloads[k])($) == 10 + k);
        }
        j->done++;
        return;
    }
    j->remaining($) = index - 1;
    bolts_task_add(pending, bolts_job_create(join_job, j));
}
struct check_whenall_join : task_test<check_whenall_join, 3> {
    join_state join;
    void before() {
        task_test::before();
        g.task2 = bolts_task_create();
        join.inputs[0] = g.task;
        join.inputs[1] = g.task2;
        join.payloads[0] = &payload;
        join.payloads[1] = &payload2;
        join.remaining($) = 2;
        join.done = 0;
        the_join = &join;
    }
    void thread(unsigned i) {
        if (i == 0) complete(g.task, &payload, 10, BOLTS_SUCCESS);
        else if (i == 1) complete(g.task2, &payload2, 11, BOLTS_SUCCESS);
        else join_wait_for_next(&join);
    }
    void after() {
        RL_ASSERT(join.done == 1);
        finish();
    }
};

/* relaxed-whenany-countdown: `_Countdown.arrive` (Task+WhenAll.swift) is one Swift atomic RMW,
 * `remaining.wrappingSubtract(1, ordering: …)`, with no C function to compile: it is this
 * fetch_sub, with the order run.sh reads from the Swift source (WHEN_ANY_ORDER). Each of
 * two arrivals reads its input's outcome first (the closure's `task._outcome`, then
 * `_markObservedIfFaulted`); the last arrival's `_finishFailed` reads every input's: those
 * reads must not race the inputs' completions. */
struct check_whenany_countdown : task_test<check_whenany_countdown, 2> {
    rl::atomic<long> remaining;
    void before() {
        task_test::before();
        g.task2 = bolts_task_create();
        remaining.store(2, mo_relaxed, $);
    }
    void thread(unsigned i) {
        bolts_task_t *mine = i == 0 ? g.task : g.task2;
        complete(mine, i == 0 ? &payload : &payload2, 20 + (int)i, BOLTS_ERROR);
        /* The arrival's job, run after its input completed (here on the completer). */
        RL_ASSERT(bolts_task_state(mine) == BOLTS_ERROR);
        RL_ASSERT((i == 0 ? payload : payload2)($) == 20 + (int)i);
        if (remaining.fetch_sub(1, WHEN_ANY_ORDER, $) - 1 == 0) {
            /* _finishFailed: reads the error of every input. */
            RL_ASSERT(bolts_task_state(g.task) == BOLTS_ERROR && bolts_task_state(g.task2) == BOLTS_ERROR);
            RL_ASSERT(payload($) == 20 && payload2($) == 21);
        }
    }
    void after() { finish(); }
};

template <class T> static bool run_check(const char *name, int iterations) {
    rl::test_params p;
    p.iteration_count = iterations;
    p.search_type = rl::random_scheduler_type;
    p.execution_depth_limit = 100000;
    p.output_history = false; /* a failure is replayed once, with its history printed */
    printf("%s: %d iterations, random scheduler\n", name, iterations);
    fflush(stdout);
    return rl::simulate<T>(p);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s CHECK ITERATIONS\n", argv[0]);
        return 2;
    }
    const char *name = argv[1];
    int n = atoi(argv[2]);
    bool ok;
    if (!strcmp(name, "relaxed-task-adders")) ok = run_check<check_adders>(name, n);
    else if (!strcmp(name, "relaxed-task-race")) ok = run_check<check_race>(name, n);
    else if (!strcmp(name, "relaxed-task-waiter")) ok = run_check<check_waiter<false>>(name, n);
    else if (!strcmp(name, "relaxed-task-waiter-sleep")) ok = run_check<check_waiter<true>>(name, n);
    else if (!strcmp(name, "relaxed-task-timed-waiter")) ok = run_check<check_timed_waiter<false>>(name, n);
    else if (!strcmp(name, "relaxed-task-timed-waiter-sleep")) ok = run_check<check_timed_waiter<true>>(name, n);
    else if (!strcmp(name, "relaxed-task-trampoline")) ok = run_check<check_trampoline>(name, n);
    else if (!strcmp(name, "relaxed-whenall-join")) ok = run_check<check_whenall_join>(name, n);
    else if (!strcmp(name, "relaxed-whenany-countdown")) ok = run_check<check_whenany_countdown>(name, n);
    else {
        fprintf(stderr, "unknown check %s\n", name);
        return 2;
    }
    return ok ? 0 : 1;
}
