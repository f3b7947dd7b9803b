#ifndef BOLTS_TUNING_H
#define BOLTS_TUNING_H
/*
 * Not API: the runtime's tunable constants, and two hooks through which tests read what the
 * idle spin is doing. Each constant is defined once, here, and may be overridden at build
 * time (-D); values may change in any release. The file sits beside the private headers,
 * outside include/, so the CBoltsRuntime module does not export it: the core's sources get
 * it through internal.h, the C tests and checks include it by name, and the package's Swift
 * targets import it as the module CBoltsTuning (CSupport/CBoltsTuning), which no product
 * exports (a test's bound scales with the constant it checks).
 *
 * Comments cite the constants by name, never by value. What each is for and why it is
 * sized as it is, is said where it is used: backpressure in pool_submit.c, the idle spin in
 * pool_spin.c, hops in pool_hop.c, fairness, the steal grace and the restraint in
 * pool_steal.c, the monitor in pool_monitor.c, the serial executor's batch in
 * pool_serial.c, the awaiter's spin in task.c. The runs that chose the values are in the
 * commit messages that set them. The invariants that cite them (I1-I12) are in
 * bolts_pool.h.
 */
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The thread pool (bolts_pool.h) ---------------------------------------------------- */

/** Backpressure bound (I8): queued jobs per worker above which a submitter from outside
 *  the pool yields its time slice on each submission. */
#ifndef BOLTS_POOL_BACKLOG_PER_WORKER
#define BOLTS_POOL_BACKLOG_PER_WORKER 4096
#endif

/** Backpressure sampling (I8): while under the bound, a submitter from outside the pool
 *  checks the backlog once every this many of its submissions. */
#ifndef BOLTS_POOL_BACKLOG_SAMPLE
#define BOLTS_POOL_BACKLOG_SAMPLE 64
#endif

/** How long, in nanoseconds, an idle worker keeps looking for work before it parks. */
#ifndef BOLTS_POOL_SPIN_NS
#define BOLTS_POOL_SPIN_NS 20000
#endif

/** How long, in nanoseconds, an idle worker keeps looking for work before it parks when an
 *  async awaiter off the pools suspended on a pool's task within this long before the spin
 *  began (`bolts_task_await_suspend_begin`), on any pool: long enough to outlast the
 *  awaiter's resumption by its own executor, so that its next task finds a worker awake
 *  (see pool_spin.c). */
#ifndef BOLTS_POOL_SPIN_AWAITED_NS
#define BOLTS_POOL_SPIN_AWAITED_NS 100000
#endif

/** How long, in nanoseconds, an idle worker scans for work after every pause before it
 *  spaces its scans out (BOLTS_POOL_SPIN_BACKOFF_PAUSES). */
#ifndef BOLTS_POOL_SPIN_EAGER_NS
#define BOLTS_POOL_SPIN_EAGER_NS 2000
#endif

/** 1: an idle worker gives its CPU once to any thread waiting for it (sched_yield) when
 *  its eager scans are over (BOLTS_POOL_SPIN_EAGER_NS), leaving the searching count of I5
 *  for that moment; 0 (the default): it keeps the CPU for the whole spin. A trade, off by
 *  default: beside event loops it lowers CPU per request, and it lengthens the hand-off's
 *  tail latency when producers outnumber CPUs (see pool_spin.c). */
#ifndef BOLTS_POOL_SPIN_YIELD
#define BOLTS_POOL_SPIN_YIELD 0
#endif

/** With BOLTS_POOL_SPIN_YIELD: an idle worker keeps its CPU (does not yield) while an async
 *  awaiter off the pools is suspended on a pool's task (`bolts_task_await_suspend_begin`),
 *  and for this many nanoseconds after one began awaiting such a task
 *  (`bolts_task_spin_for_completion`), on any pool: that awaiter spins for a worker to run
 *  its task, and one that gave its CPU away is not back within the awaiter's spin. */
#ifndef BOLTS_POOL_SPIN_YIELD_AWAITED_NS
#define BOLTS_POOL_SPIN_YIELD_AWAITED_NS 1000000
#endif

/** The most pauses (spin hints) an idle worker makes between two scans for work, late in
 *  a spin: the count doubles from 1 after BOLTS_POOL_SPIN_EAGER_NS up to this. */
