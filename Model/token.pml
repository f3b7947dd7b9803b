/*
 * Model of the cancellation token's registration list, CSupport/CBoltsRuntime/token.c:
 * register / registration dispose / registration release / cancel (the walk under RCU) /
 * token dispose / token release and destruction, and reclamation (immediate, or through
 * call_rcu after a grace period).
 *
 * Each atomic operation of the C code is one Promela step; the token's mutex is a
 * variable that a step takes when it is free; plain fields are plain variables. Citations
 * are "function (token.c:line)" against the tree the model was last checked with (token.c
 * as of the commit that made a disposed token uncancellable); the function names are the anchor if the lines drift.
 *
 * The list (urcu/rculist.h): node 0 is the list head; lnext/lprev are the links.
 *   cds_list_add_tail_rcu(new, head): new's links are written while new is private, then
 *     one store publishes it (rcu_assign_pointer(head->prev->next, new)) -- one step.
 *   cds_list_del_rcu(elem): elem->next->prev = elem->prev (only lock holders read prev)
 *     and one store elem->prev->next = elem->next; elem->next is left as it was, so a
 *     walk standing on elem can still move on -- one step.
 *   Only lock holders and the cancel walk read the list; the walk reads only `next`.
 *
 * RCU (liburcu memb): rcu_read_lock/unlock set inrcu[p] and bump rgen[p] (a read-side
 * section's identity). call_rcu(batch) records which sections are open at that moment;
 * the CallRCU process may run the batch's callback (reclaim_batch) as soon as every one of
 * those sections has ended -- the earliest moment liburcu allows, so the most adversarial
 * legal timing. Readers that start after the call cannot find the nodes (they were
 * unlinked before call_rcu), which is the RCU contract the C code relies on.
 *
 * The mutex: a critical section is split into steps only where a process that does not
 * hold the lock can observe the difference. Taking and releasing the lock are invisible
 * to everyone but the processes waiting for it, so they are merged with the first and
 * last step inside; a section whose only lock-free observable effect is one store (a
 * list link the walk may read, or a state word) is a single step.
 *
 * futex: FUTEX_WAIT compares and sleeps in one step; FUTEX_WAKE clears the sleepers. No
 * spurious wake-ups, so that a lost wake-up leaves a process blocked forever (an invalid
 * end state in safety runs, a violation of the `nohang` LTL property in liveness runs).
 * spin_until_changed returns "changed" only if the word differs from what
 * the caller saw, and may always give up.
 *
 * Processes:
 *   Registrant(i)  bolts_token_register a handler, maybe bolts_token_registration_dispose
 *                  it (DISPOSE=1: chosen nondeterministically), then
 *                  bolts_token_registration_release, then drops its token reference.
 *   Canceller      (CANCEL=1) bolts_token_cancel, then drops its reference.
 *   Canceller2     (CANCEL2=1) a second bolts_token_cancel racing the first.
 *   Disposer       (TDISPOSE=1) bolts_token_dispose racing everything.
 *   CallRCU        liburcu's call_rcu thread: runs reclaim_batch after a grace period.
 *   init           owns the token's creator reference; starts everyone, drops its
 *                  reference, waits until everything settled, checks end-of-run properties.
 *
 * What handler 1 (registrant 0's) does while it runs, HANDLER=
 *   0  nothing
 *   1  disposes its own registration (must return false at once, not deadlock)
 *   2  disposes registration 2 (registrant 1's): a node unlinked while the walk runs,
 *      which must wait for a grace period; registrant 1 keeps its handle until handler 1
 *      can no longer run (in Swift the handler's closure would hold that reference)
 *   3  registers a new handler (the token is cancelled: it runs at once) and cancels the
 *      token again (re-entrant: returns at once)
 */

#ifndef NREG
#define NREG 2
#endif
#ifndef DISPOSE
#define DISPOSE 1
#endif
#ifndef CANCEL
#define CANCEL 1        /* 0: nobody cancels (armed handlers meet token_destroy) */
#endif
#ifndef CANCEL2
#define CANCEL2 0
#endif
#ifndef TDISPOSE
#define TDISPOSE 0
#endif
#ifndef HANDLER
#define HANDLER 0
#endif
#ifndef MUTANT
#define MUTANT 0        /* >0: a deliberately broken variant (run.sh's self-test; see README) */
#endif

