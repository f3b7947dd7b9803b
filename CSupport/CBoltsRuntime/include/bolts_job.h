#ifndef BOLTS_JOB_H
#define BOLTS_JOB_H
/**
 * A job: the unit of work the runtime passes around — a function pointer, a context,
 * and one link word. The same record is a continuation waiting on a task, an entry of
 * the per-thread trampoline queue, and an entry of a thread pool's run queue; it moves
 * from one list to the next without being copied or reallocated.
 *
 * Ownership: a job is on at most one list at a time, and the list that holds it owns
 * its `next` field. `bolts_job_run` reads `fn`/`context`, releases the record when the
 * runtime allocated it (`bolts_job_create`), and only then calls `fn`; so `fn` may
 * re-arm an embedded job (for example a task's own waiter job) for another wait.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bolts_pool;

/** The function a job runs. It receives the job's context. */
typedef void (*bolts_job_fn)(void *_Nullable context);

/** A job record. Plain fields: they are written before the job is published (with a
 *  release operation by whoever publishes it) and read after the matching acquire. */
typedef struct bolts_job {
    /** Link word; owned by the list the job is on. Must stay the first field: the
     *  pool's queue links jobs through it. */
    struct bolts_job *_Nullable next;
    /** What to run. */
    bolts_job_fn _Nullable fn;
    /** Argument for `fn`. */
    void *_Nullable context;
    /** If not NULL, the job runs on this pool instead of inline on the thread that
     *  dispatches it. */
    struct bolts_pool *_Nullable pool;
    /** Internal flags (BOLTS_JOB_*). */
    uintptr_t flags;
    /** If not NULL, called with `context` instead of `fn` when the job can never run:
     *  the task it waits on was destroyed while still pending (nobody can complete it
     *  any more). It releases what `context` holds. */
    bolts_job_fn _Nullable drop;
} bolts_job_t;

/** Set on records that `bolts_job_create` made: `bolts_job_run` frees them. */
#define BOLTS_JOB_OWNED ((uintptr_t)1)

/** Allocates a job record from the calling thread's cache (or malloc). The runtime
 *  frees it after it runs. Never NULL: out of memory, the runtime aborts. */
bolts_job_t *_Nonnull bolts_job_create(bolts_job_fn _Nonnull fn, void *_Nullable context);

/** Frees a record made by `bolts_job_create` that was never dispatched. */
void bolts_job_destroy(bolts_job_t *_Nonnull job);

/** Runs a job now on this thread: reads fn/context, frees an owned record, calls fn.
 *  Counts as one trampoline level (see `bolts_dispatch`). Used by pool workers. */
void bolts_job_run(bolts_job_t *_Nonnull job);

/**
 * Dispatches a job through the calling thread's trampoline: if the job names a pool,
 * it is submitted there; otherwise, if this thread is fewer than BOLTS_INLINE_DEPTH
 * nested dispatches deep, it runs now; otherwise it is appended to the thread's run
 * queue, which the outermost dispatch frame drains in FIFO order before it returns.
 * A million nested synchronous completions therefore use a bounded stack and stay on
 * the calling thread.
 */
void bolts_dispatch(bolts_job_t *_Nonnull job);

/** Runs every job on this thread's trampoline queue (used before a blocking wait, so
 *  deferred work can never deadlock against the waiter). Returns how many ran. */
size_t bolts_trampoline_drain(void);

/** Nested synchronous dispatches that run inline before the trampoline defers (the
 *  same depth Bolts used). */
#define BOLTS_INLINE_DEPTH 20

/** The current nesting depth of inline dispatch on this thread (for tests). */
int bolts_trampoline_depth(void);

/** Whether the runtime was built under ThreadSanitizer or AddressSanitizer (for tests:
 *  there every atomic operation is instrumented, a tiny job takes microseconds, and
 *  claims about sub-microsecond timing are not judged). */
bool bolts_runtime_sanitized(void);

#ifdef __cplusplus
}
#endif
#endif
