/*
 * Model of the task state machine and continuation stack of CSupport/CBoltsRuntime/task.c
 * (with the parts of job.c it calls: job_invoke, run_level, bolts_dispatch).
 *
 * Each atomic operation of the C code is one Promela step (an `atomic` block that only
 * reads and writes the one atomic word); each plain field is a plain variable, read and
 * written in steps of its own. Citations are "function (file:line)" against the tree the
 * model was last checked with (commit 53a190c); the function names are the anchor if the
 * lines drift.
 *
 * Processes:
 *   Completer(v)  trySet racing trySet: bolts_task_claim, then (winner only) the outcome
 *                 store and bolts_task_publish, which dispatches the stack and then every
 *                 batch pushed while it was dispatching, until it can settle the word to
 *                 DONE. v = 1 success, 2 error, 3 cancelled: one of them is the canceller.
 *   Adder(a)      bolts_task_add of its continuation job: push (CAS), or run it inline when
 *                 the task has settled. Adder 0 adds a second job afterwards when SEQ=1
 *                 (two registrations in program order on one thread).
 *   Waiter        bolts_task_wait: the refcounted waiter job, the futex-style sleep, and
 *                 (WAITER=2) a timed wait that may give up.
 *   init          starts everyone, then plays the owner: once every other process is gone
 *                 it destroys the task (bolts_task_destroy) and checks the end-of-run
 *                 properties.
 *
 * Memory ordering. Promela is sequentially consistent, so a plain store is "visible" to
 * everyone at once. What the C code relies on instead is that every reader of the outcome
 * (a continuation, a woken waiter) has synchronized with the completer's release. Every
 * modification of the state word after publish's exchange is a read-modify-write, so it
 * continues that exchange's release sequence: an acquire operation that reads any value
 * with the DONE bit synchronizes with the publish. The local `synced` records, for the
 * running process, that it performed such an acquire, or is the publisher, or acquired a
 * release made by a synced thread (the waiter's `woken`). Each step sets it only if the C
 * operation it mirrors carries acquire semantics (the order is written next to each step),
 * so weakening an acquire in the C code and in the model makes the "outcome visible"
 * assertion fail (mutant 2).
 *
 * Abstractions (and why they are sound for these properties):
 *   - The job's pool is NULL (inline executors). Pool hand-off is one more owner of the
 *     record and belongs to the pool's own model.
 *   - A thread's trampoline depth is 0 except the Waiter's, which may start at
 *     BOLTS_INLINE_DEPTH (DEEP=1): bolts_task_wait called from a continuation nested 20
 *     dispatches deep. Then bolts_dispatch would queue a job instead of
 *     running it, and the queue runs when the thread unwinds to its outermost frame.
 *   - The initial state check, the drain and the 200-iteration spin of bolts_task_wait are
 *     one acquire load of the state: a run of failed loads followed by one more load is
 *     equivalent to a single load placed anywhere in that interval, which the interleaving
 *     explores.
 *   - futex: FUTEX_WAIT compares the word and goes to sleep in one step; FUTEX_WAKE clears
 *     the sleeper; a timed FUTEX_WAIT may return on its own (WAITER=2). Spurious wake-ups
 *     are not modelled, so that a lost wake-up shows up as a process blocked forever
 *     (spin reports it as an invalid end state in safety runs, and as a violation of the
 *     `wake` LTL property in liveness runs).
 *   - compare_exchange_weak may fail spuriously (SPURIOUS=1); such a failure reloads the
 *     word with the failure order. Off in liveness runs (a CAS that fails forever is not a
 *     behaviour of the hardware and would hide real cycles).
 *   - A job record that has been dispatched belongs to its owner again: an owned record
 *     (bolts_job_create) is freed by job_invoke, an embedded one (a task's
 *     own_job) may be re-armed for another wait. Either way its `next` is garbage (POISON)
 *     afterwards, and any later read of it is an assertion failure.
 */

#ifndef NADD
#define NADD 3          /* adders, one continuation job each */
#endif
#ifndef SEQ
#define SEQ 1           /* adder 0 registers a second job after its first */
#endif
#ifndef NCOMP
#define NCOMP 2         /* completers racing trySet / tryCancel */
#endif
#ifndef WAITER
#define WAITER 1        /* 0 none, 1 untimed bolts_task_wait(-1), 2 timed (may give up) */
#endif
#ifndef DEEP
#define DEEP 0          /* 1: the waiter may run at trampoline depth BOLTS_INLINE_DEPTH */
#endif
#ifndef SPURIOUS
#define SPURIOUS 1      /* compare_exchange_weak may fail spuriously */
#endif
#ifndef MUTANT
#define MUTANT 0        /* >0: a deliberately broken variant (run.sh's self-test; see README) */
#endif