/* token state bits */
#define T_C 1   /* CANCELLED */
#define T_N 2   /* NOTIFIED */
#define T_D 4   /* DISPOSED */
#define T_W 8   /* WAITERS */

/* registration states */
#define ARMED 0
#define RUNNING 1
#define WAITED 2
#define RAN 3
#define RDISP 4

#define MAXN 5          /* nodes 1..NREG (+1 for HANDLER 3's extra registration, never a node) */
#define MAXP 8
#define NONE 255

/* the token */
byte tstate = 0;
byte trefs = 0;
bit  tfreed = 0;
byte lockholder = NONE;
byte canceller = NONE;        /* t->canceller: the walking thread's identity */
byte lnext[MAXN];             /* list links; index 0 is t->list */
byte lprev[MAXN];

/* the registrations */
bit  ralloc[MAXN];            /* allocated */
byte rstate[MAXN];
byte rrefs[MAXN];
byte runner[MAXN];            /* r->runner (NONE: NULL) */
bit  rfreed[MAXN];
bit  fnvalid[MAXN];           /* r->u.fn is intact (not overlaid by the rcu_head) */
bit  linked[MAXN];
byte rdefer[MAXN];            /* r->defer_next */
byte handle[MAXN];            /* the handle returned by register, published for HANDLER 2 */

/* RCU */
bit  inrcu[MAXP];
byte rgen[MAXP];
#define MAXB 4
byte bhead[MAXB];             /* pending call_rcu batches: first node (0: free slot) */
byte breader[MAXB];           /* the walker pid whose section was open at call_rcu, or NONE */
byte bgen[MAXB];              /* ... and that section's identity */
byte npending = 0;

/* futex sleepers: bit p set while process p sleeps in FUTEX_WAIT */
byte tsleep = 0;              /* on t->state */
byte rsleep[MAXN];            /* on r->state */

/* bookkeeping for the properties */
byte hran[MAXN];              /* times each handler ran */
bit  hrunning[MAXN];          /* the handler is running now */
byte hrel[MAXN];              /* times each context was released */
bit  disarmed[MAXN];          /* dropped without running (dispose, token dispose, destroy) */
bit  dispret[MAXN];           /* a registration dispose of it returned (not from inside) */
bit  armedatcancel[MAXN];     /* linked and ARMED when CANCELLED was set */
bit  cancelled_once = 0;
byte callrcu_pid = NONE;
byte nextra = 0;              /* HANDLER 3's handler: times run */
bit  hang = 0;                /* for LTL: someone sleeps */

#define ME (1 << _pid)

/* ---- small pieces ------------------------------------------------------------------- */

inline lock() {
    atomic { assert(!tfreed); lockholder == NONE -> lockholder = _pid }
}
inline unlock() {
    atomic { assert(lockholder == _pid); lockholder = NONE }
}

/* rcu_read_enter / rcu_read_exit */
inline rcu_enter_body() { inrcu[_pid] = 1; rgen[_pid] = (rgen[_pid] + 1) % 4 }
inline rcu_exit()  { atomic { inrcu[_pid] = 0 } }

/* reg_unref: fetch_sub acq_rel; the last reference frees the node. */
inline reg_unref(r) {
    atomic {
        assert(ralloc[r] && !rfreed[r] && rrefs[r] > 0);
        rrefs[r]--;
        if
        :: rrefs[r] == 0 -> rfreed[r] = 1; assert(!linked[r])
        :: else -> skip
        fi
    }
}

/* The context's release function: exactly once, never on the call_rcu thread. */
inline release_context(r, fromnode) {
    atomic {
        assert(!fromnode || (!rfreed[r] && fnvalid[r]));   /* r->u.fn.release */
        assert(_pid != callrcu_pid);
        hrel[r]++;
        assert(hrel[r] == 1)
    }
}

/* futex_wake_all_u32 on a registration's state word */
inline wake_reg(r) { atomic { rsleep[r] = 0 } }

/* ---- handlers ------------------------------------------------------------------------ */

