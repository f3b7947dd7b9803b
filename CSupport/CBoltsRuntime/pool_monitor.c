/* The blocked-worker monitor: invariant I12 of include/bolts_pool.h.
 *
 * A job may block its worker where the pool cannot see it: a synchronous driver's socket
 * read, a file read, a lock, a foreign `.wait()`. The pool learns of its own waits
 * (`bolts_task_wait`, I6) from the wait itself; for every other one, a thread per pool
 * looks at the workers from outside, as an operating system's scheduler would, and needs
 * nothing from the job.
 *
 * What it looks at. A worker counts its jobs begun (`started`) and ended (`executed`); the
 * monitor remembers, per slot, the job it last saw running and since when. A worker seen in
 * the same job on two looks has held it for at least one tick; the monitor then reads the
 * thread's CPU clock, and again at a later look. A thread that ran for less than half of
 * that window, and that the kernel reports asleep at the second look (state S or D in
 * `/proc/self/task/<tid>/stat`: not running, not waiting for a CPU), is blocked. A job that
 * computes, or is merely pre-empted (runnable, waiting for a CPU), is never taken for
 * blocked, so long CPU-bound jobs never add threads: only sleeping ones do, one thread per
 * sleeping worker at most. Once the job has held its worker for BOLTS_POOL_BLOCKED_NS and some queue
 * holds a job, the monitor marks the worker (`stalled`), takes it out of the count of
 * unblocked workers and, below N, brings in a compensating thread, exactly as I6 does for
 * a wait it can see. The worker puts itself back when its job ends (`bolts__pool_stall_over`);
 * the compensating thread then retires at its next idle scan (I6).
 *
 * When it looks. Every BOLTS_POOL_BLOCKED_NS / 2 while some worker is in a job it was in at
 * the previous look, so a block is caught between BOLTS_POOL_BLOCKED_NS and twice that
 * after it began. While no job outlasts a tick, the interval doubles up to
 * BOLTS_POOL_MONITOR_QUIET_NS, so a pool whose jobs are short (a server that never blocks)
 * pays one wake-up of this thread per that interval, and a first block after such a lull is
 * caught within two of them. While every worker is parked the monitor sleeps until one
 * leaves its park (`bolts__pool_monitor_resume`), so an idle pool pays nothing at all.
 * A thread's CPU clock is read only for a job seen on two looks (its state only when the
 * clock says it mostly did not run), and a job found computing is looked at again after
 * twice as long each time, up to the quiet interval.
 *
 * Why BOLTS_POOL_BLOCKED_NS is 1 ms. A server's requests take tens of microseconds to a few
 * milliseconds, and its latency goals are a few milliseconds at the 99th percentile: a
 * request queued behind a blocked worker should wait about a millisecond, not a 20 ms
 * query. Starting or waking a thread costs tens of microseconds, so a block shorter than
 * 1 ms (a read from the page cache, a brief lock) is cheaper to sit out than to compensate,
 * and a job that blocks for longer pays at most a few per cent of its block in thread
 * hand-offs. Go's scheduler hands a blocked thread's work over after 20 us to 10 ms,
 * because its hand-off is cheap and its goroutines are many; .NET's thread pool injects a
 * thread every 500 ms, which suits batch throughput, not a server's tail latency.
 *
 * What is modelled: Model/monitor.pml checks the accounting (every worker taken out of
 * `unblocked` by the monitor is put back exactly once, whether its job ends first, it
 * parks first, or it enters a wait of I6) and that the monitor cannot sleep while a worker
 * is stuck in a job with work queued behind it. */
#define _GNU_SOURCE
#include "pool_internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* What the monitor knows of one slot's worker; the monitor thread's alone. */
struct sighting {
    uint64_t job;       /* its `started` count when last seen in a job; 0: not in one */
    int64_t since;      /* when the monitor first saw it in that job */
    int64_t probed_at;  /* when its CPU time was read in that job; 0: not yet */
    int64_t cpu;        /* that CPU time, ns */
    int64_t next_probe; /* when to read them again (later each time the job computes) */
};

/* Nanoseconds the thread `tid` of this process has run on a CPU, or -1 if it cannot be
 * read (the thread has exited). The thread's CPU clock is exact up to the moment of the
 * call, also while the thread runs on another CPU (the kernel's per-thread statistics lag
 * by up to a scheduler tick). Its id is Linux's encoding of a thread's scheduler clock
 * (what glibc's pthread_getcpuclockid makes of a thread id), built from the id so that a
 * thread that has exited meanwhile makes the call fail rather than read freed memory. */
