/*
 * The pool's blocked-worker monitor (invariant I12 of bolts_pool.h; pool_monitor.c), under
 * sequential consistency, as the other models: what it checks is the protocol's logic (who
 * counts, who wakes whom), not the memory orders that make each step one step.
 *
 * The system: a pool of N = 1 worker (slot 0) and room for one extra thread (slot 1,
 * FREE at first, outside the scan range: hwm = 1). A submitter queues job 1, then job 2.
 * What job 1 does is chosen at the start (KIND, or every kind when KIND is -1, the
 * default):
 *   0 (hidden)  it sleeps until job 2 has run, in a wait the pool cannot see: only the
 *               monitor's mark can bring in the thread that runs job 2;
 *   1 (I6 wait) it sleeps until job 2 has run inside the hooks `bolts_task_wait` calls
 *               (bolts__pool_blocking_begin/end): the worker sets `blocked`, takes over a
 *               mark the monitor made meanwhile or counts itself out and compensates, and
 *               the monitor must skip it;
 *   2 (short)   it ends at once: its end races the monitor's mark; job 2 then makes a wait
 *               of I6 that ends at once (its task already complete), on the worker that may
 *               still carry a mark job 1's check missed, while the monitor, seeing the
 *               worker between its jobs, may undo it.
 * The monitor's judgement ("asleep, not computing") is left open: it may mark any worker
 * it sees in a job, not in an I6 wait, while a job is queued, which covers every verdict
 * the real heuristic can reach, right or wrong. Slot 1's thread, once brought in, may
 * retire to a spare when the count allows, and a spare may time out at any moment (the
 * idle spell of BOLTS_POOL_SPARE_IDLE_NS): it then exits (CAS SPARE -> FREE, racing an
 * activation) and lowers hwm past its slot under spawn_lock (shrink_range), after which
 * bolts__pool_add_worker starts a new thread in the FREE slot (below hwm, if the shrink
 * has not run yet) or in a fresh slot at hwm (after it).
 *
 * Checked (safety, exhaustive):
 *  - no deadlock: once nothing can move, both jobs have run (and every process is at an
 *    end label); in particular the monitor never sleeps for good while job 1 holds the
 *    only worker with job 2 queued (its sleep flag, re-check, and the wake by a worker
 *    leaving its park), and an activated spare's thread does not exit;
 *  - the count, at every look of the monitor, at its sleep and at the end: `unblocked`
 *    plus the marks (`stalled`, on any slot, whatever its state) plus the workers counted
 *    out for an I6 wait equals the number of ACTIVE slots: every decrement of `unblocked`
 *    is held by exactly one mark or one wait, and given back exactly once (by the job's
 *    end, the worker, the monitor, or a wait taking the mark over);
 *  - the I6 flag: whenever the monitor reads a worker's `blocked` as set, and at the end,
 *    the worker is in an I6 wait (`blocked` is written only by the worker, at the wait's
 *    begin and end); a flag left set would make the monitor skip every later block of that
 *    worker for good;
 *  - at the end (nothing can move): no mark is left on a slot past hwm, which no look
 *    reaches (a mark below hwm may be: one the monitor's last look made on a job that had
 *    just ended, while the monitor now sleeps; its next look, or the worker's next job,
 *    undoes it);
 *  - each job runs exactly once.
 *
 * Citations (the pool's files, by function): Worker = worker_main + run_job (pool_worker.c)
 * + bolts__pool_park + bolts__pool_try_retire + bolts__pool_spare_wait and shrink_range
 * (pool_park.c); after_job = the `stalled` check at run_job's end and bolts__pool_stall_over;
 * blocking_begin/end = bolts__pool_blocking_begin/end (pool_compensate.c); resume =
 * bolts__pool_monitor_resume; Monitor = monitor_main + look + stall + top_up +
 * sleep_while_parked (pool_monitor.c); add_worker = bolts__pool_add_worker
 * (pool_compensate.c: a spare, else the lowest FREE slot below hwm, else a fresh slot).
 *
 * Abstractions: one queue (the steal of a compensating worker is a take from it); the
 * submitter's notify, and the one bolts__pool_blocking_begin makes when it does not
 * compensate (finding F4), claim a parked worker if there is one (I3-I5 are pool.pml's);
 * retiring is one step (the C code's CAS of `unblocked` and its SPARE store are two, with
 * nobody counting in between but the monitor's sleep check, which needs every active slot
 * parked: a retiring thread is not parked); the monitor reads whether a worker is in a job
 * (started != executed, ACTIVE, its bit clear) in one step, its `stalled` and `blocked` in
 * one each, and whether jobs are queued once per look (as the C code's `queued`); a mark
 * (the store of `stalled` and the decrement) is one step, the undo (the exchange and the
 * increment) one, an activation (the CAS and the increment, under spawn_lock) one, and
 * start_extra (ACTIVE and the increment, under spawn_lock) one: a reader of `unblocked`
 * between two such halves sees one worker fewer unblocked, so it retires less and
 * compensates more, never less. The growth rule's allowance (BOLTS_POOL_GROWTH_FREE, 4)
 * never binds with one extra slot, so top_up brings threads in while `unblocked` is below
 * N and a job is queued. A new thread in slot 1 is the same process as the one that
 * exited there (it starts once the old one is done: a delay, which the old thread's last
 * steps, its shrink under spawn_lock, cannot observe beyond the slot's state). The
 * monitor's timed sleep between looks is a step (it may look again at any time); its
 * sleep while every active worker is parked is modelled as the C code's flag and
 * re-check. Not modelled: the thread's stack bounds, names and stall reports, the growth
 * rule's windows, the restraint's read of `stalled` (pool_steal.c; no spin model has the
 * restraint), the folding of a slot's counters when hwm shrinks (monitor_check.cpp and
 * pool_check.cpp run it on the C code).
 *
 * Not reached at these bounds (Model/FINDINGS.md, F7): a mark that lands on slot 1 after
 * it retired, timed out, exited and lowered hwm (the monitor's reads of it were older than
 * all that), so that no later look reaches it. It takes a look that finds jobs queued
 * while slot 1's worker is in its job, and that worker then still free to retire (the
 * count above N): with one extra slot and two jobs the search finds no such state (the
 * end check above would report one).
 *
 * Mutants (each must be caught):
 *   1  a worker leaving its park does not wake the monitor (no resume): the monitor sleeps
 *      while job 1 blocks the worker, and job 2 never runs (the end check);
 *   2  the mark is undone by a load and a store, not an exchange: the worker and the
 *      monitor may both put the worker back, and `unblocked` counts it twice (the count);
 *   3  the monitor checks the parked bits before it publishes that it sleeps: a worker
 *      that leaves its park in between finds no flag, and the monitor sleeps for good
 *      (the end check);
 *   4  the monitor's mark and its undo as they were before the fix of the stale I6 flag:
 *      `stall` stores `stalled`, then `blocked` (two steps), and `bolts__pool_stall_over`
 *      clears `blocked` when its exchange wins: a job that ends between the two stores
 *      leaves `blocked` set for good, and the monitor would take every later hidden block
 *      of that worker for an I6 wait (the I6 flag's check at the end);
 *   5  the spare's exit is a plain store of FREE after its load of the state, not a CAS:
 *      an activation between the two is overwritten, the activated thread exits, and
 *      `unblocked` counts a thread that is gone (the count at the monitor's next look;
 *      behind a hidden block, job 2 would never run).
 */