/* What a handler does, as user code. `r` is its registration. */
inline handler_body(r, fromnode) {
    atomic {
        assert(!fromnode || (!rfreed[r] && fnvalid[r]));   /* r->u.fn.run read from the node */
        assert(!dispret[r]);                /* no handler after its dispose returned */
        assert(!disarmed[r]);
        hran[r]++;
        assert(hran[r] == 1);               /* at most once */
        hrunning[r] = 1
    }
#if HANDLER == 1
    if
    :: r == 1 && handle[1] != 0 -> reg_dispose(1, hres); assert(!hres)   /* from inside: false, at once */
    :: else -> skip
    fi;
#endif
#if HANDLER == 2
    if
    :: r == 1 && handle[2] != 0 -> reg_dispose(2, hres)
    :: else -> skip
    fi;
#endif
#if HANDLER == 3
    if
    :: r == 1 && canceller == _pid ->
        /* (only when run by the walk) bolts_token_register on the cancelled token: the fast path's acquire load sees
         * CANCELLED, so run and release now */
        atomic { assert(!tfreed); hs = tstate };
        assert(hs & T_C);
        nextra++;
        /* bolts_token_cancel again, from inside the walk: NOTIFIED is not set yet; the
         * lock is free (handlers run outside it); canceller == self: return false. */
        atomic { assert(!tfreed); hs = tstate };
        assert(!(hs & T_N));
        lock();
        atomic { hs = tstate; assert(hs & T_C); assert(canceller == _pid) };
        unlock()
    :: else -> skip
    fi;
#endif
    atomic { hrunning[r] = 0 }
}

/* ---- reclamation -------------------------------------------------------------------- */

/* token_unref_unlinked. `chain` is linked through rdefer. */
inline unref_unlinked(chain, after) {
    if
    :: chain == 0 -> skip
    :: chain != 0 && !after ->
        c = chain;
        do
        :: c == 0 -> break
        :: else ->
            atomic {
                assert(ralloc[c] && !rfreed[c] && rrefs[c] > 0);
                cn = rdefer[c];
                rrefs[c]--;                         /* reg_unref */
                if :: rrefs[c] == 0 -> rfreed[c] = 1; assert(!linked[c]) :: else -> skip fi;
                c = cn;
                cn = 0
            }
        od
    :: chain != 0 && after ->
        /* urcu_memb_call_rcu(&chain->u.rcu, reclaim_batch): overlays chain->u.fn */
        atomic {
            assert(!rfreed[chain]);
            fnvalid[chain] = 0;
            b = 0;
            do
            :: b < MAXB && bhead[b] != 0 -> b++
            :: b < MAXB && bhead[b] == 0 -> break
            :: b == MAXB -> assert(false)
            od;
            bhead[b] = chain;
            /* the only read-side sections are cancel walks: record the open ones */
            breader[b] = NONE;
            k = 0;
            do
            :: k < MAXP -> if :: inrcu[k] -> assert(breader[b] == NONE); breader[b] = k; bgen[b] = rgen[k] :: else -> skip fi; k++
            :: else -> break
            od;
            npending++;
            b = 0; k = 0
        }
    fi
}

/* walk_may_be_reading: acquire load, under the lock */
inline walk_may_be_reading(res) {
    atomic { assert(!tfreed && lockholder == _pid); res = ((tstate & T_C) && !(tstate & T_N)) && (MUTANT != 1) }
}

/* ---- bolts_token_registration_dispose ----------------------------- */

