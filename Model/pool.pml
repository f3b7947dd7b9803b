/*
 * Model of the thread pool's run queues, searching count and parking protocol in
 * CSupport/CBoltsRuntime (pool.c and the pool_*.c beside it): invariants I2-I5 of
 * include/bolts_pool.h ("no job is run twice, and no job is left in a queue while every
 * worker sleeps"); with -DSHUTDOWN=1 also I7, with -DBLOCKING=1 also I6 (compensating
 * workers and spares; see "Compensation").
 *
 * Citations are "function (pool.c:line)" against commit 72eb374; the function names are
 * the anchor if the lines drift. The pool has since been split into files of one concern
 * each, and the functions that cross files were renamed: find_work and restrain are
 * bolts__pool_find_work and bolts__pool_restrain (pool_steal.c); take, any_work, notify,
 * wake_one and wake_slot are inline in pool_internal.h; park, try_retire, spare_wait and
 * wake_parked are bolts__pool_park, bolts__pool_try_retire, bolts__pool_spare_wait and
 * bolts__pool_wake_parked (pool_park.c, with maybe_close and wake_all); spin_for_work is
 * bolts__pool_spin_for_work (pool_spin.c); worker_main and run_job are in pool_worker.c;
 * outside_slot, sweep, run_here and bolts_pool_try_submit in pool_submit.c;
 * bolts__pool_add_worker and the blocking hooks in pool_compensate.c; shutdown in pool.c.
 *
 * Processes:
 *   Submitter(p)  bolts_pool_try_submit from a thread that is not a worker:
 *                 picks a queue (outside_slot, pool_submit.c, the CPU it runs on, which may be
 *                 any of them), enqueues (liburcu's cds_wfcq_enqueue), then notify
 *                 if the queue was empty. NJOBS jobs in all, spread over
 *                 NSUB submitters.
 *   Drain(p)      the submitter's store buffer (x86-TSO): see "Memory ordering".
 *   Worker(w)     worker_main: find_work (own queue, then the others), the
 *                 searching count, spin_for_work (a bounded number of extra scans, the
 *                 first after a moment out of the searching count, or not), park
 *                , run_job.
 *   Shutdowner    with SHUTDOWN=1: bolts_pool_shutdown(wait = false); see
 *                 "Shutdown" below.
 *   Worker(1..)   with BLOCKING=1, started by bolts__pool_add_worker (only Worker(0) at first); see
 *                 "Compensation" below.
 *   init          starts everyone; `timeout` (no process can move) then means the system
 *                 is quiescent, and the end-of-run check says every job ran exactly once.
 *
 * The queue is liburcu's wait-free concurrent queue at node level: per queue a head link
 * and a tail, per job a next link. Enqueue is the tail exchange (one step, a full barrier)
 * followed by the link store into the old tail (the head's link if the queue was empty).
 * `take` is cds_wfcq_empty (both the head link and the tail), then the
 * consumer flag (a try-lock, I2), then __cds_wfcq_dequeue_nonblocking step by step,
 * including the last-node case: clear the head link, CAS the tail back to the head, and
 * when that CAS loses to an enqueue, WOULDBLOCK until the new link is visible (the head
 * link is put back).
 *
 * Memory ordering. The point of this model is the submitter's side of I3 since it stopped
 * issuing a seq_cst fence after the enqueue (commit 54cc226): liburcu's tail exchange is a
 * locked instruction (a full barrier), but the link store after it is an ordinary store,
 * and the submitter's later loads (the searching count, the parked mask) may complete
 * while that store still sits in its store buffer. So each submitter has a one-entry store
 * buffer: the link store goes there, and its Drain process makes it visible at any later
 * moment; a locked instruction of the submitter (the next tail exchange, the claim in
 * wake_one) drains it first, as x86 does. Everything else is sequentially consistent:
 * workers' parking RMWs are seq_cst and followed by a seq_cst fence in the C code, and the
 * consumer's own stores are ordered by its flag's release (abstraction, stated here).
 *
 * Shutdown (I7), with -DSHUTDOWN=1 (citations for this part: pool.c as of 539f58d, the
 * last commit that touched it): a Shutdowner calls bolts_pool_shutdown(wait = false)
 * at any moment: the seq_cst CAS OPEN -> CLOSING, then wake_parked. The
 * submitters use bolts_pool_submit: try_submit's early relaxed load of the
 * state refuses a thread that is not a worker unless OPEN, and the job then runs in place
 * (run_here); an accepted job's submitter re-reads the state after its tail exchange
 * and sweeps every queue itself (sweep) if it reads CLOSED, else
 * notifies as before. A parking worker reads the state after its fence:
 * CLOSED cancels the park; CLOSING with nothing queued calls maybe_close,
 * which sets CLOSED when every worker's parked bit is set and then wakes them all
 * (wake_all). A worker whose scans found nothing reads the state (acquire);
 * on CLOSED it makes its final scan and exits when that finds nothing. The Shutdowner is
 * sequentially consistent: its CAS is followed by a seq_cst fence before wake_parked's
 * mask loads (added to pool.c with this model; before, only x86's locked CAS ordered them),
 * and it loads nothing before the CAS; maybe_close fences the same way after its CAS. The end-of-run check then also says: the Shutdowner returned, the state is
 * CLOSED, both workers left their loop (a worker asleep for ever fails here), and every
 * job ran once, on a worker, in a sweep, or in place after its refusal.
 * Not in the shutdown part: spares and compensating workers (bolts__pool_all_active_parked sees two
 * ACTIVE slots; wake_all has no spares to wake; try_retire returns false at once),
 * submissions from workers (the only submitters CLOSING admits) and from jobs run by a
 * sweep, await_termination (wait = true), and the relaxed parked-mask load in wake_one
 * (the model's claim is the fetch_and alone, as in the rest of the model).
 *
 * Compensation (I6), with -DBLOCKING=1 (citations for this part: pool.c and task.c as of
 * 2549ade): a pool of N = 1 worker (slot 0) and EXTRA (default 2) extra slots, FREE at
 * first (hwm = 1); one outside Submitter puts every job on queue 0 (outside_slot,
 * pool_submit.c, cpu % N). Job j (odd) calls bolts_task_wait on the task that
 * job j + 1 completes, so with NJOBS = 2 job 1 blocks until job 2, queued after it, has
 * run: only a compensating thread can run it (the Swift test
 * aJobBlockedOnAnotherJobDoesNotDeadlockAPoolOfOne). The wait's task push decides whether
 * it sleeps; around the sleep, the hooks bolts__pool_blocking_begin (pool_compensate.c, relaxed
 * fetch_sub of `unblocked`; below N, bolts__pool_add_worker) and bolts__pool_blocking_end (
 * relaxed fetch_add). bolts__pool_add_worker, under spawn_lock: the acq_rel CAS
 * SPARE -> ACTIVE of each spare in [N, hwm) then wake_slot, else a new slot hwm (ACTIVE,
 * the count, the release store of hwm) whose thread is `run` (pthread_create, which never
 * fails here), else nothing at capacity. The worker loop calls try_retire
 * before parking: a slot past N retires when its CAS takes `unblocked` from u > N to u - 1,
 * resets `wake`, stores SPARE (seq_cst), gives back its searching count and re-checks the
 * queues (worker_main's retire path, I5), then sleeps in spare_wait until bolts__pool_add_worker
 * activates it. Parked bits and wake words cover every slot (wake_one claims any of them).
 * Every write to `unblocked` is an RMW, so modelling them sequentially consistent is exact;
 * try_retire's relaxed load is justified where it is modelled.
 * The end-of-run check adds: every wait returned, nobody holds spawn_lock, and `unblocked`
 * equals the number of ACTIVE slots (N plus the compensating threads still ACTIVE, each of
 * which must be parked with its bit set, so that a notify can claim it).
 * Not a property (STRICT_RETIRE=1 fails, 145 states): "the compensating thread retires to
 * a spare once the blocked worker unblocks". It retires only when it next finds no work
 * (try_retire runs before a park); if it went idle while the worker was still blocked
 * (count <= N) it parks as an ACTIVE thread and stays so, counted in `unblocked` (N + 1),
 * until a notify claims it. That is what finding F4 (Model/FINDINGS.md) turns into a
 * deadlock: with NJOBS = 4 (job 3 waits for job 4) `pool-compensation-twice` fails on the
 * C code: job 3 blocks with job 4 queued behind it, the count stays at N (the parked
 * compensator is counted), so nobody is started, and nobody wakes the parked thread
 * (job 4 went into a non-empty queue: no notify). pool_compensate.c now has the fix, modelled
 * here: blocking_begin, when it does not compensate, fences and notifies if any queue is
 * non-empty; NJOBS = 4 then passes (9,251,220 states), and MUTANT=11 (the code before the
 * fix) was caught, until the fix of finding F6 (park): since then MUTANT=11 passes too
 * (9,190,769 states; also with NSUB = 2, and with SPIN = 1): the job queued behind the
 * blocking one is announced by the searcher that took the blocking job (I5), so the
 * hook's notify is not needed at these bounds. pool_compensate.c keeps it (it costs a fence and a
 * scan only when a block is not compensated, and these bounds are not a proof), and
 * run.sh checks MUTANT=11 as a configuration that must pass. With EXTRA = 1 (capacity N + 1)
 * NJOBS = 4 fails even with the fix, at the capacity bound only: a compensator whose CAS
 * retired it has not yet stored SPARE when the next block's bolts__pool_add_worker looks for a spare,
 * so bolts__pool_add_worker finds none, no room for a new slot, and gives up (bolts__pool_add_worker's capacity check, the
 * capacity warning); the pool's capacity is N + 256, where a new slot would be started.
 * Not in the compensation part: shutdown (BLOCKING and SHUTDOWN are exclusive), nested
 * waits (tl_block_depth > 1), timed waits, thread-creation failure, submissions from
 * workers. Mutants with BLOCKING=1:
 *   9  bolts__pool_blocking_begin does not decrement `unblocked` (so never compensates):
 *      job 2 is never run, job 1's worker sleeps for ever.
 *  10  bolts__pool_blocking_end does not give the count back: `unblocked` ends one short
 *      of the ACTIVE slots (and the compensator can never retire).
 *
 * Abstractions: no compensating workers (I6) unless BLOCKING=1; workers do not submit;
 * a worker's time-bounded spin is SPIN extra scans (the pauses between scans, which
 * grow during a spin, are time and not modelled); futex wait/wake are "block until the
 * word is 1" / "store 1" (a lost wake-up is then a worker blocked for ever, which the
 * end-of-run check sees as a job never run). sched_yield on a busy queue is a retry.
 * Not modelled: the fairness turns (I9) and the steal grace (I10), with which find_work
 * passes over a non-empty queue for a while; here a scan takes from any non-empty queue.
 * Both only delay a take: the job stays where `any_work` sees it, so a worker that passed
 * it over cannot park past it (the parking check of I3 is the same). Nor the restraint
 * (I11), with which a worker may park past a queue for a bounded time: it holds back only
 * jobs that a worker submitted to its own queue, and workers do not submit here; its
 * argument is that the queue's owner is awake (it submits from a job it runs) and its own
 * parking check sees its own queue.
 *
 * Mutants (run.sh's self-test; each must be caught):
 *   1  notify reads the searching count and the parked mask before the tail exchange (as
 *      if the enqueue were a plain store that later loads may pass): a lost wake-up.
 *   2  park checks the queues before it publishes its parked bit: a lost wake-up.
 *   3  any_work and cds_wfcq_empty look only at the head link, not the tail: with the
 *      link still in the submitter's store buffer a parker sees an empty queue. This is
 *      what makes the tail exchange (not the link store) the store of the I3 pair.
 * With SHUTDOWN=1:
 *   4  the submitter does not re-read the state after its enqueue (no sweep): a job that
 *      passed the early check while OPEN and is enqueued after the workers' final scans
 *      stays in the queue for ever.
 *   5  bolts_pool_shutdown does not wake the parked workers after CLOSING: workers parked
 *      while OPEN never notice; nobody closes the pool.
 *   6  maybe_close sets CLOSED without wake_all: the other parked worker sleeps for ever.
 *
 * Not mutants (these variants pass; kept as MUTANT=7 and 8 for the record):
 *   7  a worker that reads CLOSED exits without its final scan: 8,731,342 states at one
 *      job and 44,330,934 at NSUB=1 NJOBS=2, no error. In this model (x86, no spares)
 *      every worker is parked when CLOSED is set and woken after it, so the loop's next
 *      find_work already comes after every enqueue whose submitter did not read CLOSED.
 *      The final scan matters for a thread that reads CLOSED without having been parked
 *      at the CAS: a spare (not ACTIVE, so not needed by bolts__pool_all_active_parked).
 *   8  maybe_close sets CLOSED without checking that every worker is parked: no job is
 *      lost or run twice (11,239,725 states at one job): workers still running drain the
 *      queues before they exit and submitters that read CLOSED sweep. What it breaks is
 *      only I7's "workers drain; own workers may still submit" (a busy worker's own
 *      submissions would be refused and run in place), which the model does not observe.
 *
 * Ramp-up (I5's second half), with -DRAMP=1: the first job to start never returns (its
 * worker stops at a valid end state), so the end-of-run check that every job ran asks
 * that a job queued behind it was taken by the other worker: parallelism, which the
 * checks above do not observe (a parked worker is needed there only when no worker will
 * look at the queues again, and the parking check covers that). This is the Swift test
 * aJobQueuedBehindALongOneIsTakenByAnotherWorker, which failed once in CI: a searcher
 * whose last check before parking found work took its bit back and stopped counting as
 * a searcher, so neither it (no longer a searcher when it took the job) nor the
 * producer (who skipped its wake-up because it counted that searcher) woke the parked
 * worker, and the job queued behind the first waited for it. Mutants with RAMP=1:
 *  12  park's cancel path drops the searching count (the code before the fix).
 *  13  the last searcher to find work does not re-check the queues.
 */

