/*
 * Cancellation tokens: the state word, the RCU-protected registration list, the cancel
 * walk, and reclamation. The contract and the synchronization table are in
 * include/bolts_token.h; this file explains only what the header does not.
 */
#include "include/bolts_token.h"
#include "internal.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

/* _LGPL_SOURCE stays unset on purpose: liburcu is LGPL and linked dynamically, so
 * read_lock/unlock and call_rcu are ordinary calls into the shared library. */
#include <urcu/urcu-memb.h>
#include <urcu/rculist.h>

/* ---- State encodings --------------------------------------------------------------- */

enum {
    TOKEN_CANCELLED = 1u << 0,
    TOKEN_NOTIFIED = 1u << 1,
    TOKEN_DISPOSED = 1u << 2,
    TOKEN_WAITERS = 1u << 3,
};
_Static_assert((TOKEN_CANCELLED & TOKEN_NOTIFIED) == 0 && (TOKEN_CANCELLED & TOKEN_DISPOSED) == 0 &&
                   (TOKEN_CANCELLED & TOKEN_WAITERS) == 0 && (TOKEN_NOTIFIED & TOKEN_DISPOSED) == 0 &&
                   (TOKEN_NOTIFIED & TOKEN_WAITERS) == 0 && (TOKEN_DISPOSED & TOKEN_WAITERS) == 0,
               "token state bits must be distinct");
_Static_assert((TOKEN_CANCELLED | TOKEN_NOTIFIED | TOKEN_DISPOSED | TOKEN_WAITERS) <= UINT32_MAX,
               "the token state is a 32-bit futex word");

enum {
    REG_ARMED = 0,          /* waiting; nobody owns the handler yet */
    REG_RUNNING = 1,        /* the canceller owns the handler and is running it */
    REG_RUNNING_WAITED = 2, /* RUNNING, and a disposer sleeps on the word */
    REG_RAN = 3,            /* the handler returned and its context was released */
    REG_DISPOSED = 4,       /* dropped before running; its context was released */
};
_Static_assert(REG_ARMED == 0, "a zeroed registration state must mean ARMED");
_Static_assert(REG_RUNNING != REG_RUNNING_WAITED && REG_RAN > REG_RUNNING_WAITED && REG_DISPOSED > REG_RAN,
               "registration states must be distinct");

/* ---- Objects ----------------------------------------------------------------------- */

struct bolts_token {
    /** CANCELLED | NOTIFIED | DISPOSED | WAITERS. CANCELLED and DISPOSED are set only
     *  under `lock`, so a reader holding the lock may load them relaxed. */
    _Atomic uint32_t state;
    /** References: the creator's, one per registration handle, one per link context. */
    _Atomic uint32_t refs;
    /** Serializes list updates and the CANCELLED/DISPOSED transitions. */
    pthread_mutex_t lock;
    /** The registrations, oldest first. Written under `lock`, read under RCU. */
    struct cds_list_head list;
    /** Linked registrations (under `lock`; for tests). */
    size_t count;
    /** Identity of the thread running the cancel walk (under `lock`). */
    const void *canceller;
};

struct bolts_token_registration {
    /** List membership: written under the token's lock, traversed under RCU. */
    struct cds_list_head link;
    /** REG_* (see bolts_token.h); a futex word while RUNNING_WAITED. */
    _Atomic uint32_t state;
    /** 1 for the list (dropped after a grace period once unlinked) + 1 for the handle. */
    _Atomic uint32_t refs;
    /** Identity of the thread running the handler; only compared by that same thread. */
    _Atomic(const void *) runner;
    /** The token; the handle holds one reference to it. */
    bolts_token_t *token;
    union {
        /** The handler: read only by whoever moved the node out of ARMED. */
        struct {
            bolts_token_fn run;
            bolts_token_fn release;
        } fn;
        /** Reused once the owner is done with `fn`: the node's grace-period callback. */
        struct rcu_head rcu;
    } u;
    void *context;
    /** Next node of a chain of unlinked nodes (see token_unref_unlinked). */
    struct bolts_token_registration *defer_next;
};

