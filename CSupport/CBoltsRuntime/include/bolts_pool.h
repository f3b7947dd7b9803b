#ifndef BOLTS_POOL_H
#define BOLTS_POOL_H
/**
 * Thread pool and serial executor.
 *
 * A pool owns N worker threads (default: the CPUs this process may run on). Each worker
 * slot has a run queue: liburcu's wait-free concurrent queue (wfcqueue), linked through
 * the job's first field, so submitting a job allocates nothing and takes no lock. A
 * worker runs its own queue first and steals from the other slots when it runs dry, or
 * from a stalled queue when its turn to look elsewhere comes (I9); idle workers spin for
 * BOLTS_POOL_SPIN_NS (BOLTS_POOL_SPIN_AWAITED_NS just after an async awaiter off the pools
 * suspended on a pool's task; scanning less often after BOLTS_POOL_SPIN_EAGER_NS, and, built with
 * BOLTS_POOL_SPIN_YIELD, giving the CPU once there to any thread waiting for it), then park
 * on a futex. Submitters from outside the pool yield their time slice while its backlog
 * is over a bound (I8). A monitor thread per pool brings in a compensating thread for a
 * worker blocked in a job where the pool cannot see it (I12). The tunable constants are
 * defined in bolts_tuning.h (not API), each overridable with -D at build time; comments
 * (here and in Swift) cite them by name, never by value.
 *
 * Invariants
 *  I1  A submitted job is run exactly once: by a worker, or, when it races shutdown, by
 *      the thread that submitted it or by the thread that stops the pool. A job is never
 *      dropped and never run twice.
 *  I2  Each queue has at most one consumer at a time: the slot's `consumer` flag is a
 *      try-lock taken (acquire) before a dequeue and dropped (release) right after it.
 *      It is never held while a job runs. Producers never take it.
 *  I3  A worker parks only after publishing its bit in the parked mask (seq_cst) and
 *      then seeing every queue empty (or held back for its owner under I11, then for a
 *      bounded time). A producer whose enqueue found the queue empty
 *      reads the searching count and the parked mask after its tail exchange, which is
 *      a full barrier (liburcu's uatomic_xchg; a seq_cst fence where the enqueuer is a
 *      worker re-checking). One of the two sees the other (store-buffering pattern), so
 *      no wake-up is lost.
 *  I4  A parked worker sleeps until its slot's `wake` word is 1. Only a thread that
 *      cleared the worker's parked bit (claimed it) sets `wake`, so every claim is
 *      consumed by exactly one worker and the searching count stays exact.
 *  I5  While `searching` > 0 some worker will scan every queue again before it parks,
 *      so producers need not wake anyone; the last searcher to find work wakes one more
 *      worker if work remains (parallelism ramps up one worker at a time). A searcher
 *      whose last check before parking finds work stays a searcher until it takes a job,
 *      so that duty is not dropped. A searcher that gives its CPU away mid-spin
 *      (built with BOLTS_POOL_SPIN_YIELD) leaves the count for that moment and rejoins
 *      it to scan again: while it is off, producers wake a parked worker rather than
 *      wait for it.
 *  I6  A worker that blocks inside `bolts_task_wait` leaves the count of unblocked
 *      workers; if it drops below N, a spare thread is woken or a new one is started
 *      (a compensating worker), which retires to a spare at its next idle scan if the
 *      count then exceeds N. Until then a parked compensator still counts as unblocked,
 *      so a worker that blocks without compensating wakes a parked thread if any queue
 *      holds work: a job queued behind the blocking one was never announced.
 *  I7  Shutdown: OPEN -> CLOSING (workers drain; only the pool's own workers may still
 *      submit) -> CLOSED (set by the last worker to go idle, or when nothing is left).
 *      A submitter re-reads the state after its enqueue (after the exchange's full
 *      barrier); if it reads CLOSED it sweeps the queue itself, and every exiting worker
 *      sweeps every queue after CLOSED.
 *  I8  Backpressure: a thread that is not one of the pool's workers and submits while
 *      more than BOLTS_POOL_BACKLOG_PER_WORKER jobs per worker are queued gives up its
 *      time slice (sched_yield). The backlog is sampled once every
 *      BOLTS_POOL_BACKLOG_SAMPLE of its submissions; once found over the bound, every
 *      submission checks and yields until it is under again. It never blocks, refuses
 *      or reorders a job, so it cannot deadlock; it keeps submitters that outnumber the
 *      cores from starving the workers of CPU time.
 *  I9  Fairness: a worker that has taken BOLTS_POOL_FAIR_INTERVAL jobs in a row from
 *      its own queue looks at the other queues first and takes from any whose owner is
 *      parked, or has run no job for BOLTS_POOL_STALL_NS, so while any worker runs,
 *      no non-empty queue is left behind for longer than that, whatever state its
 *      own worker is in (parked, blocked outside the pool's knowledge, pre-empted). A worker
 *      that steals a job from a queue holding more wakes a parked worker unless one is
 *      searching: that queue's producers found it non-empty and woke nobody. Both are
 *      liveness measures; I3 alone prevents lost wake-ups.
 *  I10 Steal grace: a searching worker leaves a queue's only job to that queue's owner
 *      for up to BOLTS_POOL_STEAL_GRACE_NS while the owner is running a job (not
 *      parked, its count of jobs run unchanged), so a job a worker hands itself just
 *      before its current job ends runs there; a queue holding more than one job is
 *      stolen from at once. A worker gives the grace to one owner at a time: until that
 *      owner's grace has passed, another owner's only job is taken at once (so looking
 *      at two owners in turn cannot restart each one's grace forever). A heuristic, like
 *      I9: the job stays queued and visible to `any_work`, so I3 and I5 hold as before;
 *      the searcher takes it once the grace has passed.
 *  I11 Restraint: a worker leaves another worker's queue to its owner while every job
 *      in it is one the owner submitted to itself (no job from outside is left in it:
 *      the queue's count of outside submissions equals the outside jobs taken from it),
 *      the owner's sampled jobs are short (two of the last three it timed from its own
 *      queue, one job in BOLTS_POOL_SAMPLE_INTERVAL and not one that submitted to that
 *      queue, took less than BOLTS_POOL_SHORT_JOB_NS; a short one timed by a thief also
 *      marks them short), the owner is neither parked nor inside a blocking wait, and
 *      its activity (jobs run plus own submissions) has moved within
 *      BOLTS_POOL_RESTRAIN_NS as far as the worker has seen (however long ago it last
 *      submitted to itself: a batch may drain for longer); a worker keeps
 *      this restraint toward one owner at a time (as the grace of I10). Short jobs
 *      that a worker hands itself (a batch of tiny tasks, a chain
 *      of resumptions) then run where their data is, instead of crossing to a CPU that
 *      takes their cache lines and their allocator's locks with it. A worker whose only
 *      work is such a queue parks (the parking check of I3 passes over that queue)
 *      until at most BOLTS_POOL_RESTRAIN_NS after it last saw the owner's activity
 *      move; each such park that runs out doubles that limit for the next, up to
 *      BOLTS_POOL_RESTRAIN_PARK_MAX_NS, and it is back to BOLTS_POOL_RESTRAIN_NS once
 *      the worker runs a job, a claimer wakes it, or it parks without a restraint.
 *      An owner's submission to its
 *      own empty queue wakes nobody while a worker is parked so. No job can be left:
 *      the owner is awake (it is running a job), and its own parking check sees its
 *      own queue; if it stops making progress (blocked without the pool's knowledge,
 *      a long job), the restrained worker takes the queue's jobs when its park ends
 *      (within BOLTS_POOL_RESTRAIN_PARK_MAX_NS of the stop).
 *      A claimer's wake (an outside submission, I5's ramp-up, shutdown) reaches a
 *      restrained worker as any other, and an outside job is never held back. A
 *      heuristic with a bound, like I9 and I10.
 *  I12 A worker blocked in a job where the pool cannot see it (a system call, a lock, a
 *      foreign wait) is compensated like a wait of I6, without the job's cooperation:
 *      the pool's monitor thread (pool_monitor.c) marks a worker `stalled` once it has
 *      held one job for BOLTS_POOL_BLOCKED_NS, running for less than half of its last
 *      observed window (its thread's CPU clock) and asleep when looked at (neither
 *      running nor waiting for a CPU), while some queue holds a job; marking takes the worker out of `unblocked`, and below N a
 *      spare or a new thread comes in (I6's path, up to BOLTS_POOL_MAX_EXTRA_THREADS).
 *      Exactly one of the worker (after its job, or when the job enters a wait of I6,
 *      which then takes the count over) and the monitor (seeing it out of the job)
 *      clears the mark, with an exchange, and puts the worker back; the compensating
 *      thread then retires as in I6. A job that computes or is pre-empted is never
 *      marked, so CPU-bound jobs add no thread. Past BOLTS_POOL_GROWTH_FREE extra
 *      threads the monitor brings in more only while they raise the rate at which jobs
 *      complete, or while none complete (pool_monitor.c, "How far it grows"); an extra
 *      thread parks or waits as a spare for at most BOLTS_POOL_SPARE_IDLE_NS before it
 *      retires and exits, and hwm shrinks past exited slots. Each mark is reported
 *      (pool_report.c). The monitor looks every BOLTS_POOL_BLOCKED_NS / 2 while a job it
 *      has not judged outlasts a look, and also while a worker is marked and jobs are
 *      queued (a block that begins then holds the queue until it is found); it backs off
 *      to BOLTS_POOL_MONITOR_QUIET_NS once every such job is marked or found computing
 *      with no job queued, and sleeps while every active worker
 *      is parked: it publishes that it sleeps (seq_cst), fences and re-reads the parked
 *      bits; a worker whose bit was cleared (seq_cst RMW) fences and reads that flag
 *      (store-buffering pair), so no worker runs while the monitor sleeps unwoken.
 *
 * Synchronization
 *   | operation            | may run concurrently with           | ordering it relies on                  |
 *   |----------------------|-------------------------------------|----------------------------------------|
 *   | submit / try_submit  | everything, from any thread         | liburcu enqueue: the tail exchange is a |
 *   |                      |                                     | full barrier before (publishes the job) |
 *   |                      |                                     | and after (pairs with I3 / I7)          |
 *   | worker dequeue       | submits; other workers' scans       | consumer flag acquire/release (I2);     |
 *   |                      |                                     | liburcu dequeue reads the job after     |
 *   |                      |                                     | the link it was published through       |
 *   | park / notify        | each other, submits                 | seq_cst RMW on the mask + seq_cst loads |
 *   |                      |                                     | (I3); `wake` store release / load       |
 *   |                      |                                     | acquire (I4)                            |
 *   | fairness turn        | the owner's dequeues, other turns   | relaxed loads of the parked mask and    |
 *   |                      |                                     | the owner's run count, relaxed stores   |
 *   |                      |                                     | of what it saw: a heuristic (I9); the   |
 *   |                      |                                     | take itself is a dequeue as above       |
 *   | steal grace          | the owner's dequeues, submits       | relaxed loads of the queue's head link  |
 *   |                      |                                     | and tail (compared, not followed), the  |
 *   |                      |                                     | parked mask and the owner's run count:  |
 *   |                      |                                     | a heuristic (I10)                       |
 *   | restraint            | the owner's dequeues and submits,   | relaxed loads of the owner's counters,  |
 *   |                      | outside submits                     | flags and the parked mask: a heuristic  |
 *   |                      |                                     | (I11); the count of outside submits is  |
 *   |                      |                                     | raised before the enqueue and the taken |
 *   |                      |                                     | counts after the dequeue, so an outside |
 *   |                      |                                     | job in the queue is never missed        |
 *   | monitor (I12)        | workers' jobs, parks, I6 waits      | relaxed loads of job counts and flags   |
 *   |                      |                                     | (a hint); `stalled` cleared only by an  |
 *   |                      |                                     | exchange; its sleep flag seq_cst + fence|
 *   |                      |                                     | against bit clears (seq_cst) + fence    |
 *   | shutdown             | submits, workers, metrics           | state CAS seq_cst + seq_cst fence (I7)  |
 *   | metrics              | everything                          | relaxed counters: a snapshot, not a     |
 *   |                      |                                     | consistent cut                          |
 *   | release              | nothing from the same owner         | refcount acq_rel: last one frees        |
 */
