/* greedy_queue.h: the priority queue of Algorithms 1-3 in O(1) per operation.
 *
 * Algorithms 1-3 of canon-antoniu only ever insert values that are >= the
 * last minimum extracted, and they insert them through two streams that are
 * each non-decreasing: re-inserted parents M (s_M after Alg. 1 line 8) and
 * new machines i (s_i of line 7).  Two FIFO queues, one per stream, are then
 * each sorted, and the minimum is the smaller of their heads: a heap is not
 * needed (tests/oracle keeps one to check this).
 *
 * Tie rule (ties do not change the makespan but change the tree, and so
 * the strategies' lengths: docs/MODEL.md): among equal s values the
 * machine with the smallest position wins.  In Algorithms 1 and 3 both FIFOs
 * are sorted by (s, position), so comparing heads with that rule equals a
 * heap ordered by (s, position): the trees are identical (tests check it).
 * In Algorithm 2, line 10 may re-insert equal values in decreasing position
 * order, so ties inside that FIFO go to the machine re-inserted first; the
 * tree can then differ from the heap's but the makespan cannot (Theorem 7;
 * tests/test_k_transfers.c checks it against the heap version). */
#ifndef TRD_PLAN_GREEDY_QUEUE_H
#define TRD_PLAN_GREEDY_QUEUE_H

#include <stdint.h>

typedef struct trd_greedy_queue {
    const double *s;  /* the values, read at extraction time */
    int32_t *reinserted; /* ring buffer of re-inserted positions */
    int32_t cap, head, count;
    int32_t fresh_head, fresh_tail; /* new positions form a range */
} trd_greedy_queue;

static inline void trd_gq_push_reinserted(trd_greedy_queue *q, int32_t pos)
{
    int32_t slot = q->head + q->count;
    if (slot >= q->cap)
        slot -= q->cap;
    q->reinserted[slot] = pos;
    q->count++;
}

/* New positions arrive in increasing order, so the fresh stream is a range. */
static inline void trd_gq_push_fresh(trd_greedy_queue *q, int32_t pos)
{
    q->fresh_tail = pos + 1;
}

static inline int32_t trd_gq_pop_min(trd_greedy_queue *q)
{
    int use_fresh;
    if (q->count == 0)
        use_fresh = 1;
    else if (q->fresh_head == q->fresh_tail)
        use_fresh = 0;
    else {
        int32_t a = q->reinserted[q->head], b = q->fresh_head;
        use_fresh = q->s[b] < q->s[a] || (q->s[b] == q->s[a] && b < a);
    }
    if (use_fresh)
        return q->fresh_head++;
    int32_t pos = q->reinserted[q->head];
    q->head = q->head + 1 == q->cap ? 0 : q->head + 1;
    q->count--;
    return pos;
}

#endif
