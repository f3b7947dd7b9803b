#define _GNU_SOURCE
/* A pool as Swift Concurrency's global executor: see include/bolts_concurrency.h. */
#include "bolts_concurrency.h"
#include "pool_internal.h"

#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

/* The runtime's types and entry points, as far as this file uses them. Everything of the
 * runtime's is called with its own calling convention (swiftcall); the job is opaque. */
#define SWIFT_CC __attribute__((swiftcall))

/* SerialExecutorRef: an identity and a witness-table word. Both zero: the generic
 * executor, the one the runtime's global executor runs its jobs on. */
typedef struct {
    void *identity;
    uintptr_t implementation;
} swift_executor_ref;

typedef SWIFT_CC void (*job_run_fn)(void *job, swift_executor_ref executor);
typedef SWIFT_CC void (*get_time_fn)(long long *seconds, long long *nanoseconds, int clock);

typedef SWIFT_CC void (*enqueue_original)(void *job);
typedef SWIFT_CC void (*delay_original)(unsigned long long delay_ns, void *job);
typedef SWIFT_CC void (*deadline_original)(long long sec, long long nsec, long long tsec, long long tnsec,
                                           int clock, void *job);

/* Set once, before the hooks are published (their CAS releases these stores). */
static job_run_fn run_swift_job;
static get_time_fn swift_get_time;
/* The installed pool. Release store before the hooks' CAS; hooks load it with acquire
 * and fall back to the runtime's own executor if they ever read NULL. */
static _Atomic(bolts_pool_t *) installed;

/* ---------------------------------------------------------------------------------- */
/* Running a Swift job on the pool                                                    */

static void run_on_worker(void *context) {
    void *job = *(void **)((char *)context + sizeof(bolts_job_t));
    bolts_pool_block_free(context);
    struct bolts_pool_slot *slot = bolts__pool_tl_slot;
    /* Relaxed, both: a hint for a stall report's task id (pool_report.c), read only while
     * the monitor sees this job running; owner-written, on the slot's diagnostics line. */
    if (slot != NULL) atomic_store_explicit(&slot->swift_job, job, memory_order_relaxed);
    run_swift_job(job, (swift_executor_ref){NULL, 0});
    if (slot != NULL) atomic_store_explicit(&slot->swift_job, NULL, memory_order_relaxed);
}

/* The task id of a Swift job, for stall reports (pool_report.c): the runtime's
 * `swift_task_getJobTaskId`, looked up on first use; 0 if it is absent. */
BOLTS_HIDDEN uint64_t bolts__swift_job_task_id(void *job);

typedef SWIFT_CC uint64_t (*job_task_id_fn)(void *job);
static _Atomic(job_task_id_fn) job_task_id;
static atomic_bool job_task_id_looked_up;

uint64_t bolts__swift_job_task_id(void *job) {
    /* Acquire: pairs with the release below, so the pointer read after it is the one stored. */
    if (!atomic_load_explicit(&job_task_id_looked_up, memory_order_acquire)) {
        /* Relaxed: racing first users store the same value. */
        atomic_store_explicit(&job_task_id, (job_task_id_fn)dlsym(RTLD_DEFAULT, "swift_task_getJobTaskId"),
                              memory_order_relaxed);
        /* Release: publishes the pointer to the acquire above. */
        atomic_store_explicit(&job_task_id_looked_up, true, memory_order_release);
    }
    /* Relaxed: ordered by the acquire above. */
    job_task_id_fn fn = atomic_load_explicit(&job_task_id, memory_order_relaxed);
    return fn != NULL ? fn(job) : 0;
}

static void submit(bolts_pool_t *pool, void *swift_job) {
    bolts_job_t *record = bolts_pool_job_alloc(run_on_worker);
    *(void **)((char *)record + sizeof(bolts_job_t)) = swift_job;
    bolts_pool_submit(pool, record);
}