#include "bolts_diagnostics.h"
#include "bolts_job.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bolts_pool bolts_pool_t;

/* The tunable constants (BOLTS_POOL_*_NS and the like) are in bolts_tuning.h, which is not
 * API; the invariants above cite them by name. */

/** Counters of a pool. Each is read with a relaxed load, so a snapshot is not a
 *  consistent cut: `queue_depth` is derived and may briefly be off by in-flight jobs. */
typedef struct bolts_pool_metrics {
    /** Jobs accepted into the pool's queues. */
    uint64_t submitted;
    /** Jobs that have run: on workers, or swept after shutdown. */
    uint64_t executed;
    /** Jobs a worker took from another worker's queue. */
    uint64_t stolen;
    /** Times a worker went to sleep on its futex. */
    uint64_t parks;
    /** Submissions refused because the pool was shut down (the job then ran on the
     *  submitting thread instead, or was handed back by `bolts_pool_try_submit`). */
    uint64_t rejected;
    /** Times a submitter from outside the pool yielded its time slice because the
     *  backlog was over the bound (invariant I8). */
    uint64_t backpressure_yields;
    /** Compensating workers started or woken because a worker blocked (I6 or I12). */
    uint64_t compensations;
    /** Times the monitor found a worker blocked in a job where the pool could not see it
     *  (I12), and counted it as blocked. */
    uint64_t stalls;
    /** Jobs accepted but not yet started (submitted - executed, clamped at 0). */
    uint64_t queue_depth;
    /** Worker threads alive, including spares kept for the next blocking worker. */
    uint32_t threads;
    /** Workers counted as blocked right now: in a wait (`bolts_task_wait`, I6) or, found
     *  by the monitor, in a job (I12). */
    uint32_t blocked;
    /** Of those, the workers the monitor found blocked in a job (I12). */
    uint32_t stalled;
    /** Stall reports not delivered to the observer (`bolts_pool_observe_stalls`): over
     *  BOLTS_POOL_STALL_REPORTS_PER_S, or while its queue was full. */
    uint64_t stall_reports_dropped;
    /** Spares whose thread exited after BOLTS_POOL_SPARE_IDLE_NS unused (I6). */
    uint64_t spares_exited;
    /** Times the monitor left a marked worker uncompensated because extra threads had not
     *  raised the rate at which jobs complete (I12's growth rule). */
    uint64_t growth_refused;
} bolts_pool_metrics_t;

