#ifndef BOLTS_INTERNAL_H
#define BOLTS_INTERNAL_H
/* Private declarations shared by the runtime's .c files; not part of the module. */
#include "include/CBoltsRuntime.h"
/* The tunable constants and test hooks (not API, not in the module). */
#include "bolts_tuning.h"

/* Platform primitives (futex, clock, spin hint, sanitizer detection, OOM abort). */
#include "platform.h"

/* ThreadSanitizer annotations, shared by every .c file: they tell TSan about orderings
 * that uninstrumented liburcu provides. */
#ifdef BOLTS_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
/* The producer's writes to the job happen before the consumer's reads: liburcu's
 * enqueue and dequeue order them, but outside TSan's view. */
#define BOLTS_TSAN_RELEASE(p) __tsan_release((void *)(p))
#define BOLTS_TSAN_ACQUIRE(p) __tsan_acquire((void *)(p))
#else
#define BOLTS_TSAN_RELEASE(p) ((void)0)
#define BOLTS_TSAN_ACQUIRE(p) ((void)0)
#endif

/* The pool's hooks around a blocking wait: a worker about to block lets the pool start
 * a compensating worker (or run other work), so a pool whose every worker waits on a
 * task cannot deadlock. Both are no-ops on threads that are not pool workers. */
void bolts__pool_blocking_begin(void);
void bolts__pool_blocking_end(void);

/* Called by `bolts_task_spin_for_completion` (a thread that is not a pool worker awaits a
 * task a pool runs) with the time: for a while after it, idle workers keep their CPU
 * instead of yielding it (BOLTS_POOL_SPIN_YIELD_AWAITED_NS). Any thread. */
void bolts__pool_note_awaiter(int64_t now);

/* Called by `bolts_task_await_suspend_begin` (an async awaiter off the pools suspends on a
 * task a pool runs) with the time: idle workers that start spinning within
 * BOLTS_POOL_SPIN_AWAITED_NS of it spin that long (BOLTS_POOL_SPIN_AWAITED_NS). Any thread. */
void bolts__pool_note_suspended_awaiter(int64_t now);

/* The idle spin, in nanoseconds, of a worker that starts spinning at `now`:
 * BOLTS_POOL_SPIN_AWAITED_NS within that long of a noted suspension, else
 * BOLTS_POOL_SPIN_NS. */
int64_t bolts__pool_idle_spin_ns(int64_t now);

/* Adds `delta` (+1 or -1) to the count of async awaiters of pool tasks that are suspended
 * (`bolts_task_await_suspend_begin`/`_end`): while it is above zero, idle workers keep
 * their CPUs. Any thread. */
void bolts__pool_awaiters_suspended(int delta);

/* Registers the calling thread with liburcu (memb) once, and unregisters it at thread
 * exit. Every .c file that takes an RCU read lock calls this first (token.c owns it;
 * registering a thread twice corrupts liburcu's reader list). */
void bolts__rcu_thread_ensure(void);

/* 128-byte blocks for task cores, from pool_blocks.c's magazines (recycled across
 * threads: a task made on an event loop is often freed on a pool worker). Any thread. */
void *bolts__block_alloc(void);
void bolts__block_free(void *block);
#define BOLTS_BLOCK_SIZE 128

#endif
