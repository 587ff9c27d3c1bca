/* greedy_heap.c: reference versions of canon-antoniu Algorithms 1, 2 and 3
 * exactly as printed, with the argmin of their line 6/7 taken from a binary
 * min-heap (O(n log n)), so the tests can check the library's O(n) two-FIFO
 * queue (src/plan/greedy_queue.h) against the textbook data structure.
 *
 * Machines are 0-based positions here: position p is the paper's machine
 * p + 1, position 0 the root (the sink, machine 1).  The heap is ordered by
 * (s value, then smaller position): the library's documented tie rule.
 * The readings of docs/MODEL.md ("Reading of the paper and choices made")
 * applied to Algorithm 2:
 *   - line 8: t_{i-K} counts as 0 when i - K < 2 (1-based), i.e. when i - K
 *     is not a machine that received a transfer: the first K transfers are
 *     unconstrained;
 *   - line 14: the forward start of i's transfer is t_max - t_i (no "+c"),
 *     and the makespan is t_max.
 * Nothing here calls libtreduce. */
#include <stdlib.h>

#include "oracle.h"

typedef struct heap {
    int32_t *item;
    int32_t len;
    const double *s; /* keys, read at comparison time */
} heap;

/* (s, position) order: the tie rule of the library. */
static int before(const heap *h, int32_t x, int32_t y)
{
    return h->s[x] < h->s[y] || (h->s[x] == h->s[y] && x < y);
}

static void heap_push(heap *h, int32_t pos)
{
    int32_t k = h->len++;
    while (k > 0) {
        int32_t up = (k - 1) / 2;
        if (!before(h, pos, h->item[up]))
            break;
        h->item[k] = h->item[up];
        k = up;
    }
    h->item[k] = pos;
}

static int32_t heap_pop(heap *h)
{
    int32_t top = h->item[0], last = h->item[--h->len], k = 0;
    for (;;) {
        int32_t l = 2 * k + 1, best = l;
        if (l >= h->len)
            break;
        if (l + 1 < h->len && before(h, h->item[l + 1], h->item[l]))
            best = l + 1;
        if (!before(h, h->item[best], last))
            break;
        h->item[k] = h->item[best];
        k = best;
    }
    if (h->len > 0)
        h->item[k] = last;
    return top;
}

static double max2(double a, double b) { return a > b ? a : b; }

int trd_oracle_greedy_heap(int32_t n, double d, double c, int64_t reducers,
                           int32_t *parent)
{
    if (n < 1 || reducers < 1)
        return -1;
    double *s = malloc((size_t)n * sizeof *s);
    heap h = {.item = malloc((size_t)n * sizeof(int32_t)), .len = 0, .s = s};
    int rc = 0;
    if (!s || !h.item) {
        rc = -1;
        goto done;
    }
    s[0] = 0.0; /* Alg. 1 line 4 / Alg. 3 line 5 */
    parent[0] = -1;
    heap_push(&h, 0);
    for (int32_t i = 1; i < n; i++) {
        /* Alg. 1 line 6 / Alg. 3 line 7: the heap holds machines
         * 1..min(i-1, K) (positions 0..min(i, K)-1). */
        int32_t m = heap_pop(&h);
        s[i] = s[m] + c + d;      /* line 7 / 8 */
        s[m] = s[m] + max2(d, c); /* line 8 / 9 */
        parent[i] = m;            /* line 9 / 10 */
        heap_push(&h, m);
        if (i < reducers) /* machine i + 1 is among the first K */
            heap_push(&h, i);
    }
done:
    free(s);
    free(h.item);
    return rc;
}

double trd_oracle_greedy_k_transfers_heap(int32_t n, double d, double c, int64_t K,
                                          int32_t *parent, double *start)
{
    if (n < 1 || K < 1)
        return -1.0;
    double *s = malloc((size_t)n * sizeof *s);
    double *t = malloc((size_t)n * sizeof *t);
    heap h = {.item = malloc((size_t)n * sizeof(int32_t)), .len = 0, .s = s};
    double tmax = -1.0;
    if (!s || !t || !h.item)
        goto done;
    s[0] = 0.0; /* line 5 */
    t[0] = 0.0; /* unused: machine 1 receives no transfer */
    parent[0] = -1;
    heap_push(&h, 0);
    for (int32_t i = 1; i < n; i++) {
        int32_t m = heap_pop(&h); /* line 7 */
        /* line 8 as read: 1-based index (i+1) - K < 2 is no transfer */
        double earlier = (int64_t)i - K >= 1 ? t[i - K] : 0.0;
        t[i] = max2(s[m] + c, earlier) + d;
        s[i] = t[i];                       /* line 9 */
        s[m] = max2(s[m] + c, t[i] - c);   /* line 10 */
        parent[i] = m;                     /* line 11 */
        heap_push(&h, m);
        heap_push(&h, i);
    }
    tmax = 0.0;
    for (int32_t i = 1; i < n; i++)
        tmax = max2(tmax, t[i]);
    start[0] = 0.0;
    for (int32_t i = 1; i < n; i++)
        start[i] = tmax - t[i]; /* lines 13-15 as read: no "+c" */
done:
    free(s);
    free(t);
    free(h.item);
    return tmax;
}
