/* What a block costs the pool, during it and after it, on the C core alone (a pool of 2):
 *
 *   tick     the monitor's wake-ups per second while one job blocks 3 s (a sleep the pool
 *            cannot see) with another queued: its voluntary context switches, from
 *            /proc/self/task/<monitor>/status, over the block's last 2 s
 *   burst    400 jobs that each sleep 100 ms: the peak thread count, the drain time, the
 *            threads 35 s later; then tiny jobs on that pool against a fresh pool of 2,
 *            in interleaved rounds (ns per job from one producer; the ratio's geometric
 *            mean and 95 % interval over the rounds)
 *   convoy   200 jobs serialized by one mutex, each holding it 10 ms: the peak thread count
 *            and the drain time
 *
 * Built by block-cost.sh against a checkout's C core (release flags); prints one line per
 * figure. Usage: block-cost [tick|burst|convoy]... (default: all three). */
#define _GNU_SOURCE
#include "CBoltsRuntime.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static uint32_t threads_of(bolts_pool_t *pool) {
    bolts_pool_metrics_t m;
    bolts_pool_get_metrics(pool, &m);
    return m.threads;
}

/* The voluntary context switches of the thread named `name`, or -1. */
static long switches_of(const char *name) {
    DIR *dir = opendir("/proc/self/task");
    if (dir == NULL) return -1;
    long result = -1;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL && result < 0) {
        if (e->d_name[0] == '.') continue;
        char path[300], comm[64] = {0};
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL) continue;
        if (fgets(comm, sizeof comm, f) == NULL) comm[0] = 0;
        fclose(f);
        comm[strcspn(comm, "\n")] = 0;
        if (strcmp(comm, name) != 0) continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
        f = fopen(path, "r");
        if (f == NULL) continue;
        char line[256];
        while (fgets(line, sizeof line, f) != NULL) {
            if (strncmp(line, "voluntary_ctxt_switches:", 24) == 0) result = atol(line + 24);
        }
        fclose(f);
    }
    closedir(dir);
    return result;
}

static atomic_long done;
static void sleep_job(void *ctx) {
    usleep((useconds_t)(uintptr_t)ctx);
    atomic_fetch_add(&done, 1);
}
static void tiny_job(void *ctx) {
    (void)ctx;
    atomic_fetch_add_explicit(&done, 1, memory_order_relaxed);
}
static void wait_done(long n) {
    while (atomic_load(&done) < n) usleep(200);
}

static void tick(void) {
    bolts_pool_t *pool = bolts_pool_create(2, "tick");
    atomic_store(&done, 0);
    bolts_pool_submit(pool, bolts_job_create(sleep_job, (void *)(uintptr_t)3000000));
    bolts_pool_submit(pool, bolts_job_create(sleep_job, (void *)(uintptr_t)3000000));
    bolts_pool_submit(pool, bolts_job_create(tiny_job, NULL));
    usleep(1000000);
    long before = switches_of("tick-mon");
    int64_t t0 = now_ns();
    usleep(1900000);
    long after = switches_of("tick-mon");
    double seconds = (now_ns() - t0) / 1e9;
    wait_done(3);
    printf("tick: monitor wake-ups while a counted job blocks: %.0f per second\n", (after - before) / seconds);
    bolts_pool_shutdown(pool, true);
    bolts_pool_release(pool);
}

/* ns per tiny job: 200,000 from this thread, waiting for the last. */
static double tiny_cost(bolts_pool_t *pool) {
    const long n = 200000;
    atomic_store(&done, 0);
    int64_t t0 = now_ns();
    for (long i = 0; i < n; i++) bolts_pool_submit(pool, bolts_job_create(tiny_job, NULL));
    while (atomic_load_explicit(&done, memory_order_relaxed) < n) {
    }
    return (double)(now_ns() - t0) / n;
}

static void burst(void) {
    bolts_pool_t *pool = bolts_pool_create(2, "burst");
    atomic_store(&done, 0);
    int64_t t0 = now_ns();
    for (int i = 0; i < 400; i++) bolts_pool_submit(pool, bolts_job_create(sleep_job, (void *)(uintptr_t)100000));
    uint32_t peak = 0;
    while (atomic_load(&done) < 400) {
        uint32_t t = threads_of(pool);
        if (t > peak) peak = t;
        usleep(1000);
    }
    double drain = (now_ns() - t0) / 1e9;
    usleep(35000000);
    printf("burst: peak %u threads, drained in %.2f s, %u threads 35 s later\n", peak, drain, threads_of(pool));
    bolts_pool_t *fresh = bolts_pool_create(2, "fresh");
    enum { ROUNDS = 12 };
    double logs[ROUNDS], sum = 0;
    for (int r = 0; r < ROUNDS; r++) {
        double a, b;
        if (r % 2 == 0) {
            a = tiny_cost(pool);
            b = tiny_cost(fresh);
        } else {
            b = tiny_cost(fresh);
            a = tiny_cost(pool);
        }
        logs[r] = log(a / b);
        sum += logs[r];
    }
    double mean = sum / ROUNDS, var = 0;
    for (int r = 0; r < ROUNDS; r++) var += (logs[r] - mean) * (logs[r] - mean);
    double half = 2.201 * sqrt(var / (ROUNDS - 1) / ROUNDS); /* t(0.975, 11) */
    printf("burst: tiny jobs after the burst cost %.3fx a fresh pool's [%.3f, %.3f] (%d interleaved rounds)\n",
           exp(mean), exp(mean - half), exp(mean + half), ROUNDS);
    bolts_pool_shutdown(fresh, true);
    bolts_pool_release(fresh);
    bolts_pool_shutdown(pool, true);
    bolts_pool_release(pool);
}

static pthread_mutex_t convoy_lock = PTHREAD_MUTEX_INITIALIZER;
static void convoy_job(void *ctx) {
    (void)ctx;
    pthread_mutex_lock(&convoy_lock);
    usleep(10000);
    pthread_mutex_unlock(&convoy_lock);
    atomic_fetch_add(&done, 1);
}

static void convoy(void) {
    bolts_pool_t *pool = bolts_pool_create(2, "convoy");
    atomic_store(&done, 0);
    int64_t t0 = now_ns();
    for (int i = 0; i < 200; i++) bolts_pool_submit(pool, bolts_job_create(convoy_job, NULL));
    uint32_t peak = 0;
    while (atomic_load(&done) < 200) {
        uint32_t t = threads_of(pool);
        if (t > peak) peak = t;
        usleep(1000);
    }
    printf("convoy: peak %u threads (grew by %u), drained in %.2f s\n", peak, peak - 2, (now_ns() - t0) / 1e9);
    bolts_pool_shutdown(pool, true);
    bolts_pool_release(pool);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    bool all = argc < 2;
    for (int i = all ? 0 : 1; i < (all ? 1 : argc); i++) {
        const char *what = all ? "all" : argv[i];
        if (all || strcmp(what, "tick") == 0) tick();
        if (all || strcmp(what, "convoy") == 0) convoy();
        if (all || strcmp(what, "burst") == 0) burst();
    }
    return 0;
}
