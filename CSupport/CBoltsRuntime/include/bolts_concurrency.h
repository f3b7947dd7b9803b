#ifndef BOLTS_CONCURRENCY_H
#define BOLTS_CONCURRENCY_H
/**
 * A pool as Swift Concurrency's global executor (concurrency.c).
 *
 * The Swift runtime (libswift_Concurrency) exports hook variables that it consults before
 * its own global executor: `swift_task_enqueueGlobal_hook` (every job of a task that has
 * no actor and no task-executor preference: `Task {}`, task-group children, `async let`,
 * nonisolated async functions, resumptions), and its delay and deadline variants (a task
 * that sleeps). Installing sets all three, with a compare-and-swap from NULL each, to
 * functions that hand the job to the pool (a delayed job first waits in a timer thread).
 * The hooks are looked up with dlsym, so a process without the Swift runtime, or a runtime
 * without them, gets BOLTS_CONCURRENCY_NO_HOOK and nothing changes.
 *
 * A job runs on a worker through the runtime's `swift_job_run` with the generic executor,
 * as the runtime's own global executor runs it. The pool does not order jobs by priority
 * (its queues are FIFO and workers steal); a job's priority stays on the job, where the
 * runtime reads it (Task.currentPriority, child tasks' inheritance).
 *
 * Installing is for the whole process and cannot be undone. The pool must never be shut
 * down or freed afterwards (the Swift front end keeps a reference for ever and refuses
 * to shut it down).
 */
#include "bolts_pool.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Why `bolts_concurrency_install` did not install. */
typedef enum {
    /** Installed: the pool is the global executor from now on. */
    BOLTS_CONCURRENCY_INSTALLED = 0,
    /** The Swift runtime, or its enqueue hooks or `swift_job_run`, cannot be found. */
    BOLTS_CONCURRENCY_NO_HOOK = 1,
    /** A hook was already set (another executor, or this one, was installed before). */
    BOLTS_CONCURRENCY_TAKEN = 2,
    /** The runtime's own global executor has already been used: the calling thread runs
     *  a Swift task, or Dispatch's global queues (where that executor runs jobs) have
     *  started threads. Jobs may be queued there; installing now would split the
     *  process's async work over two executors. */
    BOLTS_CONCURRENCY_TOO_LATE = 3,
} bolts_concurrency_status_t;

/** Installs `pool` as Swift Concurrency's global executor, or says why not (and then
 *  changes nothing). Any thread; meant to be called once, first thing in `main`. On
 *  success the pool must live and stay open for the rest of the process. */
bolts_concurrency_status_t bolts_concurrency_install(bolts_pool_t *_Nonnull pool);

/** The pool installed as the global executor, or NULL. */
bolts_pool_t *_Nullable bolts_concurrency_pool(void);

/** Jobs the timer thread holds: delayed jobs (`Task.sleep`) whose time has not come. */
uint64_t bolts_concurrency_delayed_count(void);

#ifdef __cplusplus
}
#endif
#endif
