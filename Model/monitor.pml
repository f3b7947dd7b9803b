/*
 * The pool's blocked-worker monitor (invariant I12 of bolts_pool.h; pool_monitor.c), under
 * sequential consistency, as the other models: what it checks is the protocol's logic (who
 * counts, who wakes whom), not the memory orders that make each step one step.
 *
 * The system: a pool of N = 1 worker (slot 0) and room for one compensating thread
 * (slot 1, a spare until brought in). A submitter queues job 1, then job 2. Job 1 sleeps
 * until job 2 has run: a wait the pool cannot see, so only the monitor can bring in the
 * thread that runs job 2. The monitor's judgement ("asleep, not computing") is left open:
 * it may mark any worker that is in a job while a job is queued, which covers every
 * verdict the real heuristic can reach, right or wrong.
 *
 * Checked (safety, exhaustive):
 *  - no deadlock: every process ends at an end label; in particular the monitor never
 *    sleeps for good while job 1 holds the only worker with job 2 queued (its sleep flag,
 *    re-check, and the wake by a worker leaving its park);
 *  - the count: whenever the monitor finds every active worker parked, `unblocked`
 *    equals the number of ACTIVE slots (every mark of the monitor undone exactly once,
 *    whether the job's end, the worker, or the monitor undoes it);
 *  - each job runs exactly once.
 *
 * Citations (the pool's files, by function): Worker = worker_main + run_job (pool_worker.c)
 * + bolts__pool_park + bolts__pool_try_retire + bolts__pool_spare_wait (pool_park.c);
 * after_job = the `stalled` check at run_job's end and bolts__pool_stall_over; resume =
 * bolts__pool_monitor_resume; Monitor = monitor_main + look + stall + sleep_while_parked
 * (pool_monitor.c); add_worker = bolts__pool_add_worker (spare path, pool_compensate.c).
 *
 * Abstractions: one queue (the steal of a compensating worker is a take from it); the
 * submitter's notify claims the parked worker if there is one (I3-I5 are pool.pml's);
 * retiring is one step (the C code's CAS of `unblocked` and its SPARE store are two, with
 * nobody counting in between but the monitor's sleep check, which needs every active slot
 * parked: a retiring thread is not parked); no I6 waits (pool.pml covers them; the hand-over
 * of a mark to an I6 wait is the same exchange as after_job).
 *
 * Mutants (each must be caught):
 *   1  a worker leaving its park does not wake the monitor (no resume): the monitor sleeps
 *      while job 1 blocks the worker, and job 2 never runs;
 *   2  the mark is undone by a load and a store, not an exchange: the worker and the
 *      monitor may both put the worker back, and `unblocked` counts it twice;
 *   3  the monitor checks the parked bits before it publishes that it sleeps: a worker
 *      that leaves its park in between finds no flag, and the monitor sleeps for good.
 */
#ifndef MUTANT
#define MUTANT 0
#endif

#define N 1
#define FREE 0
#define ACTIVE 1
#define SPARE 2

byte queue[2];      /* queue[0] is the next job, 0: none; at most two jobs */
bool ran[3];        /* ran[j]: job j has run */
byte runs[3];       /* times job j started */
bool injob[2];      /* slot i is running a job (started != executed) */
bool parked[2];     /* slot i's parked bit */
bool wake[2];       /* slot i's wake word */
byte state[2];      /* SLOT_* */
bool stalled[2];    /* the monitor counts slot i as blocked in its job */
byte unblocked = N; /* active threads not counted as blocked */
bool asleep;        /* the monitor sleeps for want of a worker out of its park */
bool done;          /* both jobs have run: the monitor may stop looking */

#define QUEUED (queue[0] != 0)
#define ACTIVE_COUNT ((state[0] == ACTIVE) + (state[1] == ACTIVE))
#define ALL_ACTIVE_PARKED ((state[0] != ACTIVE || parked[0]) && (state[1] != ACTIVE || parked[1]))

inline enqueue(j) {
    atomic {
        if
        :: queue[0] == 0 -> queue[0] = j
        :: else -> queue[1] = j
        fi
    }
}

/* The stall_over exchange: exactly one of the worker and the monitor puts it back. */
inline stall_over(i) {
#if MUTANT == 2
    if
    :: stalled[i] -> stalled[i] = 0; unblocked++
    :: else -> skip
    fi
#else
    atomic {
        if
        :: stalled[i] -> stalled[i] = 0; unblocked++
        :: else -> skip
        fi
    }
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

proctype Submitter() {
    enqueue(1);
    /* notify: claim the parked worker, if any (pool.pml checks the real protocol) */
    atomic { if :: parked[0] -> parked[0] = 0; wake[0] = 1 :: else -> skip fi }
    enqueue(2);
    atomic { if :: parked[0] -> parked[0] = 0; wake[0] = 1 :: else -> skip fi }
}

proctype Worker(byte i) {
    byte job;
    if
    :: i >= N -> end_spare0: (state[i] == ACTIVE); resume()
    :: else -> skip
    fi;
end_loop:
    do
    :: atomic { QUEUED -> job = queue[0]; queue[0] = queue[1]; queue[1] = 0; injob[i] = 1; runs[job]++ };
       assert(runs[job] == 1);
       if
       :: job == 1 -> (ran[2])   /* asleep in a wait the pool cannot see, until job 2 ran */
       :: else -> skip
       fi;
       atomic { ran[job] = 1; done = ran[1] && ran[2]; injob[i] = 0 };
       stall_over(i)              /* run_job's check after the job */
    :: atomic { !QUEUED && i >= N && unblocked > N -> unblocked--; state[i] = SPARE };
       /* a spare until the monitor brings it in again */
end_spare: (state[i] == ACTIVE);
       resume()
    :: !QUEUED && (i < N || unblocked <= N) ->
       parked[i] = 1;
       if
       :: QUEUED -> atomic { if :: parked[i] -> parked[i] = 0 :: else -> (wake[i]) fi }; wake[i] = 0
       :: else ->
end_parked: (wake[i]); wake[i] = 0
       fi;
       resume()                   /* out of its park: the monitor must look again */
    od
}

/* bolts__pool_add_worker's spare path: slot 1 becomes ACTIVE and counts as unblocked. */
inline add_worker() {
    atomic {
        if
        :: state[1] != ACTIVE -> state[1] = ACTIVE; unblocked++
        :: else -> skip   /* no room: the capacity bound */
        fi
    }
}

proctype Monitor() {
    byte i;
end_loop:
    do
    :: done && ALL_ACTIVE_PARKED -> break
    :: else ->
       /* look */
       for (i : 0 .. 1) {
           if
           :: state[i] == ACTIVE && injob[i] && !stalled[i] && QUEUED ->
              if
              :: atomic { stalled[i] = 1; unblocked-- };
                 if :: unblocked < N -> add_worker() :: else -> skip fi
              :: skip   /* judged computing, or not yet held long enough */
              fi
           :: !injob[i] && stalled[i] -> stall_over(i)
           :: else -> skip
           fi
       }
       /* sleep while every active worker is parked */
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
          atomic { assert(unblocked == ACTIVE_COUNT || stalled[0] || stalled[1]) };
end_asleep: (!asleep)
       :: else -> asleep = 0
       fi
#endif
    od;
    assert(unblocked == ACTIVE_COUNT || stalled[0] || stalled[1])
}

init {
    state[0] = ACTIVE;   /* the worker may park before the first job comes, or not */
    atomic {
        run Worker(0);
        run Worker(1);
        run Monitor();
        run Submitter()
    }
}
