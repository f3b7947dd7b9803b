// The opaque sink and the clock; see the header.
#include "CBenchmarkSupport.h"

#include <stdatomic.h>
#include <time.h>

// Relaxed stores: the values only have to escape the optimizer's view; nobody reads them.
static _Atomic(const void *) sunk_pointer;
static _Atomic uint64_t sunk_integer;

void bench_sink_pointer(const void *pointer) {
    atomic_store_explicit(&sunk_pointer, pointer, memory_order_relaxed);
}

void bench_sink_u64(uint64_t value) {
    atomic_store_explicit(&sunk_integer, value, memory_order_relaxed);
}

uint64_t bench_now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}