/*
 * Process-wide counters for leak tests, compiled in debug builds only (SwiftPM defines
 * DEBUG there; define BOLTS_TOKEN_COUNTERS to force them): a global counter touched by
 * every registration is a shared cache line that all threads would bounce in release.
 * Relaxed everywhere except `pending_batches`' decrement: they order nothing, they count.
 */
#if defined(DEBUG) || defined(BOLTS_TOKEN_COUNTERS)
#define TOKEN_COUNTERS 1
static _Atomic int64_t live_registrations;
static _Atomic int64_t live_tokens;
static _Atomic int64_t pending_batches;
static _Atomic int64_t deferred_batches;
#define COUNT(counter, delta) atomic_fetch_add_explicit(&(counter), (delta), memory_order_relaxed)
#else
#define COUNT(counter, delta) ((void)0)
#endif

/* Thread identity: the address of a thread-local byte, unique among live threads. */
static _Thread_local char thread_tag;
static inline const void *self_id(void) { return &thread_tag; }

/* ---- Futex and allocation (platform.h) --------------------------------------------- */

static void futex_wait_u32(_Atomic uint32_t *word, uint32_t expected) {
    /* Returns at once if *word != expected; spurious wake-ups are handled by every
     * caller's loop. */
    bolts__futex_wait(word, expected, -1);
}

static void futex_wake_all_u32(_Atomic uint32_t *word) { bolts__futex_wake(word, INT_MAX); }

/* Spins briefly: a handler usually returns in far less time than a futex round trip.
 * TOKEN_SPIN_ITERATIONS pause hints (a few microseconds): a handler in flight is waited
 * for a little longer than task.c's TASK_WAIT_SPIN_ITERATIONS completion, because a
 * handler is user code that is already running, not a completion about to be published. */
#define TOKEN_SPIN_ITERATIONS 256
static bool spin_until_changed(_Atomic uint32_t *word, uint32_t from) {
    for (int i = 0; i < TOKEN_SPIN_ITERATIONS; i++) {
        /* Relaxed: only a hint; the caller re-reads with acquire before trusting it. */
        if (atomic_load_explicit(word, memory_order_relaxed) != from) return true;
        bolts__cpu_relax();
    }
    return false;
}

static void *checked_malloc(size_t size) { return bolts__alloc_or_abort(0, size, "a cancellation token"); }

/* ---- RCU: lazy thread registration, read-side sections, sanitizer annotations ---- */

/*
 * liburcu requires every thread that enters a read-side section or calls call_rcu to be
 * registered first, and release builds of liburcu do not check. Threads reach this code
 * from anywhere (Dispatch, Swift's cooperative pool, user threads), so registration is
 * lazy: a thread-local flag, tested on each use, and a pthread_key whose destructor
 * unregisters the thread when it exits. If another key's destructor uses a token after
 * ours ran, the thread registers again and sets the key again, which makes pthread run
 * our destructor in its next round (glibc runs up to PTHREAD_DESTRUCTOR_ITERATIONS).
 *
 * This is the one registration point of the whole runtime: registering a thread twice
 * corrupts liburcu's reader registry, so any other .c file that needs RCU must call
 * bolts__rcu_thread_ensure() rather than register on its own.
 */
static pthread_key_t rcu_key;
static pthread_once_t rcu_key_once = PTHREAD_ONCE_INIT;
static _Thread_local bool rcu_registered;

static void rcu_thread_exit(void *unused) {
    (void)unused;
    if (rcu_registered) {
        rcu_registered = false;
        urcu_memb_unregister_thread();
    }
}

static void rcu_key_create(void) {
    if (pthread_key_create(&rcu_key, rcu_thread_exit) != 0) {
        fputs("bolts: pthread_key_create failed\n", stderr);
        abort();
    }
}

__attribute__((noinline)) static void rcu_thread_register_slow(void) {
    pthread_once(&rcu_key_once, rcu_key_create);
    urcu_memb_register_thread();
    rcu_registered = true;
    /* Any non-NULL value: it only makes pthread call rcu_thread_exit at thread exit. */
    pthread_setspecific(rcu_key, &rcu_registered);
}

/* Registers the calling thread with liburcu (memb) if it is not yet. Exported for the
 * runtime's other files; not part of the module's API. */
