/* event_queue.h: the simulator's queue of timed events.  Events come out
 * in (time, seq) order, seq increasing with every push, so ties in time are
 * broken by push order (as libuv's timer heap) and a simulation is
 * deterministic.
 *
 * Most events are pushed in time order already: every transfer or combine
 * of a deterministic model ends a fixed delay after `now`, which never
 * decreases, and a zero-delay combine ends at `now` itself.  So the queue
 * has TRD_EQ_LANES sorted FIFOs ("lanes", one per kind of event) beside a
 * min-heap: an event no earlier than the last one of its lane is appended
 * to the lane in O(1), any other goes to the heap, and the next event is
 * the least of the heads.  The order is exactly that of one heap.  Events
 * are 16 bytes: the transport keeps their payload in its own tables.
 *
 * The heap is 4-ary: random delays send most events of a Monte-Carlo run
 * there, and a pop then reads half the levels of a binary heap, four
 * children in one tournament without branches.  Sentinels (time +inf)
 * stand in the TRD_EQ_ARITY - 1 slots past its last event, so a node's
 * four children are always there to compare. */
#ifndef TRD_SIM_EVENT_QUEUE_H
#define TRD_SIM_EVENT_QUEUE_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TRD_EQ_LANES 2
#define TRD_EQ_HEAP TRD_EQ_LANES /* trd_eq_push: straight into the heap */
#define TRD_EQ_ARITY 4

typedef struct trd_event {
    double time;
    uint32_t seq; /* the caller keeps the pushes of a run below 2^32 */
    uint32_t op;  /* the transport's event: kind and id */
} trd_event;

/* After every event: fills the heap's slots past its end. */
static const trd_event trd_eq_sentinel = {.time = INFINITY, .seq = UINT32_MAX};

/* A lane: a ring [begin, end) of events in (time, seq) order, taken at
 * head, appended at tail (head == tail: empty, so one slot stays free). */
typedef struct trd_event_lane {
    trd_event *head, *tail, *begin, *end;
    double last; /* time of the last event appended */
} trd_event_lane;

typedef struct trd_event_queue {
    trd_event *heap;
    uint32_t size;
    uint32_t next_seq;
    uint32_t cap; /* events of the heap (plus its sentinels) and of each lane */
    trd_event_lane lane[TRD_EQ_LANES];
} trd_event_queue;

/* Drops every event; a new run numbers its pushes from 0. */
static inline void trd_eq_clear(trd_event_queue *q)
{
    q->size = q->next_seq = 0;
    for (int i = 0; i < TRD_EQ_ARITY - 1; i++)
        q->heap[i] = trd_eq_sentinel;
    for (int l = 0; l < TRD_EQ_LANES; l++)
        q->lane[l].head = q->lane[l].tail = q->lane[l].begin;
}

/* Room for `events` pending events at once, keeping those pending (a new
 * queue must be zeroed).  False when out of memory (queue unchanged). */
static inline bool trd_eq_reserve(trd_event_queue *q, uint32_t events)
{
    uint32_t cap = events + 1;
    if (q->heap && cap <= q->cap)
        return true;
    trd_event *heap = malloc((cap + TRD_EQ_ARITY - 1) * sizeof *heap), *ring[TRD_EQ_LANES];
    bool ok = heap != NULL;
    for (int l = 0; l < TRD_EQ_LANES; l++)
        ok &= (ring[l] = malloc(cap * sizeof *ring[l])) != NULL;
    if (!ok) {
        free(heap);
        for (int l = 0; l < TRD_EQ_LANES; l++)
            free(ring[l]);
        return false;
    }
    for (uint32_t i = 0; i < q->size; i++)
        heap[i] = q->heap[i];
    for (uint32_t i = q->size; i < q->size + TRD_EQ_ARITY - 1; i++)
        heap[i] = trd_eq_sentinel;
    free(q->heap);
    q->heap = heap;
    q->cap = cap;
    for (int l = 0; l < TRD_EQ_LANES; l++) { /* the rings restart at begin */
        trd_event_lane *L = &q->lane[l];
        uint32_t n = 0;
        for (trd_event *e = L->head; e != L->tail; e = e + 1 == L->end ? L->begin : e + 1)
            ring[l][n++] = *e;
        free(L->begin);
        *L = (trd_event_lane){.head = ring[l], .tail = ring[l] + n, .begin = ring[l],
                              .end = ring[l] + cap, .last = L->last};
    }
    return true;
}

