#define _GNU_SOURCE
/* Stress test of the thread pool in C, against the real runtime (see run.sh). */
#include "CBoltsRuntime.h"
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); exit(1); } } while (0)
static int64_t now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }

/* ---- exactly once ---- */
static atomic_uchar *hits;
static atomic_long done;
static void mark(void *ctx) { atomic_fetch_add_explicit(&hits[(uintptr_t)ctx], 1, memory_order_relaxed); atomic_fetch_add_explicit(&done, 1, memory_order_release); }
struct prod { bolts_pool_t *pool; long from, count; };
static void *producer(void *a) { struct prod *p = a; for (long i = p->from; i < p->from + p->count; i++) bolts_pool_submit(p->pool, bolts_job_create(mark, (void *)(uintptr_t)i)); return 0; }

static void run_producers(bolts_pool_t *pool, int nthreads, long total) {
    pthread_t t[16]; struct prod ps[16];
    for (int i = 0; i < nthreads; i++) { ps[i] = (struct prod){pool, i * (total / nthreads), total / nthreads}; pthread_create(&t[i], 0, producer, &ps[i]); }
    for (int i = 0; i < nthreads; i++) pthread_join(t[i], 0);
}
static void test_exactly_once(long total, int nthreads) {
    hits = calloc(total, 1); atomic_store(&done, 0);
    bolts_pool_t *pool = bolts_pool_create(0, "t");
    run_producers(pool, nthreads, total);
    while (atomic_load_explicit(&done, memory_order_acquire) < total) usleep(100);
    usleep(1000);
    for (long i = 0; i < total; i++) CHECK(hits[i] == 1);
    bolts_pool_metrics_t m; bolts_pool_get_metrics(pool, &m);
    printf("exactly-once %ld jobs x %d producers: ok (submitted %lu executed %lu stolen %lu parks %lu depth %lu)\n", total, nthreads,
           m.submitted, m.executed, m.stolen, m.parks, m.queue_depth);
    CHECK(m.submitted == (uint64_t)total && m.executed == (uint64_t)total);
    CHECK(bolts_pool_shutdown(pool, true) == 0);
    bolts_pool_release(pool);
    free(hits);
}

/* ---- shutdown with jobs in flight ---- */
static void slowmark(void *ctx) { usleep(20); mark(ctx); }
static void test_shutdown_in_flight(void) {
    long total = 20000; hits = calloc(total, 1); atomic_store(&done, 0);
    bolts_pool_t *pool = bolts_pool_create(2, "sd");
    for (long i = 0; i < total; i++) bolts_pool_submit(pool, bolts_job_create(i % 100 == 0 ? slowmark : mark, (void *)(uintptr_t)i));
    CHECK(bolts_pool_shutdown(pool, true) == 0);
    CHECK(atomic_load(&done) == total);
    for (long i = 0; i < total; i++) CHECK(hits[i] == 1);
    bolts_job_t *j = bolts_job_create(mark, (void *)(uintptr_t)0);
    CHECK(!bolts_pool_try_submit(pool, j));
    bolts_pool_submit(pool, j); /* rejected: runs here */
    CHECK(hits[0] == 2);
    bolts_pool_metrics_t m; bolts_pool_get_metrics(pool, &m);
    CHECK(m.rejected == 1 && m.threads == 0);
    bolts_pool_release(pool);
    free(hits);
    printf("shutdown with jobs in flight: ok\n");
}

/* ---- shutdown racing producers ---- */
static atomic_long attempted;
struct racer { bolts_pool_t *pool; atomic_int *stop; };
static void count(void *ctx) { (void)ctx; atomic_fetch_add_explicit(&done, 1, memory_order_relaxed); }
static void *racer(void *a) { struct racer *r = a; while (!atomic_load_explicit(r->stop, memory_order_relaxed)) { atomic_fetch_add_explicit(&attempted, 1, memory_order_relaxed); bolts_pool_submit(r->pool, bolts_job_create(count, 0)); } return 0; }
static void test_shutdown_race(void) {
    for (int round = 0; round < 50; round++) {
        atomic_store(&done, 0); atomic_store(&attempted, 0);
        bolts_pool_t *pool = bolts_pool_create(2, "race");
        atomic_int stop = 0; pthread_t t[4]; struct racer r = {pool, &stop};
        for (int i = 0; i < 4; i++) pthread_create(&t[i], 0, racer, &r);
        usleep(2000 + round * 37);
        CHECK(bolts_pool_shutdown(pool, round % 2 == 0) == 0);
        usleep(1000);
        atomic_store(&stop, 1);
        for (int i = 0; i < 4; i++) pthread_join(t[i], 0);
        CHECK(bolts_pool_await_termination(pool, 5000000000LL));
        CHECK(atomic_load(&done) == atomic_load(&attempted));
        bolts_pool_release(pool);
    }
    printf("shutdown racing 4 producers (50 rounds): ok\n");
}

