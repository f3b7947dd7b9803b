/*
 * How the pool's thread calls are modelled, for the pool harnesses (pool_check.cpp,
 * monitor_check.cpp):
 * - `pthread_create` starts a Relacy dynamic thread (detached threads simply finish), at
 *   most as many per iteration as the check declares;
 *   thread attributes and names are ignored. A harness that plays one thread function
 *   itself (monitor_check's accounting check plays the monitor) names it in
 *   `shim_played_thread`: a start of that function then succeeds without running it.
 * - pool_check.cpp leaves the monitor (pool_monitor.c, I12) out: its start reports that it
 *   could not start (the pool then runs without it, as it does when the thread cannot be
 *   made), and its resume, close and stall hooks do nothing. monitor_check.cpp compiles it,
 *   with its CPU clock and /proc reads modelled (monitor_stubs.h).
 * - A worker's stack bounds (`pthread_getattr_np`): not available; the slot keeps 0.
 * - The block allocators are the shim's (every block tracked), defined by each harness.
 */
#ifndef BOLTS_RELACY_POOL_STUBS_H
#define BOLTS_RELACY_POOL_STUBS_H

#undef pthread_t
#define pthread_t rl::rl_pthread_t
#define pthread_attr_t int
#define pthread_attr_init(a) (*(a) = 0)
#define pthread_attr_destroy(a) ((void)(a), 0)
#define pthread_attr_setdetachstate(a, s) ((void)(a), 0)
#define pthread_attr_setstacksize(a, s) ((void)(a), 0)
#define pthread_setname_np(t, n) ((void)(t), 0)
/* A worker's look at its own stack bounds (for stall reports' captures): not available
 * (pthread_attr_t is an int here), so the slot keeps its bounds at 0, "unknown". */
#define pthread_getattr_np(t, a) ((void)(a), -1)
#define pthread_attr_getstack(a, low, size) ((void)(a), (void)(low), (void)(size), -1)

static void *(*shim_played_thread)(void *);
/* Starts left in this iteration: the check's `dynamic_thread_count`, which the harness sets
 * in every iteration (Relacy's own check of that bound is compiled out, and a start past it
 * would overrun its table). */
static unsigned shim_dynamic_threads_left;
static int shim_pthread_create(rl::rl_pthread_t *th, void *(*fn)(void *), void *arg, rl::debug_info_param info) {
    if (fn == shim_played_thread) {
        *th = NULL;
        return 0;
    }
    RL_ASSERT(shim_dynamic_threads_left > 0 && "more threads started than the check's dynamic_thread_count");
    shim_dynamic_threads_left--;
    return rl::rl_pthread_create(th, NULL, fn, arg, info);
}
#define pthread_create(th, attr, fn, arg) shim_pthread_create((th), (fn), (arg), $)

#endif