#define NW 2            /* workers (fixed: the scans below are unrolled for two queues) */
#ifndef NSUB
#define NSUB 2          /* submitters */
#endif
#ifndef NJOBS
#define NJOBS 2         /* jobs in all (submitter p submits jobs p, p + NSUB, ...) */
#endif
#ifndef SPIN_YIELD
#define SPIN_YIELD 1    /* the spin may leave the searching count once, before its first
                         * extra scan (yield_cpu_while_idle; the runtime's build option
                         * BOLTS_POOL_SPIN_YIELD), or not (the option off, or an awaiter
                         * lately, BOLTS_POOL_SPIN_YIELD_AWAITED_NS): either */
#endif
#ifndef SPIN
#define SPIN 1          /* extra scans before parking (spin_for_work) */
#endif
#ifndef MUTANT
#define MUTANT 0
#endif
#ifndef SHUTDOWN
#define SHUTDOWN 0      /* 1: a Shutdowner races the rest (invariant I7); see "Shutdown" above */
#endif
#ifndef RAMP
#define RAMP 0          /* 1: the first job to start runs for ever (I5's ramp-up); see "Ramp-up" */
#endif
#if RAMP && (SHUTDOWN || BLOCKING)
#error "RAMP is a configuration of its own"
#endif
#ifndef BLOCKING
#define BLOCKING 0      /* 1: N = 1, a job blocks in bolts_task_wait (invariant I6); see "Compensation" */
#endif
#if BLOCKING && SHUTDOWN
#error "BLOCKING and SHUTDOWN are separate configurations"
#endif
#if BLOCKING
#define N 1             /* the pool's target (N workers): slot 0 */
#ifndef EXTRA
#define EXTRA 2         /* extra slots (spares, compensating threads): capacity N + EXTRA */
#endif
#define NSLOTS (N + EXTRA)
#else
#define NSLOTS NW       /* slots with a parked bit and a wake word */
#endif

