#ifndef BOLTS_PLATFORM_H
#define BOLTS_PLATFORM_H
/* The runtime's one home for each platform primitive: futex wait and wake, the monotonic
 * clock, the spin hint, the CPU yield, sanitizer detection and the out-of-memory abort.
 * Every .c file reaches the platform through here (internal.h includes it); none calls
 * syscall(2), clock_gettime(2), sched_yield(2) or an architecture's pause instruction
 * itself. */

#ifndef __linux__
#error "The Bolts runtime parks threads on Linux futexes."
#endif

#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Sanitizers. BOLTS_TSAN: ThreadSanitizer (TSan annotations, C11 fences where liburcu's
 * barriers are invisible to it). BOLTS_SANITIZED: ThreadSanitizer or AddressSanitizer, under
 * which the block magazines are compiled out so that every block's lifetime is a
 * malloc/free the sanitizer sees. gcc defines __SANITIZE_*__; clang answers __has_feature. */
#if defined(__SANITIZE_THREAD__)
#define BOLTS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BOLTS_TSAN 1
#endif
#endif
#if defined(BOLTS_TSAN) || defined(__SANITIZE_ADDRESS__)
#define BOLTS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BOLTS_SANITIZED 1
#endif
#endif

/* Sleeps while *word == expected, or until `timeout_ns` has passed when it is >= 0.
 * Returns at once if *word != expected; spurious returns are allowed, so every caller
 * re-checks its condition in a loop. Private futex: the word is in this process. */
static inline void bolts__futex_wait(_Atomic uint32_t *word, uint32_t expected, int64_t timeout_ns) {
    struct timespec ts;
    struct timespec *tsp = NULL;
    if (timeout_ns >= 0) {
        ts.tv_sec = (time_t)(timeout_ns / 1000000000);
        ts.tv_nsec = (long)(timeout_ns % 1000000000);
        tsp = &ts;
    }
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, tsp, NULL, 0);
}

/* Wakes up to `count` threads sleeping on `word` (INT_MAX: all of them). */
static inline void bolts__futex_wake(_Atomic uint32_t *word, int count) {
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
}

/* CLOCK_MONOTONIC in nanoseconds (vDSO: no system call). */
static inline int64_t bolts__now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The monotonic time `timeout_ns` from now, or -1 (no deadline) for a negative timeout.
 * Saturates at INT64_MAX instead of overflowing: a caller may pass any timeout up to
 * INT64_MAX, whatever the uptime. */
static inline int64_t bolts__deadline_after(int64_t timeout_ns) {
    if (timeout_ns < 0) return -1;
    int64_t now = bolts__now_ns();
    return timeout_ns > INT64_MAX - now ? INT64_MAX : now + timeout_ns;
}

/* Gives the CPU to any other thread that is ready to run on it; returns at once when
 * none is. */
static inline void bolts__yield_cpu(void) {
    sched_yield();
}

/* A hint to the CPU that this thread is spinning. */
static inline void bolts__cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

/* The runtime cannot report an allocation failure through its API (a job, a task core or
 * a token that could not be made would be lost work): it says what it could not allocate
 * and aborts. `align` 0: malloc's alignment. */
static inline _Noreturn void bolts__out_of_memory(const char *what) {
    fprintf(stderr, "bolts: out of memory allocating %s\n", what);
    abort();
}

static inline void *bolts__alloc_or_abort(size_t align, size_t size, const char *what) {
    void *p = align != 0 ? aligned_alloc(align, size) : malloc(size);
    if (p == NULL) bolts__out_of_memory(what);
    return p;
}

/* As `bolts__alloc_or_abort`, for a block that grows: `realloc` of `p` (may be NULL). */
static inline void *bolts__realloc_or_abort(void *p, size_t size, const char *what) {
    void *grown = realloc(p, size);
    if (grown == NULL) bolts__out_of_memory(what);
    return grown;
}

#endif
