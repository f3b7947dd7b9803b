#ifndef BOLTS_POOL_INTERNAL_H
#define BOLTS_POOL_INTERNAL_H
/* Private helpers shared by pool.c and pool_serial.c: futex calls, the spin hint, and
 * ThreadSanitizer annotations for the hand-off through liburcu's queue (liburcu is not
 * instrumented, so TSan cannot see that its enqueue publishes the job). */
#include "internal.h"

#include <stdatomic.h>
#include <stdint.h>

#ifndef __linux__
#error "The Bolts thread pool parks its workers on Linux futexes."
#endif

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Destructive-interference size used to keep producer, consumer and owner fields apart. */
#define BOLTS_CACHE_LINE 64


/* Sleeps while *word == expected (or until `timeout_ns` passes, when >= 0). Spurious
 * returns are allowed: callers re-check their condition in a loop. */
static inline void bolts__futex_wait(atomic_uint *word, unsigned expected, int64_t timeout_ns) {
    struct timespec ts;
    struct timespec *tsp = NULL;
    if (timeout_ns >= 0) {
        ts.tv_sec = (time_t)(timeout_ns / 1000000000);
        ts.tv_nsec = (long)(timeout_ns % 1000000000);
        tsp = &ts;
    }
    syscall(SYS_futex, (unsigned *)word, FUTEX_WAIT_PRIVATE, expected, tsp, NULL, 0);
}

/* Wakes up to `count` threads sleeping on `word`. */
static inline void bolts__futex_wake(atomic_uint *word, int count) {
    syscall(SYS_futex, (unsigned *)word, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
}

/* Monotonic clock in nanoseconds. */
static inline int64_t bolts__now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#endif