#define NIL 0           /* jobs are 1..NJOBS; 0 is "none" and also the head's dummy node */
#define HEADNODE 0
#define FOUND_NOTHING 0
#define FOUND_BUSY 254
#define FOUND_HELD 253
#define IS_JOB(j) ((j) >= 1 && (j) <= NJOBS)

/* Queues (struct bolts_pool_slot: head, tail, consumer). */
byte qhead[NW];          /* head.node.next */
byte qtail[NW];          /* tail.p: HEADNODE when empty */
bit  consumer[NW];       /* the consumer flag (I2) */
byte jnext[NJOBS + 1];   /* job->next */

/* Parking (struct bolts_pool: searching, parked; slot->wake). */
byte searching = 0;
bit  parked[NSLOTS];
bit  wake[NSLOTS];

/* Bookkeeping for the checks. */
byte ran[NJOBS + 1];     /* times each job ran */
byte submitted = 0;      /* jobs whose tail exchange happened */
byte finished = 0;       /* submitters done */
#if RAMP
byte held = 0;           /* jobs that started and run for ever (at most one) */
#endif

#if SHUTDOWN
#define OPEN 0           /* POOL_OPEN, POOL_CLOSING, POOL_CLOSED */
#define CLOSING 1
#define CLOSED 2
byte state = OPEN;       /* pool->state */
byte rejected = 0;       /* jobs refused by try_submit and run in place (bolts_pool_submit) */
byte exited = 0;         /* workers that left worker_main's loop */
bit  shut_done = 0;      /* the Shutdowner returned */

