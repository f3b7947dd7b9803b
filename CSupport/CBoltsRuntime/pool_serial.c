/* The serial executor: a wfcqueue of jobs drained one at a time by a single drain job
 * on a pool. Protocol in include/bolts_pool.h (above `bolts_serial_t`):
 *
 *   S1  `scheduled` is 1 from the CAS that schedules a drain until that drain (or the
 *       drain it reschedules) stores 0; so at most one thread dequeues at a time, which
 *       is the mutual exclusion wfcqueue's dequeue needs.
 *   S2  A drain stops only on an empty queue, and only after storing 0 to `scheduled`,
 *       fencing (seq_cst) and seeing the queue still empty. A submitter that found the
 *       queue empty fences (seq_cst) after its enqueue and then tries the CAS. One of
 *       the two sees the other's write, so a job is never left without a drain.
 *   S3  A submitter that found the queue non-empty does nothing more: the job ahead of
 *       it is not yet dequeued, and the drain that dequeues it goes on to ours (S2).
 */
#define _GNU_SOURCE
#include "pool_internal.h"

#include <urcu/wfcqueue.h>

#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* A drain runs up to BOLTS_SERIAL_BATCH jobs (bolts_tuning.h), then reschedules
 * itself, yielding its worker to other pool work. */

struct bolts_serial {
    /* Producers' line. */
    _Alignas(BOLTS_CACHE_LINE) struct cds_wfcq_tail tail;
    /* The drain's line. */
    _Alignas(BOLTS_CACHE_LINE) struct __cds_wfcq_head head;
    atomic_uint scheduled;
    atomic_uint refs; /* the owner's, plus one while a drain is scheduled */
    bolts_pool_t *pool;
    bolts_job_t drain; /* embedded; never BOLTS_JOB_OWNED */
};

/* The serial executor whose job is running on this thread, if any. */
static _Thread_local const bolts_serial_t *tl_serial;

static void serial_unref(bolts_serial_t *serial) {
    /* Acq_rel: the last holder sees the other holder's writes before freeing. */
    if (atomic_fetch_sub_explicit(&serial->refs, 1, memory_order_acq_rel) == 1) free(serial);
}

/* Takes `scheduled` from 0 to 1 and puts the drain on the pool (S1). */
static void schedule(bolts_serial_t *serial) {
    /* Relaxed: ordered after the caller's fence; a cheap test before the CAS. */
    if (atomic_load_explicit(&serial->scheduled, memory_order_relaxed) != 0) return;
    unsigned expected = 0;
    /* Acq_rel: acquires the previous drain's release of 0 (its head updates), releases
     * to the drain we schedule. */
    if (!atomic_compare_exchange_strong_explicit(&serial->scheduled, &expected, 1, memory_order_acq_rel,
                                                 memory_order_relaxed)) {
        return;
    }
    /* Relaxed: the caller holds a reference, so the count cannot reach zero here. */
    atomic_fetch_add_explicit(&serial->refs, 1, memory_order_relaxed);
    bolts_pool_submit(serial->pool, &serial->drain);
}

static void drain(void *context) {
    bolts_serial_t *serial = context;
    const bolts_serial_t *outer = tl_serial;
    tl_serial = serial;
    for (;;) {
        unsigned ran = 0;
        while (ran < BOLTS_SERIAL_BATCH) {
            struct cds_wfcq_node *node = __cds_wfcq_dequeue_nonblocking(&serial->head, &serial->tail);
            if (node == NULL) break;
            if (node == CDS_WFCQ_WOULDBLOCK) {
                bolts__yield_cpu(); /* a producer was pre-empted mid-enqueue: let it finish */
                continue;
            }
            BOLTS_TSAN_ACQUIRE(node);
            bolts_job_run((bolts_job_t *)node);
            ran++;
        }
        if (ran == BOLTS_SERIAL_BATCH) {
            /* More may be queued: go to the back of the pool's queue and keep
             * `scheduled` (and our reference) for the rescheduled drain. `serial` must
             * not be touched after the submit: another worker may run it already. */
            tl_serial = outer;
            bolts_pool_submit(serial->pool, &serial->drain);
            return;
        }
        /* Seq_cst, then a fence: the store-buffering pair of S2. */
        atomic_store_explicit(&serial->scheduled, 0, memory_order_seq_cst);
        atomic_thread_fence(memory_order_seq_cst);
        if (cds_wfcq_empty(&serial->head, &serial->tail)) break;
        unsigned expected = 0;
        /* Acq_rel: as in `schedule`; losing means a submitter scheduled a new drain. */
        if (!atomic_compare_exchange_strong_explicit(&serial->scheduled, &expected, 1, memory_order_acq_rel,
                                                     memory_order_relaxed)) {
            break;
        }
    }
    tl_serial = outer;
    serial_unref(serial);
}

bolts_serial_t *bolts_serial_create(bolts_pool_t *pool) {
    bolts_serial_t *serial = aligned_alloc(BOLTS_CACHE_LINE, sizeof *serial);
    if (serial == NULL) return NULL;
    memset(serial, 0, sizeof *serial);
    __cds_wfcq_init(&serial->head, &serial->tail);
    /* Relaxed: not yet shared. */
    atomic_store_explicit(&serial->refs, 1, memory_order_relaxed);
    serial->pool = pool;
    serial->drain.fn = drain;
    serial->drain.context = serial;
    serial->drain.pool = pool;
    return serial;
}

void bolts_serial_submit(bolts_serial_t *serial, bolts_job_t *job) {
    job->next = NULL; /* what cds_wfcq_node_init does */
    BOLTS_TSAN_RELEASE(job);
    /* liburcu's full barrier before its tail exchange publishes the job's fields. */
    if (cds_wfcq_enqueue(&serial->head, &serial->tail, (struct cds_wfcq_node *)job)) return; /* S3 */
    /* Seq_cst fence: the submitter's half of S2. */
    atomic_thread_fence(memory_order_seq_cst);
    schedule(serial);
}

bool bolts_serial_is_current(const bolts_serial_t *serial) { return tl_serial == serial; }

void bolts_serial_release(bolts_serial_t *serial) { serial_unref(serial); }