#ifndef MUTANT
#define MUTANT 0
#endif
#ifndef KIND
#define KIND -1          /* job 1's kind: 0 hidden block, 1 I6 wait, 2 short; -1: each */
#endif

#define N 1
#define FREE 0
#define ACTIVE 1
#define SPARE 2

#define HIDDEN 0
#define I6WAIT 1
#define SHORT 2

byte kind;          /* job 1's kind */
byte queue[2];      /* queue[0] is the next job, 0: none; at most two jobs */
bool ran[3];        /* ran[j]: job j has run */
byte runs[3];       /* times job j started */
bool injob[2];      /* slot i is running a job (started != executed) */
bool parked[2];     /* slot i's parked bit */
bool wake[2];       /* slot i's wake word */
bool spawn[2];      /* pthread_create of a thread in slot i (slot 1 only) */
byte state[2];      /* SLOT_* */
bool stalled[2];    /* the monitor counts slot i as blocked in its job */
bool blocked[2];    /* slot i's I6 flag: in a wait the pool sees (bolts_task_wait) */
bool inwait[2];     /* bookkeeping: slot i's worker is between blocking_begin and _end */
bool held[2];       /* bookkeeping: slot i's I6 wait holds a decrement of `unblocked` */
bool spawn_lock;
byte hwm = N;       /* the scan range [0, hwm) */
short unblocked = N; /* active threads not counted as blocked */
bool asleep;        /* the monitor sleeps for want of a worker out of its park */