/* run_job, run_here (a sweeper's or a rejected submit's): the job runs, once. */
#define RUN(j) ran[j]++; assert(ran[j] == 1)
#endif

#if BLOCKING
/* Compensation (I6): slot 0 is the pool's one worker (target N = 1), slots N .. NSLOTS - 1
 * the extra slots (capacity N + EXTRA; bolts_pool_create makes N + BOLTS_POOL_MAX_EXTRA_THREADS). */
#define SLOT_FREE 0      /* SLOT_FREE, SLOT_ACTIVE, SLOT_SPARE */
#define SLOT_ACTIVE 1
#define SLOT_SPARE 2
byte slotstate[NSLOTS];      /* slot->state */
byte hwm = N;            /* pool->hwm: slots [0, hwm) have been used */
byte unblocked = N;      /* pool->unblocked (an atomic_int; never negative here) */
bit  spawn_lock = 0;     /* pool->spawn_lock (pthread mutex) */
byte waits = 0;          /* bolts_task_wait calls that returned */
byte blocked = 0;        /* workers between the blocking hooks */
/* Job j (odd) waits for job j + 1's task: the job it waits for is queued after it. */
#define WAITS_FOR(j) ((j) % 2 == 1 && (j) < NJOBS -> (j) + 1 : 0)
#endif

/* Store buffers of the submitters: one pending link store each (x86-TSO). The target is
 * the node whose link is written: HEADNODE means qhead[pq], else jnext[pnode]. */
byte pjob[NSUB];         /* the job being linked in; NIL when the buffer is empty */
byte pnode[NSUB];
byte pq[NSUB];

inline flush(p) {
    if
    :: pjob[p] != NIL ->
        if
        :: pnode[p] == HEADNODE -> qhead[pq[p]] = pjob[p]
        :: else -> jnext[pnode[p]] = pjob[p]
        fi;
        pjob[p] = NIL
    :: else -> skip
    fi
}

/* cds_wfcq_empty: the head link and the tail (mutant 3: the head link only). */
#if MUTANT == 3
#define QEMPTY(q) (qhead[q] == NIL)
#else
#define QEMPTY(q) (qhead[q] == NIL && qtail[q] == HEADNODE)
#endif

/* any_work: one snapshot of both queues' emptiness. The C loop reads the
 * queues one after another; a queue can turn empty between the reads only through a
 * consumer, who is then awake and will scan again before it parks, and turn non-empty only
 * through a submitter, whose wake decision comes after its exchange (I3); so reading both
 * at one moment removes no behaviour the end-of-run check can see. */
#define ANY_WORK (!QEMPTY(0) || !QEMPTY(1))

/* take on queue q by p (a submitter sweeping after CLOSED, or 255: a worker);
 * res = a job, FOUND_NOTHING, FOUND_BUSY or FOUND_HELD. */
inline take(p, q, res) {
    if
    :: QEMPTY(q) -> res = FOUND_NOTHING
    :: else ->
        /* acquire exchange of the consumer flag */
        atomic {
#if SHUTDOWN
            /* A sweeping submitter: the exchange is a locked instruction, which drains its
             * store buffer. Its loads before it (the empty check) need no store forwarding:
             * while its link is buffered, the tail of that queue is its job (nobody can
             * dequeue the job before seeing the link), so the check says non-empty either
             * way. */
            if
            :: p != 255 -> flush(p)
            :: else -> skip
            fi;
#endif
            if
            :: consumer[q] -> res = FOUND_HELD
            :: else -> consumer[q] = 1; res = FOUND_NOTHING
            fi
        }
        if
        :: res == FOUND_HELD -> skip
        :: else ->
            /* __cds_wfcq_dequeue_nonblocking */
            if
            :: QEMPTY(q) -> res = FOUND_NOTHING
            :: else ->
                node = qhead[q];
                if
                :: node == NIL -> res = FOUND_BUSY          /* tail moved, link not visible */
                :: else ->
                    nxt = jnext[node];
                    if
                    :: nxt != NIL -> qhead[q] = nxt; res = node
                    :: else ->
                        qhead[q] = NIL;
                        atomic {                              /* uatomic_cmpxchg(tail, node, head) */
                            if
                            :: qtail[q] == node -> qtail[q] = HEADNODE; res = node
                            :: else -> res = FOUND_BUSY
                            fi
                        }
                        if
                        :: res == FOUND_BUSY ->
                            nxt = jnext[node];                /* ___cds_wfcq_node_sync_next, nonblocking */
                            if
                            :: nxt != NIL -> qhead[q] = nxt; res = node
                            :: else -> qhead[q] = node        /* put the head link back */
                            fi
                        :: else -> skip
                        fi
                    fi
                fi
            fi;
            atomic { consumer[q] = 0; node = 0; nxt = 0 }     /* release store of the flag */
        fi
    fi
}

