/*
 * Compiles the runtime's own C files as C++ inside a Relacy harness, so that their atomic
 * operations run under Relacy's relaxed memory model with exactly the orders the C code
 * names. Included first by every harness, then the C files themselves (`#include` of the
 * .c file), copied by run.sh into a work directory with one syntactic normalisation:
 * `_Atomic T` is rewritten `_Atomic(T)` (the same C11 type) so that one function-like macro
 * covers both spellings.
 *
 * What is mapped, not modelled:
 * - `_Atomic(T)` is `shim_atomic<T>`: a struct of one T, so that every size, alignment and
 *   offset the C code asserts or relies on (the inline readers of bolts_task.h read the
 *   outcome byte at a fixed offset) is what the C compiler gives it. Each shim atomic is
 *   backed by a Relacy atomic found by its address (a side table, emptied every
 *   iteration); `atomic_init` starts a fresh one; memory zeroed before it is shared (the
 *   pool's memset and calloc) reads as zero in every thread. `atomic_uint` and the other
 *   C11 typedefs are shim atomics too.
 * - `atomic_*_explicit`, `atomic_thread_fence` and the `memory_order_*` names (Relacy's
 *   own macros turn each order into its Relacy order plus the `$` site); the GNU builtin
 *   `__atomic_load_n` of the inline readers, with its `__ATOMIC_*` order.
 * - `pthread_mutex_*`: a Relacy mutex per pthread mutex.
 *
 * What is modelled (each is a call the C code makes that cannot run inside Relacy):
 * - `syscall(SYS_futex, …)` (platform.h's futex wait and wake): a full fence (the kernel's
 *   barrier on both sides), then, for WAIT, a read of the word's latest value (a relaxed
 *   read-modify-write that adds zero) and, if it still holds the expected value, a sleep on
 *   the word's Relacy atomic in the same scheduling step (the kernel checks and queues
 *   atomically); spurious returns allowed, and a timed wait may time out at any moment.
 *   WAKE wakes up to `count` sleepers of that word.
 * - `clock_gettime`: a clock that advances 1 µs per read.
 * - `sched_yield` and the spin hint (`__builtin_ia32_pause`): a Relacy yield.
 * - `malloc`/`calloc`/`aligned_alloc`/`free` and the runtime's block allocators
 *   (pool_blocks.c is not compiled):
 *   blocks are never reused within an iteration; a freed block is poisoned, and a shim
 *   atomic reached inside a freed block, a double free and a block still live at the end
 *   (where the check asks) fail the check.
 * - `_Thread_local`/`__thread`: a Relacy thread is a fiber of one OS thread, so per-thread
 *   variables that the protocols read (job.c's trampoline state, token.c's thread identity,
 *   the pool's worker slot and blocking depth) are given one copy per Relacy
 *   thread by the harness that includes the file; the rest (statistics, lazy RCU
 *   registration flags, task.c's await-spin counts, the pool's submission rotation,
 *   backpressure sampling and hop heuristic) stay shared: heuristics whose value only
 *   changes which queue, spin or wait is chosen.
 * - liburcu: see urcu/urcu-memb.h, urcu/rculist.h, urcu/wfcqueue.h and urcu/system.h
 *   beside this file; thread creation and the pool's monitor: pool_stubs.h.
 * - `abort()`: a failed Relacy assertion (so that the trail is printed).
 */
#ifndef BOLTS_RELACY_SHIM_H
#define BOLTS_RELACY_SHIM_H

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <map>
#include <vector>

#include <relacy/relacy.hpp>

/* Relacy maps pthread, malloc and assert names to its own objects; the shim maps them
 * itself (below), so those macros go. */
#undef pthread_mutex_t
#undef pthread_mutexattr_t
#undef pthread_mutex_init
#undef pthread_mutex_destroy
#undef pthread_mutex_lock
#undef pthread_mutex_unlock
#undef pthread_mutex_try_lock
#undef pthread_mutex_timedlock
#undef pthread_t
#undef pthread_create
#undef pthread_join
#undef sched_yield
#undef malloc
#undef calloc
#undef realloc
#undef free
#undef errno
#define errno (*__errno_location())

using rl::mo_relaxed;
using rl::mo_consume;
using rl::mo_acquire;
using rl::mo_release;
using rl::mo_acq_rel;
using rl::mo_seq_cst;