/* ---- the state word (bolts_task.h encoding) ---- */
#define CLAIMED 1       /* STATE_CLAIMED */
#define DONE    2       /* STATE_DONE: settled (the whole word, head NULL) */
#define DISPATCHING 3   /* STATE_DISPATCHING = DONE|CLAIMED, with a (maybe empty) stack */
#define HEAD(s) ((s) / 4)
#define TAG(s)  ((s) % 4)
#define WORD(j, tag) ((j) * 4 + (tag))
#define COMPLETE(s) (TAG(s) >= DONE)   /* s & STATE_DONE */

/* ---- job records ---- */
#define NIL     0
#define POISON  15      /* a record's link after it was handed back to its owner */
#define FN_CONT 1       /* a continuation (Swift's step closure) */
#define FN_FIRE 2       /* waiter_fire */

#define NJOBS_ADD (NADD + SEQ)
#if WAITER
#define WJ (NJOBS_ADD + 1)          /* the waiter's embedded job */
#else
#define WJ 0
#endif
#define MAXJ 8

byte st = 0;                 /* task->state: pending, empty stack (bolts_task_create) */
byte outcome = 0;            /* task->outcome, plain (BOLTS_PENDING) */

byte jnext[MAXJ];            /* job->next, plain */
byte jfn[MAXJ];              /* job->fn, plain */
bit  jowned[MAXJ];           /* job->flags & BOLTS_JOB_OWNED */
bit  jdrop[MAXJ];            /* job->drop != NULL */
bit  jfreed[MAXJ];           /* the record's block was freed */

/* waiter_t */
bit  woken = 0;              /* w->woken */
bit  wsync = 0;              /* the thread that stored woken had synchronized with publish
                                (what the release store of woken carries to its acquirer) */
byte wrefs = 0;              /* w->refs */
bit  wfreed = 0;             /* w's block was freed */
bit  walloc = 0;             /* w was allocated */
bit  sleeping = 0;           /* the sleeper is inside FUTEX_WAIT on &w->woken */
bit  waiter_back = 0;        /* bolts_task_wait returned */
bit  waiter_true = 0;        /* ... and returned true */
byte waiter_q = 0;           /* the waiter thread's trampoline queue (one slot is enough:
                                only the waiter job could ever be deferred there) */

/* bookkeeping for the properties (not part of the C state) */
byte winner = 0;             /* the outcome the winning claimer stores (0: no claim won) */
byte ran[MAXJ];              /* times each continuation ran */
byte dropped[MAXJ];          /* times each job was dropped by bolts_task_destroy */
bit  started[MAXJ];          /* each continuation has started */
byte reg[MAXJ];              /* registration stamp: the step at which the job was pushed,
                                or at which its adder saw the task settled */
byte regclock = 0;
bit  pushed[MAXJ];           /* the job went onto the stack */
byte nran = 0;               /* continuations run so far (for LTL) */
bit  badorder = 0;           /* for LTL: some order check failed */

/* ---- job.c: job_invoke + the job's function ---------------------------------------- */

/* waiter_unref: fetch_sub acq_rel; the side that saw 1 frees the block. */
inline waiter_unref() {
    atomic {
        assert(!wfreed && wrefs > 0);
        wrefs--;
        lastref = (wrefs == 0)
    }
    if
    :: lastref -> atomic { assert(!wfreed); wfreed = 1; jfreed[WJ] = 1 }   /* bolts_pool_block_free(w) */
    :: else -> skip
    fi
}

/* A continuation's body: the Swift step closure reads the outcome (it must be the
 * winner's, and this thread must have synchronized with the publish), and counts itself.
 * Registration order (DESIGN.md: "Continuations run in registration order"): every job
 * that was pushed on the stack before this one registered, and every job that the same
 * thread registered before it, has started. (Two jobs that two threads add after the
 * task settled each run at once on their own thread: nothing orders them, nor should.) */