#ifndef BOLTS_POOL_SPIN_BACKOFF_PAUSES
#define BOLTS_POOL_SPIN_BACKOFF_PAUSES 32
#endif

/** Hops (`bolts_pool_submit_hop`): how long, in nanoseconds, a thread off the pool waits
 *  for the job it just handed over to end before it returns. */
#ifndef BOLTS_POOL_HOP_WAIT_NS
#define BOLTS_POOL_HOP_WAIT_NS 4000
#endif

/** Hops: a thread's hops in a row (none further apart than BOLTS_POOL_HOP_LULL_NS) over
 *  which it measures the mean time between them, waiting or not. */
#ifndef BOLTS_POOL_HOP_PERIOD
#define BOLTS_POOL_HOP_PERIOD 64
#endif

/** Hops: a gap, in nanoseconds, between a thread's hops after which its next hop starts a
 *  new period. */
#ifndef BOLTS_POOL_HOP_LULL_NS
#define BOLTS_POOL_HOP_LULL_NS 100000
#endif

/** Hops: periods a thread keeps waiting before it tries not waiting for one period. */
#ifndef BOLTS_POOL_HOP_RETRY_WAITING
#define BOLTS_POOL_HOP_RETRY_WAITING 128
#endif

/** Hops: periods a thread keeps not waiting before it tries waiting for one period. */
#ifndef BOLTS_POOL_HOP_RETRY_NOT_WAITING
#define BOLTS_POOL_HOP_RETRY_NOT_WAITING 16
#endif

/** Hops: waits in a row that run out before their job ends, after which a thread waits for
 *  only one hop in BOLTS_POOL_HOP_SKIP until one ends in time. */
#ifndef BOLTS_POOL_HOP_MISSES
#define BOLTS_POOL_HOP_MISSES 4
#endif

/** Hops: see BOLTS_POOL_HOP_MISSES. */
#ifndef BOLTS_POOL_HOP_SKIP
#define BOLTS_POOL_HOP_SKIP 32
#endif

/** Fairness (I9): jobs a worker takes in a row from its own queue before it looks at the
 *  other queues first. */
#ifndef BOLTS_POOL_FAIR_INTERVAL
#define BOLTS_POOL_FAIR_INTERVAL 16
#endif

/** Fairness (I9): nanoseconds a queue's owner may run no job, with work queued and
 *  without being parked, before a fairness turn serves its queue. */
#ifndef BOLTS_POOL_STALL_NS
#define BOLTS_POOL_STALL_NS 1000000
#endif

/** Steal grace (I10): nanoseconds a searching worker leaves a queue's only job to its
 *  owner while the owner is running a job. */
#ifndef BOLTS_POOL_STEAL_GRACE_NS
#define BOLTS_POOL_STEAL_GRACE_NS 2000
#endif

/** Restraint (I11): a sampled job shorter than this many nanoseconds counts as short. */
#ifndef BOLTS_POOL_SHORT_JOB_NS
#define BOLTS_POOL_SHORT_JOB_NS 2000
#endif

/** Restraint (I11): a worker times one job in this many. */
#ifndef BOLTS_POOL_SAMPLE_INTERVAL
#define BOLTS_POOL_SAMPLE_INTERVAL 16
#endif

/** Restraint (I11): nanoseconds a worker leaves a queue to an owner whose activity it has
 *  not seen move, and the longest it parks while it does (0: no restraint). */
#ifndef BOLTS_POOL_RESTRAIN_NS
#define BOLTS_POOL_RESTRAIN_NS 100000
#endif

/** Restraint (I11): the longest a worker parks under a restraint while the owner keeps
 *  moving. Its first park lasts at most BOLTS_POOL_RESTRAIN_NS; each that runs out with
 *  the owner still moving doubles the next, up to this. */
#ifndef BOLTS_POOL_RESTRAIN_PARK_MAX_NS
#define BOLTS_POOL_RESTRAIN_PARK_MAX_NS 1600000
#endif

/** Blocked workers (I12): nanoseconds a worker must have held one job, mostly off the CPU,
 *  before the monitor compensates for it (0: a build without the monitor). Why 1 ms, and
 *  not Go's 20 us or .NET's 500 ms: see pool_monitor.c. */
#ifndef BOLTS_POOL_BLOCKED_NS
#define BOLTS_POOL_BLOCKED_NS 1000000
#endif