/* ---- Atomics -------------------------------------------------------------------------- */

template <class T> struct shim_atomic {
    /* The C type's size and alignment; read as the value only when a static object is
     * first used (its initializer). */
    T raw;
    shim_atomic() = default;
    shim_atomic(T v) : raw(v) {}
};
#define _Atomic(T) shim_atomic<T>
typedef shim_atomic<unsigned> atomic_uint;
typedef shim_atomic<int> atomic_int;
typedef shim_atomic<bool> atomic_bool;
typedef shim_atomic<unsigned char> atomic_uchar;
typedef shim_atomic<long> atomic_long;

struct shim_cell_base {
    virtual ~shim_cell_base() {}
};
/* Relacy's atomic with "strong" initialization: created holding zero, a value every thread
 * may read (as memory zeroed before the object is shared: the pool's memset and calloc).
 * Any other first value is a store by the creating thread. */
template <class T> using shim_rl_atomic = rl::generic_atomic<T, true>;
template <class T> struct shim_cell : shim_cell_base {
    shim_rl_atomic<T> a;
};

/* The shim's own containers allocate with the C library directly: Relacy replaces the
 * global operator new inside a test, which its operator delete does not undo. */
template <class T> struct shim_std_allocator {
    typedef T value_type;
    shim_std_allocator() {}
    template <class U> shim_std_allocator(const shim_std_allocator<U> &) {}
    T *allocate(size_t n) { return (T *)(::malloc)(n * sizeof(T)); }
    void deallocate(T *p, size_t) { (::free)(p); }
    template <class U> bool operator==(const shim_std_allocator<U> &) const { return true; }
    template <class U> bool operator!=(const shim_std_allocator<U> &) const { return false; }
};
template <class K, class V> using shim_map = std::map<K, V, std::less<K>, shim_std_allocator<std::pair<const K, V>>>;

/* The allocator's record of every block of this iteration (see shim_alloc). */
struct shim_block {
    size_t size;
    bool freed;
    int kind; /* which allocator made it: frees must use the same one */
};
static shim_map<char *, shim_block> shim_blocks;
static shim_map<const void *, shim_cell_base *> shim_cells;

/* Whether `p` lies inside a block freed in this iteration. */
static inline bool shim_in_freed_block(const void *p) {
    auto it = shim_blocks.upper_bound((char *)p);
    if (it == shim_blocks.begin()) return false;
    --it;
    return (const char *)p < it->first + it->second.size && it->second.freed;
}

/* Cells live in malloc'd memory (Relacy replaces operator new and delete). */
static void shim_cell_destroy(shim_cell_base *c) {
    c->~shim_cell_base();
    (::free)(c);
}

template <class T> static shim_rl_atomic<T> &shim_make_cell(const shim_atomic<T> *p, T value) {
#pragma push_macro("new")
#undef new
    shim_cell<T> *c = new ((::malloc)(sizeof(shim_cell<T>))) shim_cell<T>;
#pragma pop_macro("new")
    if (value != T()) c->a.store(value, mo_relaxed, $);
    shim_cells[p] = c;
    return c->a;
}

template <class T> static shim_rl_atomic<T> &shim_cell_of(const shim_atomic<T> *p) {
    RL_ASSERT(!shim_in_freed_block(p) && "atomic access to a freed block");
    auto it = shim_cells.find(p);
    /* First use without atomic_init: memory zeroed before it was shared, or a static
     * object (a non-zero initializer is a store by this thread: a harness initializes
     * the static atomics its threads share in `before`). */
    if (it == shim_cells.end()) return shim_make_cell<T>(p, p->raw);
    return static_cast<shim_cell<T> *>(it->second)->a;
}

template <class T, class V> static void shim_init(shim_atomic<T> *p, V value) {
    auto it = shim_cells.find(p);
    if (it != shim_cells.end()) {
        shim_cell_destroy(it->second);
        shim_cells.erase(it);
    }
    shim_make_cell<T>(p, (T)value);
}

/* Drops every cell of the iteration (Relacy's atomics must die inside its context). */
static void shim_cells_clear(bool destroy) {
    for (auto &kv : shim_cells) {
        if (destroy) kv.second->~shim_cell_base();
        (::free)(kv.second);
    }
    shim_cells.clear();
}