void bolts__rcu_thread_ensure(void) {
    if (__builtin_expect(!rcu_registered, 0)) rcu_thread_register_slow();
}

/*
 * ThreadSanitizer cannot see liburcu's synchronization: grace periods rely on
 * sys_membarrier, call_rcu hands nodes over through uninstrumented queues, and
 * rcu_dereference/rcu_assign_pointer are calls into the uninstrumented library. We tell
 * it what liburcu guarantees, and nothing more:
 * - every read-side exit and every call_rcu is a release of one sync address, and every
 *   reclamation callback acquires it: a callback runs after a grace period, so after
 *   every read-side section that could have seen the node ended (and after the
 *   call_rcu that queued it);
 * - the walk's loads of `next` pointers are RCU-published reads (dependency-ordered after
 *   the updater's release store); TSan would report them as races against the updater's
 *   plain stores in cds_list_*_rcu, so they are excluded from race detection. Node
 *   contents stay checked; AddressSanitizer still checks those loads for use-after-free.
 */
#ifdef BOLTS_TSAN
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
static char tsan_grace;
static inline void tsan_grace_release(void) { __tsan_release(&tsan_grace); }
static inline void tsan_grace_acquire(void) { __tsan_acquire(&tsan_grace); }
#else
static inline void tsan_grace_release(void) {}
static inline void tsan_grace_acquire(void) {}
#endif

static inline void rcu_read_enter(void) {
    bolts__rcu_thread_ensure();
    urcu_memb_read_lock();
}

static inline void rcu_read_exit(void) {
    tsan_grace_release();
    urcu_memb_read_unlock();
}

/* The successor of `pos`, read as an RCU-protected pointer (inside a read-side section). */
static inline struct cds_list_head *rcu_next(struct cds_list_head *pos) {
#ifdef BOLTS_TSAN
    AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
#endif
    struct cds_list_head *next = rcu_dereference(pos->next);
#ifdef BOLTS_TSAN
    AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
#endif
    return next;
}

/* ---- Registration lifetime --------------------------------------------------------- */

static void reg_unref(bolts_token_registration_t *r) {
    /* acq_rel: release orders this holder's accesses before the free; acquire (on the
     * last drop) makes every other holder's accesses happen-before it. */
    if (atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) == 1) {
        free(r);
        COUNT(live_registrations, -1);
    }
}

static void reclaim_batch(struct rcu_head *head) {
    /* A grace period has passed since every node of the batch was unlinked: no walk can
     * still hold a pointer to any of them. */
    tsan_grace_acquire();
    bolts_token_registration_t *r = caa_container_of(head, bolts_token_registration_t, u.rcu);
    while (r != NULL) {
        bolts_token_registration_t *next = r->defer_next;
        reg_unref(r); /* the list's reference */
        r = next;
    }
#ifdef TOKEN_COUNTERS
    /* Release: the frees above happen-before the acquire in bolts_token_reclaim_barrier. */
    atomic_fetch_sub_explicit(&pending_batches, 1, memory_order_release);
#endif
}

/*
 * Reclamation. The only reader of a token's list outside its lock is that token's cancel
 * walk, and there is at most one walk per token: it starts after CANCELLED was set under
 * the lock and it has left its last read-side section before NOTIFIED is set. So:
 * - a node unlinked while CANCELLED is clear (seen under the lock) can never be reached by
 *   a walk (the walk will start from the list as it is after our unlock): its list
 *   reference is dropped at once;
 * - likewise once NOTIFIED is set (seen with acquire: the walk's reads happen-before);
 * - only a node unlinked while a walk may be running (a dispose racing cancel, or a
 *   handler disposing a later registration) waits for a grace period, through call_rcu.
 * That keeps the common register+dispose on a live token free of RCU costs (call_rcu
 * queues every node for liburcu's helper thread, which churn floods), and uses RCU exactly
 * where a reader can race the free.
 */
static bool walk_may_be_reading(const bolts_token_t *t) {
    /* Acquire: pairs with the release fetch_or of NOTIFIED after the walk, so that a
     * `false` answer orders every read of the walk before the caller's free. CANCELLED is
     * stable under the lock, which the caller holds. */
    uint32_t s = atomic_load_explicit(&t->state, memory_order_acquire);
    return (s & TOKEN_CANCELLED) && !(s & TOKEN_NOTIFIED);
}

