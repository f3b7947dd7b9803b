/*
 * Model of the thread pool's run queues, searching count and parking protocol in
 * CSupport/CBoltsRuntime/pool.c: invariants I2-I5 of include/bolts_pool.h ("no job is run
 * twice, and no job is left in a queue while every worker sleeps").
 *
 * Citations are "function (pool.c:line)" against commit 72eb374; the function names are
 * the anchor if the lines drift.
 *
 * Processes:
 *   Submitter(p)  bolts_pool_try_submit (pool.c:671) from a thread that is not a worker:
 *                 picks a queue (outside_slot, pool.c:633: the CPU it runs on, which may be
 *                 any of them), enqueues (liburcu's cds_wfcq_enqueue), then notify
 *                 (pool.c:258) if the queue was empty. NJOBS jobs in all, spread over
 *                 NSUB submitters.
 *   Drain(p)      the submitter's store buffer (x86-TSO): see "Memory ordering".
 *   Worker(w)     worker_main (pool.c:484): find_work (own queue, then the others), the
 *                 searching count, spin_for_work (a bounded number of extra scans), park
 *                 (pool.c:314), run_job.
 *   Shutdowner    with SHUTDOWN=1: bolts_pool_shutdown(wait = false) (pool.c:736); see
 *                 "Shutdown" below.
 *   init          starts everyone; `timeout` (no process can move) then means the system
 *                 is quiescent, and the end-of-run check says every job ran exactly once.
 *
 * The queue is liburcu's wait-free concurrent queue at node level: per queue a head link
 * and a tail, per job a next link. Enqueue is the tail exchange (one step, a full barrier)
 * followed by the link store into the old tail (the head's link if the queue was empty).
 * `take` (pool.c:134) is cds_wfcq_empty (both the head link and the tail), then the
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
 * (pool.c:736) at any moment: the seq_cst CAS OPEN -> CLOSING, then wake_parked. The
 * submitters use bolts_pool_submit (pool.c:729): try_submit's early relaxed load of the
 * state refuses a thread that is not a worker unless OPEN, and the job then runs in place
 * (run_here); an accepted job's submitter re-reads the state after its tail exchange
 * (pool.c:720) and sweeps every queue itself (sweep, pool.c:196) if it reads CLOSED, else
 * notifies as before. A parking worker reads the state after its fence (pool.c:336):
 * CLOSED cancels the park; CLOSING with nothing queued calls maybe_close (pool.c:308),
 * which sets CLOSED when every worker's parked bit is set and then wakes them all
 * (wake_all). A worker whose scans found nothing reads the state (acquire, pool.c:525);
 * on CLOSED it makes its final scan and exits when that finds nothing. The Shutdowner is
 * sequentially consistent: its CAS is followed by a seq_cst fence before wake_parked's
 * mask loads (added to pool.c with this model; before, only x86's locked CAS ordered them),
 * and it loads nothing before the CAS; maybe_close fences the same way after its CAS. The end-of-run check then also says: the Shutdowner returned, the state is
 * CLOSED, both workers left their loop (a worker asleep for ever fails here), and every
 * job ran once, on a worker, in a sweep, or in place after its refusal.
 * Not in the shutdown part: spares and compensating workers (all_active_parked sees two
 * ACTIVE slots; wake_all has no spares to wake; try_retire returns false at once),
 * submissions from workers (the only submitters CLOSING admits) and from jobs run by a
 * sweep, await_termination (wait = true), and the relaxed parked-mask load in wake_one
 * (the model's claim is the fetch_and alone, as in the rest of the model).
 *
 * Abstractions: no compensating workers (I6); workers do not submit;
 * a worker's time-bounded spin is SPIN extra scans; futex wait/wake are "block until the
 * word is 1" / "store 1" (a lost wake-up is then a worker blocked for ever, which the
 * end-of-run check sees as a job never run). sched_yield on a busy queue is a retry.
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
 *      at the CAS: a spare (not ACTIVE, so not needed by all_active_parked).
 *   8  maybe_close sets CLOSED without checking that every worker is parked: no job is
 *      lost or run twice (11,239,725 states at one job): workers still running drain the
 *      queues before they exit and submitters that read CLOSED sweep. What it breaks is
 *      only I7's "workers drain; own workers may still submit" (a busy worker's own
 *      submissions would be refused and run in place), which the model does not observe.
 *
 * Not a mutant: dropping I5's re-check by the last searcher to find work. It loses no job
 * (a parked worker is needed only when no worker will look at the queues again, which the
 * parking check covers), only parallelism, which the model does not measure: with the
 * re-check removed, the `pool-two-submitters` configuration still passes (18,395,443
 * states, no error, checked when this model was written).
 */

#define NW 2            /* workers (fixed: the scans below are unrolled for two queues) */
#ifndef NSUB
#define NSUB 2          /* submitters */
#endif
#ifndef NJOBS
#define NJOBS 2         /* jobs in all (submitter p submits jobs p, p + NSUB, ...) */
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
bit  parked[NW];
bit  wake[NW];

