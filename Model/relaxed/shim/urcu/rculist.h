/*
 * liburcu's RCU list (urcu/rculist.h, urcu/list.h), as documented, for the Relacy harness:
 * a circular doubly linked list whose `next` links readers follow inside read-side
 * sections. Updates run under the caller's lock; `prev` links are read only there, so they
 * are plain. Publication (`cds_list_add_tail_rcu`, whose rcu_assign_pointer is a release
 * store of the link to the new node) and removal (`cds_list_del_rcu`, a plain shared store
 * of the predecessor's link; the removed node keeps its own `next`, so a reader on it can
 * go on) use the orders liburcu documents. `rcu_dereference` is a consume load (Relacy:
 * as acquire).
 */
#ifndef BOLTS_SHIM_URCU_RCULIST_H
#define BOLTS_SHIM_URCU_RCULIST_H

struct cds_list_head {
    _Atomic(struct cds_list_head *) next;
    struct cds_list_head *prev;
};

#define caa_container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))
#define rcu_dereference(p) atomic_load_explicit(&(p), memory_order_consume)

static inline struct cds_list_head *shim_list_next(struct cds_list_head *pos) {
    /* Under the updater's lock: the lock orders it. */
    return atomic_load_explicit(&pos->next, memory_order_relaxed);
}

#define CDS_INIT_LIST_HEAD(head)                  \
    do {                                          \
        atomic_init(&(head)->next, (head));       \
        (head)->prev = (head);                    \
    } while (0)

#define cds_list_for_each_safe(pos, n, head) \
    for (pos = shim_list_next(head), n = shim_list_next(pos); pos != (head); pos = n, n = shim_list_next(pos))

static inline void cds_list_add_tail_rcu(struct cds_list_head *newp, struct cds_list_head *head) {
    atomic_init(&newp->next, head);
    newp->prev = head->prev;
    atomic_store_explicit(&head->prev->next, newp, memory_order_release);
    head->prev = newp;
}

static inline void cds_list_del_rcu(struct cds_list_head *elem) {
    struct cds_list_head *next = shim_list_next(elem);
    next->prev = elem->prev;
    atomic_store_explicit(&elem->prev->next, next, memory_order_relaxed);
}

#endif