#define QUEUED (queue[0] != 0)
#define ACTIVE_COUNT ((state[0] == ACTIVE) + (state[1] == ACTIVE))
#define COUNT_HOLDS (unblocked + stalled[0] + stalled[1] + held[0] + held[1] == ACTIVE_COUNT)
#define ALL_ACTIVE_PARKED ((state[0] != ACTIVE || parked[0]) && (hwm <= 1 || state[1] != ACTIVE || parked[1]))

inline enqueue(j) {
    atomic {
        if
        :: queue[0] == 0 -> queue[0] = j
        :: else -> queue[1] = j
        fi
    }
}

/* notify/wake_one: claim a parked worker, if any (pool.pml checks the real protocol). */
inline notify() {
    atomic {
        if
        :: parked[0] -> parked[0] = 0; wake[0] = 1
        :: parked[1] -> parked[1] = 0; wake[1] = 1
        :: else -> skip
        fi
    }
}

/* bolts__pool_stall_over: the exchange decides which of the worker and the monitor puts
 * the worker back. */
inline stall_over(i) {
#if MUTANT == 2
    if
    :: stalled[i] -> stalled[i] = 0; unblocked++
    :: else -> skip
    fi
#elif MUTANT == 4
    atomic {
        if
        :: stalled[i] -> stalled[i] = 0; blocked[i] = 0; unblocked++   /* the old code */
        :: else -> skip
        fi
    }
#else
    atomic {
        if
        :: stalled[i] -> stalled[i] = 0; unblocked++
        :: else -> skip
        fi
    }
#endif
}

/* stall: the monitor's mark (relaxed store of `stalled`, relaxed fetch_sub of `unblocked`);
 * `blocked` is left alone. */
inline stall(i) {
#if MUTANT == 4
    stalled[i] = 1;                                   /* the old code: two stores ... */
    atomic { blocked[i] = 1; unblocked-- }            /* ... the job may end in between */
#else
    atomic { stalled[i] = 1; unblocked-- }
#endif
}

/* bolts__pool_monitor_resume: wake the monitor if it sleeps. */
inline resume() {
#if MUTANT != 1
    atomic { if :: asleep -> asleep = 0 :: else -> skip fi }
#else
    skip
#endif
}

/* bolts__pool_add_worker, under spawn_lock: a spare in [N, hwm) (CAS SPARE -> ACTIVE, then
 * the count and wake_slot), else the lowest FREE slot in [N, hwm) (the CAS's failure value;
 * start_extra and a new thread), else a fresh slot at hwm (start_extra, the seq_cst store
 * of hwm, a new thread), else nothing (capacity). `added`: whether a thread came in. */