#if BLOCKING
/* find_work with compensation: only queue 0 ever holds a job (outside
 * submissions go to slot cpu % N = 0 and workers do not submit), so the scans of the
 * other slots' queues, each one step that finds nothing, are left out, and so is the
 * acquire load of hwm that bounds them. The result is the same: queue 0's. */
inline find_work(self, res) {
    take(255, 0, got);
    res = got;
    got = 0
}
#else
/* find_work: own queue, then the other; BUSY beats HELD beats nothing. */
inline find_work(self, res) {
    take(255, self, got);
    if
    :: IS_JOB(got) -> res = got
    :: else ->
        why = got;
        take(255, 1 - self, got);
        if
        :: IS_JOB(got) -> res = got
        :: got == FOUND_BUSY -> res = FOUND_BUSY
        :: got == FOUND_HELD && why == FOUND_NOTHING -> res = FOUND_HELD
        :: else -> res = why
        fi
    fi;
    got = 0; why = 0
}
#endif

/* wake_one + notify, for a submitter p (drains its buffer at
 * the locked claim) or a worker (p = 255: no buffer). */
inline claim_one(p, w) {
    atomic {                                                  /* fetch_and (acq_rel): locked */
        if
        :: p != 255 -> flush(p)
        :: else -> skip
        fi;
        if
        :: parked[w] -> parked[w] = 0; claimed = w + 1
        :: else -> skip
        fi
    }
}

inline wake_one(p) {
    claimed = 0;
    claim_one(p, 0);
    if
    :: claimed == 0 -> claim_one(p, 1)
    :: else -> skip
    fi;
#if NSLOTS > 2
    if
    :: claimed == 0 -> claim_one(p, 2)                        /* the mask covers the capacity */
    :: else -> skip
    fi;
#endif
    if
    :: claimed != 0 ->
        searching++;                                          /* relaxed fetch_add */
        wake[claimed - 1] = 1;                                /* wake_slot: store + FUTEX_WAKE */
        claimed = 0
    :: else -> skip
    fi
}

inline notify(p) {
    if
    :: searching != 0 -> skip
    :: else -> wake_one(p)
    fi
}

#if SHUTDOWN
/* wake_parked: wake_one until it finds no parked worker. */
inline wake_parked(p) {
    do
    :: claimed = 0;
       claim_one(p, 0);
       if
       :: claimed == 0 -> claim_one(p, 1)
       :: else -> skip
       fi;
       if
       :: claimed != 0 ->
           searching++;                                       /* relaxed fetch_add */
           wake[claimed - 1] = 1;                             /* wake_slot */
           claimed = 0
       :: else -> break
       fi
    od
}

/* maybe_close, by a parked worker that read CLOSING. bolts__pool_all_active_parked
 *: both slots are ACTIVE (no spares here), so one seq_cst load of the mask
 * per slot, each testing that slot's bit. Then the CLOSED CAS (seq_cst) and, if it won,
 * wake_all: wake_parked (no spares to wake). MUTANT=8 skips the test,
 * mutant 6 the wake_all. */
inline maybe_close() {
#if MUTANT == 8
    all = 1;
#else
    all = parked[0];
    if
    :: all -> all = parked[1]
    :: else -> skip
    fi;
#endif
    if
    :: all ->
        atomic {                                              /* CAS CLOSING -> CLOSED */
            if
            :: state == CLOSING -> state = CLOSED; all = 1
            :: else -> all = 0
            fi
        }
        if
#if MUTANT == 6
        :: all -> all = 0                                     /* broken: nobody is woken */
#else
        :: all -> all = 0; wake_parked(255)                   /* wake_all */
#endif
        :: else -> skip
        fi
    :: else -> skip
    fi
}

/* sweep by submitter p after it read CLOSED: take from every queue until it
 * is empty, retrying on BUSY (sched_yield) and HELD (cpu_relax); run each job here. */
inline sweep(p) {
    sq = 0;
    do
    :: sq == NW -> break
    :: else ->
        take(p, sq, got);
        if
        :: got == FOUND_NOTHING -> sq++
        :: got == FOUND_BUSY || got == FOUND_HELD -> got = 0  /* sched_yield, cpu_relax */
        :: else -> atomic { RUN(got); got = 0 }               /* run_here */
        fi
    od;
    sq = 0
}