inline continuation_body(j) {
    assert(outcome != 0 && outcome == winner);   /* outcome written ... */
    assert(synced);                               /* ... and visible here */
    ran[j]++;
    assert(ran[j] == 1);                          /* exactly once */
    nran++;
    started[j] = 1;
    k = 1;
    do
    :: k > NJOBS_ADD -> break
    :: else ->
        if
        :: reg[k] != 0 && reg[k] < reg[j] && !started[k] && (pushed[k] || (k == 1 && j == NADD + 1)) ->
            badorder = 1; assert(false)
        :: else -> skip
        fi;
        k++
    od;
    k = 0
}

/* job_invoke: read fn/context, free an owned record, call fn. After that
 * the record's link belongs to its owner (freed, or re-armed for another wait): POISON.
 * The plain reads of the record are merged with the first step of the job's function: the
 * record is this thread's alone at that point (a conflicting access by anyone else is
 * itself caught by the jfreed/POISON assertions at its next access). The functions:
 *   FN_CONT  the continuation body (one step: it touches no atomic of the task)
 *   FN_FIRE  waiter_fire: release store of woken, FUTEX_WAKE, unref */
inline job_invoke(j) {
    atomic {
        assert(!jfreed[j] && jnext[j] != POISON);
        fn = jfn[j];
        if
        :: jowned[j] -> jfreed[j] = 1            /* bolts_pool_block_free(job) */
        :: else -> skip
        fi;
        jnext[j] = POISON;
        if
        :: fn == FN_CONT -> continuation_body(j)
        :: fn == FN_FIRE ->
            /* atomic_store_explicit(&w->woken, 1, release) */
            assert(!wfreed); woken = 1; wsync = synced
        fi
    }
    if
    :: fn == FN_FIRE ->
        /* FUTEX_WAKE(&w->woken, 1) */
        atomic { assert(!wfreed); if :: sleeping -> sleeping = 0 :: else -> skip fi };
        waiter_unref()
    :: else -> skip
    fi
}

/* bolts_dispatch with job->pool == NULL. `deep`: this thread's depth is
 * >= BOLTS_INLINE_DEPTH, so the job is appended to its trampoline queue. */
inline dispatch(j, deep) {
    if
    :: deep -> atomic { assert(waiter_q == 0); jnext[j] = NIL; waiter_q = j }
    :: else -> job_invoke(j)                        /* run_level */
    fi
}

/* ---- task.c: task_push (164-178), bolts_task_add (180-182) -------------------------- */

/* Pushes j unless the task has settled; `ok` tells whether it pushed. */
inline task_push(j) {
    ok = 0;
    /* atomic_load_explicit(&task->state, acquire) */
    atomic {
        s = st;
        if :: COMPLETE(s) -> synced = 1 :: else -> skip fi
    }
    do
    :: s == DONE ->
        atomic { regclock++; reg[j] = regclock };   /* registered: it will run now */
        break
    :: else ->
        jnext[j] = HEAD(s);                         /* job->next = head (plain) */
        /* compare_exchange_weak(&state, &s, job | tag(s), release, acquire) */
        atomic {
            if
            :: st == s ->
                st = WORD(j, TAG(s));
                regclock++; reg[j] = regclock; pushed[j] = 1;
                ok = 1
            :: st != s ->
                s = st;
#if MUTANT != 2     /* mutant 2: the failure order is relaxed */
                if :: COMPLETE(s) -> synced = 1 :: else -> skip fi
#endif
#if SPURIOUS
            :: st == s ->                          /* spurious failure: s reloaded */
                skip
#endif
            fi
        }
        if
        :: ok -> break
        :: else -> skip
        fi
    od
}

inline task_add(j, deep) {
    task_push(j);
    if
    :: !ok -> dispatch(j, deep)
    :: else -> ok = 0
    fi
}

/* ---- task.c: bolts_task_claim (101-113), bolts_task_publish (134-159) --------------- */

/* dispatch_stack: reverse the batch, then dispatch it oldest first,
 * reading each link before dispatching its job. */
inline dispatch_stack(taken) {
    list = HEAD(taken);
    ordered = NIL;
    do
    :: list == NIL -> break
    :: else ->
        atomic {
            assert(!jfreed[list] && jnext[list] != POISON);
            nxt = jnext[list];
            jnext[list] = ordered;
            ordered = list;
            list = nxt
        }
    od;
    do
    :: ordered == NIL -> break
    :: else ->
#if MUTANT == 1
        /* mutant 1: read the link after dispatching the job */
        dispatch(ordered, 0);
        atomic { assert(!jfreed[ordered] && jnext[ordered] != POISON); nxt = jnext[ordered] };
#else
        atomic { assert(!jfreed[ordered] && jnext[ordered] != POISON); nxt = jnext[ordered] };
        dispatch(ordered, 0);
#endif
        ordered = nxt
    od;
    nxt = 0
}