inline add_worker(added) {
    atomic { !spawn_lock -> spawn_lock = 1 }
    added = 0;
    if
    :: hwm > N ->
       atomic {
           if
           :: state[1] == SPARE -> state[1] = ACTIVE; unblocked++; added = 1
           :: state[1] == FREE -> added = 2          /* a hole below hwm */
           :: else -> skip
           fi
       };
       if
       :: added == 1 -> wake[1] = 1                  /* wake_slot */
       :: added == 2 -> atomic { state[1] = ACTIVE; unblocked++ }; spawn[1] = 1; added = 1
       :: else -> skip                               /* capacity: no room past N */
       fi
    :: else ->                                       /* a fresh slot at hwm */
       atomic { state[1] = ACTIVE; unblocked++ };
       hwm = 2;
       spawn[1] = 1;
       added = 1
    fi;
    spawn_lock = 0
}

/* bolts__pool_blocking_begin (tl_slot set, outermost wait): the I6 flag, then take over a
 * mark (the exchange), or count itself out and compensate below N, else (F4) wake a
 * parked worker if a job is queued. */
inline blocking_begin(i) {
    atomic { blocked[i] = 1; inwait[i] = 1 };
    atomic {
        if
        :: stalled[i] -> stalled[i] = 0; held[i] = 1; took = 1   /* the mark taken over */
        :: else -> took = 0
        fi
    };
    if
    :: took -> took = 0
    :: else ->
       atomic { left = unblocked - 1; unblocked--; held[i] = 1 };
       if
       :: left < N -> add_worker(got); got = 0
       :: else -> if :: QUEUED -> notify() :: else -> skip fi
       fi;
       left = 0
    fi
}

inline blocking_end(i) {
    atomic { blocked[i] = 0; inwait[i] = 0 };
    atomic { unblocked++; held[i] = 0 }
}

proctype Submitter() {
    enqueue(1);
    notify();
    enqueue(2);
    notify()
}

proctype Worker(byte i) {
    byte job;
    short left;
    bool took, woken, won;
    byte got;
    if
    :: i >= N ->
end_free0:
       atomic { spawn[i] -> spawn[i] = 0 }; resume()        /* worker_main: a new thread is out of any park */
    :: else -> skip
    fi;
end_loop:
    do
    :: atomic { QUEUED -> job = queue[0]; queue[0] = queue[1]; queue[1] = 0; injob[i] = 1; runs[job]++ };
       assert(runs[job] == 1);
       if
       :: job == 1 && kind == HIDDEN -> (ran[2])   /* asleep in a wait the pool cannot see */
       :: job == 1 && kind == I6WAIT -> blocking_begin(i); (ran[2]); blocking_end(i)
       :: job == 2 && kind == SHORT -> blocking_begin(i); blocking_end(i)   /* a wait that ends at once */
       :: else -> skip
       fi;
       atomic { ran[job] = 1; injob[i] = 0; job = 0 };
       stall_over(i)                             /* run_job's check after the job */
    :: atomic { !QUEUED && i >= N && unblocked > N -> unblocked--; state[i] = SPARE; wake[i] = 0};
       /* bolts__pool_spare_wait: until activated, or the idle spell runs out */
end_spare:
       if
       :: wake[i] -> woken = 1
       :: true -> woken = 0                      /* BOLTS_POOL_SPARE_IDLE_NS passed */
       fi;
       if
       :: state[i] == ACTIVE ->                  /* acquire load: activated */
          if :: !woken -> (wake[i]) :: else -> skip fi   /* its wake is coming */
       :: else ->
#if MUTANT == 5
          state[i] = FREE; won = 1               /* broken: a plain store after the load */
#else
          atomic {                               /* CAS SPARE -> FREE, acq_rel */
              if
              :: state[i] == SPARE -> state[i] = FREE; won = 1
              :: else -> won = 0
              fi
          };
#endif
          if
          :: won ->                              /* timed out (only activation wakes here) */
             won = 0; woken = 0;
             /* shrink_range under spawn_lock: hwm past the FREE slot at the top */
             atomic { !spawn_lock -> spawn_lock = 1 };
             atomic { if :: hwm == 2 && state[1] == FREE -> hwm = 1 :: else -> skip fi };
             spawn_lock = 0;
             /* the thread exits; a later bolts__pool_add_worker starts another here */
end_free:    atomic { spawn[i] -> spawn[i] = 0 }
          :: else -> (wake[i])                   /* the activation won: its wake is coming */
          fi
       fi;
       woken = 0;
       resume()                                  /* back in service (or a new thread) */
    :: !QUEUED && (i < N || unblocked <= N) ->
       atomic { wake[i] = 0; parked[i] = 1 };
       if
       :: QUEUED -> atomic { if :: parked[i] -> parked[i] = 0 :: else -> (wake[i]) fi }
       :: else ->
end_parked: (wake[i])
       fi;
       resume()                                  /* out of its park: the monitor must look again */
    od
}