#define atomic_init(p, v) shim_init((p), (v))
#define atomic_load_explicit(p, mo) shim_cell_of(p).load(mo)
#define atomic_store_explicit(p, v, mo) shim_cell_of(p).store((v), mo)
#define atomic_exchange_explicit(p, v, mo) shim_cell_of(p).exchange((v), mo)
#define atomic_compare_exchange_weak_explicit(p, e, d, s, f) shim_cell_of(p).compare_exchange_weak(*(e), (d), s, f)
#define atomic_compare_exchange_strong_explicit(p, e, d, s, f) \
    shim_cell_of(p).compare_exchange_strong(*(e), (d), s, f)
#define atomic_fetch_add_explicit(p, v, mo) shim_cell_of(p).fetch_add((v), mo)
#define atomic_fetch_sub_explicit(p, v, mo) shim_cell_of(p).fetch_sub((v), mo)
#define atomic_fetch_or_explicit(p, v, mo) shim_cell_of(p).fetch_or((v), mo)
#define atomic_fetch_and_explicit(p, v, mo) shim_cell_of(p).fetch_and((v), mo)
#define atomic_thread_fence(mo) rl::atomic_thread_fence(mo)

/* The GNU builtin of the inline readers (bolts_task.h): a load of the shim atomic at that
 * address, with the builtin's order. */
static inline rl::memory_order shim_gnu_order(int o) {
    switch (o) {
    case __ATOMIC_RELAXED: return mo_relaxed;
    case __ATOMIC_CONSUME: return mo_consume;
    case __ATOMIC_ACQUIRE: return mo_acquire;
    case __ATOMIC_RELEASE: return mo_release;
    case __ATOMIC_ACQ_REL: return mo_acq_rel;
    default: return mo_seq_cst;
    }
}
template <class T> static inline T shim_gnu_load(const T *p, int o, rl::debug_info_param info) {
    return shim_cell_of((const shim_atomic<T> *)(const void *)p).load(shim_gnu_order(o), info);
}
#define __atomic_load_n(p, o) shim_gnu_load((p), (o), $)

/* ---- C as C++ ------------------------------------------------------------------------- */
#define _Static_assert(c, m) static_assert(c, m)
#define _Noreturn __attribute__((noreturn))
#define _Alignas(n) alignas(n)
#define _Alignof(t) alignof(t)
#define _Thread_local
#define __thread
#define _Nullable
#define _Nonnull
#define _Null_unspecified

static void shim_abort_here(rl::debug_info_param info) {
    RL_ASSERT_IMPL(false, rl::test_result_user_assert_failed, "abort() in the C code", info);
    ::abort();
}
#define abort() shim_abort_here($)

/* ---- Memory --------------------------------------------------------------------------- */
enum { SHIM_MALLOC = 0, SHIM_BLOCK = 1, SHIM_POOL_BLOCK = 2 };

static void *shim_alloc(size_t size, int kind) {
    char *p = (char *)(::malloc)(size ? size : 1);
    memset(p, 0xAB, size); /* never zero: the C code must initialize what it reads */
    shim_blocks[p] = shim_block{size, false, kind};
    return p;
}

static void shim_release(void *p, int kind, rl::debug_info_param info) {
    if (p == NULL) return;
    auto it = shim_blocks.find((char *)p);
    RL_ASSERT_IMPL(it != shim_blocks.end(), rl::test_result_double_free, "free of an unknown block", info);
    RL_ASSERT_IMPL(!it->second.freed, rl::test_result_double_free, "double free", info);
    RL_ASSERT_IMPL(it->second.kind == kind, rl::test_result_double_free, "freed by the wrong allocator", info);
    it->second.freed = true;
    memset(p, 0xDD, it->second.size); /* a plain read of a freed block reads poison */
}

/* Blocks still live (not freed) in this iteration. */
static size_t shim_live_blocks(void) {
    size_t n = 0;
    for (auto &kv : shim_blocks)
        if (!kv.second.freed) n++;
    return n;
}

static void shim_memory_clear(void) {
    for (auto &kv : shim_blocks) (::free)(kv.first);
    shim_blocks.clear();
}