/* Drops the list's reference of every node of a chain of unlinked nodes (linked through
 * `defer_next`; their handlers are released already): now, or after a grace period when
 * a walk may still hold pointers to them. One call_rcu per chain, not per node. */
static void token_unref_unlinked(bolts_token_registration_t *chain, bool after_grace_period) {
    if (chain == NULL) return;
    if (!after_grace_period) {
        while (chain != NULL) {
            bolts_token_registration_t *next = chain->defer_next;
            reg_unref(chain);
            chain = next;
        }
        return;
    }
    bolts__rcu_thread_ensure(); /* call_rcu requires a registered thread */
    COUNT(pending_batches, 1);
    COUNT(deferred_batches, 1);
    tsan_grace_release();
    urcu_memb_call_rcu(&chain->u.rcu, reclaim_batch); /* overlays chain->u.fn: unused now */
}

/* ---- Tokens ------------------------------------------------------------------------ */

bolts_token_t *bolts_token_create(void) {
    bolts_token_t *t = checked_malloc(sizeof *t);
    /* Relaxed stores: the token is not shared yet; whoever receives it gets it through a
     * synchronizing hand-off. */
    atomic_init(&t->state, 0);
    atomic_init(&t->refs, 1);
    pthread_mutex_init(&t->lock, NULL);
    CDS_INIT_LIST_HEAD(&t->list);
    t->count = 0;
    t->canceller = NULL;
    COUNT(live_tokens, 1);
    return t;
}

void bolts_token_retain(bolts_token_t *t) {
    /* Relaxed: the caller holds a reference, so the count cannot reach zero meanwhile. */
    atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
}

static void token_destroy(bolts_token_t *t) {
    /* Nobody else holds a reference: no walk, no disposer (each would hold one), so the
     * list holds only ARMED nodes whose handles were released, each with the list's
     * reference only. No reader can be inside the list, so no grace period is needed. */
    bolts_token_registration_t *chain = NULL, **tail = &chain;
    struct cds_list_head *pos, *n;
    cds_list_for_each_safe(pos, n, &t->list) {
        bolts_token_registration_t *r = caa_container_of(pos, bolts_token_registration_t, link);
        r->defer_next = NULL;
        *tail = r;
        tail = &r->defer_next;
    }
    pthread_mutex_destroy(&t->lock);
    free(t);
    COUNT(live_tokens, -1);
    /* Released after the token is gone: a context's release may drop other tokens. */
    while (chain != NULL) {
        bolts_token_registration_t *next = chain->defer_next;
        /* Relaxed: no other thread can see this node any more. */
        atomic_store_explicit(&chain->state, REG_DISPOSED, memory_order_relaxed);
        if (chain->u.fn.release != NULL) chain->u.fn.release(chain->context);
        reg_unref(chain);
        chain = next;
    }
}

void bolts_token_release(bolts_token_t *t) {
    /* Release: this holder's accesses happen-before the destruction; the acquire fence
     * on the last drop pairs with every other holder's release decrement. */
    if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_release) == 1) {
        atomic_thread_fence(memory_order_acquire);
        token_destroy(t);
    }
}

bool bolts_token_is_cancelled(const bolts_token_t *t) {
    /* Acquire: pairs with the release fetch_or of CANCELLED in bolts_token_cancel. */
    return (atomic_load_explicit(&t->state, memory_order_acquire) & TOKEN_CANCELLED) != 0;
}

bool bolts_token_is_disposed(const bolts_token_t *t) {
    /* Acquire: pairs with the release fetch_or of DISPOSED in bolts_token_dispose. */
    return (atomic_load_explicit(&t->state, memory_order_acquire) & TOKEN_DISPOSED) != 0;
}

/* Runs every ARMED handler in list order, then unlinks the nodes it ran. Called once per
 * token, by the thread that set CANCELLED. */
