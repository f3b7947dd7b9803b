#ifndef BOLTS_TOKEN_H
#define BOLTS_TOKEN_H
/**
 * Cancellation tokens: a token's state word and its list of registrations.
 *
 * ## Objects and ownership
 *
 * - A **token** (`bolts_token_t`) is reference counted. `bolts_token_create` returns one
 *   reference; every registration handle holds one more. The Swift layer holds one per
 *   Swift object that wraps the token, and a linked child holds one through its link
 *   registration's context. A token is freed when its last reference is released; at
 *   that point nobody can cancel it any more, so the handlers still armed on it are
 *   released (their `release` function is called) without running.
 * - A **registration** (`bolts_token_registration_t`) is a node of the token's list.
 *   It holds the handler (`run`, `release`, `context`) and is referenced by the list
 *   (until it is unlinked, plus a grace period if a cancel walk may still be reading
 *   it; see Reclamation) and by the handle returned from
 *   `bolts_token_register` (until `bolts_token_registration_release`). The handler's
 *   context is released exactly once: right after the handler ran, or by the thread that
 *   disarmed it (dispose, token dispose, token destruction). It is never released on
 *   liburcu's call_rcu thread.
 *
 * ## The token's state word (32 bits, a futex word)
 *
 *   | bit               | meaning                                                       |
 *   |-------------------|---------------------------------------------------------------|
 *   | CANCELLED (1)     | cancel was requested; set once, never cleared                 |
 *   | NOTIFIED  (2)     | the canceller has run every handler armed at cancel time      |
 *   | DISPOSED  (4)     | the owner disposed the token; armed handlers were dropped     |
 *   | WAITERS   (8)     | a second canceller sleeps on the word until NOTIFIED          |
 *
 * ## A registration's state word (32 bits, a futex word)
 *
 *   ARMED ──cancel walk──▶ RUNNING ──(a disposer waits)──▶ RUNNING_WAITED
 *     │                       │                                  │
 *     │                       └──────────handler returned────────┴──▶ RAN
 *     └──dispose / token dispose / token destroy──▶ DISPOSED
 *
 * ARMED is left by exactly one compare-and-swap, and the thread whose CAS wins owns the
 * handler: the canceller runs it, a disposer drops it. That single CAS is what makes a
 * handler run at most once and never after a dispose that won, whatever the timing.
 * Whoever moves a node out of ARMED also unlinks it from the list (under the token's
 * lock), so a node is unlinked exactly once.
 *
 * ## What may run concurrently with what
 *
 * Any number of `register`, `registration_dispose`, `registration_release`,
 * `is_cancelled`, `cancel` and `dispose` calls, from any threads, on the same token.
 * Only `bolts_token_release` of the last reference must not race other calls on that
 * token (it cannot: every other caller holds a reference).
 *
 * - **List updates** (add in `register`, unlink in dispose, in the cancel walk and in
 *   token dispose) take the token's mutex. Registration is not the hot path of the
 *   runtime (task completion is, and it never touches a token), so a short uncontended
 *   lock is the simplest correct choice for writers.
 * - **The cancel walk** reads the list without the lock, inside a liburcu read-side
 *   critical section, because it must call user handlers, and those may dispose other
 *   registrations of the same token (taking the lock) or register new ones. The walk
 *   leaves the read-side section around each handler call (a handler may block, or
 *   may itself wait for a grace period), which is safe because the node being run is
 *   RUNNING and only the canceller unlinks a RUNNING node: it is still linked when the
 *   walk re-enters and reads its successor.
 * - **Reclamation**: an unlinked node may still be read by a walk that reached it
 *   before the unlink. Such a node is handed to `call_rcu`, so its memory is reused only
 *   after every read-side section that could have seen it has ended. The walk is the
 *   only reader and runs once per token, between CANCELLED (set under the lock) and
 *   NOTIFIED (set after its last read-side section): a node unlinked while CANCELLED is
 *   clear, or once NOTIFIED is set, cannot be reached by any walk and is freed at once.
 *   So only disposals that race a running cancel pay for a grace period, and the common
 *   register + dispose on a live token never touches RCU.
 *
 * ## Which barrier pairs with which
 *
 * - `register` publishes a node with `cds_list_add_tail_rcu` (a release store of the
 *   predecessor's `next`), under the mutex. The canceller sets CANCELLED under the same
 *   mutex, so every node added before CANCELLED is visible to its walk (mutex
 *   release/acquire), and every `register` after CANCELLED sees the bit and runs its
 *   handler at once instead of adding it. No handler is lost between the two.
 * - The walk reads `next` through `rcu_dereference` (a dependency-ordered load) that
 *   pairs with the release store in `cds_list_add_tail_rcu`/`cds_list_del_rcu`.
 * - The ARMED→RUNNING CAS and the ARMED→DISPOSED CAS (both acquire on success) are on
 *   the same word; exactly one succeeds.
 * - The canceller's exchange to RAN (release) pairs with the disposer's acquire load
 *   of the state word: when `bolts_token_registration_dispose` returns after waiting,
 *   everything the handler did happens-before the return.
 * - `cancel` sets CANCELLED with a release RMW (under the mutex); `is_cancelled` loads
 *   it with acquire, so work done before `cancel` is visible to whoever sees the bit.
 *   NOTIFIED is set with a release RMW after the walk; a second canceller waits for it
 *   with acquire loads, so handlers' effects are visible when its `cancel` returns.
 * - A disposer decides "free now" from the state word read with acquire under the lock:
 *   CANCELLED clear (the lock orders any later walk after the unlink), or NOTIFIED set
 *   (pairs with the release that set it, after the walk's last read).
 * - Grace periods: liburcu's memb flavour uses `membarrier` (sys_membarrier) on the
 *   update side, so readers pay only compiler barriers. Under ThreadSanitizer, which
 *   cannot see that, read-side exits and `call_rcu` hand-offs are annotated as a
 *   release of one global sync address, and reclamation callbacks acquire it; the
 *   walk's loads of `next` (RCU-published pointers, stored by uninstrumented liburcu
 *   code) are excluded from race detection. Both annotations are needed: without
 *   either, TSan reports false races on the stress tests.
 *
 * ## Why the memb flavour, and lazily registered threads
 *
 * Handlers, registrations and cancels run on any thread: Dispatch workers, Swift's
 * cooperative pool, user threads. The qsbr flavour would make every such thread report
 * quiescent states and go offline before blocking; a thread that sleeps while online
 * stalls every grace period for as long as it sleeps. Foreign threads cannot be made to
 * do that. memb has no such duty: a thread outside a read-side section never delays a
 * grace period, and where the kernel has membarrier the read side issues no fence (the
 * grace period's membarrier system call stands in for it).
 *
 * Every thread that enters a read-side section or calls `call_rcu` must be registered
 * with liburcu first (release builds of liburcu do not check, and an unregistered reader
 * silently breaks grace periods). The runtime registers a thread lazily, the first time
 * it needs RCU (one thread-local flag test afterwards), and unregisters it from a
 * `pthread_key` destructor when the thread exits. Registering a thread twice corrupts
 * liburcu's reader registry, so this is the runtime's single registration point: other
 * .c files that need RCU call `bolts__rcu_thread_ensure()` (defined in token.c).
 *
 * ## Handlers
 *
 * Handlers run synchronously inside `bolts_token_cancel`, on the canceller's thread, in
 * registration order, outside the token's lock and outside any read-side section. A
 * handler may register on the token (it runs at once: the token is cancelled), dispose
 * any registration (its own included: disposing the running registration from inside
 * its handler returns at once instead of deadlocking), cancel other tokens, or cancel
 * this token again (a no-op on the canceller's thread).
 *
 * Blocking calls, which the caller must not arrange into a cycle:
 * - `bolts_token_registration_dispose` on another thread waits while that handler runs.
 * - A second `bolts_token_cancel` on another thread waits until the first canceller has
 *   run every handler, so "cancelled" always means "handlers have run" when `cancel`
 *   returns. A handler must therefore not wait for another thread that is itself
 *   cancelling the same token, or disposing the running registration.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A cancellation token (opaque, reference counted). */