proctype Completer(byte v) {
    byte s, list, ordered, nxt, fn, k;
    bit lastref, won, settled, synced;
    /* bolts_task_claim: load relaxed (no sync) */
    s = st;
    do
    :: (s & (CLAIMED | DONE)) != 0 -> break              /* return false */
    :: else ->
        /* compare_exchange_weak(&state, &s, s | CLAIMED, relaxed, relaxed) */
#if MUTANT == 4
        st = s + CLAIMED; won = 1;      /* mutant 4: a plain store instead of the CAS */
#else
        atomic {
            if
            :: st == s -> st = s + CLAIMED; won = 1
            :: st != s -> s = st
#if SPURIOUS
            :: st == s -> skip
#endif
            fi
        }
#endif
        if :: won -> break :: else -> skip fi
    od;
    if
    :: !won -> goto done
    :: else -> skip
    fi;
    atomic { assert(winner == 0); winner = v }     /* exactly one claim wins */
    /* the Swift layer stores the payload, then publish stores the outcome (plain) */
    outcome = v;
#if MUTANT == 6
    /* mutant 6: publish as before 5bacbf8: exchange straight to DONE, dispatch once */
    atomic { s = st; st = DONE; synced = 1; assert((s & CLAIMED) && !(s & DONE)) };
    dispatch_stack(s);
#else
    /* atomic_exchange_explicit(&state, DISPATCHING, acq_rel); then the abort check */
    atomic {
        s = st;
        st = DISPATCHING;
        synced = 1;                     /* the publisher wrote the outcome itself */
        assert((s & CLAIMED) && !(s & DONE))
    }
    dispatch_stack(s);
    do
    :: /* compare_exchange_strong(&state, DISPATCHING(empty) -> DONE, acq_rel, acquire) */
        atomic {
            if
            :: st == DISPATCHING -> st = DONE; settled = 1
            :: else -> skip
            fi
        }
        if
        :: settled -> break                            /* settled: return */
        :: else ->
            /* atomic_exchange_explicit(&state, DISPATCHING, acquire): take the late jobs */
            atomic { s = st; st = DISPATCHING; assert(TAG(s) == DISPATCHING) };
            dispatch_stack(s)
        fi
    od;
#endif
done:
    skip
}

proctype Adder(byte a) {
    byte s, fn, k, j;
    bit ok, lastref, synced;
    j = a + 1;
    /* the caller sets fn/context/pool (and Swift's own_job or bolts_job_create) first */
    jfn[j] = FN_CONT;
    jowned[j] = (j % 2);          /* odd: bolts_job_create (owned); even: a task's own_job */
    task_add(j, 0);
#if SEQ
    if
    :: a == 0 ->
        j = NADD + 1;
        jfn[j] = FN_CONT;
        jowned[j] = (j % 2);
        task_add(j, 0)
    :: else -> skip
    fi
#endif
}