static int64_t cpu_ns(int tid) {
    clockid_t clock = (clockid_t)((~(unsigned)tid << 3) | 6); /* per-thread, CPUCLOCK_SCHED */
    struct timespec t;
    if (clock_gettime(clock, &t) != 0) return -1;
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Whether the thread `tid` of this process is asleep now (state S or D in
 * /proc/self/task/<tid>/stat), not running nor waiting for a CPU; false if unknown. */
static bool asleep(int tid) {
    char path[48];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char text[256];
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0) return false;
    text[n] = 0;
    /* "tid (name) S ...": the name may hold spaces and parentheses; the state follows the
     * last ')'. */
    char *end = strrchr(text, ')');
    if (end == NULL || end[1] != ' ') return false;
    return end[2] == 'S' || end[2] == 'D';
}

/* Counts `slot`'s worker as blocked in its job (I12) and compensates as I6 does. */
static void stall(bolts_pool_t *pool, struct bolts_pool_slot *slot) {
    /* Relaxed: the monitor alone sets the flag; the worker's exchange in
     * `bolts__pool_stall_over` (or the monitor's own) alone decides who clears it, and the
     * count below is a count (I6), ordered by nothing else. */
    atomic_store_explicit(&slot->stalled, 1, memory_order_relaxed);
    /* Relaxed: a hint for the restraint (I11), as in `bolts__pool_blocking_begin`. */
    atomic_store_explicit(&slot->blocked, true, memory_order_relaxed);
    /* Relaxed, both: a statistic, and a count whose RMW result alone decides (I6). */
    atomic_fetch_add_explicit(&pool->stalls, 1, memory_order_relaxed);
    int left = atomic_fetch_sub_explicit(&pool->unblocked, 1, memory_order_relaxed) - 1;
    if (left < (int)pool->target) bolts__pool_add_worker(pool);
}

void bolts__pool_stall_over(struct bolts_pool_slot *slot) {
    /* Relaxed: the exchange's atomicity alone makes exactly one of the worker and the
     * monitor put the worker back; nothing is published through it. */
    if (atomic_exchange_explicit(&slot->stalled, 0, memory_order_relaxed) == 0) return;
    /* Relaxed, both: a hint (I11) and a count (I6). */
    atomic_store_explicit(&slot->blocked, false, memory_order_relaxed);
    atomic_fetch_add_explicit(&slot->pool->unblocked, 1, memory_order_relaxed);
}

/* Looks at every worker once (see the top of this file). Returns whether one was in the
 * job it was in at the previous look: the monitor then keeps looking every tick. */
static bool look(bolts_pool_t *pool, struct sighting *seen, int64_t now) {
    bool long_job = false;
    int queued = -1; /* bolts__pool_jobs_queued, read once per look when needed */
    /* Acquire: pairs with the release in `bolts__pool_add_worker`. */
    uint32_t hwm = atomic_load_explicit(&pool->hwm, memory_order_acquire);
    for (uint32_t i = 0; i < hwm; i++) {
        struct bolts_pool_slot *slot = &pool->slots[i];
        struct sighting *s = &seen[i];
        /* Relaxed, these loads: what a worker is doing is a hint here; the accounting
         * rests on the exchanges of `stalled` alone. */
        uint64_t started = atomic_load_explicit(&slot->started, memory_order_relaxed);
        uint64_t executed = atomic_load_explicit(&slot->executed, memory_order_relaxed);
        bool in_job = started != executed &&
                      atomic_load_explicit(&slot->state, memory_order_relaxed) == SLOT_ACTIVE &&
                      !bolts__pool_owner_parked(pool, slot);
        if (!in_job) {
            s->job = 0;
            /* Marked after it had checked at its job's end: put it back now. */
            if (atomic_load_explicit(&slot->stalled, memory_order_relaxed) != 0) bolts__pool_stall_over(slot);
            continue;
        }
        if (s->job != started) {
            s->job = started;
            s->since = now;
            s->probed_at = 0;
            s->next_probe = now;
            continue;
        }
        long_job = true;
        if (atomic_load_explicit(&slot->stalled, memory_order_relaxed) != 0) continue; /* counted (I12) */
        if (atomic_load_explicit(&slot->blocked, memory_order_relaxed)) continue;      /* a wait of I6 */
        if (now < s->next_probe) continue;
        /* Acquire: pairs with the worker's release of its id at its start. */
        int tid = atomic_load_explicit(&slot->tid, memory_order_acquire);
        int64_t cpu = tid != 0 ? cpu_ns(tid) : -1;
        if (cpu < 0) continue;
        if (s->probed_at == 0) {
            s->probed_at = now;
            s->cpu = cpu;
            continue;
        }
        int64_t window = now - s->probed_at;
        if ((cpu - s->cpu) * 2 >= window || !asleep(tid)) {
            /* Computing, or waiting for a CPU: not blocked. Look again later. */
            int64_t wait = window * 2 < BOLTS_POOL_MONITOR_QUIET_NS ? window * 2 : BOLTS_POOL_MONITOR_QUIET_NS;
            s->next_probe = now + wait;
            s->probed_at = now;
            s->cpu = cpu;
            continue;
        }
        if (now - s->since < BOLTS_POOL_BLOCKED_NS) continue;
        if (queued < 0) queued = bolts__pool_jobs_queued(pool);
        if (queued) stall(pool, slot);
    }
    return long_job;
}