static inline void trd_eq_free(trd_event_queue *q)
{
    free(q->heap);
    for (int l = 0; l < TRD_EQ_LANES; l++)
        free(q->lane[l].begin);
    *q = (trd_event_queue){0};
}

static inline bool trd_event_before(const trd_event *x, const trd_event *y)
{
    return x->time < y->time || (x->time == y->time && x->seq < y->seq);
}

/* The same without branches, for the heap: its events come from random
 * delays, where a branch would be mispredicted half the time.  Times are
 * never negative (costs and release times are checked >= 0 where they
 * enter), so their bits compare as integers: a floating-point compare
 * would add a branch for NaN. */
static inline uint64_t trd_event_time_bits(const trd_event *x)
{
    uint64_t b;
    memcpy(&b, &x->time, sizeof b);
    return b;
}

static inline bool trd_event_before_nb(const trd_event *x, const trd_event *y)
{
    uint64_t a = trd_event_time_bits(x), b = trd_event_time_bits(y);
    return (a < b) | ((a == b) & (x->seq < y->seq));
}

/* The heap's share of push and pop: out of line (deterministic models
 * never reach them), so the hot callers stay small. */
#if defined(__GNUC__)
#define TRD_EQ_OUTLINE static __attribute__((noinline, unused))
#else
#define TRD_EQ_OUTLINE static inline
#endif

TRD_EQ_OUTLINE void trd_eq_heap_push(trd_event_queue *q, trd_event ev)
{
    uint32_t i = q->size++;
    q->heap[q->size + TRD_EQ_ARITY - 2] = trd_eq_sentinel;
    while (i > 0) {
        uint32_t p = (i - 1) / TRD_EQ_ARITY;
        if (!trd_event_before_nb(&ev, &q->heap[p]))
            break;
        q->heap[i] = q->heap[p];
        i = p;
    }
    q->heap[i] = ev;
}

/* The least of the four children from c: a tournament without branches;
 * a missing child is a sentinel. */
static inline uint32_t trd_eq_least_child(const trd_event *h, uint32_t c)
{
    uint32_t a = c + trd_event_before_nb(&h[c + 1], &h[c]);
    uint32_t b = c + 2 + trd_event_before_nb(&h[c + 3], &h[c + 2]);
    return trd_event_before_nb(&h[b], &h[a]) ? b : a;
}

TRD_EQ_OUTLINE void trd_eq_heap_pop(trd_event_queue *q)
{
    uint32_t n = --q->size, i = 0;
    trd_event last = q->heap[n];
    q->heap[n] = trd_eq_sentinel;
    for (uint32_t c = 1; c < n; c = TRD_EQ_ARITY * i + 1) {
        uint32_t m = trd_eq_least_child(q->heap, c);
        if (!trd_event_before_nb(&q->heap[m], &last))
            break;
        q->heap[i] = q->heap[m];
        i = m;
    }
    if (n > 0)
        q->heap[i] = last;
}

/* Pushes an event of `lane` (< TRD_EQ_LANES), or straight into the heap
 * (TRD_EQ_HEAP: events seldom pushed in order); room must suffice. */
static inline void trd_eq_push(trd_event_queue *q, int lane, double time, uint32_t op)
{
    trd_event ev = {.time = time, .seq = q->next_seq++, .op = op};
    if (lane < TRD_EQ_LANES) {
        trd_event_lane *L = &q->lane[lane];
        if (L->head == L->tail || L->last <= time) {
            *L->tail = ev;
            L->tail = L->tail + 1 == L->end ? L->begin : L->tail + 1;
            L->last = time;
            return;
        }
    }
    trd_eq_heap_push(q, ev);
}

/* The next event, or NULL when there is none; *lane gets the lane it
 * heads, NULL for the heap. */
static inline const trd_event *trd_eq_peek(trd_event_queue *q, trd_event_lane **lane)
{
    const trd_event *best = NULL;
    *lane = NULL;
    for (int l = 0; l < TRD_EQ_LANES; l++) {
        trd_event_lane *L = &q->lane[l];
        if (L->head != L->tail && (!best || trd_event_before(L->head, best))) {
            best = L->head;
            *lane = L;
        }
    }
    if (q->size && (!best || trd_event_before(&q->heap[0], best))) {
        best = &q->heap[0];
        *lane = NULL;
    }
    return best;
}

/* Removes the event trd_eq_peek returned from `lane`. */
static inline void trd_eq_take(trd_event_queue *q, trd_event_lane *lane)
{
    if (lane)
        lane->head = lane->head + 1 == lane->end ? lane->begin : lane->head + 1;
    else
        trd_eq_heap_pop(q);
}

#endif