inline reg_dispose(r, result) {
    /* CAS ARMED -> DISPOSED, acquire/acquire */
    atomic {
        assert(ralloc[r] && !rfreed[r]);
        ds = rstate[r];
        if
        :: ds == ARMED -> rstate[r] = RDISP; disarmed[r] = 1
        :: else -> skip
        fi
    }
    if
    :: ds == ARMED ->
        /* t = r->token; lock; cds_list_del_rcu; count--; walk_may_be_reading (acquire
         * load); unlock: one store visible to the walk, one step */
        atomic {
            lockholder == NONE;
            assert(!tfreed && !rfreed[r] && linked[r]);
            lprev[lnext[r]] = lprev[r];
            lnext[lprev[r]] = lnext[r];
            linked[r] = 0;
            dafter = ((tstate & T_C) && !(tstate & T_N)) && (MUTANT != 1)   /* mutant 1: never wait */
        };
        atomic { assert(!rfreed[r] && fnvalid[r]) };   /* reads r->u.fn.release */
        release_context(r, 1);
        atomic { assert(!rfreed[r]); rdefer[r] = 0 };
        unref_unlinked(r, dafter);
        result = 1
    :: ds != RUNNING && ds != WAITED && ds != ARMED -> result = 0
    :: ds == RUNNING || ds == WAITED ->
        /* runner == self: called from inside the handler */
        atomic { assert(!rfreed[r]); dself = (runner[r] == _pid) };
        if
        :: dself || MUTANT == 2 -> result = 0          /* mutant 2: never wait */
        :: else ->
            do
            :: atomic { assert(!rfreed[r]); ds = rstate[r] };      /* acquire */
                if
                :: ds == RAN -> break
                :: else ->
                    if
                    :: atomic { rstate[r] != ds } -> skip          /* spin saw a change */
                    :: true ->                                     /* spin gave up */
                        dok = 1;
                        if
                        :: ds == RUNNING ->
                            /* CAS RUNNING -> RUNNING_WAITED, relaxed */
                            atomic {
                                assert(!rfreed[r]);
                                if
                                :: rstate[r] == RUNNING -> rstate[r] = WAITED
                                :: else -> dok = 0
                                fi
                            }
                        :: else -> skip
                        fi;
                        if
                        :: dok ->
                            /* futex_wait_u32(&r->state, RUNNING_WAITED) */
                            atomic {
                                assert(!rfreed[r]);
                                if :: rstate[r] == WAITED -> rsleep[r] = rsleep[r] | ME; hang = 1 :: else -> skip fi
                            };
                            (rsleep[r] & ME) == 0;
                            hang = 0
                        :: else -> skip
                        fi;
                        dok = 0
                    fi
                fi
            od;
            result = 0
        fi
    fi;
    if
    :: !dself -> atomic { dispret[r] = 1; assert(!hrunning[r]) }  /* nothing runs after we return */
    :: else -> skip
    fi;
    dself = 0
}

/* ---- bolts_token_release and token_destroy (339-363) -------------- */

inline token_release() {
    atomic {
        assert(!tfreed && trefs > 0);
        trefs--;
        tlast = (trefs == 0)
    }
    if
    :: tlast ->
        /* token_destroy: nobody else can reach the token (every other holder would hold a
         * reference), so the whole of it is one step: collect the list (only ARMED nodes
         * can be left), free the token, then disarm, release and unref each node. */
        atomic {
            c = lnext[0];
            chain = 0;
            do
            :: c == 0 -> break
            :: else -> assert(!rfreed[c] && rstate[c] == ARMED && !(tstate & T_C)); rdefer[c] = chain; chain = c; linked[c] = 0; c = lnext[c]
            od;
            lnext[0] = 0; lprev[0] = 0;
            tfreed = 1;
            do
            :: chain == 0 -> break
            :: else ->
                assert(!rfreed[chain] && fnvalid[chain]);
                cn = rdefer[chain];
                rstate[chain] = RDISP; disarmed[chain] = 1;
                assert(_pid != callrcu_pid); hrel[chain]++; assert(hrel[chain] == 1);
                assert(rrefs[chain] == 1);
                rrefs[chain] = 0; rfreed[chain] = 1;
                chain = cn
            od;
            cn = 0
        }
    :: else -> skip
    fi
}

/* ---- bolts_token_cancel, token_run_handlers (376-429),
 *      token_wait_notified (431-448) -------------------------------------------------- */