/* bolts_pool_shutdown(pool, wait = false). */
proctype Shutdowner() {
    byte claimed;
    bit won;
    atomic {                                                  /* CAS OPEN -> CLOSING, seq_cst */
        if
        :: state == OPEN -> state = CLOSING; won = 1
        :: else -> skip
        fi
    }
#if MUTANT != 5
    if
    :: won -> wake_parked(255)                                /* broken in mutant 5: left out */
    :: else -> skip
    fi;
#endif
    shut_done = 1
}
#endif

#if BLOCKING
/* bolts__pool_add_worker, by a worker whose blocking hook left fewer than N unblocked:
 * a spare if there is one, else a new thread in slot hwm, else (capacity reached) nothing.
 * Everything in it runs under spawn_lock, so the lock is one step each way and the steps
 * inside are the C code's atomic operations. */
inline bolts__pool_add_worker() {
    atomic { spawn_lock == 0 -> spawn_lock = 1 }              /* pthread_mutex_lock */
    h = hwm;                                                  /* relaxed load: written under the lock */
    won = 0;
    sl = N;
    do                                                        /* the spares in [target, hwm) */
    :: sl >= h -> break
    :: else ->
        atomic {                                              /* CAS SPARE -> ACTIVE, acq_rel */
            if
            :: slotstate[sl] == SLOT_SPARE -> slotstate[sl] = SLOT_ACTIVE; won = 1
            :: else -> skip
            fi
        }
        if
        :: won -> break
        :: else -> sl++
        fi
    od;
    if
    :: won ->
        unblocked++;                                          /* relaxed fetch_add */
        wake[sl] = 1;                                         /* wake_slot: release store + FUTEX_WAKE */
        spawn_lock = 0                                        /* pthread_mutex_unlock */
    :: else ->
        if
        :: h >= NSLOTS -> spawn_lock = 0                      /* capacity: warn, return */
        :: else ->
            slotstate[h] = SLOT_ACTIVE;                       /* relaxed store */
            unblocked++;                                      /* relaxed fetch_add */
            hwm = h + 1;                                      /* release store */
            run Worker(h);                                    /* start_thread: pthread_create, never fails here */
            spawn_lock = 0                                    /* pthread_mutex_unlock */
        fi
    fi;
    atomic { h = 0; won = 0; sl = 0 }
}

/* bolts__pool_blocking_begin: tl_slot is set (a worker) and the wait is the
 * outermost (tl_block_depth 0 -> 1; the model's jobs wait once, not nested). */
inline blocking_begin() {
    blocked++;                                                /* bookkeeping */
#if MUTANT == 9
    left = unblocked;                                         /* broken: the count is not decremented */
#else
    atomic { left = unblocked - 1; unblocked-- }              /* relaxed fetch_sub */
#endif
    if
    :: left < N -> bolts__pool_add_worker()                               /* bolts__pool_blocking_begin */
#if MUTANT != 11
    :: else ->                                                /* the F4 fix: a seq_cst fence, then any_work + notify */
        work = ANY_WORK;
        if
        :: work -> work = 0; notify(255)
        :: else -> skip
        fi
#else
    :: else -> skip                                           /* mutant 11: the code before the F4 fix */
#endif
    fi;
    left = 0
}

/* bolts__pool_blocking_end. */
inline blocking_end() {
#if MUTANT != 10
    unblocked++;                                              /* relaxed fetch_add */
#endif
    blocked--                                                 /* (mutant 10: the count is not given back) */
}

/* bolts_task_wait by job `job`, on the task that job wj completes: the task
 * push of the waiter is the one step that decides whether the task is still
 * pending; if it is, the blocking hooks surround the futex wait for the waiter's `woken`
 *, which is "block until job wj has run" here. The drain and the spin
 * before the push only delay it. */
inline task_wait() {
    if
    :: ran[wj] != 0 -> skip                                   /* settled: no sleep, no hooks */
    :: else ->
        blocking_begin();
        ran[wj] != 0;                                         /* acquire load of w->woken, futex wait */
        blocking_end()
    fi;
    atomic { waits++; wj = 0 }
}

/* try_retire: only a slot past the target retires; the relaxed load and the
 * CAS loop on `unblocked`. Every write to `unblocked` is an RMW, so the CAS reads the
 * latest value and a stale load only makes the thread give up (as if it had loaded before
 * the last increment) or fail its CAS and re-read: sequential consistency loses nothing.
 * compare_exchange_weak's spurious failure is a retry with the same value: a stutter. */
inline try_retire() {
    retired = 0;
    if
    :: self < N -> skip
    :: else ->
        u = unblocked;                                        /* relaxed load */
        do
        :: u <= N -> break                                    /* try_retire */
        :: else ->
            atomic {                                          /* weak CAS u -> u - 1, relaxed */
                if
                :: unblocked == u -> unblocked = u - 1; retired = 1
                :: else -> u = unblocked
                fi
            }
            if
            :: retired -> break
            :: else -> skip
            fi
        od;
        u = 0;
        if
        :: retired ->
            wake[self] = 0;                                   /* relaxed store */
            slotstate[self] = SLOT_SPARE                      /* seq_cst store, then a fence; */
                                                              /* the CLOSING test is for shutdown */
        :: else -> skip
        fi
    fi
}
#endif

proctype Drain(byte p) {
end:
    do
    :: atomic { pjob[p] != NIL -> flush(p) }
    od
}

