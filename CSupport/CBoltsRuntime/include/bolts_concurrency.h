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
 *
 * Installing may happen inside a Swift task: an async `main` calls it from its main task,
 * which runs on the main executor (Dispatch's main queue; its hook is never set), so the
 * main actor stays on it while every global job enqueued after the call goes to the pool.
 * Jobs enqueued on the runtime's own global executor before the call stay there and run
 * on Dispatch (the hooks only route new jobs); the install is refused when there may be
 * such jobs (BOLTS_CONCURRENCY_TOO_LATE), so that the process's async work does not run on
 * two executors.
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
    /** The runtime's own global executor may already have been used: Dispatch, where it
     *  runs jobs, has started threads for its queues or is starting them (it says so
     *  through `_dispatch_is_multithreaded` from the enqueue on; where that is missing,
     *  a thread named by its global queues is the sign). Jobs may be queued there, and
     *  the hooks cannot move them: installing now would split the process's async work
     *  over two executors. A Swift task running on the calling thread is not a reason
     *  (an async `main`'s first statement runs in its main task). */
    BOLTS_CONCURRENCY_TOO_LATE = 3,
} bolts_concurrency_status_t;

/** Installs `pool` as Swift Concurrency's global executor, or says why not (and then
 *  changes nothing). Any thread, inside a Swift task or not; meant to be called once,
 *  first thing in `main` (synchronous or async). Concurrent calls are serialized: one
 *  installs, the others get BOLTS_CONCURRENCY_TAKEN. On success the pool must live and
 *  stay open for the rest of the process. */
bolts_concurrency_status_t bolts_concurrency_install(bolts_pool_t *_Nonnull pool);

/** The pool installed as the global executor, or NULL. */
bolts_pool_t *_Nullable bolts_concurrency_pool(void);

/** Jobs the timer thread holds: delayed jobs (`Task.sleep`) whose time has not come. */
uint64_t bolts_concurrency_delayed_count(void);

#ifdef __cplusplus
}
#endif
#endif