/** Upper bound on compensating threads a pool starts beyond its N workers (I6, I12). */
#ifndef BOLTS_POOL_MAX_EXTRA_THREADS
#define BOLTS_POOL_MAX_EXTRA_THREADS 256
#endif

/** Largest N a pool accepts (`bolts_pool_create` fails with EINVAL above it). */
#define BOLTS_POOL_MAX_THREADS 1024

/** Number of CPUs this process may run on (its affinity mask), at least 1. */
uint32_t bolts_cpu_count(void);

/** Starts a pool of `thread_count` workers (0: `bolts_cpu_count()`; at most
 *  BOLTS_POOL_MAX_THREADS). `name` (may be NULL) prefixes the threads' names. Returns NULL
 *  with errno set when the count is too large or the threads or the memory cannot be
 *  had. The caller owns one reference (`bolts_pool_release`). */
bolts_pool_t *_Nullable bolts_pool_create(uint32_t thread_count, const char *_Nullable name);

/** Submits a job to run on one of the pool's workers (through `bolts_job_run`). Any
 *  thread, no lock. From a worker of this pool the job goes on that worker's own queue;
 *  from any other thread, on the queue of the CPU it runs on (CPU number modulo N;
 *  a per-thread rotation when N exceeds the CPUs). If the pool is
 *  shut down the job is not dropped: it runs on the calling thread (through
 *  `bolts_dispatch`, with `job->pool` cleared) and `rejected` counts it. */