static SWIFT_CC void enqueue_hook(void *job, enqueue_original original) {
    /* Acquire: pairs with the release in `bolts_concurrency_install`. */
    bolts_pool_t *pool = atomic_load_explicit(&installed, memory_order_acquire);
    if (pool == NULL) {
        original(job);
        return;
    }
    submit(pool, job);
}

/* ---------------------------------------------------------------------------------- */
/* Delayed jobs: one timer thread, a binary min-heap by due time (CLOCK_MONOTONIC)    */

struct timer_entry {
    int64_t due;
    uint64_t seq; /* ties run in arrival order */
    void *job;
};

static struct {
    pthread_mutex_t lock;
    struct timer_entry *heap;
    size_t count, capacity;
    uint64_t next_seq;
    bool started;
    /* Futex word of the timer thread's sleep: bumped (under the lock) when an entry
     * becomes the earliest, so a sleep computed for a later time ends. */
    _Atomic uint32_t changed;
    _Atomic uint64_t held; /* bolts_concurrency_delayed_count */
} timers = {.lock = PTHREAD_MUTEX_INITIALIZER};

static bool earlier(const struct timer_entry *a, const struct timer_entry *b) {
    return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

static void heap_push(struct timer_entry entry) {
    if (timers.count == timers.capacity) {
        size_t capacity = timers.capacity ? timers.capacity * 2 : 64;
        timers.heap = bolts__realloc_or_abort(timers.heap, capacity * sizeof *timers.heap, "the timer heap");
        timers.capacity = capacity;
    }
    size_t i = timers.count++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!earlier(&entry, &timers.heap[parent])) break;
        timers.heap[i] = timers.heap[parent];
        i = parent;
    }
    timers.heap[i] = entry;
}

static struct timer_entry heap_pop(void) {
    struct timer_entry top = timers.heap[0];
    struct timer_entry last = timers.heap[--timers.count];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= timers.count) break;
        if (child + 1 < timers.count && earlier(&timers.heap[child + 1], &timers.heap[child])) child++;
        if (!earlier(&timers.heap[child], &last)) break;
        timers.heap[i] = timers.heap[child];
        i = child;
    }
    if (timers.count > 0) timers.heap[i] = last;
    return top;
}

static void *timer_main(void *arg) {
    (void)arg;
    pthread_mutex_lock(&timers.lock);
    for (;;) {
        int64_t now = bolts__now_ns();
        while (timers.count > 0 && timers.heap[0].due <= now) {
            struct timer_entry due = heap_pop();
            /* Relaxed: a count for diagnostics. */
            atomic_fetch_sub_explicit(&timers.held, 1, memory_order_relaxed);
            pthread_mutex_unlock(&timers.lock);
            /* Acquire: pairs with the release in `bolts_concurrency_install` (the timer
             * thread starts only after it, but through the hooks' plain loads). */
            submit(atomic_load_explicit(&installed, memory_order_acquire), due.job);
            pthread_mutex_lock(&timers.lock);
        }
        int64_t wait = timers.count > 0 ? timers.heap[0].due - now : -1;
        /* Relaxed: read under the lock, which orders it with the bumps (also under it). */
        uint32_t seen = atomic_load_explicit(&timers.changed, memory_order_relaxed);
        pthread_mutex_unlock(&timers.lock);
        bolts__futex_wait(&timers.changed, seen, wait);
        pthread_mutex_lock(&timers.lock);
    }
    return NULL;
}

static void schedule_at(int64_t due, void *job) {
    pthread_mutex_lock(&timers.lock);
    if (!timers.started) {
        pthread_t thread;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&thread, &attr, timer_main, NULL);
        pthread_attr_destroy(&attr);
        if (rc != 0) {
            fprintf(stderr, "bolts: could not start the timer thread of the global executor: %s\n", strerror(rc));
            abort();
        }
        pthread_setname_np(thread, "bolts-timer");
        timers.started = true;
    }
    heap_push((struct timer_entry){.due = due, .seq = timers.next_seq++, .job = job});
    /* Relaxed: a count for diagnostics. */
    atomic_fetch_add_explicit(&timers.held, 1, memory_order_relaxed);
    bool earliest = timers.heap[0].job == job;
    if (earliest) {
        /* Relaxed: under the lock; the futex call below is the wake-up. */
        atomic_fetch_add_explicit(&timers.changed, 1, memory_order_relaxed);
    }
    pthread_mutex_unlock(&timers.lock);
    if (earliest) bolts__futex_wake(&timers.changed, 1);
}

