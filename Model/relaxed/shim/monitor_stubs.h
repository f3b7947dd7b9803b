/*
 * The calls of pool_monitor.c that cannot run inside Relacy, modelled; included by
 * monitor_check.cpp right before pool_monitor.c, so that only that file sees these macros
 * (the other pool files and platform.h keep the shim's clock).
 *
 * - A thread's CPU clock (`clock_gettime` on the per-thread clock id that `cpu_ns` builds):
 *   the model's answer. The monotonic clock stays the shim's (1 us per read).
 * - `/proc/self/task/<tid>/stat` (`open`, `read`, `close` in `asleep`): a stat line
 *   "tid (name) X", X being the model's answer: S (asleep) or R (running).
 *
 * The answers are those of a thread that never runs and is always asleep when looked at:
 * the verdict the monitor reaches for a job blocked where the pool cannot see it. It
 * reaches it for any job seen on enough looks, right or wrong, so a job that merely takes
 * a few steps may be marked: the accounting must hold whatever the verdict (monitor.pml
 * leaves the verdict open in the same way). Every Relacy thread has the same kernel id
 * (they are fibers of one thread), so the answers cannot depend on the thread.
 */
#ifndef BOLTS_RELACY_MONITOR_STUBS_H
#define BOLTS_RELACY_MONITOR_STUBS_H

#include <fcntl.h>

static int shim_monitor_clock_gettime(clockid_t id, struct timespec *ts) {
    if (id == CLOCK_MONOTONIC) return shim_clock_gettime(id, ts);
    RL_ASSERT(id < 0 && "only a thread's CPU clock is modelled besides the monotonic one");
    ts->tv_sec = 0;
    ts->tv_nsec = 0; /* never ran */
    return 0;
}

enum { SHIM_PROC_FD = 1000 };
static int shim_proc_open(const char *path, int flags) {
    (void)flags;
    RL_ASSERT(strncmp(path, "/proc/self/task/", 16) == 0 && "only a thread's stat file is modelled");
    return SHIM_PROC_FD;
}
static ssize_t shim_proc_read(int fd, char *buf, size_t n) {
    RL_ASSERT(fd == SHIM_PROC_FD);
    return (ssize_t)snprintf(buf, n, "1 (relacy) S 0");
}
static int shim_proc_close(int fd) {
    RL_ASSERT(fd == SHIM_PROC_FD);
    return 0;
}

#undef clock_gettime
#define clock_gettime(id, ts) shim_monitor_clock_gettime((id), (ts))
#define open(path, flags) shim_proc_open((path), (flags))
#define read(fd, buf, n) shim_proc_read((fd), (buf), (n))
#define close(fd) shim_proc_close(fd)

#endif