void bolts_pool_submit(bolts_pool_t *_Nonnull pool, bolts_job_t *_Nonnull job);

/** Like `bolts_pool_submit`, but returns false, without touching the job, when the pool
 *  no longer accepts work (shut down; while it drains, only its own workers may
 *  submit). True means the job will run exactly once. */
bool bolts_pool_try_submit(bolts_pool_t *_Nonnull pool, bolts_job_t *_Nonnull job);

/** Stops accepting work from other threads and lets the workers drain every queued job
 *  (and what those jobs submit); the workers then exit. With `wait`, returns once every
 *  worker has exited (0), or EDEADLK at once when called from one of the pool's own
 *  workers. Without `wait`, returns 0 at once. Calling it again is harmless. */
int bolts_pool_shutdown(bolts_pool_t *_Nonnull pool, bool wait);

/** Waits up to `timeout_ns` (negative: no limit) for the workers of a pool that is
 *  shutting down to exit. Returns true once they all have. */
bool bolts_pool_await_termination(bolts_pool_t *_Nonnull pool, int64_t timeout_ns);

/** Drops the caller's reference. Requests shutdown (without waiting) if nobody did;
 *  the memory goes when the last worker thread has exited. */
void bolts_pool_release(bolts_pool_t *_Nonnull pool);

