/* liburcu's shared-access macros (urcu/system.h) for the Relacy harness: a load or store
 * that the compiler must emit once and that orders nothing, i.e. a relaxed atomic access.
 * The operand must be a shim atomic (the wfcqueue model's links are). */
#ifndef BOLTS_SHIM_URCU_SYSTEM_H
#define BOLTS_SHIM_URCU_SYSTEM_H
#define CMM_LOAD_SHARED(x) atomic_load_explicit(&(x), memory_order_relaxed)
#define CMM_STORE_SHARED(x, v) atomic_store_explicit(&(x), (v), memory_order_relaxed)
#endif