typedef struct bolts_token bolts_token_t;

/** One registered handler and the caller's handle to it (opaque). */
typedef struct bolts_token_registration bolts_token_registration_t;

/** A handler or a context release function. Receives the registration's context. */
typedef void (*bolts_token_fn)(void *_Nullable context);

/** Makes a token that is not cancelled, with one reference owned by the caller.
 *  Never NULL (aborts on exhausted memory). */
bolts_token_t *_Nonnull bolts_token_create(void);

/** Adds a reference (relaxed: the caller already holds one, so the token is alive). */
void bolts_token_retain(bolts_token_t *_Nonnull token);

/** Drops a reference. The last one releases every handler still armed (without running
 *  it) and frees the token; it must not race other calls on the token. */
void bolts_token_release(bolts_token_t *_Nonnull token);

/** Whether cancellation was requested (handlers may still be running). Acquire: pairs
 *  with the release that set CANCELLED in `bolts_token_cancel`. */
bool bolts_token_is_cancelled(const bolts_token_t *_Nonnull token);

/** Whether `bolts_token_dispose` was called (acquire, like `bolts_token_is_cancelled`). */
bool bolts_token_is_disposed(const bolts_token_t *_Nonnull token);

/**
 * Requests cancellation and runs every armed handler, in registration order, on the
 * calling thread; returns when all of them returned. Returns true if this call made
 * the request, false if the token was already cancelled or was disposed first (a
 * disposed token never becomes cancelled). If it was already cancelled it first waits
 * until the canceller that made the request has run every handler, unless the caller
 * is that canceller (a re-entrant call from a handler), which returns at once.
 * Runs no handler that was disposed before the walk reached it.
 */