static void token_run_handlers(bolts_token_t *t) {
    const void *self = self_id();
    bool ran_any = false;
    rcu_read_enter();
    struct cds_list_head *pos = rcu_next(&t->list);
    while (pos != &t->list) {
        bolts_token_registration_t *r = caa_container_of(pos, bolts_token_registration_t, link);
        uint32_t expected = REG_ARMED;
        /* Acquire on success, though visibility does not depend on it: the handler
         * fields were written before the node was added under the lock, which we took
         * to set CANCELLED. It keeps the claim sound without that argument and is free
         * on x86-64 (every RMW is a full barrier). Relaxed on failure: the node
         * belongs to a disposer and we only skip it. */
        if (atomic_compare_exchange_strong_explicit(&r->state, &expected, REG_RUNNING, memory_order_acquire,
                                                    memory_order_relaxed)) {
            /* Relaxed: only this thread ever compares `runner` with its own identity. */
            atomic_store_explicit(&r->runner, self, memory_order_relaxed);
            /* Leave the read-side section around user code: the handler may block or wait
             * for a grace period. `r` stays linked (only this walk unlinks RUNNING or RAN
             * nodes), so it is a valid place to resume from. */
            rcu_read_exit();
            r->u.fn.run(r->context);
            if (r->u.fn.release != NULL) r->u.fn.release(r->context);
            /* Release: the handler's effects happen-before a disposer's acquire that sees
             * RAN (bolts_token_registration_dispose). */
            uint32_t old = atomic_exchange_explicit(&r->state, REG_RAN, memory_order_release);
            if (old == REG_RUNNING_WAITED) futex_wake_all_u32(&r->state);
            ran_any = true;
            rcu_read_enter();
        }
        pos = rcu_next(pos);
    }
    rcu_read_exit();
    if (!ran_any) return;

    /* Unlink what ran, in one pass under the lock. RAN is set only by this walk, so no
     * other thread unlinks these nodes; and this walk, their only possible reader, has
     * left its read-side section, so they need no grace period. */
    bolts_token_registration_t *chain = NULL, **tail = &chain;
    struct cds_list_head *n;
    pthread_mutex_lock(&t->lock);
    cds_list_for_each_safe(pos, n, &t->list) {
        bolts_token_registration_t *r = caa_container_of(pos, bolts_token_registration_t, link);
        /* Relaxed: RAN was stored by this thread. */
        if (atomic_load_explicit(&r->state, memory_order_relaxed) != REG_RAN) continue;
        cds_list_del_rcu(pos);
        t->count--;
        r->defer_next = NULL;
        *tail = r;
        tail = &r->defer_next;
    }
    pthread_mutex_unlock(&t->lock);
    token_unref_unlinked(chain, false);
}

static void token_wait_notified(bolts_token_t *t) {
    for (;;) {
        /* Acquire: pairs with the release fetch_or of NOTIFIED after the walk, so the
         * handlers' effects are visible when this cancel returns. */
        uint32_t s = atomic_load_explicit(&t->state, memory_order_acquire);
        if (s & TOKEN_NOTIFIED) return;
        if (spin_until_changed(&t->state, s)) continue;
        if (!(s & TOKEN_WAITERS)) {
            /* Relaxed: WAITERS only asks the canceller to wake us; the futex re-checks the
             * value atomically, so a NOTIFIED set in between makes the wait return. */
            if (!atomic_compare_exchange_weak_explicit(&t->state, &s, s | TOKEN_WAITERS, memory_order_relaxed,
                                                       memory_order_relaxed))
                continue;
            s |= TOKEN_WAITERS;
        }
        futex_wait_u32(&t->state, s);
    }
}

