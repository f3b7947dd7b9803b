/*
 * Relacy checks of cancellation (token.c) under Relacy's full relaxed memory model, on the
 * project's own C code, compiled into this file through the shim (shim/relacy_shim.h:
 * futex, clock, spin hint, allocators, per-thread identity; shim/urcu/: liburcu's memb
 * flavour and RCU list as liburcu specifies them, with a reclaimer thread that runs each
 * call_rcu callback as soon as a grace period allows).
 *
 * Every check asserts, in every explored execution:
 * - each handler runs at most once, exactly once when its registration was live at the
 *   cancel, never after its dispose returned true; each context is released exactly once;
 * - visibility (Relacy variables, so a missing happens-before edge is a data race): a
 *   handler sees what the canceller did before `cancel`; a `cancel` that returns, and a
 *   dispose that returns false, see the handler's effects;
 * - no block is used after its free (registrations freed after a grace period while the
 *   walk may still read them) or freed twice, and nothing is left once the token is
 *   released;
 * - no thread sleeps for ever (a disposer waiting for a running handler, a second
 *   canceller waiting for NOTIFIED).
 *
 * Usage: token_check CHECK ITERATIONS
 */
#include "shim/relacy_shim.h"

/* token.c's thread identity is the address of a thread-local byte: one per Relacy thread
 * (the declaration becomes one of the accessor function below). */
#define thread_tag (*shim_thread_tag())
#include "token.c"
#undef thread_tag
static char shim_thread_tags[8];
static char *shim_thread_tag() { return &shim_thread_tags[rl::thread_index()]; }

#include "shim/runtime_stubs.h"

enum { REGS = 2 };

struct handler_ctx {
    int ran;
    int released;
    unsigned runner;      /* the Relacy thread that ran it */
    rl::var<int> *effect; /* written by the handler */
};

static struct {
    bolts_token_t *token;
    rl::var<int> *before_cancel; /* written by the canceller before cancel() */
    handler_ctx h[REGS];
    bolts_token_registration_t *r[REGS];
} g;

static void handler_run(void *context) {
    handler_ctx *h = (handler_ctx *)context;
    RL_ASSERT(h->released == 0);
    RL_ASSERT((*g.before_cancel)($) == 1);
    (*h->effect)($) = 1;
    h->runner = rl::thread_index();
    h->ran++;
}

static void handler_release(void *context) {
    handler_ctx *h = (handler_ctx *)context;
    h->released++;
}

template <class Derived, int Threads> struct token_test : rl::test_suite<Derived, Threads + 1> {
    rl::var<int> before_cancel;
    rl::var<int> effects[REGS];
    static const unsigned workers = Threads;
    void before() {
        shim_iteration_reset(false);
        shim_rcu_reset();
        g.before_cancel = &before_cancel;
        before_cancel($) = 0;
        for (int i = 0; i < REGS; i++) {
            g.h[i].ran = 0;
            g.h[i].released = 0;
            g.h[i].effect = &effects[i];
            effects[i]($) = 0;
            g.r[i] = NULL;
        }
        g.token = bolts_token_create();
    }
    /* Called by each check's `thread`: the last thread is liburcu's reclaimer. */
    bool reclaimer(unsigned i) {
        if (i != workers) return false;
        shim_rcu_reclaimer(workers, workers + 1);
        return true;
    }
    void cancel_from_here() {
        before_cancel($) = 1;
        bolts_token_cancel(g.token);
        /* cancel returned: every handler its walk ran did so before, visibly (a handler
         * registered after CANCELLED runs in its register call, unordered with this). */
        for (int k = 0; k < REGS; k++)
            if (g.h[k].ran && g.h[k].runner == rl::thread_index()) RL_ASSERT(effects[k]($) == 1);
    }
    void finish() {
        for (int k = 0; k < REGS; k++) {
            RL_ASSERT(g.h[k].ran <= 1);
            RL_ASSERT(g.h[k].released <= 1);
        }
        bolts_token_release(g.token);
        for (int k = 0; k < REGS; k++) RL_ASSERT(g.h[k].released == 1 || g.r[k] == NULL);
        RL_ASSERT(shim_live_blocks() == 0);
        shim_iteration_reset(true);
    }
};

/* relaxed-token-register-vs-cancel: two registrations race a cancel; each handler runs exactly
 * once (in the walk, or at once in register when the token is already cancelled). */