bool bolts_token_cancel(bolts_token_t *_Nonnull token);

/**
 * Disposes the token on behalf of its owner: sets DISPOSED and drops (releases without
 * running) every handler still armed. Later registrations on a token that is disposed
 * but not cancelled are dropped at once and return NULL, since nothing can cancel it.
 * Running handlers are not waited for. Idempotent. Cancelling afterwards does nothing
 * (returns false). Concurrent with anything.
 */
void bolts_token_dispose(bolts_token_t *_Nonnull token);

/**
 * Registers `run(context)` to run when the token is cancelled.
 *
 * - Not cancelled: the node is appended to the list (under the token's mutex) and a
 *   handle is returned; the caller owns one handle reference and must call
 *   `bolts_token_registration_release` exactly once.
 * - Already cancelled: `run(context)` then `release(context)` run now, on this thread,
 *   and NULL is returned (nothing to dispose).
 * - Disposed and not cancelled: `release(context)` runs now and NULL is returned.
 *
 * `release` (may be NULL) is called exactly once, on the thread that ran or dropped the
 * handler, after `run` if it ran. Never NULL returned for any other reason (aborts on
 * exhausted memory).
 */
bolts_token_registration_t *_Nullable bolts_token_register(bolts_token_t *_Nonnull token,
                                                           bolts_token_fn _Nonnull run,
                                                           bolts_token_fn _Nullable release,
                                                           void *_Nullable context);

/**
 * Disposes a registration. Returns true if this call disarmed it: the handler never ran
 * and never will, and its context was released on this thread. Returns false if the
 * handler already ran, or was disposed before; if the handler is running on another
 * thread, first waits until it returned (so no handler runs after its dispose returned),
 * unless this thread is the one running it (dispose from inside the handler), which
 * returns at once. Idempotent; concurrent with anything; does not drop the handle.
 */
bool bolts_token_registration_dispose(bolts_token_registration_t *_Nonnull registration);

/** Drops the handle returned by `bolts_token_register` (does not dispose: an armed
 *  handler stays armed). The handle must not be used afterwards. */
void bolts_token_registration_release(bolts_token_registration_t *_Nonnull registration);

/** For tests: registrations currently linked in the token's list (armed, or unlinked
 *  by nobody yet). Takes the token's mutex. */
size_t bolts_token_registration_count(bolts_token_t *_Nonnull token);

/** For tests: registration nodes allocated and not yet freed, process-wide. Counted in
 *  debug builds only (SwiftPM defines DEBUG; or define BOLTS_TOKEN_COUNTERS): -1 when
 *  compiled out. Relaxed; exact once `bolts_token_reclaim_barrier` returned and nothing
 *  races it. */
int64_t bolts_token_live_registrations(void);

/** For tests: tokens allocated and not yet freed, process-wide (debug builds; -1 else). */
int64_t bolts_token_live_tokens(void);

/** For tests: how many chains of unlinked nodes went through `call_rcu` so far because a
 *  cancel walk might still be reading them (debug builds; -1 else). */
int64_t bolts_token_deferred_reclamations(void);

/** For tests: waits until every node handed to `call_rcu` so far has been freed. Must
 *  not be called from a handler. */
void bolts_token_reclaim_barrier(void);

#ifdef __cplusplus
}
#endif
#endif