bool bolts_token_cancel(bolts_token_t *t) {
    /* Acquire: pairs with the release that set NOTIFIED; a repeated cancel then returns
     * with every handler's effects visible, without taking the lock. */
    if (atomic_load_explicit(&t->state, memory_order_acquire) & TOKEN_NOTIFIED) return false;
    const void *self = self_id();
    pthread_mutex_lock(&t->lock);
    /* Relaxed: CANCELLED is only set under the lock we hold. */
    if (atomic_load_explicit(&t->state, memory_order_relaxed) & TOKEN_CANCELLED) {
        bool reentrant = t->canceller == self;
        pthread_mutex_unlock(&t->lock);
        if (!reentrant) token_wait_notified(t);
        return false;
    }
    /* Relaxed: DISPOSED is only set under the lock we hold. A disposed token can no longer
     * become cancelled (a `cancel(after:)` timer or a timeout racing the owner's dispose). */
    if (atomic_load_explicit(&t->state, memory_order_relaxed) & TOKEN_DISPOSED) {
        pthread_mutex_unlock(&t->lock);
        return false;
    }
    /* Release: what the caller did before cancel() happens-before any acquire load that
     * sees CANCELLED (bolts_token_is_cancelled, the fast path of register). */
    atomic_fetch_or_explicit(&t->state, TOKEN_CANCELLED, memory_order_release);
    t->canceller = self;
    pthread_mutex_unlock(&t->lock);

    token_run_handlers(t);

    /* Release: the handlers' effects happen-before the acquire in token_wait_notified and
     * in a later cancel's fast path. */
    uint32_t old = atomic_fetch_or_explicit(&t->state, TOKEN_NOTIFIED, memory_order_release);
    if (old & TOKEN_WAITERS) futex_wake_all_u32(&t->state);
    return true;
}

void bolts_token_dispose(bolts_token_t *t) {
    bolts_token_registration_t *chain = NULL, **tail = &chain;
    struct cds_list_head *pos, *n;
    pthread_mutex_lock(&t->lock);
    /* Release: pairs with the acquire in bolts_token_is_disposed. */
    atomic_fetch_or_explicit(&t->state, TOKEN_DISPOSED, memory_order_release);
    /* The lock excludes other updaters, so plain iteration is safe; a concurrent walk
     * reads the list under RCU and tolerates the unlinks. */
    bool after_grace_period = walk_may_be_reading(t);
    cds_list_for_each_safe(pos, n, &t->list) {
        bolts_token_registration_t *r = caa_container_of(pos, bolts_token_registration_t, link);
        uint32_t expected = REG_ARMED;
        /* Acquire on success: as for the walk's claim (visibility already comes from
         * the lock we hold). Relaxed on failure: the node belongs to the walk or to a
         * disposer. */
        if (!atomic_compare_exchange_strong_explicit(&r->state, &expected, REG_DISPOSED, memory_order_acquire,
                                                     memory_order_relaxed))
            continue;
        cds_list_del_rcu(pos);
        t->count--;
        r->defer_next = NULL;
        *tail = r;
        tail = &r->defer_next;
    }
    pthread_mutex_unlock(&t->lock);
    /* Contexts are released outside the lock (their release may run user code). */
    for (bolts_token_registration_t *r = chain; r != NULL; r = r->defer_next) {
        if (r->u.fn.release != NULL) r->u.fn.release(r->context);
    }
    token_unref_unlinked(chain, after_grace_period);
}

/* ---- Registrations ----------------------------------------------------------------- */

bolts_token_registration_t *bolts_token_register(bolts_token_t *t, bolts_token_fn run, bolts_token_fn release,
                                                 void *context) {
    /* Acquire: pairs with the release that set CANCELLED (or DISPOSED); a handler run here
     * sees what the canceller did before cancel(). */
    uint32_t s = atomic_load_explicit(&t->state, memory_order_acquire);
    if (!(s & (TOKEN_CANCELLED | TOKEN_DISPOSED))) {
        bolts_token_registration_t *r = checked_malloc(sizeof *r);
        COUNT(live_registrations, 1);
        /* Not shared until cds_list_add_tail_rcu publishes it. */
        atomic_init(&r->state, REG_ARMED);
        atomic_init(&r->refs, 2);
        atomic_init(&r->runner, NULL);
        r->token = t;
        r->u.fn.run = run;
        r->u.fn.release = release;
        r->context = context;
        r->defer_next = NULL;

        pthread_mutex_lock(&t->lock);
        /* Relaxed: CANCELLED and DISPOSED are only set under the lock we hold. */
        s = atomic_load_explicit(&t->state, memory_order_relaxed);
        if (!(s & (TOKEN_CANCELLED | TOKEN_DISPOSED))) {
            /* rcu_assign_pointer inside is a release store: a walk that reads the link
             * sees the initialized node. */
            cds_list_add_tail_rcu(&r->link, &t->list);
            t->count++;
            pthread_mutex_unlock(&t->lock);
            bolts_token_retain(t); /* the handle's reference */
            return r;
        }
        pthread_mutex_unlock(&t->lock);
        free(r); /* never published */
        COUNT(live_registrations, -1);
    }
    /* Cancelled (even if also disposed): run now. Disposed only: it can never run. */
    if (s & TOKEN_CANCELLED) run(context);
    if (release != NULL) release(context);
    return NULL;
}