/* Sleeps while every active worker is parked, until one leaves its park or the pool
 * closes. Seq_cst store and fence, then the seq_cst loads of the parked bits: the
 * store-buffering pair with `bolts__pool_monitor_resume` (a bit cleared by a seq_cst RMW,
 * a fence, then the load of `monitor_asleep`), so the monitor either sees a worker out of
 * its park and stays up, or that worker sees the monitor asleep and wakes it. */
static void sleep_while_parked(bolts_pool_t *pool) {
    atomic_store_explicit(&pool->monitor_asleep, 1, memory_order_seq_cst);
    atomic_thread_fence(memory_order_seq_cst);
    /* Relaxed: `bolts__pool_monitor_close` clears `monitor_asleep` after setting it. */
    if (bolts__pool_all_active_parked(pool) && atomic_load_explicit(&pool->monitor_stop, memory_order_relaxed) == 0) {
        /* Acquire: pairs with the exchange that woke it; nothing is read after it but the
         * pool's own atomics. */
        while (atomic_load_explicit(&pool->monitor_asleep, memory_order_acquire) == 1) {
            bolts__futex_wait(&pool->monitor_asleep, 1, -1);
        }
    }
    /* Relaxed: only this thread sets it to 1. */
    atomic_store_explicit(&pool->monitor_asleep, 0, memory_order_relaxed);
}

void bolts__pool_monitor_resume(bolts_pool_t *pool) {
    /* Seq_cst fence: the other half of the pair in `sleep_while_parked`. */
    atomic_thread_fence(memory_order_seq_cst);
    /* Relaxed, both: ordered by the fence; the exchange makes one waker per sleep. */
    if (atomic_load_explicit(&pool->monitor_asleep, memory_order_relaxed) == 0) return;
    if (atomic_exchange_explicit(&pool->monitor_asleep, 0, memory_order_relaxed) == 1) {
        bolts__futex_wake(&pool->monitor_asleep, 1);
    }
}

void bolts__pool_monitor_close(bolts_pool_t *pool) {
    /* Release: the monitor's acquire load of it then sees the pool CLOSED. */
    atomic_store_explicit(&pool->monitor_stop, 1, memory_order_release);
    bolts__futex_wake(&pool->monitor_stop, 1);
    /* Relaxed: the futex wake is the signal; the monitor re-reads `monitor_stop`. */
    atomic_store_explicit(&pool->monitor_asleep, 0, memory_order_relaxed);
    bolts__futex_wake(&pool->monitor_asleep, 1);
}

static void *monitor_main(void *arg) {
    bolts_pool_t *pool = arg;
    struct sighting *seen = calloc(pool->capacity, sizeof *seen);
    int64_t tick = BOLTS_POOL_BLOCKED_NS / 2;
    /* Acquire: pairs with the release in `bolts__pool_monitor_close`. */
    while (seen != NULL && atomic_load_explicit(&pool->monitor_stop, memory_order_acquire) == 0) {
        if (look(pool, seen, bolts__now_ns())) {
            tick = BOLTS_POOL_BLOCKED_NS / 2;
        } else if (tick < BOLTS_POOL_MONITOR_QUIET_NS) {
            tick = tick * 2 < BOLTS_POOL_MONITOR_QUIET_NS ? tick * 2 : BOLTS_POOL_MONITOR_QUIET_NS;
        }
        if (bolts__pool_all_active_parked(pool)) {
            /* One more look first: a mark made in the look above on a job that had just
             * ended (after its worker's own check) is undone now that its worker is parked,
             * rather than left until the monitor wakes again, with an extra thread ACTIVE. */
            look(pool, seen, bolts__now_ns());
            sleep_while_parked(pool);
            tick = BOLTS_POOL_BLOCKED_NS / 2;
            continue;
        }
        bolts__futex_wait(&pool->monitor_stop, 0, tick);
    }
    free(seen);
    bolts__pool_unref(pool);
    return NULL;
}

bool bolts__pool_monitor_start(bolts_pool_t *pool) {
    if (BOLTS_POOL_BLOCKED_NS <= 0) return false; /* a build without the monitor */
    /* Relaxed: a reference taken by a holder of one (the creator), published to the new
     * thread by pthread_create. */
    atomic_fetch_add_explicit(&pool->refs, 1, memory_order_relaxed);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    int rc = pthread_create(&thread, &attr, monitor_main, pool);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        /* Relaxed: undo the reference nobody saw. */
        atomic_fetch_sub_explicit(&pool->refs, 1, memory_order_relaxed);
        return false;
    }
    char name[16];
    snprintf(name, sizeof name, "%.8s-mon", pool->name);
    pthread_setname_np(thread, name);
    return true;
}
