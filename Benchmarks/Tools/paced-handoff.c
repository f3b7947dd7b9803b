/* The paced hand-off on the C core alone (a pool of 2): one producer thread submits a tiny
 * job and sleeps on a semaphore until the job has posted it, then submits the next, so
 * every job is a hand-off to a worker that may be parked. Prints three figures for one run
 * of N jobs (after 2,000 unmeasured ones): the median and the 99th percentile of the
 * latency from just before the submission to the job's start, and the mean round trip,
 * all in ns. paced-handoff.sh builds it against two checkouts and pairs their runs.
 * Usage: paced-handoff [N] (default 20000). */
#define _GNU_SOURCE
#include "CBoltsRuntime.h"

#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static sem_t ran;
static int64_t started_at; /* written by the job, read by the producer after the semaphore */

static void job(void *context) {
    (void)context;
    started_at = now_ns();
    sem_post(&ran);
}

static int by_value(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    if (n < 100) {
        fprintf(stderr, "paced-handoff: N must be at least 100\n");
        return 2;
    }
    int64_t *latency = malloc(sizeof *latency * (size_t)n);
    bolts_pool_t *pool = bolts_pool_create(2, "paced");
    if (latency == NULL || pool == NULL || sem_init(&ran, 0, 0) != 0) return 1;
    for (int i = 0; i < 2000; i++) {
        bolts_pool_submit(pool, bolts_job_create(job, NULL));
        sem_wait(&ran);
    }
    int64_t begin = now_ns();
    for (int i = 0; i < n; i++) {
        int64_t submitted_at = now_ns();
        bolts_pool_submit(pool, bolts_job_create(job, NULL));
        sem_wait(&ran);
        latency[i] = started_at - submitted_at;
    }
    int64_t end = now_ns();
    qsort(latency, (size_t)n, sizeof *latency, by_value);
    printf("%lld %lld %.1f\n", (long long)latency[n / 2], (long long)latency[n * 99 / 100], (double)(end - begin) / n);
    bolts_pool_shutdown(pool, true);
    bolts_pool_release(pool);
    free(latency);
    return 0;
}
