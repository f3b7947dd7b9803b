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
 * When it looks. A job first seen at a look owes no prompt look: a job that outlasts the
 * tick is seen at the next one. A job seen on two looks is then looked at BOLTS_POOL_BLOCKED_NS / 2
 * apart until the verdict, so a block is caught between BOLTS_POOL_BLOCKED_NS and that plus
 * one tick after it began. Once a verdict is in, the job owes nothing more: a marked job
 * is left alone until it ends, one found computing is looked at again after twice as long
 * each time, up to BOLTS_POOL_MONITOR_QUIET_NS, and so is one found asleep with nothing
 * queued behind it. The tick is the time to the earliest look owed, and doubles up to
 * BOLTS_POOL_MONITOR_QUIET_NS while none is: a pool whose jobs are short (a server that
 * never blocks) pays one wake-up of this thread per that interval, a job that blocks for
 * seconds the same once it is marked, and a first block after such a lull is caught within
 * two of them. While a worker is marked and jobs are queued, though, the pool is short of
 * threads and a block that begins then holds the queue until it is found: the monitor then
 * looks every BOLTS_POOL_BLOCKED_NS / 2 (a marked job whose queue has drained, the usual
 * case once its compensating thread runs, costs one quiet tick again). While every worker
 * is parked the monitor sleeps until one leaves its park
 * (`bolts__pool_monitor_resume`), so an idle pool pays nothing at all. A thread's CPU
 * clock is read only for a job seen on two looks (its state only when the clock says it
 * mostly did not run).
 *
 * How far it grows. A worker blocked on a lock that another blocked worker holds (a convoy)
 * looks like any other blocked worker, and every thread brought in for it joins the queue
 * for the lock. So the monitor brings in threads only while they raise the rate at which
 * jobs complete, judged over windows, as .NET's thread pool does. From a mark while none
 * was marked (an episode's start), up to BOLTS_POOL_GROWTH_FREE extra threads may be ACTIVE.
 * At the end of each window (one and a half times the hold of the last marked job seen to end, between
 * BOLTS_POOL_GROWTH_WINDOW_NS and BOLTS_POOL_GROWTH_WINDOW_MAX_NS, so that a thread brought
 * in at its start has completed jobs by its end, and holding BOLTS_POOL_GROWTH_MIN_JOBS
 * completions unless it is at its longest or holds none), if that allowance was all in use, it is
 * doubled; if the window after a doubling completed jobs at less than BOLTS_POOL_GROWTH_GAIN
 * times the rate of the window before it, the allowance stops growing until the episode
 * ends (a look finds no worker marked). A window in which no job completed at all doubles
 * the allowance whatever came before: the marked jobs may be waiting for a job queued
 * behind them (a semaphore that a later job signals), which only another thread can run,
 * so the pool keeps growing, one doubling a window, as it did before the rule. So a convoy
 * (whose jobs complete, one lock-holder at a time) costs at most 2 * BOLTS_POOL_GROWTH_FREE
 * extra threads, and independent blocks get as many as help, doubling once per window up
 * to BOLTS_POOL_MAX_EXTRA_THREADS. Marks the allowance leaves uncompensated still count
 * the worker as blocked (the accounting is the same), and are compensated once it grows.
 * Waits the pool sees (I6) are always compensated: a thread waiting on a task could
 * otherwise wait for a job that only that thread would run.
 *
 * What the pool says. Each mark makes a report (pool_report.c): the thread's
 * system call and stack, captured here without stopping it (diagnostics.c), and, when the
 * mark is undone, a report of how long the job held its worker in all. A job's start is
 * known to within half a tick: the midpoint between the look that first saw it and the
 * look before (the worker writes no clock of its own on a job's path).
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
 * parks first, or it enters a wait of I6), that the I6 flag `blocked` is never left set
 * by a mark, and that the monitor cannot sleep while a worker is stuck in a job with work
 * queued behind it. */
#define _GNU_SOURCE
#include "pool_internal.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A doubling of the allowance counts as helping when the jobs' completion rate over the
 * next window is at least this many times the rate over the window before it: extra
 * threads that help raise it by about the share they add (double the extra threads, and
 * an episode's rate rises by a third or more), and a lock convoy's stays flat within a
 * few per cent. */
#define BOLTS_POOL_GROWTH_GAIN 1.15

/* A window ends only once this many jobs completed in it (or at its longest): a count of
 * a few jobs moves by one job in five from noise alone, more than the gain above; twenty
 * resolve it (one in twenty). */
#define BOLTS_POOL_GROWTH_MIN_JOBS 20

/* What the monitor knows of one slot's worker; the monitor thread's alone. */
struct sighting {
    uint64_t job;       /* its `started` count when last seen in a job; 0: not in one */
    int64_t seen_at;    /* when the monitor first saw it in that job: the bound counts from it */
    int64_t since;      /* when that job began, as far as the monitor knows (for reports) */
    int64_t probed_at;  /* when its CPU time was read in that job; 0: not yet */
    int64_t cpu;        /* that CPU time, ns */
    int64_t next_probe; /* when to read them again (later each time the job computes) */
    int64_t idle_wait;  /* asleep with no job queued: how long until the next look at it */
    bool marked;        /* the monitor marked it in that job */
};

/* The growth rule's state (see "How far it grows" above); the monitor thread's alone. */
struct growth {
    bool episode;         /* some worker is marked */
    bool probing;         /* the allowance was doubled at the window's start */
    bool settled;         /* a doubling did not raise the rate: no more this episode */
    uint32_t allowance;   /* extra threads the monitor may have ACTIVE now */
    int64_t window_start; /* bolts__now_ns */
    uint64_t window_done; /* jobs completed when the window began */
    double rate_before;   /* jobs per second over the window before the doubling */
    int64_t hold;         /* a marked job's usual hold: the last one seen to end, ns */
};

/* What one look found, for the monitor's loop. */
struct look {
    int64_t due;   /* the earliest time a job needs another look; INT64_MAX: none does */
    uint64_t done; /* jobs the workers have completed */
    bool marked;   /* some worker is marked */
    int64_t hold;  /* how long a marked job that this look found ended had held its worker; 0: none */
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

/* Counts `slot`'s worker as blocked in its job (I12); `top_up` then compensates as I6
 * does, within the growth rule. `blocked` is left alone: it is the I6 wait's flag, which
 * only the worker writes (a mark written there could land after the worker had cleared it
 * at its job's end, and stay set for good: the monitor would then take every later block
 * of that worker for an I6 wait and never compensate it). */
static void stall(bolts_pool_t *pool, struct bolts_pool_slot *slot, int64_t now, uint32_t queued) {
    /* The found report first: the mark's undoing (its ended report) can then only follow
     * it (see pool_report.c). */
    bolts__stall_report_found(pool, slot, now, queued);
    /* Relaxed: the monitor alone sets the flag; the worker's exchange in
     * `bolts__pool_stall_over` (or the monitor's own) alone decides who clears it, and the
     * count below is a count (I6), ordered by nothing else. */
    atomic_store_explicit(&slot->stalled, 1, memory_order_relaxed);
    /* Relaxed, both: a statistic, and a count whose RMW result alone decides (I6). */
    atomic_fetch_add_explicit(&pool->stalls, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&pool->unblocked, 1, memory_order_relaxed);
}

void bolts__pool_stall_over(struct bolts_pool_slot *slot) {
    /* Relaxed: the exchange's atomicity alone makes exactly one of the worker and the
     * monitor put the worker back; nothing is published through it. */
    if (atomic_exchange_explicit(&slot->stalled, 0, memory_order_relaxed) == 0) return;
    /* Relaxed: a count (I6). */
    atomic_fetch_add_explicit(&slot->pool->unblocked, 1, memory_order_relaxed);
    bolts__stall_report_ended(slot->pool, slot);
}

/* Brings in threads for the workers counted as blocked (`unblocked` below N), as I6 does,
 * while the growth rule allows more extra threads and jobs are queued. */
static void top_up(bolts_pool_t *pool, struct growth *g) {
    /* Relaxed: a count whose value, not its order, decides (I6). */
    while (atomic_load_explicit(&pool->unblocked, memory_order_relaxed) < (int)pool->target) {
        if (bolts__pool_extra_active(pool) >= g->allowance) {
            /* Relaxed: a statistic. */
            atomic_fetch_add_explicit(&pool->growth_refused, 1, memory_order_relaxed);
            return;
        }
        if (!bolts__pool_jobs_queued(pool) || !bolts__pool_add_worker(pool)) return;
    }
}

/* The growth rule (see the top of this file), once per look while an episode lasts:
 * from what the look `found`: the jobs completed, whether any worker is marked, and the
 * hold of a marked job that ended. */
static void judge_growth(bolts_pool_t *pool, struct growth *g, int64_t now, const struct look *found) {
    uint64_t done = found->done;
    if (found->hold > 0) g->hold = found->hold;
    if (!found->marked) {
        g->episode = false;
        return;
    }
    if (!g->episode) {
        *g = (struct growth){.episode = true, .allowance = BOLTS_POOL_GROWTH_FREE, .window_start = now,
                             .window_done = done, .hold = g->hold};
        return;
    }
    if (done < g->window_done) {
        /* A fold of retired slots was under way at one of the two looks: start again. */
        g->window_start = now;
        g->window_done = done;
        return;
    }
    int64_t window = g->hold + g->hold / 2;
    if (window < BOLTS_POOL_GROWTH_WINDOW_NS) window = BOLTS_POOL_GROWTH_WINDOW_NS;
    if (window > BOLTS_POOL_GROWTH_WINDOW_MAX_NS) window = BOLTS_POOL_GROWTH_WINDOW_MAX_NS;
    if (now - g->window_start < window) return;
    /* Enough completions for the rate to resolve the gain, unless the window is at its
     * longest. */
    if (done != g->window_done && done - g->window_done < BOLTS_POOL_GROWTH_MIN_JOBS &&
        now - g->window_start < BOLTS_POOL_GROWTH_WINDOW_MAX_NS) {
        return;
    }
    double rate = (double)(done - g->window_done) * 1e9 / (double)(now - g->window_start);
    bool wanted = bolts__pool_extra_active(pool) >= g->allowance; /* the allowance bound */
    if (done == g->window_done) {
        /* Nothing completed: the marked jobs may wait for work queued behind them (a
         * semaphore a later job signals), which only more threads can reach. Grow. */
        if (wanted && g->allowance < BOLTS_POOL_MAX_EXTRA_THREADS) g->allowance *= 2;
        g->probing = false;
        g->settled = false;
    } else if (g->probing) {
        g->probing = false;
        if (rate < g->rate_before * BOLTS_POOL_GROWTH_GAIN) {
            g->settled = true;
        } else if (wanted && g->allowance < BOLTS_POOL_MAX_EXTRA_THREADS) {
            g->allowance *= 2;
            g->probing = true;
        }
    } else if (!g->settled && wanted && g->allowance < BOLTS_POOL_MAX_EXTRA_THREADS) {
        g->allowance *= 2;
        g->probing = true;
    }
    g->rate_before = rate;
    g->window_start = now;
    g->window_done = done;
}

/* Looks at every worker once (see the top of this file). `previous` is when the monitor
 * last looked, or woke from its sleep: a job first seen now began after it. */
static struct look look(bolts_pool_t *pool, struct sighting *seen, int64_t now, int64_t previous) {
    struct look found = {.due = INT64_MAX};
    int queued = -1; /* bolts__pool_jobs_queued, read once per look when needed */
    /* Acquire: pairs with the release in `bolts__pool_add_worker`. */
    uint32_t hwm = atomic_load_explicit(&pool->hwm, memory_order_acquire);
    uint32_t top = hwm > pool->monitor_scan_top ? hwm : pool->monitor_scan_top;
    pool->monitor_scan_top = hwm;
    /* Relaxed: a hint for `bolts_pool_snapshot`. */
    atomic_store_explicit(&pool->last_look, now, memory_order_relaxed);
    for (uint32_t i = 0; i < top; i++) {
        struct bolts_pool_slot *slot = &pool->slots[i];
        struct sighting *s = &seen[i];
        /* Relaxed, these loads: what a worker is doing is a hint here; the accounting
         * rests on the exchanges of `stalled` alone. */
        uint64_t started = atomic_load_explicit(&slot->started, memory_order_relaxed);
        uint64_t executed = atomic_load_explicit(&slot->executed, memory_order_relaxed);
        found.done += executed;
        bool in_job = started != executed &&
                      atomic_load_explicit(&slot->state, memory_order_relaxed) == SLOT_ACTIVE &&
                      !bolts__pool_owner_parked(pool, slot);
        bool marked = atomic_load_explicit(&slot->stalled, memory_order_relaxed) != 0;
        if (s->marked && (!in_job || s->job != started)) {
            s->marked = false;
            found.hold = now - s->since;
        }
        if (!in_job) {
            s->job = 0;
            /* Marked after it had checked at its job's end: put it back now. */
            if (marked) bolts__pool_stall_over(slot);
            continue;
        }
        if (s->job != started) {
            s->job = started;
            s->seen_at = now;
            s->since = previous + (now - previous) / 2;
            s->probed_at = 0;
            s->next_probe = now;
            s->idle_wait = BOLTS_POOL_BLOCKED_NS / 2;
            /* Relaxed, both: hints for reports and snapshots, read with the job's count. */
            atomic_store_explicit(&slot->job_since, s->since, memory_order_relaxed);
            atomic_store_explicit(&slot->job_seen, started, memory_order_relaxed);
            continue; /* no look owed: a job that outlasts the tick is seen at the next */
        }
        if (marked) {
            found.marked = true;
            continue; /* counted (I12): nothing to look at until it ends */
        }
        /* Relaxed: the I6 wait's flag, a hint here; that wait compensates by itself. */
        if (atomic_load_explicit(&slot->blocked, memory_order_relaxed)) continue;
        if (now < s->next_probe) {
            if (s->next_probe < found.due) found.due = s->next_probe;
            continue;
        }
        /* Acquire: pairs with the worker's release of its id at its start. */
        int tid = atomic_load_explicit(&slot->tid, memory_order_acquire);
        int64_t cpu = tid != 0 ? cpu_ns(tid) : -1;
        if (cpu < 0) continue;
        if (s->probed_at == 0) {
            s->probed_at = now;
            s->cpu = cpu;
            s->next_probe = now + BOLTS_POOL_BLOCKED_NS / 2;
            if (s->next_probe < found.due) found.due = s->next_probe;
            continue;
        }
        int64_t window = now - s->probed_at;
        if ((cpu - s->cpu) * 2 >= window || !asleep(tid)) {
            /* Computing, or waiting for a CPU: not blocked. Look again later. */
            int64_t wait = window * 2 < BOLTS_POOL_MONITOR_QUIET_NS ? window * 2 : BOLTS_POOL_MONITOR_QUIET_NS;
            s->next_probe = now + wait;
            s->probed_at = now;
            s->cpu = cpu;
            if (s->next_probe < found.due) found.due = s->next_probe;
            continue;
        }
        if (now - s->seen_at < BOLTS_POOL_BLOCKED_NS) {
            s->next_probe = s->seen_at + BOLTS_POOL_BLOCKED_NS;
            if (s->next_probe < found.due) found.due = s->next_probe;
            continue;
        }
        if (queued < 0) queued = bolts__pool_jobs_queued(pool);
        if (queued) {
            uint64_t waiting = bolts__pool_jobs_waiting(pool);
            stall(pool, slot, now, waiting > UINT32_MAX ? UINT32_MAX : (uint32_t)waiting);
            s->marked = true;
            found.marked = true;
            continue;
        }
        /* Asleep with nothing queued behind it: nobody waits for it yet. Look again after
         * twice as long each time, up to the quiet interval, so that a job queued later
         * is found within one of them; keep the CPU baseline (the window grows). */
        s->next_probe = now + s->idle_wait;
        s->idle_wait = s->idle_wait * 2 < BOLTS_POOL_MONITOR_QUIET_NS ? s->idle_wait * 2 : BOLTS_POOL_MONITOR_QUIET_NS;
        if (s->next_probe < found.due) found.due = s->next_probe;
    }
    /* The jobs completed, the retired slots' included (model finding F8). Relaxed: a
     * count for the growth rule, read without the sequence lock, whose fences would order
     * the monitor's other loads for it; a fold under way may make it drop for one look,
     * which `judge_growth` takes as no data. */
    found.done += atomic_load_explicit(&pool->retired_executed, memory_order_relaxed);
    return found;
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
    struct growth growth = {.allowance = BOLTS_POOL_GROWTH_FREE};
    int64_t tick = BOLTS_POOL_BLOCKED_NS / 2;
    int64_t previous = bolts__now_ns();
    /* Acquire: pairs with the release in `bolts__pool_monitor_close`. */
    while (seen != NULL && atomic_load_explicit(&pool->monitor_stop, memory_order_acquire) == 0) {
        int64_t now = bolts__now_ns();
        struct look found = look(pool, seen, now, previous);
        previous = now;
        judge_growth(pool, &growth, now, &found);
        if (found.marked) top_up(pool, &growth);
        if (found.due != INT64_MAX) {
            /* A job needs another look: at its time, no sooner than half the bound. */
            tick = found.due - now;
            if (tick < BOLTS_POOL_BLOCKED_NS / 2) tick = BOLTS_POOL_BLOCKED_NS / 2;
            if (tick > BOLTS_POOL_MONITOR_QUIET_NS) tick = BOLTS_POOL_MONITOR_QUIET_NS;
        } else if (tick < BOLTS_POOL_MONITOR_QUIET_NS) {
            tick = tick * 2 < BOLTS_POOL_MONITOR_QUIET_NS ? tick * 2 : BOLTS_POOL_MONITOR_QUIET_NS;
        }
        if (found.marked && tick > BOLTS_POOL_BLOCKED_NS / 2 && bolts__pool_jobs_queued(pool)) {
            /* Workers are blocked and jobs wait: the pool is short of threads now, and a
             * block that begins on another worker holds the queue until it is found. */
            tick = BOLTS_POOL_BLOCKED_NS / 2;
        }
        if (bolts__pool_all_active_parked(pool)) {
            /* One more look first: a mark made in the look above on a job that had just
             * ended (after its worker's own check) is undone now that its worker is parked,
             * rather than left until the monitor wakes again, with an extra thread ACTIVE. */
            found = look(pool, seen, bolts__now_ns(), previous);
            judge_growth(pool, &growth, bolts__now_ns(), &found);
            sleep_while_parked(pool);
            tick = BOLTS_POOL_BLOCKED_NS / 2;
            previous = bolts__now_ns();
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
