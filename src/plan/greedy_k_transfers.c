/* greedy_k_transfers.c: Algorithm 2 of canon-antoniu (Sec. 6.1): the optimal
 * schedule when at most K transfers may run at once (a shared switch with
 * limited aggregate bandwidth).
 *
 * In reversed time, t_i is the completion of the transfer that brings an
 * element to new machine i; it waits for the transfer K places earlier to
 * complete (line 8, read as docs/MODEL.md does: the first K transfers are
 * unconstrained), so reversed transfers are non-decreasing and never more
 * than K overlap.  The forward start of i's transfer is t_max - t_i (line
 * 14's "+c" shifts every transfer by c, right only when c = d); those starts are given to the
 * evaluator as release times.  Theorem 7: optimal.  O(n) with the two-FIFO
 * queue (s_M and t_i both only grow).  Makespan <= (floor(log2 K) + 1 +
 * ceil((n - 2^(floor(log2 K)+1)) / K)) (d + c), Prop. 8 corrected. */
#include <stdlib.h>

#include "core/error.h"
#include "plan/greedy_queue.h"
#include "plan/algorithms.h"

static double max2(double a, double b) { return a > b ? a : b; }

/* Fills t[i] (reversed completion of the transfer to i) and parent[]. */
static void reversed_schedule(int32_t n, double d, double c, int64_t k,
                              double *s, double *t, int32_t *ring, int32_t *parent)
{
    trd_greedy_queue q = {.s = s, .reinserted = ring, .cap = n};
    s[0] = 0.0;
    t[0] = 0.0;
    parent[0] = -1;
    trd_gq_push_fresh(&q, 0);
    for (int32_t i = 1; i < n; i++) {
        int32_t m = trd_gq_pop_min(&q);                 /* line 7 */
        double earlier = i - k >= 1 ? t[i - k] : 0.0;   /* line 8, as read above */
        t[i] = max2(s[m] + c, earlier) + d;
        s[i] = t[i];                                    /* line 9 */
        s[m] = max2(s[m] + c, t[i] - c);                /* line 10 */
        parent[i] = m;                                  /* line 11 */
        trd_gq_push_reinserted(&q, m);
        trd_gq_push_fresh(&q, i);
    }
}

trd_status trd_build_greedy_k_transfers(const trd_params *params, trd_tree *tree)
{
    int32_t n = tree->n;
    trd_status st = trd_tree_add_release(tree);
    if (st != TRD_OK)
        return st;
    double *s = malloc((size_t)n * sizeof *s);
    int32_t *ring = malloc((size_t)n * sizeof *ring);
    if (!s || !ring) {
        st = trd_fail(TRD_ENOMEM, "greedy-k-transfers: cannot allocate %lld bytes",
                      (long long)n * 12);
        goto done;
    }
    double *t = tree->release; /* reversed times, turned into forward starts */
    reversed_schedule(n, params->d, params->c, params->K, s, t, ring, tree->parent);
    double tmax = 0.0;
    for (int32_t i = 1; i < n; i++)
        tmax = max2(tmax, t[i]);
    for (int32_t i = 1; i < n; i++)
        t[i] = tmax - t[i]; /* lines 13-15: the forward start (no "+c") */
done:
    free(s);
    free(ring);
    return st;
}