struct check_register_vs_cancel : token_test<check_register_vs_cancel, 3> {
    void thread(unsigned i) {
        if (reclaimer(i)) return;
        if (i < REGS) {
            g.r[i] = bolts_token_register(g.token, handler_run, handler_release, &g.h[i]);
            if (g.r[i] != NULL) bolts_token_registration_release(g.r[i]);
            else RL_ASSERT(g.h[i].ran == 1 && g.h[i].released == 1);
        } else {
            cancel_from_here();
        }
        shim_rcu_worker_done();
    }
    void after() {
        for (int k = 0; k < REGS; k++) RL_ASSERT(g.h[k].ran == 1 && g.h[k].released == 1);
        finish();
    }
};

/* relaxed-token-dispose: two registrations (made before the threads start), a cancel, and a
 * dispose of each racing it. A dispose that returns false saw the handler run (it waits
 * for a handler running on the canceller); one that returns true means it never runs. A
 * node unlinked while the walk may read it is freed after a grace period. */
struct check_dispose : token_test<check_dispose, 3> {
    bool disposed[REGS];
    void before() {
        token_test::before();
        for (int k = 0; k < REGS; k++) {
            g.r[k] = bolts_token_register(g.token, handler_run, handler_release, &g.h[k]);
            disposed[k] = false;
        }
    }
    void thread(unsigned i) {
        if (reclaimer(i)) return;
        if (i < REGS) {
            disposed[i] = bolts_token_registration_dispose(g.r[i]);
            if (!disposed[i]) {
                RL_ASSERT(g.h[i].ran == 1);
                RL_ASSERT(effects[i]($) == 1);
            }
            bolts_token_registration_release(g.r[i]);
        } else {
            cancel_from_here();
        }
        shim_rcu_worker_done();
    }
    void after() {
        for (int k = 0; k < REGS; k++) RL_ASSERT(g.h[k].ran == (disposed[k] ? 0 : 1) && g.h[k].released == 1);
        finish();
    }
};

/* relaxed-token-two-cancellers: a second cancel waits for NOTIFIED and returns with the handlers'
 * effects visible; a registration is disposed by a handler-free thread meanwhile. */
struct check_two_cancellers : token_test<check_two_cancellers, 2> {
    void before() {
        token_test::before();
        for (int k = 0; k < REGS; k++) g.r[k] = bolts_token_register(g.token, handler_run, handler_release, &g.h[k]);
        before_cancel($) = 1;
    }
    void thread(unsigned i) {
        if (reclaimer(i)) return;
        bolts_token_cancel(g.token);
        for (int k = 0; k < REGS; k++) {
            RL_ASSERT(g.h[k].ran == 1);
            RL_ASSERT(effects[k]($) == 1);
        }
        shim_rcu_worker_done();
    }
    void after() {
        for (int k = 0; k < REGS; k++) bolts_token_registration_release(g.r[k]);
        finish();
    }
};

/* relaxed-token-dispose-vs-cancel: the token's dispose races its cancel: each handler runs or is
 * released unrun, once; a token disposed first never becomes cancelled. */
struct check_dispose_vs_cancel : token_test<check_dispose_vs_cancel, 2> {
    void before() {
        token_test::before();
        for (int k = 0; k < REGS; k++) g.r[k] = bolts_token_register(g.token, handler_run, handler_release, &g.h[k]);
    }
    void thread(unsigned i) {
        if (reclaimer(i)) return;
        if (i == 0) cancel_from_here();
        else bolts_token_dispose(g.token);
        shim_rcu_worker_done();
    }
    void after() {
        bool cancelled = bolts_token_is_cancelled(g.token);
        for (int k = 0; k < REGS; k++) {
            RL_ASSERT(g.h[k].released == 1);
            if (!cancelled) RL_ASSERT(g.h[k].ran == 0);
        }
        for (int k = 0; k < REGS; k++) bolts_token_registration_release(g.r[k]);
        finish();
    }
};

template <class T> static bool run_check(const char *name, int iterations) {
    rl::test_params p;
    p.iteration_count = iterations;
    p.search_type = rl::random_scheduler_type;
    p.execution_depth_limit = 100000;
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
    if (!strcmp(name, "relaxed-token-register-vs-cancel")) ok = run_check<check_register_vs_cancel>(name, n);
    else if (!strcmp(name, "relaxed-token-dispose")) ok = run_check<check_dispose>(name, n);
    else if (!strcmp(name, "relaxed-token-two-cancellers")) ok = run_check<check_two_cancellers>(name, n);
    else if (!strcmp(name, "relaxed-token-dispose-vs-cancel")) ok = run_check<check_dispose_vs_cancel>(name, n);
    else {
        fprintf(stderr, "unknown check %s\n", name);
        return 2;
    }
    return ok ? 0 : 1;
}