inline cancel(result) {
    atomic { assert(!tfreed); cs = tstate };                /* acquire */
    if
    :: cs & T_N -> result = 0; goto cdone
    :: else -> skip
    fi;
    /* lock; relaxed load (CANCELLED is stable under the lock) */
    atomic { lockholder == NONE -> lockholder = _pid; cs = tstate };
    if
    :: cs & T_C ->
        /* reentrant = t->canceller == self; unlock */
        atomic { creent = (canceller == _pid); assert(lockholder == _pid); lockholder = NONE };
        if
        :: !creent ->
            /* token_wait_notified */
            do
            :: atomic { assert(!tfreed); cs = tstate };     /* acquire */
                if :: cs & T_N -> break :: else -> skip fi;
                if
                :: atomic { tstate != cs } -> goto wagain  /* spin_until_changed */
                :: true
                fi;
                if
                :: !(cs & T_W) ->
                    /* CAS s -> s | WAITERS, relaxed (weak: may fail spuriously) */
                    atomic {
                        if
                        :: tstate == cs -> tstate = cs | T_W; cok = 1
                        :: tstate == cs -> cok = 0      /* spurious */
                        :: tstate != cs -> cok = 0
                        fi
                    };
                    if :: !cok -> goto wagain :: else -> skip fi;
                    cs = cs | T_W
                :: else -> skip
                fi;
                /* futex_wait_u32(&t->state, s) */
                atomic { if :: tstate == cs -> tsleep = tsleep | ME; hang = 1 :: else -> skip fi };
                (tsleep & ME) == 0;
                hang = 0;
wagain:         skip
            od
        :: else -> skip
        fi;
        result = 0
    :: !(cs & T_C) && (cs & T_D) && MUTANT != 5 ->
        /* DISPOSED (stable under the lock): a disposed token never becomes cancelled */
        atomic { assert(lockholder == _pid); lockholder = NONE };
        result = 0
    :: else ->
        /* fetch_or CANCELLED (release), under the lock */
        atomic {
            assert(!(tstate & T_D));   /* never cancels a token disposed first */
            tstate = tstate | T_C;
            cancelled_once = 1;
            k = 1;
            do
            :: k < MAXN -> armedatcancel[k] = (linked[k] && rstate[k] == ARMED); k++
            :: else -> break
            od;
            k = 0
        };
        atomic { canceller = _pid; assert(lockholder == _pid); lockholder = NONE };   /* then unlock */
        /* token_run_handlers. Steps that only this thread can observe are merged with
         * their neighbours: entering the read-side section with the first read after it,
         * leaving it (and the relaxed store of `runner`, which only this thread compares
         * with its own identity) with the claim before it. Merging an enter with the read
         * that follows, or an exit with the step before it, only lets grace periods end
         * earlier, which is the adversarial direction. */
        cran = 0;
        atomic { rcu_enter_body(); pos = lnext[0] };           /* rcu_next(&t->list) */
        do
        :: pos == 0 -> break
        :: else ->
            /* CAS ARMED -> RUNNING (acquire / relaxed) */
            atomic {
                assert(ralloc[pos] && !rfreed[pos]);
                if
                :: rstate[pos] == ARMED ->
                    rstate[pos] = RUNNING; cok = 1;
                    runner[pos] = _pid;                         /* relaxed store */
                    inrcu[_pid] = 0                             /* rcu_read_exit */
                :: else -> cok = 0
                fi
            };
            if
            :: cok ->
                handler_body(pos, 1);                  /* r->u.fn.run(r->context) */
                release_context(pos, 1);               /* r->u.fn.release(r->context) */
                /* exchange RAN (release); wake a waiting disposer */
                atomic { assert(!rfreed[pos]); cold = rstate[pos]; rstate[pos] = RAN };
                if :: cold == WAITED -> wake_reg(pos) :: else -> skip fi;
                cran = 1;
                cold = 0;
                atomic { rcu_enter_body(); assert(ralloc[pos] && !rfreed[pos]); pos = lnext[pos] }
            :: else ->
                atomic { assert(ralloc[pos] && !rfreed[pos]); pos = lnext[pos] }   /* rcu_next(pos) */
            fi;
            cok = 0
        od;
        rcu_exit();
        if
        :: cran ->
            /* unlink what ran, under the lock (one step: only lock holders and this
             * finished walk read the links; RAN is stable) */
            atomic {
                lockholder == NONE;
                c = lnext[0];
                chain = 0;
                do
                :: c == 0 -> break
                :: else ->
                    assert(!rfreed[c]);
                    cn = lnext[c];
                    if
                    :: rstate[c] == RAN ->
                        lprev[lnext[c]] = lprev[c];
                        lnext[lprev[c]] = lnext[c];
                        linked[c] = 0;
                        rdefer[c] = chain;
                        chain = c
                    :: else -> skip
                    fi;
                    c = cn
                od;
                cn = 0
            };                                          /* lock ... unlock */
            unref_unlinked(chain, 0)
        :: else -> skip
        fi;
        /* fetch_or NOTIFIED (release); wake second cancellers */
        atomic { assert(!tfreed); cold = tstate; tstate = tstate | T_N };
        if :: (cold & T_W) && MUTANT != 4 -> atomic { tsleep = 0 } :: else -> skip fi;   /* mutant 4: no wake */
        result = 1
    fi;
cdone:
    /* "cancelled" means "handlers have run": every handler armed at cancel time either
     * ran to completion or was disarmed by a racing dispose */
    atomic {
        k = 1;
        do
        :: k < MAXN ->
            assert(!armedatcancel[k] || disarmed[k] || (hran[k] == 1 && !hrunning[k]));
            /* and no armed handler is left on the list: none can be added after CANCELLED */
            assert(!linked[k] || rstate[k] != ARMED);
            k++
        :: else -> break
        od;
        k = 0
    }
}