/** Reads the counters (see `bolts_pool_metrics_t`). Any thread, any time. */
void bolts_pool_get_metrics(const bolts_pool_t *_Nonnull pool, bolts_pool_metrics_t *_Nonnull out);

/** The N the pool was created with. */
uint32_t bolts_pool_thread_count(const bolts_pool_t *_Nonnull pool);

/** Whether the pool has begun shutting down. */
bool bolts_pool_is_shut_down(const bolts_pool_t *_Nonnull pool);

/** The pool whose worker is the calling thread, or NULL. */
bolts_pool_t *_Nullable bolts_pool_current(void);

/** The pool whose worker is the calling thread, if that worker's own queue holds a job
 *  and the pool has more than one worker; else NULL. For work that would rather run
 *  behind the jobs already queued than ahead of them (a completion that wakes an event
 *  loop: `eventLoopFuture(on:)` in BoltsNIO). Whether the queue holds a job is a hint,
 *  read without a fence: a job queued or taken meanwhile may not be seen. A pool of one
 *  gets NULL: if a queued job waited for that work with a wait the pool cannot see (a
 *  semaphore, SwiftNIO's `EventLoopFuture.wait()`), nobody would ever run it; with more
 *  workers, another one takes it from the waiting worker's queue (I9, I10, I11). */
bolts_pool_t *_Nullable bolts_pool_current_behind_queued_jobs(void);

/** Submits `job`, from a thread that is not one of `pool`'s workers, as a hop: a job whose
 *  end the submitter may be about to await (a Swift task that prefers the pool, started or
 *  resumed from another executor). The job must call `bolts_pool_hop_finished` once it has
 *  run. Unless the calling thread's recent hops showed that waiting costs it more than it
 *  saves, the call then waits, spinning, up to BOLTS_POOL_HOP_WAIT_NS for the job (or
 *  another hop) to end, so that an awaiter that comes next finds its task completed and
 *  does not suspend (its resumption would wake a thread of its own executor). Returns
 *  whether a hop ended during the wait. The job runs exactly once either way, as with
 *  `bolts_pool_submit`. */
bool bolts_pool_submit_hop(bolts_pool_t *_Nonnull pool, bolts_job_t *_Nonnull job);

/** Called by a hop job (`bolts_pool_submit_hop`) once it has run. */
void bolts_pool_hop_finished(void);

/** Buckets of the pool's histograms: bucket b counts durations in [2^b, 2^(b+1))
 *  nanoseconds, the last one everything longer (2^39 ns is about 9 minutes). */
#define BOLTS_POOL_HISTOGRAM_BUCKETS 40