/* One look (pool_monitor.c's `look`): hwm once, then each slot in [0, hwm). */
inline look() {
    atomic {
        h = hwm;
        assert(COUNT_HOLDS)
    };
    q = 2;                                           /* queued: not read yet */
    i = 0;
    do
    :: i >= h -> break
    :: else ->
       ij = state[i] == ACTIVE && injob[i] && !parked[i];
       mk = stalled[i];
       if
       :: !ij -> if :: mk -> stall_over(i) :: else -> skip fi   /* marked after its check */
       :: ij && mk -> marked = 1                     /* counted: left alone until it ends */
       :: ij && !mk ->
          atomic { bl = blocked[i]; assert(!bl || inwait[i]) };
          if
          :: bl -> skip                              /* an I6 wait: it compensates itself */
          :: else ->
             if
             :: skip                                 /* judged computing, or not yet held long enough */
             :: if :: q == 2 -> q = QUEUED :: else -> skip fi;
                if :: q == 1 -> stall(i); marked = 1 :: else -> skip fi
             fi
          fi
       fi;
       atomic { ij = 0; mk = 0; bl = 0; i++ }
    od;
    atomic { i = 0; q = 0; h = 0 }
}

proctype Monitor() {
    byte i, h, q;
    bool ij, mk, bl, marked;
    byte got;
end_loop:
    do
    :: look();
       /* top_up: bring threads in while `unblocked` is below N and a job is queued */
       if
       :: marked ->
          do
          :: unblocked < N && QUEUED -> add_worker(got); if :: !got -> break :: else -> skip fi
          :: else -> break
          od;
          got = 0
       :: else -> skip
       fi;
       marked = 0;
       if
       :: ALL_ACTIVE_PARKED ->
          look();                                    /* one more look before the sleep */
          marked = 0;
#if MUTANT == 3
          if
          :: ALL_ACTIVE_PARKED -> asleep = 1;
end_asleep3: (!asleep)
          :: else -> skip
          fi
#else
          asleep = 1;
          if
          :: ALL_ACTIVE_PARKED ->
             atomic { assert(COUNT_HOLDS) };
end_asleep:  (!asleep)
          :: else -> asleep = 0
          fi
#endif
       :: else -> skip                               /* the timed wait for the next tick */
       fi
    od
}

init {
    state[0] = ACTIVE;   /* the worker may park before the first job comes, or not */
#if KIND >= 0
    kind = KIND;
#else
    if
    :: kind = HIDDEN
    :: kind = I6WAIT
    :: kind = SHORT
    fi;
#endif
    atomic {
        run Worker(0);
        run Worker(1);
        run Monitor();
        run Submitter()
    }
    /* Nothing can move any more: every job ran once, no mark or I6 flag is left, and the
     * count is the ACTIVE slots. */
    timeout ->
        assert(ran[1] && ran[2]);
        assert(!blocked[0] && !blocked[1] && !inwait[0] && !inwait[1]);
        assert(!stalled[1] || hwm > 1);
        assert(COUNT_HOLDS)
}
