#ifndef CBENCHMARKSUPPORT_H
#define CBENCHMARKSUPPORT_H
/**
 * Benchmark support in C: an allocation counter, an opaque sink and a monotonic clock.
 *
 * Allocation counting. This target defines `malloc`, `calloc`, `realloc`,
 * `posix_memalign`, `aligned_alloc`, `memalign`, `valloc` and `pvalloc` in the benchmark
 * executable. The dynamic linker binds every shared library's calls (the Swift runtime,
 * Foundation, Dispatch, SwiftNIO, the Bolts C core) to the executable's definitions
 * first, so each allocation in the process passes through here, is counted, and is
 * forwarded to glibc's own `__libc_*` entry points. `free` is not replaced.
 *
 * The count is sharded: each thread adds to one of `BENCH_COUNTER_SHARDS` cache-line
 * sized slots (picked round-robin the first time the thread allocates), with a relaxed
 * atomic add, so threads that allocate concurrently do not share a cache line and no
 * count is lost even when two threads share a slot. `bench_allocation_count` sums the
 * slots with relaxed loads: a snapshot, exact once the threads that allocated have
 * synchronised with the reader (every benchmark joins its threads, or waits on a
 * completion, before it reads the count again).
 *
 * Synchronization
 *   | operation                | may run concurrently with | ordering                           |
 *   |--------------------------|---------------------------|------------------------------------|
 *   | any allocation           | everything                | relaxed add: a counter, no data    |
 *   |                          |                           | is published through it            |
 *   | bench_allocation_count   | everything                | relaxed loads; exact only after    |
 *   |                          |                           | the caller synchronised with the   |
 *   |                          |                           | allocating threads (join, wait)    |
 *   | bench_sink_*             | everything                | relaxed store: only has to escape  |
 */
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Number of counter slots (cache lines). */
#define BENCH_COUNTER_SHARDS 64

/** Allocations made in this process so far (malloc, calloc, realloc of NULL, and the
 *  aligned forms). A `realloc` that resizes an existing block is not an allocation. */
uint64_t bench_allocation_count(void);

/** Whether the interposed allocator is the one the process actually uses (false if the
 *  linker did not export this executable's `malloc`; the counts are then meaningless). */
int bench_allocation_counting_works(void);

/** Consumes a pointer so that the optimizer cannot prove the value unused. Opaque to
 *  Swift (a call into another module, never inlined). */
void bench_sink_pointer(const void *_Nullable pointer);

/** Consumes an integer; see `bench_sink_pointer`. */
void bench_sink_u64(uint64_t value);

/** CLOCK_MONOTONIC in nanoseconds. */
uint64_t bench_now_ns(void);

/** Opens user-space hardware counters of instructions and cycles for this process and the
 *  threads it starts afterwards (call it before the benchmark starts any thread). Returns 0,
 *  or the errno of perf_event_open(2): ENOENT or EOPNOTSUPP where the machine exposes no
 *  such counters (most VMs), EACCES or EPERM where perf_event_paranoid forbids them. Not
 *  thread-safe; call it once, first. */
int bench_perf_open(void);

/** Instructions counted so far (0 when the counters are not open). Any thread may call it
 *  once bench_perf_open has returned. */
uint64_t bench_perf_instructions(void);

/** Cycles counted so far; see bench_perf_instructions. */
uint64_t bench_perf_cycles(void);

#ifdef __cplusplus
}
#endif
#endif