/* ---- bolts_token_dispose ------------------------------------------ */

inline token_dispose() {
    /* lock; fetch_or DISPOSED (release); walk_may_be_reading (acquire); first node */
    atomic {
        lockholder == NONE -> lockholder = _pid;
        assert(!tfreed);
        tstate = tstate | T_D;
        dafter = ((tstate & T_C) && !(tstate & T_N)) && (MUTANT != 1);
        chain = 0;
        c = lnext[0]
    };
    do
    :: c == 0 -> break
    :: else ->
        /* for_each_safe reads the next link first (links change only under our lock);
         * CAS ARMED -> DISPOSED (acquire / relaxed); on success cds_list_del_rcu and onto
         * the chain. The CAS races the walk's claim; the del's store is the only other
         * effect the walk can see, and seeing it just after the CAS is the same to it. */
        atomic {
            assert(!rfreed[c]);
            cn = lnext[c];
            if
            :: rstate[c] == ARMED ->
                rstate[c] = RDISP; disarmed[c] = 1;
                lprev[lnext[c]] = lprev[c];
                lnext[lprev[c]] = lnext[c];
                linked[c] = 0;
                rdefer[c] = chain;
                chain = c
            :: else -> skip
            fi
        };
        c = cn
    od;
    unlock();
    /* release the contexts outside the lock */
    c = chain;
    do
    :: c == 0 -> break
    :: else -> release_context(c, 1); c = rdefer[c]
    od;
    unref_unlinked(chain, dafter)
}

/* ---- processes ---------------------------------------------------------------------- */

#define LOCALS \
    byte c, cn, chain, b, k, pos, cs, cold, ds, hs; \
    bit tlast, dafter, dself, dok, cok, creent, cran, hres, res