bool bolts_token_registration_dispose(bolts_token_registration_t *r) {
    uint32_t s = REG_ARMED;
    /* Acquire on success: as for the walk's claim (the handle reached this thread
     * through a synchronizing hand-off after register, so the fields are visible anyway).
     * Acquire on failure: pairs with the canceller's release exchange to RAN, so the
     * handler's effects are visible if it already ran. */
    if (atomic_compare_exchange_strong_explicit(&r->state, &s, REG_DISPOSED, memory_order_acquire,
                                                memory_order_acquire)) {
        bolts_token_t *t = r->token;
        pthread_mutex_lock(&t->lock);
        cds_list_del_rcu(&r->link);
        t->count--;
        bool after_grace_period = walk_may_be_reading(t);
        pthread_mutex_unlock(&t->lock);
        if (r->u.fn.release != NULL) r->u.fn.release(r->context);
        r->defer_next = NULL;
        token_unref_unlinked(r, after_grace_period);
        return true;
    }
    if (s != REG_RUNNING && s != REG_RUNNING_WAITED) return false;
    /* Relaxed: equal only if this thread stored it, i.e. we are inside the handler. */
    if (atomic_load_explicit(&r->runner, memory_order_relaxed) == self_id()) return false;
    /* The handler runs on another thread: wait until it returned. The handle we hold
     * keeps the node alive; the canceller wakes us before it drops the list's reference. */
    for (;;) {
        /* Acquire: pairs with the canceller's release exchange to RAN. */
        s = atomic_load_explicit(&r->state, memory_order_acquire);
        if (s == REG_RAN) return false;
        if (spin_until_changed(&r->state, s)) continue;
        /* Relaxed: WAITED only asks the canceller for a wake-up; RAN is re-read above
         * with acquire. */
        if (s == REG_RUNNING && !atomic_compare_exchange_strong_explicit(&r->state, &s, REG_RUNNING_WAITED,
                                                                         memory_order_relaxed, memory_order_relaxed))
            continue;
        futex_wait_u32(&r->state, REG_RUNNING_WAITED);
    }
}

void bolts_token_registration_release(bolts_token_registration_t *r) {
    bolts_token_t *t = r->token; /* read before the node may be freed */
    reg_unref(r);
    bolts_token_release(t);
}

/* ---- Test hooks -------------------------------------------------------------------- */

size_t bolts_token_registration_count(bolts_token_t *t) {
    pthread_mutex_lock(&t->lock);
    size_t count = t->count;
    pthread_mutex_unlock(&t->lock);
    return count;
}

int64_t bolts_token_live_registrations(void) {
#ifdef TOKEN_COUNTERS
    return atomic_load_explicit(&live_registrations, memory_order_relaxed); /* a count only */
#else
    return -1;
#endif
}

int64_t bolts_token_live_tokens(void) {
#ifdef TOKEN_COUNTERS
    return atomic_load_explicit(&live_tokens, memory_order_relaxed); /* a count only */
#else
    return -1;
#endif
}

int64_t bolts_token_deferred_reclamations(void) {
#ifdef TOKEN_COUNTERS
    return atomic_load_explicit(&deferred_batches, memory_order_relaxed); /* a count only */
#else
    return -1;
#endif
}

void bolts_token_reclaim_barrier(void) {
#ifdef TOKEN_COUNTERS
    /* Our own barrier on the batches queued so far (and any queued meanwhile): it needs no
     * liburcu internals, which ThreadSanitizer cannot follow. Acquire: pairs with the
     * release decrement at the end of reclaim_batch. */
    while (atomic_load_explicit(&pending_batches, memory_order_acquire) != 0) usleep(100);
#else
    bolts__rcu_thread_ensure();
    urcu_memb_barrier();
#endif
}