proctype Submitter(byte p) {
    byte j = p + 1, q, old, claimed;
    bit nonempty, skip_notify;
#if SHUTDOWN
    byte node, nxt, got, sq;
#endif
    do
    :: j > NJOBS -> break
    :: else ->
#if SHUTDOWN
        /* bolts_pool_try_submit: the early refusal, a relaxed load. Not a
         * worker, so CLOSING refuses too; bolts_pool_submit then runs the
         * job here (run_here). */
        if
        :: state != OPEN -> atomic { RUN(j); rejected++ }
        :: else ->
#endif
#if BLOCKING
        q = 0;                                                /* outside_slot: cpu % N = 0 */
#else
        if                                                    /* outside_slot: any CPU */
        :: q = 0
        :: q = 1
        fi;
#endif
#if MUTANT == 1
        /* broken: the notify decision is made before the enqueue is visible */
        skip_notify = (searching != 0);
        if
        :: !skip_notify -> wake_one(p)
        :: else -> skip
        fi;
#endif
        jnext[j] = NIL;
        atomic {                                              /* uatomic_xchg: locked, full barrier */
            flush(p);
            old = qtail[q];
            qtail[q] = j;
            submitted++
        }
        /* the link store (one store), into the store buffer */
        atomic { pnode[p] = old; pq[p] = q; pjob[p] = j }
        nonempty = (old != HEADNODE);
#if SHUTDOWN && MUTANT != 4
        /* The re-read of the state, relaxed, ordered after the exchange by
         * its full barrier; CLOSED: sweep every queue (our job may have landed after the
         * last worker's final scan). Mutant 4 leaves it out (notifies as if OPEN). */
        if
        :: state == CLOSED -> sweep(p)
        :: else ->
#endif
#if MUTANT != 1
        if
        :: !nonempty -> notify(p)                             /* bolts_pool_try_submit */
        :: else -> skip
        fi;
#endif
#if SHUTDOWN && MUTANT != 4
        fi;
#endif
#if SHUTDOWN
        fi;
#endif
        atomic { j = j + NSUB; old = 0; q = 0; nonempty = 0 }
    od;
    finished++
}