/* Bookkeeping for the checks. */
byte ran[NJOBS + 1];     /* times each job ran */
byte submitted = 0;      /* jobs whose tail exchange happened */
byte finished = 0;       /* submitters done */

#if SHUTDOWN
#define OPEN 0           /* POOL_OPEN, POOL_CLOSING, POOL_CLOSED (pool.c:27) */
#define CLOSING 1
#define CLOSED 2
byte state = OPEN;       /* pool->state */
byte rejected = 0;       /* jobs refused by try_submit and run in place (bolts_pool_submit) */
byte exited = 0;         /* workers that left worker_main's loop */
bit  shut_done = 0;      /* the Shutdowner returned */

/* run_job, run_here (a sweeper's or a rejected submit's): the job runs, once. */
#define RUN(j) ran[j]++; assert(ran[j] == 1)
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

/* any_work (pool.c:172): one snapshot of both queues' emptiness. The C loop reads the
 * queues one after another; a queue can turn empty between the reads only through a
 * consumer, who is then awake and will scan again before it parks, and turn non-empty only
 * through a submitter, whose wake decision comes after its exchange (I3); so reading both
 * at one moment removes no behaviour the end-of-run check can see. */
#define ANY_WORK (!QEMPTY(0) || !QEMPTY(1))

/* take (pool.c:134) on queue q by p (a submitter sweeping after CLOSED, or 255: a worker);
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

/* find_work (pool.c:152): own queue, then the other; BUSY beats HELD beats nothing. */
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

/* wake_one (pool.c:232) + notify (pool.c:258), for a submitter p (drains its buffer at
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
/* wake_parked (pool.c:271): wake_one until it finds no parked worker. */
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

/* maybe_close (pool.c:308), by a parked worker that read CLOSING. all_active_parked
 * (pool.c:290): both slots are ACTIVE (no spares here), so one seq_cst load of the mask
 * per slot, each testing that slot's bit. Then the CLOSED CAS (seq_cst) and, if it won,
 * wake_all (pool.c:277): wake_parked (no spares to wake). MUTANT=8 skips the test,
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

/* sweep (pool.c:196) by submitter p after it read CLOSED: take from every queue until it
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

/* bolts_pool_shutdown(pool, wait = false) (pool.c:736). */
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
        /* bolts_pool_try_submit (pool.c:697): the early refusal, a relaxed load. Not a
         * worker, so CLOSING refuses too; bolts_pool_submit (pool.c:729) then runs the
         * job here (run_here). */
        if
        :: state != OPEN -> atomic { RUN(j); rejected++ }
        :: else ->
#endif
        if                                                    /* outside_slot: any CPU */
        :: q = 0
        :: q = 1
        fi;
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
        /* The re-read of the state (pool.c:720), relaxed, ordered after the exchange by
         * its full barrier; CLOSED: sweep every queue (our job may have landed after the
         * last worker's final scan). Mutant 4 leaves it out (notifies as if OPEN). */
        if
        :: state == CLOSED -> sweep(p)
        :: else ->
#endif
#if MUTANT != 1
        if
        :: !nonempty -> notify(p)                             /* pool.c:702 */
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
    byte job, n, old, node, nxt, why, got, claimed;
#if SHUTDOWN
    byte st;
    bit all;
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
            :: else -> find_work(self, job); n++
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
                :: old == 1 ->                                /* I5: the last searcher re-checks */
                    work = ANY_WORK;
                    if
                    :: work -> notify(255)
                    :: else -> skip
                    fi
                :: else -> skip
                fi
            :: else -> skip
            fi;
            atomic {                                          /* run_job */
                ran[job]++;
                assert(ran[job] == 1);
                job = 0; n = 0; old = 0; work = 0
            }
       :: job == FOUND_BUSY -> atomic { job = 0; n = 0 }      /* sched_yield, retry */
       :: else ->
#if SHUTDOWN
            /* worker_main (pool.c:525): acquire load of the state; CLOSED: a seq_cst
             * fence, then the final scan (find_work): nothing left exits the loop, a job
             * runs, BUSY or HELD go round again. MUTANT=7 exits without the scan.
             * try_retire (pool.c:532) returns false at once: no spares here. */
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
            /* park (pool.c:314) */
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
            /* after the seq_cst fence: the state (relaxed, pool.c:336), then, unless
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
                :: last -> searching_me = 0; last = 0
                :: else ->
end_claimed:        wake[self] == 1; searching_me = 1         /* a claimer beat us */
                fi
            fi
#if SHUTDOWN
            fi
#endif
       fi
    od;
#if SHUTDOWN
    /* worker_main after the loop (pool.c:546): give back the searching count, exit */
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
        for (i : 0 .. NW - 1) { run Worker(i) }
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
}
