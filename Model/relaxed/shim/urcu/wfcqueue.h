/*
 * liburcu's wait-free concurrent queue (urcu/wfcqueue.h), as its documentation specifies
 * it, for the Relacy harness; the library is not compiled in. The queue is a singly linked
 * list with a dummy node inside the head and a tail pointer:
 * - enqueue: the node's link is cleared; the tail is exchanged for the node (liburcu's
 *   uatomic_xchg: a full barrier before and after); then the old tail's link is set to the
 *   node (a shared store). It reports whether the queue was non-empty before. Any number
 *   of enqueuers at once.
 * - empty: the head's link is NULL and the tail is the head's node (two shared loads, no
 *   ordering: a hint).
 * - dequeue (nonblocking; one consumer at a time, the caller's exclusion): NULL when empty;
 *   CDS_WFCQ_WOULDBLOCK when an enqueuer has exchanged the tail but not yet linked its node
 *   (the first node's link, or the link after the last node, is still NULL); otherwise the
 *   first node, whose successor becomes the head's link. When the node taken is the last,
 *   the tail is moved back to the head with a compare-and-swap (full barrier); if an
 *   enqueuer got there first, its link is awaited (WOULDBLOCK, the node given back).
 * Link loads are dependent loads (liburcu's read_barrier_depends; Relacy: consume).
 * `struct cds_wfcq_node` is one pointer, as the pool's static asserts require.
 */
#ifndef BOLTS_SHIM_URCU_WFCQUEUE_H
#define BOLTS_SHIM_URCU_WFCQUEUE_H

struct cds_wfcq_node {
    _Atomic(struct cds_wfcq_node *) next;
};
struct __cds_wfcq_head {
    struct cds_wfcq_node node;
};
struct cds_wfcq_tail {
    _Atomic(struct cds_wfcq_node *) p;
};

#define CDS_WFCQ_WOULDBLOCK ((struct cds_wfcq_node *)-1UL)

static inline void cds_wfcq_node_init(struct cds_wfcq_node *node) { atomic_init(&node->next, (struct cds_wfcq_node *)NULL); }

static inline void __cds_wfcq_init(struct __cds_wfcq_head *head, struct cds_wfcq_tail *tail) {
    cds_wfcq_node_init(&head->node);
    atomic_init(&tail->p, &head->node);
}

static inline bool cds_wfcq_empty(struct __cds_wfcq_head *head, struct cds_wfcq_tail *tail) {
    return atomic_load_explicit(&head->node.next, memory_order_relaxed) == NULL &&
           atomic_load_explicit(&tail->p, memory_order_relaxed) == &head->node;
}

static inline bool cds_wfcq_enqueue(struct __cds_wfcq_head *head, struct cds_wfcq_tail *tail,
                                    struct cds_wfcq_node *node) {
    cds_wfcq_node_init(node);
    atomic_thread_fence(memory_order_seq_cst);
    struct cds_wfcq_node *before = atomic_exchange_explicit(&tail->p, node, memory_order_seq_cst);
    atomic_thread_fence(memory_order_seq_cst);
    atomic_store_explicit(&before->next, node, memory_order_relaxed);
    return before != &head->node;
}

static inline struct cds_wfcq_node *__cds_wfcq_dequeue_nonblocking(struct __cds_wfcq_head *head,
                                                                   struct cds_wfcq_tail *tail) {
    if (cds_wfcq_empty(head, tail)) return NULL;
    struct cds_wfcq_node *first = atomic_load_explicit(&head->node.next, memory_order_consume);
    if (first == NULL) return CDS_WFCQ_WOULDBLOCK; /* the first enqueuer has not linked yet */
    struct cds_wfcq_node *second = atomic_load_explicit(&first->next, memory_order_consume);
    if (second == NULL) {
        /* `first` looks like the last node: empty the head, then move the tail back. */
        atomic_store_explicit(&head->node.next, (struct cds_wfcq_node *)NULL, memory_order_relaxed);
        struct cds_wfcq_node *expected = first;
        atomic_thread_fence(memory_order_seq_cst);
        bool moved = atomic_compare_exchange_strong_explicit(&tail->p, &expected, &head->node,
                                                             memory_order_seq_cst, memory_order_seq_cst);
        atomic_thread_fence(memory_order_seq_cst);
        if (moved) return first;
        /* An enqueuer appended after `first` and has not linked it yet, or just did. */
        second = atomic_load_explicit(&first->next, memory_order_consume);
        if (second == NULL) {
            atomic_store_explicit(&head->node.next, first, memory_order_relaxed);
            return CDS_WFCQ_WOULDBLOCK;
        }
    }
    atomic_store_explicit(&head->node.next, second, memory_order_relaxed);
    return first;
}

#endif