static SWIFT_CC void delay_hook(unsigned long long delay_ns, void *job, delay_original original) {
    /* Acquire: pairs with the release in `bolts_concurrency_install`. */
    bolts_pool_t *pool = atomic_load_explicit(&installed, memory_order_acquire);
    if (pool == NULL) {
        original(delay_ns, job);
        return;
    }
    if (delay_ns == 0) {
        submit(pool, job);
        return;
    }
    int64_t now = bolts__now_ns();
    int64_t delay = delay_ns > (unsigned long long)(INT64_MAX - now) ? INT64_MAX - now : (int64_t)delay_ns;
    schedule_at(now + delay, job);
}

/* The deadline is on the runtime's clock `clock` (continuous or suspending); the timer
 * keeps CLOCK_MONOTONIC, so the time left is measured on the runtime's clock and then
 * counted from now on ours. The tolerance is not used: jobs run when due. */
static SWIFT_CC void deadline_hook(long long sec, long long nsec, long long tsec, long long tnsec, int clock,
                                   void *job, deadline_original original) {
    /* Acquire: pairs with the release in `bolts_concurrency_install`. */
    bolts_pool_t *pool = atomic_load_explicit(&installed, memory_order_acquire);
    if (pool == NULL) {
        original(sec, nsec, tsec, tnsec, clock, job);
        return;
    }
    long long now_sec = 0, now_nsec = 0;
    swift_get_time(&now_sec, &now_nsec, clock);
    long long left = (sec - now_sec) * 1000000000LL + (nsec - now_nsec);
    if (left <= 0) {
        submit(pool, job);
        return;
    }
    int64_t now = bolts__now_ns();
    if (left > INT64_MAX - now) left = INT64_MAX - now;
    schedule_at(now + left, job);
}

/* ---------------------------------------------------------------------------------- */
/* Installing                                                                         */

static void *runtime_symbol(const char *name) {
    return dlsym(RTLD_DEFAULT, name);
}

/* Whether a thread of Dispatch's global queues runs, by its name: they end in "-qos",
 * possibly with a suffix such as ".overcommit" (the kernel keeps the last 15 bytes). A
 * thread Dispatch created an instant ago may not carry its name yet. */
static bool dispatch_thread_named(void) {
    DIR *dir = opendir("/proc/self/task");
    if (dir == NULL) return false;
    bool found = false;
    struct dirent *entry;
    while (!found && (entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] == '.') continue;
        char path[64], name[32] = {0};
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", entry->d_name);
        FILE *file = fopen(path, "r");
        if (file == NULL) continue;
        if (fgets(name, sizeof name, file) != NULL && strstr(name, "-qos") != NULL) found = true;
        fclose(file);
    }
    closedir(dir);
    return found;
}

/* Whether Swift's default global executor may already hold jobs. It gives them to
 * Dispatch's global queues, and Dispatch, before it creates a thread for a queue, marks
 * itself multithreaded (its fork-safety flag, read by libdispatch's exported
 * `_dispatch_is_multithreaded`) on the enqueuing thread: a task started an instant
 * before this call is seen, though its thread does not run yet. A thread named by those
 * queues is a sign too, the only one where that function is missing (it is looked up by
 * name, like the runtime's hooks); alone it misses a task started an instant before,
 * whose jobs then run on Dispatch (see `bolts_concurrency_install`): none is lost.
 *
 * Conservative: a process that used Dispatch's queues for anything else is refused too,
 * and so is an async `main` after its first suspension (Dispatch then serves the main
 * queue from a thread of its own). Whether the caller runs a Swift task is not the
 * question: an async `main` runs its main task on the main executor (Dispatch's main
 * queue, whose hook is never set here), and before its first statement nothing has
 * reached the global executor. */