proctype Registrant(byte r) {
    LOCALS;
    byte s;
    bit startc, added;
    /* bolts_token_register: acquire load; if neither bit is set,
     * allocate and initialize the node (private until published) */
    atomic {
        assert(!tfreed);
        s = tstate;
        startc = (s & T_C) != 0;
        if
        :: !(s & (T_C | T_D)) -> ralloc[r] = 1; rstate[r] = ARMED; rrefs[r] = 2; runner[r] = NONE; fnvalid[r] = 1
        :: else -> skip
        fi
    };
    if
    :: !(s & (T_C | T_D)) ->
        /* lock; relaxed load of the bits (stable under the lock); then either
         * cds_list_add_tail_rcu (one publishing store) and unlock, or unlock and free */
        atomic {
            lockholder == NONE;
            assert(!tfreed);
            s = tstate;
#if MUTANT == 3
            s = 0;          /* mutant 3: no re-check under the lock */
#endif
            if
            :: !(s & (T_C | T_D)) ->
                lnext[r] = 0; lprev[r] = lprev[0];
                lnext[lprev[0]] = r; lprev[0] = r;
                linked[r] = 1;
                added = 1
            :: else ->
                rfreed[r] = 1                         /* never published: free(r) */
            fi
        };
        if
        :: added ->
            atomic { assert(!tfreed && trefs > 0); trefs++; handle[r] = r }   /* the handle's reference */
        :: else -> skip
        fi
    :: else -> skip
    fi;
    if
    :: handle[r] == 0 ->
        /* cancelled (even if also disposed): run now; disposed only: drop */
        if
        :: s & T_C -> handler_body(r, 0)
        :: else -> atomic { disarmed[r] = 1 }
        fi;
        release_context(r, 0)
    :: else -> skip
    fi;
    /* registering on a token already cancelled runs the handler before register returns */
    assert(!startc || hran[r] == 1);
    if
    :: handle[r] != 0 ->
#if DISPOSE
        if
        :: true -> reg_dispose(r, res)
        :: true -> skip
        fi;
#endif
#if HANDLER == 1 || HANDLER == 2
        /* handler 1 uses registration HANDLER's handle (its own for 1, registration 2's
         * for 2): as the closure's reference would in Swift, the handle stays alive until
         * handler 1 has returned or can no longer run */
        if
        :: r == HANDLER -> ((hran[1] == 1 && !hrunning[1]) || disarmed[1])
        :: else -> skip
        fi;
#endif
        /* bolts_token_registration_release */
        atomic { assert(!rfreed[r]) };                /* t = r->token */
        reg_unref(r);
        token_release()
    :: else -> skip
    fi;
    token_release()                                   /* this thread's own reference */
}

proctype Canceller() {
    LOCALS;
    cancel(res);
    token_release()
}

proctype Disposer() {
    LOCALS;
    token_dispose();
    token_release()
}

/* liburcu's call_rcu thread: reclaim_batch after a grace period */
proctype CallRCU() {
    LOCALS;
    callrcu_pid = _pid;
end:
    do
    :: atomic {
           npending > 0 ->
           b = 0;
           do
           :: b < MAXB && bhead[b] != 0 && (breader[b] == NONE || !inrcu[breader[b]] || rgen[breader[b]] != bgen[b]) -> break
           :: b < MAXB -> b++
           :: b == MAXB -> b = NONE; break
           od
       };
       if
       :: b != NONE ->
           c = bhead[b];
           atomic { bhead[b] = 0; breader[b] = NONE; bgen[b] = 0 };
           do
           :: c == 0 -> break
           :: else ->
               atomic {
                   assert(ralloc[c] && !rfreed[c] && rrefs[c] > 0);
                   cn = rdefer[c];
                   rrefs[c]--;                      /* reg_unref: the list's reference */
                   if :: rrefs[c] == 0 -> rfreed[c] = 1; assert(!linked[c]) :: else -> skip fi;
                   c = cn;
                   cn = 0
               }
           od;
           atomic { npending--; b = 0; cn = 0 }
       :: else -> b = 0
       fi
    od
}

init {
    LOCALS;
    byte i;
    atomic {
        /* bolts_token_create: one reference for the creator; each thread below is handed
         * one more (the Swift objects it holds) */
        trefs = 1 + NREG + CANCEL + CANCEL2 + TDISPOSE;
        lnext[0] = 0; lprev[0] = 0;
        run CallRCU();
        i = 1;
        do :: i <= NREG -> run Registrant(i); i++ :: else -> break od;
#if CANCEL
        run Canceller();
#endif
#if CANCEL2
        run Canceller();
#endif
#if TDISPOSE
        run Disposer();
#endif
    }
    /* the creator drops its reference */
    token_release();
    /* everyone else is done, and every deferred batch was reclaimed */
    (_nr_pr == 2 && npending == 0);
    assert(tfreed && trefs == 0);
    i = 1;
    do
    :: i <= NREG ->
        assert(hran[i] + disarmed[i] == 1);       /* ran exactly once, or was dropped */
        assert(hrel[i] == 1);                     /* context released exactly once */
        assert(!armedatcancel[i] || disarmed[i] || hran[i] == 1);
        assert(!ralloc[i] || rfreed[i]);          /* no node leaked */
        i++
    :: else -> break
    od;
    /* a canceller cancels, unless the token was disposed first (then nothing does) */
    assert(cancelled_once == (CANCEL || CANCEL2) || (TDISPOSE && !cancelled_once))
}

ltl nohang { <> [] !hang }
