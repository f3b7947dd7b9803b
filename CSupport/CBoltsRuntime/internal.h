#ifndef BOLTS_INTERNAL_H
#define BOLTS_INTERNAL_H
/* Private declarations shared by the runtime's .c files; not part of the module. */
#include "include/CBoltsRuntime.h"

/* The pool's hooks around a blocking wait: a worker about to block lets the pool start
 * a compensating worker (or run other work), so a pool whose every worker waits on a
 * task cannot deadlock. Both are no-ops on threads that are not pool workers. */
void bolts__pool_blocking_begin(void);
void bolts__pool_blocking_end(void);

/* Registers the calling thread with liburcu (memb) once, and unregisters it at thread
 * exit. Every .c file that takes an RCU read lock calls this first (token.c owns it;
 * registering a thread twice corrupts liburcu's reader list). */
void bolts__rcu_thread_ensure(void);

/* Small fixed-size blocks from a per-thread cache (tasks, jobs, waiters). */
void *bolts__block_alloc(void);
void bolts__block_free(void *block);
#define BOLTS_BLOCK_SIZE 128

#endif