static bool default_executor_may_hold_jobs(void) {
    typedef bool (*is_multithreaded_fn)(void);
    is_multithreaded_fn is_multithreaded = (is_multithreaded_fn)runtime_symbol("_dispatch_is_multithreaded");
    return (is_multithreaded != NULL && is_multithreaded()) || dispatch_thread_named();
}

static bool claim(void *_Atomic *hook, void *ours) {
    void *expected = NULL;
    /* Acq_rel: releases `installed` and the entry points to a runtime that reads the hook
     * (with a plain load; on the platforms this builds for, a load that sees the new
     * pointer also sees what was stored before it); acquire: a competing installer's. */
    return atomic_compare_exchange_strong_explicit(hook, &expected, ours, memory_order_acq_rel,
                                                   memory_order_acquire);
}

/* The hooks decide where a job goes when it is enqueued, so they move no job that is
 * already queued: one given to Swift's default executor before the hook was set runs on
 * Dispatch, which serves its queues for the life of the process (none is stranded), and
 * one that another thread enqueues while this runs goes to Dispatch or to the pool,
 * whichever hook value the runtime reads. The main executor's hook is not set: main-actor
 * jobs, an async `main`'s main task among them, stay on Dispatch's main queue. */
bolts_concurrency_status_t bolts_concurrency_install(bolts_pool_t *pool) {
    static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
    void *_Atomic *enqueue = runtime_symbol("swift_task_enqueueGlobal_hook");
    void *_Atomic *delay = runtime_symbol("swift_task_enqueueGlobalWithDelay_hook");
    void *_Atomic *deadline = runtime_symbol("swift_task_enqueueGlobalWithDeadline_hook");
    job_run_fn run = (job_run_fn)runtime_symbol("swift_job_run");
    get_time_fn get_time = (get_time_fn)runtime_symbol("swift_get_time");
    if (!enqueue || !delay || !deadline || !run || !get_time) return BOLTS_CONCURRENCY_NO_HOOK;

    pthread_mutex_lock(&install_lock); /* two installers of ours: one wins, whole */
    bolts_concurrency_status_t status = BOLTS_CONCURRENCY_INSTALLED;
    /* Relaxed: pre-checks; the CAS below decides. */
    if (atomic_load_explicit(&installed, memory_order_relaxed) != NULL ||
        atomic_load_explicit(enqueue, memory_order_relaxed) != NULL ||
        atomic_load_explicit(delay, memory_order_relaxed) != NULL ||
        atomic_load_explicit(deadline, memory_order_relaxed) != NULL) {
        status = BOLTS_CONCURRENCY_TAKEN;
    } else if (default_executor_may_hold_jobs()) {
        status = BOLTS_CONCURRENCY_TOO_LATE;
    } else {
        run_swift_job = run;
        swift_get_time = get_time;
        /* Release: the hooks published below find the pool through this. */
        atomic_store_explicit(&installed, pool, memory_order_release);
        if (!claim(enqueue, (void *)enqueue_hook)) {
            /* Relaxed: no hook of ours was published. */
            atomic_store_explicit(&installed, NULL, memory_order_relaxed);
            status = BOLTS_CONCURRENCY_TAKEN;
        } else {
            /* The enqueue hook is ours: installed. Another installer could only have set
             * the delay or deadline hook in the instant since the check above; its hook
             * then keeps the delayed jobs of that kind (they still reach a global
             * executor), and ours is not set. */
            claim(delay, (void *)delay_hook);
            claim(deadline, (void *)deadline_hook);
        }
    }
    pthread_mutex_unlock(&install_lock);
    return status;
}

bolts_pool_t *bolts_concurrency_pool(void) {
    /* Acquire: pairs with the release in `bolts_concurrency_install`. */
    return atomic_load_explicit(&installed, memory_order_acquire);
}

uint64_t bolts_concurrency_delayed_count(void) {
    /* Relaxed: a count for diagnostics. */
    return atomic_load_explicit(&timers.held, memory_order_relaxed);
}