static void *shim_calloc(size_t n, size_t size) {
    void *p = shim_alloc(n * size, SHIM_MALLOC);
    memset(p, 0, n * size);
    return p;
}
#define malloc(n) shim_alloc((n), SHIM_MALLOC)
#define calloc(n, size) shim_calloc((n), (size))
#define aligned_alloc(a, n) shim_alloc((n), SHIM_MALLOC)
#define free(p) shim_release((p), SHIM_MALLOC, $)

/* ---- Platform calls ------------------------------------------------------------------- */
/* A harness may name one futex word whose sleeps and effective wake-ups it counts, for the
 * figures it prints (how often the explored executions reached a path). */
static const void *shim_counted_word;
static unsigned long shim_counted_sleeps, shim_counted_wakes;

static long shim_syscall(rl::debug_info_param info, long nr, ...) {
    RL_ASSERT_IMPL(nr == SYS_futex, rl::test_result_user_assert_failed, "only futex is modelled", info);
    va_list ap;
    va_start(ap, nr);
    uint32_t *word = va_arg(ap, uint32_t *);
    int op = va_arg(ap, int);
    uint32_t val = va_arg(ap, uint32_t);
    const struct timespec *ts = va_arg(ap, const struct timespec *);
    va_end(ap);
    shim_rl_atomic<uint32_t> &a = shim_cell_of((const shim_atomic<uint32_t> *)(void *)word);
    rl::context &c = rl::ctx();
    (rl::atomic_thread_fence)(mo_seq_cst, info);
    if (op == FUTEX_WAIT_PRIVATE) {
        /* The kernel compares the word's current value under its bucket lock, which every
         * waker of the word takes too: a read-modify-write that changes nothing reads the
         * latest value in the word's modification order, as the kernel does (a relaxed load
         * could return a value older than a wake that already happened). Relaxed: the check
         * orders no other memory. */
        if (a.fetch_add(0, mo_relaxed, info) != val) return -1;
        if (word == shim_counted_word) shim_counted_sleeps++;
        a.wait(c, ts != NULL, true, info);
        return 0;
    }
    RL_ASSERT_IMPL(op == FUTEX_WAKE_PRIVATE, rl::test_result_user_assert_failed, "futex op", info);
    long woken = a.wake(c, (rl::thread_id_t)(val > 1000 ? 1000 : val), info);
    if (woken > 0 && word == shim_counted_word) shim_counted_wakes++;
    return woken;
}
#define syscall(...) shim_syscall($, __VA_ARGS__)

static int64_t shim_clock_ns;
static int shim_clock_gettime(clockid_t id, struct timespec *ts) {
    (void)id;
    shim_clock_ns += 1000;
    ts->tv_sec = shim_clock_ns / 1000000000;
    ts->tv_nsec = shim_clock_ns % 1000000000;
    return 0;
}
#define clock_gettime(id, ts) shim_clock_gettime((id), (ts))
#define sched_yield() (rl::yield(1, $), 0)
#define __builtin_ia32_pause() rl::yield(1, $)

/* ---- pthread mutexes ------------------------------------------------------------------ */
struct shim_mutex {
    rl::mutex *m;
};
static std::vector<rl::mutex *, shim_std_allocator<rl::mutex *>> shim_mutexes;
static int shim_mutex_init(shim_mutex *m) {
#pragma push_macro("new")
#undef new
    m->m = new ((::malloc)(sizeof(rl::mutex))) rl::mutex;
#pragma pop_macro("new")
    shim_mutexes.push_back(m->m);
    return 0;
}
static void shim_mutexes_clear(bool destroy) {
    for (rl::mutex *m : shim_mutexes) {
        if (destroy) m->rl::mutex::~mutex();
        (::free)(m);
    }
    shim_mutexes.clear();
}
#define pthread_mutex_t shim_mutex
#define pthread_mutex_init(mx, attr) shim_mutex_init(mx)
#define pthread_mutex_destroy(mx) ((void)(mx), 0)
#define pthread_mutex_lock(mx) ((mx)->m->lock($), 0)
#define pthread_mutex_unlock(mx) ((mx)->m->unlock($), 0)

/* Every harness calls this from `before` and `after`: a fresh memory, atomics and
 * mutexes for each iteration. */
static void shim_iteration_reset(bool destroy) {
    shim_cells_clear(destroy);
    shim_mutexes_clear(destroy);
    shim_memory_clear();
    shim_clock_ns = 0;
    shim_counted_word = NULL;
}

#endif
