/*
 * The pool's own C files that the pool harnesses (pool_check.cpp, monitor_check.cpp)
 * compile, in one place: every pool*.c of CSupport/CBoltsRuntime but the monitor (which
 * monitor_check.cpp includes after its stubs), the serial executor and the block
 * allocator (neither is checked here). A harness defines the per-thread variables it gives
 * one copy per Relacy thread (see relacy_shim.h) before including this file.
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

#endif
