/*
 * What the pool harness links in place of pool_blocks.c and pool_monitor.c, and how the
 * pool's thread calls are modelled:
 * - `pthread_create` starts a Relacy dynamic thread (detached threads simply finish);
 *   thread attributes and names are ignored.
 * - The monitor (pool_monitor.c, I12) is not modelled: its start reports that it could not
 *   start (the pool then runs without it, as it does when the thread cannot be made), and
 *   its resume, close and stall hooks do nothing. Its thread reads /proc and sleeps on a
 *   clock, which Relacy cannot run.
 * - The block allocators are the shim's (every block tracked).
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
#define pthread_create(th, attr, fn, arg) rl::rl_pthread_create((th), NULL, (fn), (arg), $)

#endif
