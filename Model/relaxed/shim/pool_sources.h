/*
 * The pool's own C files that the pool harnesses (pool_check.cpp, monitor_check.cpp)
 * compile, in one place: every pool*.c of CSupport/CBoltsRuntime but the monitor (which
 * monitor_check.cpp includes after its stubs), the serial executor, the block allocator
 * (neither is checked here) and the stall reports (pool_report.c: stand-ins below). A
 * harness defines the per-thread variables it gives one copy per Relacy thread (see
 * relacy_shim.h) before including this file.
 */
#ifndef BOLTS_RELACY_POOL_SOURCES_H
#define BOLTS_RELACY_POOL_SOURCES_H

#include "pool.c"
#include "pool_steal.c"
#include "pool_worker.c"
#include "pool_spin.c"
#include "pool_park.c"
#include "pool_submit.c"
#include "pool_compensate.c"
#include "pool_hop.c"

/* pool_report.c is not compiled (its reports capture threads through /proc and
 * process_vm_readv and go to a reporter thread of their own): with no observer set, which
 * is every pool here, its calls from the pool's files return at once, as these do. The
 * thread name is written as pool_report.c writes it (pthread_setname_np ignores it). */
void bolts__stall_report_found(struct bolts_pool *pool, struct bolts_pool_slot *slot, int64_t now, uint32_t queued) {
    (void)pool;
    (void)slot;
    (void)now;
    (void)queued;
}
void bolts__stall_report_ended(struct bolts_pool *pool, struct bolts_pool_slot *slot) {
    (void)pool;
    (void)slot;
}
void bolts__stall_reports_free(struct bolts_pool *pool) { (void)pool; }
void bolts__pool_thread_name(const struct bolts_pool *pool, uint32_t index, char name[16]) {
    snprintf(name, 16, "%.8s-%u", pool->name, index);
}

#endif