/** Scheduler health, sampled (see `bolts_pool_get_histograms`). */
typedef struct bolts_pool_histograms {
    /** Run times of one job in BOLTS_POOL_SAMPLE_INTERVAL that each worker runs (the jobs
     *  it times for I11 anyway: no clock read is added). */
    uint64_t run[BOLTS_POOL_HISTOGRAM_BUCKETS];
    /** Delays from submission to start of probe jobs: about one submission in
     *  BOLTS_POOL_DELAY_SAMPLE, at most one probe in flight per pool at a time. */
    uint64_t delay[BOLTS_POOL_HISTOGRAM_BUCKETS];
} bolts_pool_histograms_t;

/** Reads the pool's histograms, summed over its threads, those that exited included. Any
 *  thread; relaxed loads (a snapshot, not a consistent cut). */
void bolts_pool_get_histograms(const bolts_pool_t *_Nonnull pool, bolts_pool_histograms_t *_Nonnull out);

/** Writes, for each slot below `capacity` of the pool's threads in use (workers first, then
 *  extra threads by index), the nanoseconds its current thread has been busy since it
 *  started (not parked, not a spare), or -1 for a slot without a thread; returns how many
 *  it wrote. */
uint32_t bolts_pool_worker_busy(const bolts_pool_t *_Nonnull pool, int64_t *_Nonnull busy_ns, uint32_t capacity);

/** One stall report (I12): made by the monitor when it marks a worker blocked in a job
 *  (`BOLTS_STALL_FOUND`), and again when that mark is undone because the job ended or
 *  entered a wait of I6 (`BOLTS_STALL_ENDED`). */
typedef struct bolts_stall_record {
    /** BOLTS_STALL_FOUND or BOLTS_STALL_ENDED. */
    uint32_t phase;
    /** The worker's slot index. */
    uint32_t worker;
    /** Its thread's kernel id, and its name ("<pool name>-<index>"). */
    int32_t tid;
    char thread_name[16];
    /** How long the job had held its worker at this report, in nanoseconds, from the
     *  job's start as the monitor knows it (to within half the monitor's tick). */
    int64_t held_ns;
    /** The Swift task whose job it is (Swift Concurrency on the pool), or 0. */
    uint64_t task_id;
    /** Jobs queued when the worker was found (found reports; 0 in ended ones). */
    uint32_t queued;
    /** The thread's system call and frames when it was found (found reports only). */
    bolts_thread_capture_t capture;
} bolts_stall_record_t;

#define BOLTS_STALL_FOUND 0u
#define BOLTS_STALL_ENDED 1u

/** Receives each stall report on the pool's reporter thread (neither a worker nor the
 *  monitor), one at a time, in the order they were made; may block (reports made
 *  meanwhile queue, and are dropped, counted, when the queue is full). */
typedef void (*bolts_stall_observer_fn)(void *_Nullable context, const bolts_stall_record_t *_Nonnull record);

/** Sets the pool's stall observer, once: starts its reporter thread, which calls
 *  `observer(context, record)` for every report from then on, and `release(context)` when
 *  the pool is freed. Returns false (nothing changes; the caller keeps `context`) if an
 *  observer is already set, the pool has no monitor, or the thread cannot be started. A
 *  caller that wants to change what observes keeps that behind its context. */
bool bolts_pool_observe_stalls(bolts_pool_t *_Nonnull pool, bolts_stall_observer_fn _Nonnull observer,
                               void (*_Nullable release)(void *_Nullable context), void *_Nullable context);

/** What a worker is doing, in `bolts_pool_worker_snapshot_t`. */
enum {
    BOLTS_WORKER_RUNNING = 0,   /**< in a job */
    BOLTS_WORKER_SEARCHING = 1, /**< awake, between jobs */
    BOLTS_WORKER_PARKED = 2,    /**< asleep until work comes */
    BOLTS_WORKER_BLOCKED = 3,   /**< in a job, counted as blocked (I6's wait, or I12's mark) */
    BOLTS_WORKER_SPARE = 4,     /**< an extra thread out of service (I6) */
};