/* ---- blocking inside a worker, pool of 1 ---- */
/* Job A waits (bolts_task_wait) for a task that job B completes; B is queued behind A
 * on the only worker, so it can run only on a compensating thread. */
struct blocking_case { bolts_pool_t *pool; bolts_task_t *task; };
static void setter(void *ctx) {
    bolts_task_t *task = ctx;
    CHECK(bolts_task_claim(task));
    bolts_task_publish(task, BOLTS_SUCCESS);
    atomic_fetch_add(&done, 1);
}
static void waiter(void *ctx) {
    struct blocking_case *c = ctx;
    bolts_pool_submit(c->pool, bolts_job_create(setter, c->task));
    CHECK(bolts_task_wait(c->task, -1));
    atomic_fetch_add(&done, 1);
}
static void test_blocking(void) {
    for (int round = 0; round < 200; round++) {
        atomic_store(&done, 0);
        bolts_pool_t *pool = bolts_pool_create(1, "blk");
        struct blocking_case c = {pool, bolts_task_create()};
        bolts_pool_submit(pool, bolts_job_create(waiter, &c));
        int64_t t0 = now();
        while (atomic_load(&done) < 2) { CHECK(now() - t0 < 5000000000LL); usleep(50); }
        bolts_pool_metrics_t m; bolts_pool_get_metrics(pool, &m);
        CHECK(m.compensations >= 1);
        CHECK(bolts_pool_shutdown(pool, true) == 0);
        bolts_pool_release(pool);
        bolts_task_destroy(c.task);
    }
    printf("blocking inside the only worker (200 rounds): ok\n");
}

/* ---- repeated blocking on one long-lived pool of 1 (model finding F4) ---- */
/* An outside thread submits job A, which waits for a task, then job B, which completes
 * it: B lands behind A in the same queue, so no submission announces it. After a first
 * compensation the pool has a second thread that may be parked but still ACTIVE (counted
 * as unblocked); a later A then blocks without compensating, and B must still be run. */
static void pair_waiter(void *ctx) {
    CHECK(bolts_task_wait((bolts_task_t *)ctx, -1));
    atomic_fetch_add(&done, 1);
}
static void test_repeated_blocking(int rounds) {
    bolts_pool_t *pool = bolts_pool_create(1, "rblk");
    unsigned seed = 7;
    for (int round = 0; round < rounds; round++) {
        atomic_store(&done, 0);
        bolts_task_t *task = bolts_task_create();
        bolts_pool_submit(pool, bolts_job_create(pair_waiter, task));
        bolts_pool_submit(pool, bolts_job_create(setter, task));
        int64_t t0 = now();
        while (atomic_load(&done) < 2) {
            if (now() - t0 > 5000000000LL) {
                fprintf(stderr, "round %d: the queued job never ran (deadlock)\n", round);
                abort();
            }
            sched_yield();
        }
        bolts_task_destroy(task);
        seed = seed * 1103515245u + 12345u;
        /* Resubmit at a random moment of the threads' way to idle: at once, after a short
         * spin, or after a sleep. */
        /* Resubmit at a random moment of the threads' way to idle (their spin before
         * parking lasts BOLTS_POOL_SPIN_NS, 20 µs): 0–40 µs later, or after a sleep. */
        unsigned pause = (seed >> 16) % 1024;
        if (pause < 960) {
            int64_t until = now() + (int64_t)pause * 42;
            while (now() < until) {
            }
        } else {
            usleep(100);
        }
    }
    CHECK(bolts_pool_shutdown(pool, true) == 0);
    bolts_pool_release(pool);
    printf("repeated blocking on one pool of 1 (%d rounds): ok\n", rounds);
}