proctype Worker(byte self) {
    bit searching_me = 0, work, last;
#if RAMP
    bit stuck;
#endif
    byte job, n, old, node, nxt, why, got, claimed;
#if SHUTDOWN
    byte st;
    bit all;
#endif
#if BLOCKING
    byte wj, left, h, u, sl;
    bit won, retired;
#endif
end:
    do
    :: find_work(self, job);
       if
       :: !IS_JOB(job) ->
            if
            :: !searching_me -> searching++; searching_me = 1
            :: else -> skip
            fi;
            n = 0;
            do                                                /* spin_for_work */
            :: IS_JOB(job) || n >= SPIN -> break
            :: else ->
#if SPIN_YIELD
                if
                :: n == 0 ->                                  /* yield_cpu_while_idle */
                    searching--;                              /* seq_cst fetch_sub */
                    searching++                               /* relaxed fetch_add, after the yield */
                :: n == 0 -> skip                             /* an awaiter lately: no yield */
                :: else -> skip
                fi;
#endif
                find_work(self, job); n++
            od
       :: else -> skip
       fi;
       if
       :: IS_JOB(job) ->
            if
            :: searching_me ->
                searching_me = 0;
                atomic { old = searching; searching-- }       /* acq_rel fetch_sub */
                if
#if MUTANT == 13
                :: old == 255 ->                              /* broken: no re-check */
#else
                :: old == 1 ->                                /* I5: the last searcher re-checks */
#endif
                    work = ANY_WORK;
                    if
                    :: work -> notify(255)
                    :: else -> skip
                    fi
                :: else -> skip
                fi
            :: else -> skip
            fi;
#if BLOCKING
            atomic {                                          /* run_job: the job starts */
                ran[job]++;
                assert(ran[job] == 1);
                wj = WAITS_FOR(job);
                job = 0; n = 0; old = 0; work = 0
            }
            if
            :: wj != 0 -> task_wait()                         /* the job waits for a later one */
            :: else -> skip
            fi
#else
            atomic {                                          /* run_job */
                ran[job]++;
                assert(ran[job] == 1);
#if RAMP
                stuck = (held == 0);
                held = held + stuck;
#endif
                job = 0; n = 0; old = 0; work = 0
            }
#if RAMP
            /* The first job to start never returns (nor does the notify that a steal
             * from a backlog makes after its job: I9, not modelled). */
            if
            :: stuck ->
end_long:       false
            :: else -> skip
            fi;
#endif
#endif
       :: job == FOUND_BUSY -> atomic { job = 0; n = 0 }      /* sched_yield, retry */
       :: else ->
#if SHUTDOWN
            /* worker_main: acquire load of the state; CLOSED: a seq_cst
             * fence, then the final scan (find_work): nothing left exits the loop, a job
             * runs, BUSY or HELD go round again. MUTANT=7 exits without the scan.
             * try_retire returns false at once: no spares here. */
            if
            :: state == CLOSED ->
#if MUTANT == 7
                job = FOUND_NOTHING;
#else
                find_work(self, job);
#endif
                if
                :: job == FOUND_NOTHING -> break
                :: IS_JOB(job) -> atomic { RUN(job); job = 0 }  /* run_job */
                :: else -> job = 0                            /* BUSY, HELD: again */
                fi
            :: else ->
#endif
#if BLOCKING
            /* worker_main: try_retire before parking. A retired thread gives
             * back its searching count (seq_cst, then a fence) and re-checks the queues
             * (I5), then waits as a spare (spare_wait) until bolts__pool_add_worker
             * activates it (wake_all, its other waker, is shutdown's). */
            try_retire();
            if
            :: retired ->
                retired = 0;
                atomic { job = 0; n = 0 };
                if
                :: searching_me ->
                    searching_me = 0;
                    searching--;                              /* seq_cst fetch_sub, fence */
                    work = ANY_WORK;                          /* any_work */
                    if
                    :: work -> work = 0; notify(255)
                    :: else -> skip
                    fi
                :: else -> skip
                fi;
end_spare:      wake[self] == 1;                              /* wait_for_wake */
                if
                :: slotstate[self] == SLOT_ACTIVE -> skip     /* acquire load: activated */
                :: else ->
                    atomic {                                  /* CAS SPARE -> FREE, acq_rel */
                        if
                        :: slotstate[self] == SLOT_SPARE -> slotstate[self] = SLOT_FREE; won = 1
                        :: else -> skip
                        fi
                    }
                    if
                    :: won -> break                           /* the thread exits */
                    :: else -> skip
                    fi
                fi
            :: else ->
#endif
            /* park */
            wake[self] = 0;
#if MUTANT == 2
            work = ANY_WORK;                                   /* broken: checks first */
            parked[self] = 1;
            if
            :: searching_me -> searching--
            :: else -> skip
            fi;
#else
            parked[self] = 1;                                 /* seq_cst fetch_or */
            if
            :: searching_me -> searching--                    /* seq_cst fetch_sub */
            :: else -> skip
            fi;
#if SHUTDOWN
            /* after the seq_cst fence: the state (relaxed), then, unless
             * CLOSED, any_work */
            st = state;
            atomic {
                if
                :: st == CLOSED -> work = 1
                :: else -> work = ANY_WORK
                fi
            }
#else
            work = ANY_WORK;                                   /* after the seq_cst fence */
#endif
#endif
            if
            :: !work ->
#if SHUTDOWN
                atomic { job = 0; n = 0; all = (st == CLOSING); st = 0 };
                if
                :: all -> maybe_close()                       /* read CLOSING: may claim our own bit */
                :: else -> skip
                fi;
#else
                atomic { job = 0; n = 0 };
#endif
end_parked:     wake[self] == 1;                              /* wait_for_wake */
                searching_me = 1
            :: else ->
                atomic {                                      /* fetch_and: take the bit back */
                    if
                    :: parked[self] -> parked[self] = 0; last = 1
                    :: else -> last = 0
                    fi
                }
#if SHUTDOWN
                atomic { job = 0; n = 0; work = 0; st = 0 };
#else
                atomic { job = 0; n = 0; work = 0 };
#endif
                if
                :: last ->
#if MUTANT == 12
                    searching_me = 0;                         /* broken: drops the duty of I5 */
#else
                    if                                        /* stay a searcher (I5) */
                    :: searching_me -> searching++            /* relaxed fetch_add */
                    :: else -> skip
                    fi;
#endif
                    last = 0
                :: else ->
end_claimed:        wake[self] == 1; searching_me = 1         /* a claimer beat us */
                fi
            fi
#if BLOCKING
            fi
#endif
#if SHUTDOWN
            fi
#endif
       fi
    od;
#if SHUTDOWN
    /* worker_main after the loop: give back the searching count, exit */
    if
    :: searching_me -> searching_me = 0; searching--          /* relaxed fetch_sub */
    :: else -> skip
    fi;
    exited++
#endif
}

init {
    byte i;
    atomic {
#if BLOCKING
        slotstate[0] = SLOT_ACTIVE;                           /* bolts_pool_create */
        run Worker(0);                                        /* slot 1 is started by bolts__pool_add_worker */
#else
        for (i : 0 .. NW - 1) { run Worker(i) }
#endif
        for (i : 0 .. NSUB - 1) { run Submitter(i); run Drain(i) }
#if SHUTDOWN
        run Shutdowner();
#endif
    }
    /* Quiescence: nothing can move any more. Every job was submitted and run once. */
    timeout ->
        assert(finished == NSUB);
#if SHUTDOWN
        /* ... or refused and run in place; the pool is CLOSED and every worker left (a
         * worker parked for ever after shutdown fails here) */
        assert(shut_done);
        assert(submitted + rejected == NJOBS);
        assert(state == CLOSED);
        assert(exited == NW);
#else
        assert(submitted == NJOBS);
#endif
        for (i : 1 .. NJOBS) { assert(ran[i] == 1) }
#if BLOCKING
        /* Every wait returned; nobody holds the spawn lock; the count of unblocked
         * threads is the number of ACTIVE slots again (nobody is blocked now). */
        assert(waits == NJOBS / 2 && blocked == 0 && spawn_lock == 0);
        i = 0;
        do
        :: i == EXTRA -> break
        :: else ->
            if
            :: slotstate[N + i] == SLOT_ACTIVE ->
#if STRICT_RETIRE
                /* I6 read strictly: every compensating thread has retired */
                assert(false);
#endif
                /* A compensating thread still ACTIVE is parked with its bit set (a
                 * notify can claim it); it retires at its next idle scan. */
                assert(parked[N + i]);
                unblocked--
            :: else -> skip
            fi;
            i++
        od;
        assert(unblocked == N);
#endif
}
