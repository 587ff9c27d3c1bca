/* event_queue.h: the simulator's min-heap of timed events.  Ties in time
 * are broken by an increasing sequence number (as libuv's timer heap), so a
 * simulation is deterministic. */
#ifndef TRD_SIM_EVENT_QUEUE_H
#define TRD_SIM_EVENT_QUEUE_H

#include <stdint.h>

typedef struct trd_event {
    double time;
    uint64_t seq;
    int32_t kind; /* the transport's event kinds */
    int32_t a, b, c, d;
} trd_event;

typedef struct trd_event_queue {
    trd_event *heap;
    int64_t size, cap;
    uint64_t next_seq;
} trd_event_queue;

static inline int trd_event_before(const trd_event *x, const trd_event *y)
{
    return x->time < y->time || (x->time == y->time && x->seq < y->seq);
}

/* Pushes ev (cap must suffice: the caller sizes the heap). */
static inline void trd_eq_push(trd_event_queue *q, trd_event ev)
{
    ev.seq = q->next_seq++;
    int64_t i = q->size++;
    while (i > 0) {
        int64_t p = (i - 1) / 2;
        if (!trd_event_before(&ev, &q->heap[p]))
            break;
        q->heap[i] = q->heap[p];
        i = p;
    }
    q->heap[i] = ev;
}

static inline trd_event trd_eq_pop(trd_event_queue *q)
{
    trd_event top = q->heap[0], last = q->heap[--q->size];
    int64_t i = 0;
    for (;;) {
        int64_t l = 2 * i + 1, m = l;
        if (l >= q->size)
            break;
        if (l + 1 < q->size && trd_event_before(&q->heap[l + 1], &q->heap[l]))
            m = l + 1;
        if (!trd_event_before(&q->heap[m], &last))
            break;
        q->heap[i] = q->heap[m];
        i = m;
    }
    if (q->size > 0)
        q->heap[i] = last;
    return top;
}

#endif