/* ---- serial ordering ---- */
struct sjob { bolts_job_t job; int producer; long seq; };
static long last_seq[8]; static atomic_int inside; static atomic_long sdone; static bolts_serial_t *cur_serial;
static void sfn(void *ctx) {
    struct sjob *s = ctx;
    CHECK(atomic_fetch_add(&inside, 1) == 0);
    CHECK(bolts_serial_is_current(cur_serial));
    CHECK(s->seq == last_seq[s->producer] + 1);
    last_seq[s->producer] = s->seq;
    atomic_fetch_sub(&inside, 1);
    free(s);
    atomic_fetch_add_explicit(&sdone, 1, memory_order_release);
}
struct sprod { bolts_serial_t *s; int id; long n; };
static void *sproducer(void *a) { struct sprod *p = a; for (long i = 1; i <= p->n; i++) { struct sjob *j = calloc(1, sizeof *j); j->job.fn = sfn; j->job.context = j; j->producer = p->id; j->seq = i; bolts_serial_submit(p->s, &j->job); if (i % 1000 == 0) usleep(10); } return 0; }
static void test_serial(void) {
    bolts_pool_t *pool = bolts_pool_create(2, "ser");
    bolts_serial_t *s = bolts_serial_create(pool); cur_serial = s;
    memset(last_seq, 0, sizeof last_seq); atomic_store(&sdone, 0);
    pthread_t t[4]; struct sprod ps[4]; long n = 50000;
    for (int i = 0; i < 4; i++) { ps[i] = (struct sprod){s, i, n}; pthread_create(&t[i], 0, sproducer, &ps[i]); }
    for (int i = 0; i < 4; i++) pthread_join(t[i], 0);
    while (atomic_load_explicit(&sdone, memory_order_acquire) < 4 * n) usleep(100);
    for (int i = 0; i < 4; i++) CHECK(last_seq[i] == n);
    CHECK(!bolts_serial_is_current(s));
    bolts_serial_release(s);
    bolts_pool_shutdown(pool, true); bolts_pool_release(pool);
    printf("serial executor order, 4 producers x %ld: ok\n", n);
}

/* ---- throughput ---- */
static void noop(void *ctx) { (void)ctx; atomic_fetch_add_explicit(&done, 1, memory_order_relaxed); }
static int prealloc;
static void noop_block(void *ctx) { bolts_pool_block_free(ctx); atomic_fetch_add_explicit(&done, 1, memory_order_relaxed); }
static void *tproducer(void *a) { struct prod *p = a;
  if (prealloc) { bolts_job_t *jobs = calloc(p->count, sizeof *jobs); for (long i = 0; i < p->count; i++) { jobs[i].fn = noop; }
     for (long i = 0; i < p->count; i++) { bolts_pool_submit(p->pool, &jobs[i]); }
     return jobs; }
  if (prealloc == 2) { for (long i = 0; i < p->count; i++) { bolts_pool_submit(p->pool, bolts_pool_job_alloc(noop_block)); } return 0; }
  for (long i = 0; i < p->count; i++) { bolts_pool_submit(p->pool, bolts_job_create(noop, 0)); }
  return 0; }
static void bench(void) {
    bolts_pool_t *pool = bolts_pool_create(0, "bench");
    int counts[] = {1, 2, 4, 8};
    for (int c = 0; c < 4; c++) {
        int np = counts[c]; long total = 2000000;
        double best = 1e9;
        for (int rep = 0; rep < 5; rep++) {
            atomic_store(&done, 0);
            pthread_t t[8]; struct prod ps[8];
            int64_t t0 = now();
            for (int i = 0; i < np; i++) { ps[i] = (struct prod){pool, 0, total / np}; pthread_create(&t[i], 0, tproducer, &ps[i]); }
            void *mem[8];
            for (int i = 0; i < np; i++) pthread_join(t[i], &mem[i]);
            while (atomic_load_explicit(&done, memory_order_relaxed) < total) sched_yield();
            double ns = (double)(now() - t0) / total;
            for (int i = 0; i < np; i++) free(mem[i]);
            if (ns < best) best = ns;
        }
        printf("C pool: %d producers: %.1f ns/job\n", np, best);
    }
    bolts_pool_metrics_t m; bolts_pool_get_metrics(pool, &m);
    printf("  metrics: submitted %lu executed %lu stolen %lu parks %lu\n", m.submitted, m.executed, m.stolen, m.parks);
    bolts_pool_shutdown(pool, true); bolts_pool_release(pool);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1 && strcmp(argv[1], "bench") == 0) { bench(); return 0; }
    if (argc > 1 && strcmp(argv[1], "benchpre") == 0) { prealloc = 1; bench(); return 0; }
    if (argc > 1 && strcmp(argv[1], "benchblocks") == 0) { prealloc = 2; bench(); return 0; }
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    test_exactly_once(n, 8);
    test_shutdown_in_flight();
    test_blocking();
    test_repeated_blocking(20000);
    test_serial();
    test_shutdown_race();
    printf("all ok\n");
    return 0;
}