#if WAITER
/* bolts_task_wait. */
proctype Waiter() {
    byte s, fn, k;
    bit ok, lastref, deep, done, wk, synced;
#if DEEP
    if :: deep = 0 :: deep = 1 fi;
#endif
    /* bolts_task_state, the drain (235-237: nothing is deferred on this
     * thread yet) and the spin (242-245): acquire loads of the state that return true if
     * complete. A run of such loads behaves like its last one: one load, anywhere here. */
    atomic { s = st; if :: COMPLETE(s) -> synced = 1 :: else -> skip fi }
    if :: COMPLETE(s) -> waiter_true = 1; goto out :: else -> skip fi;
    /* allocate and initialize w */
    atomic { walloc = 1; woken = 0; wrefs = 2 }
    jfn[WJ] = FN_FIRE; jowned[WJ] = 0; jdrop[WJ] = 1;
#if MUTANT == 7
    /* mutant 7: as before 5bacbf8, bolts_task_add dispatches the waiter's own job */
    task_add(WJ, deep);
#else
    task_push(WJ);
    if
    :: !ok ->
        /* settled meanwhile: free w and return true */
        atomic { assert(!wfreed); wfreed = 1; jfreed[WJ] = 1 };
        waiter_true = 1;
        goto out
    :: else -> ok = 0
    fi;
#endif
    /* bolts__pool_blocking_begin: no-op off a pool */
    done = 1;
    do
    :: /* atomic_load_explicit(&w->woken, acquire): pairs with waiter_fire's release */
        atomic {
            assert(!wfreed);
            wk = woken;
            if :: wk -> synced = synced | wsync :: else -> skip fi
        }
        if
        :: wk -> break
        :: else -> skip
        fi;
#if WAITER == 2
        /* deadline check: the deadline may have passed */
        if
        :: done = 0; break
        :: skip
        fi;
#endif
        /* FUTEX_WAIT(&w->woken, 0): compare and sleep in one step */
        atomic { assert(!wfreed); if :: woken == 0 -> sleeping = 1 :: else -> skip fi }
        if
        :: sleeping == 0 -> skip                     /* woken, or EAGAIN */
#if WAITER == 2
        :: atomic { sleeping == 1 -> sleeping = 0 }  /* ETIMEDOUT */
#endif
        fi
    od;
    /* bolts__pool_blocking_end, then waiter_unref */
#if MUTANT == 3
    /* mutant 3: the sleeper frees w without dropping a reference */
    atomic { assert(!wfreed); wfreed = 1; jfreed[WJ] = 1 };
#else
    waiter_unref();
#endif
    /* return done || bolts_task_state(task) != PENDING (acquire) */
    atomic { s = st; if :: COMPLETE(s) -> synced = 1 :: else -> skip fi }
    if
    :: done || COMPLETE(s) -> waiter_true = 1
    :: else -> skip
    fi;
out:
    /* A true return lets the caller read the result: it must be visible. */
    assert(!waiter_true || (COMPLETE(st) && synced));
#if WAITER == 1
    assert(waiter_true);          /* an untimed wait returns only when the task completed */
#endif
    waiter_back = 1;
    /* back at the outermost dispatch frame: run_level drains this thread's queue */
    if
    :: waiter_q != 0 -> k = waiter_q; waiter_q = 0; job_invoke(k)
    :: else -> skip
    fi
}
#endif

/* bolts_task_destroy, called by the owner when nothing races it. */
inline task_destroy() {
    s = st;                                   /* relaxed: nothing races destroy */
    if
    :: COMPLETE(s) -> skip
    :: !COMPLETE(s) && MUTANT == 5 -> skip    /* mutant 5: destroy as before 338e587: no drops */
    :: !COMPLETE(s) && MUTANT != 5 ->
        list = HEAD(s);
        do
        :: list == NIL -> break
        :: else ->
            assert(!jfreed[list] && jnext[list] != POISON);
            nxt = jnext[list];
            if :: jowned[list] -> jfreed[list] = 1 :: else -> skip fi;   /* bolts_job_destroy */
            dropped[list]++;
            if
            :: jdrop[list] && list == WJ -> waiter_unref()   /* waiter_drop */
            :: else -> skip                                  /* Swift's drop releases the context */
            fi;
            list = nxt
        od
    fi
}

init {
    byte i, s, list, nxt, fn, k;
    bit lastref, synced;
    atomic {
        i = 0;
        do :: i < NCOMP -> run Completer(i % 3 + 1); i++ :: else -> break od;
        i = 0;
        do :: i < NADD -> run Adder(i); i++ :: else -> break od;
#if WAITER
        run Waiter();
#endif
    }
    /* the owner drops its last reference once nobody else can touch the task */
    _nr_pr == 1;
    task_destroy();
    /* end-of-run properties */
    assert((winner != 0) == (NCOMP > 0));
    assert(NCOMP == 0 || st == DONE);         /* the completer settled the word */
    i = 1;
    do
    :: i > NJOBS_ADD -> break
    :: else ->
        /* every continuation ran exactly once, or (task abandoned pending) was dropped once */
        assert(ran[i] + dropped[i] == 1);
        assert(NCOMP == 0 || ran[i] == 1);
        i++
    od;
#if WAITER
    assert(waiter_back);
    assert(!walloc || wfreed);    /* the waiter block was freed (exactly once: see unref) */
    assert(waiter_q == 0)
#endif
}

/* ---- LTL (liveness runs: ./pan -a -f -N <name>, with SPURIOUS=0) ---- */
#if WAITER
ltl wake { [] (COMPLETE(st) -> <> waiter_back) }
#endif
ltl allrun { [] (COMPLETE(st) -> <> (nran == NJOBS_ADD)) }
ltl visible { [] ((nran > 0) -> COMPLETE(st)) }
ltl order { [] !badorder }