/** One worker in `bolts_pool_snapshot`. */
typedef struct bolts_pool_worker_snapshot {
    uint32_t index;
    int32_t tid;
    char thread_name[16];
    /** BOLTS_WORKER_*. */
    uint32_t state;
    /** How long it has been in its current job, in nanoseconds (known to within the
     *  monitor's tick); -1 when not in a job. */
    int64_t in_job_ns;
    /** For a worker in a job: its system call and frames, if it sleeps (a running thread
     *  cannot be captured without stopping it: `system_call` is then -2, no frames). */
    bolts_thread_capture_t capture;
} bolts_pool_worker_snapshot_t;

/** Describes up to `capacity` of the pool's threads (its N workers and every extra thread
 *  alive, in slot order) into `workers`, and the jobs queued and the extra threads ACTIVE
 *  into `*queued` and `*extra`. Returns how many threads it described. Any thread; reads
 *  each worker's state with relaxed loads (not a consistent cut) and captures each that is
 *  in a job (`bolts_capture_thread`, tens of microseconds each). */
uint32_t bolts_pool_snapshot(bolts_pool_t *_Nonnull pool, bolts_pool_worker_snapshot_t *_Nonnull workers,
                             uint32_t capacity, uint64_t *_Nonnull queued, uint32_t *_Nonnull extra);

/** Size of a pool block: a `bolts_job_t` followed by caller payload. */
#define BOLTS_POOL_BLOCK_SIZE 64

/** Payload bytes guaranteed after the `bolts_job_t` in a pool block (two words: the
 *  Swift front end stores a closure, or a job and its executor, there). pool_blocks.c
 *  checks at compile time that the record leaves this much room. */
#define BOLTS_POOL_JOB_PAYLOAD 16

/** A 64-byte block (64-aligned: one cache line) from a cache built for "producers allocate, workers
 *  free": per-thread magazines that trade full ones through a lock-free depot, so the
 *  pair costs a few nanoseconds instead of a cross-thread malloc/free. Any thread. */
void *_Nonnull bolts_pool_block_alloc(void);

/** Returns a block from `bolts_pool_block_alloc`; any thread. */
void bolts_pool_block_free(void *_Nonnull block);

/** A job record in a pool block, with `fn` set, `context` pointing at the record itself
 *  (the payload starts right after the `bolts_job_t`), no pool, and no flags: the record
 *  is not BOLTS_JOB_OWNED, so `fn` must release it with `bolts_pool_block_free` once it
 *  has read its payload. */
bolts_job_t *_Nonnull bolts_pool_job_alloc(bolts_job_fn _Nonnull fn);

/**
 * A serial executor: jobs submitted to it run one at a time, in submission order, on
 * its pool's workers. Its queue is a wfcqueue; a `scheduled` flag says whether a drain
 * job is on the pool or running. A submitter whose enqueue found the queue empty issues
 * a seq_cst fence and schedules a drain if none is (CAS 0 -> 1). The drain runs up to a
 * batch of jobs, then either reschedules itself (more work: fairness to other pool work)
 * or clears the flag, fences, and re-checks the queue (store-buffering pair with the
 * submitter), so a job is never stranded. Jobs run with `bolts_serial_is_current` true.
 */
typedef struct bolts_serial bolts_serial_t;

/** Makes a serial executor on `pool`. The pool must outlive it. NULL on no memory. */
bolts_serial_t *_Nullable bolts_serial_create(bolts_pool_t *_Nonnull pool);

/** Submits a job; any thread, no lock. Jobs from one thread run in the order they were
 *  submitted; jobs from racing threads in the order their enqueues landed. */
void bolts_serial_submit(bolts_serial_t *_Nonnull serial, bolts_job_t *_Nonnull job);

/** Whether the calling thread is running a job of `serial` right now. */
bool bolts_serial_is_current(const bolts_serial_t *_Nonnull serial);

/** Drops the owner's reference; the memory goes once no drain is scheduled. Jobs that
 *  are queued still run. */
void bolts_serial_release(bolts_serial_t *_Nonnull serial);

#ifdef __cplusplus
}
#endif
#endif
