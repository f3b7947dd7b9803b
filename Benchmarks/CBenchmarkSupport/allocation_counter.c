// Replaces the allocation entry points of the process to count them; see the header.
#define _GNU_SOURCE
#include "CBenchmarkSupport.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>

// glibc's own implementations, exported for exactly this purpose (interposers forward to
// them; dlsym(RTLD_NEXT) would itself allocate on first use).
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

typedef struct {
    _Alignas(64) _Atomic uint64_t allocations;
} bench_shard_t;

_Static_assert(sizeof(bench_shard_t) == 64, "one shard per cache line");

static bench_shard_t shards[BENCH_COUNTER_SHARDS];

// Round-robin slot assignment. Relaxed: it only spreads threads over slots; any value is
// correct because the adds themselves are atomic.
static _Atomic uint32_t next_shard;

// The calling thread's slot plus one (0: not chosen yet). initial-exec: this object is
// part of the executable, whose TLS block exists before any code runs, so reaching it
// never calls the allocator (a general-dynamic access could, and would recurse).
static __thread uint32_t my_shard __attribute__((tls_model("initial-exec")));

static inline void count_allocation(void) {
    uint32_t shard = my_shard;
    if (__builtin_expect(shard == 0, 0)) {
        shard = atomic_fetch_add_explicit(&next_shard, 1, memory_order_relaxed) % BENCH_COUNTER_SHARDS + 1;
        my_shard = shard;
    }
    // Relaxed: a pure counter; readers synchronise with this thread by other means.
    atomic_fetch_add_explicit(&shards[shard - 1].allocations, 1, memory_order_relaxed);
}

uint64_t bench_allocation_count(void) {
    uint64_t total = 0;
    for (int i = 0; i < BENCH_COUNTER_SHARDS; i++) {
        // Relaxed: see the header's synchronization table.
        total += atomic_load_explicit(&shards[i].allocations, memory_order_relaxed);
    }
    return total;
}

int bench_allocation_counting_works(void) {
    uint64_t before = bench_allocation_count();
    // Called through a volatile pointer so that the compiler cannot elide the pair.
    void *(*volatile allocate)(size_t) = malloc;
    void *pointer = allocate(24);
    uint64_t after = bench_allocation_count();
    free(pointer);
    return after == before + 1;
}

void *malloc(size_t size) {
    count_allocation();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    count_allocation();
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    if (pointer == NULL) count_allocation();
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    count_allocation();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count_allocation();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    count_allocation();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *out = pointer;
    return 0;
}

void *valloc(size_t size) {
    count_allocation();
    return __libc_valloc(size);
}

void *pvalloc(size_t size) {
    count_allocation();
    return __libc_pvalloc(size);
}