/** Blocked workers (I12): the longest the monitor sleeps between two looks while no job
 *  outlasts one look (its looks start BOLTS_POOL_BLOCKED_NS / 2 apart and double). */
#ifndef BOLTS_POOL_MONITOR_QUIET_NS
#define BOLTS_POOL_MONITOR_QUIET_NS 8000000
#endif

/** Extra threads (I6, I12): nanoseconds a spare waits to be brought back into service
 *  before its thread exits (0: spares never exit). Long enough that a server whose handlers
 *  block now and then keeps its spares between blocks (a thread start costs tens of
 *  microseconds), short enough that a burst's threads and the scan range they widened are
 *  gone soon after it: .NET's pool retires a thread idle for about 20 s, Tokio's blocking
 *  pool after 10 s. */
#ifndef BOLTS_POOL_SPARE_IDLE_NS
#define BOLTS_POOL_SPARE_IDLE_NS 10000000000LL
#endif

/** Growth rule (I12): extra threads the monitor may bring in for workers it finds blocked
 *  before it asks whether they help (a handful of blocking handlers needs no more). */
#ifndef BOLTS_POOL_GROWTH_FREE
#define BOLTS_POOL_GROWTH_FREE 4
#endif

/** Growth rule (I12): the shortest window, in nanoseconds, over which the monitor counts
 *  completed jobs to judge whether the extra threads it brought in raised their rate. */
#ifndef BOLTS_POOL_GROWTH_WINDOW_NS
#define BOLTS_POOL_GROWTH_WINDOW_NS 50000000
#endif

/** Growth rule (I12): the longest such window, in nanoseconds. */
#ifndef BOLTS_POOL_GROWTH_WINDOW_MAX_NS
#define BOLTS_POOL_GROWTH_WINDOW_MAX_NS 1000000000
#endif

/** Stall reports (I12): reports the monitor may make in a burst, and per second after it;
 *  more are counted as dropped. */
#ifndef BOLTS_POOL_STALL_REPORTS_PER_S
#define BOLTS_POOL_STALL_REPORTS_PER_S 100
#endif

/** Scheduler health: a thread offers to time the submit-to-start delay of one in this many
 *  of its submissions (taken when no other probe job is in flight on that pool). */
#ifndef BOLTS_POOL_DELAY_SAMPLE
#define BOLTS_POOL_DELAY_SAMPLE 64
#endif

/** Jobs a serial executor's drain runs before it yields its worker to other pool work. */
#ifndef BOLTS_SERIAL_BATCH
#define BOLTS_SERIAL_BATCH 128
#endif

/* ---- The awaiter's spin (bolts_task.h) ------------------------------------------------- */

/** Upper bound in nanoseconds of one awaiter's spin (`bolts_task_spin_for_completion`). */
#ifndef BOLTS_TASK_AWAIT_SPIN_NS
#define BOLTS_TASK_AWAIT_SPIN_NS 4000
#endif
/** Spins in a row ending with the task still pending, after which a thread skips them. */
#ifndef BOLTS_TASK_AWAIT_SPIN_MISSES
#define BOLTS_TASK_AWAIT_SPIN_MISSES 4
#endif
/** Awaits a thread then lets pass without a spin before it tries one again. */
#ifndef BOLTS_TASK_AWAIT_SPIN_SKIP
#define BOLTS_TASK_AWAIT_SPIN_SKIP 32
#endif

/* ---- Hooks for tests and diagnostics --------------------------------------------------- */

/** The idle spin, in nanoseconds, of a worker that would start spinning now, on any pool:
 *  BOLTS_POOL_SPIN_AWAITED_NS within that long of the last suspension of an async awaiter
 *  off the pools on a pool's task (`bolts_task_await_suspend_begin`), else
 *  BOLTS_POOL_SPIN_NS. For tests and diagnostics. */
int64_t bolts_pool_idle_spin_ns(void);

/** When the last noted suspension of an async awaiter off the pools on a pool's task was
 *  (the runtime's monotonic clock, ns; a large negative value if none): what
 *  `bolts_pool_idle_spin_ns` measures from. A suspension within BOLTS_POOL_SPIN_AWAITED_NS / 8
 *  of the last noted one is not noted again. For tests and diagnostics. */
int64_t bolts_pool_awaiter_suspended_ns(void);

#ifdef __cplusplus
}
#endif
#endif
