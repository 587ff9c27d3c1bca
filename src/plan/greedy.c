/* greedy.c: Algorithm 1 of canon-antoniu (Sec. 5), the optimal reduction
 * tree for homogeneous transfer time d and combine time c.
 *
 * Time runs backwards from the root: s_M is the earliest (reversed) time at
 * which machine M can compute and then hand an element to a new machine.
 * Each new machine i is attached to the machine M of smallest s_M
 * (line 6), gets s_i = s_M + c + d (line 7), and M becomes free again after
 * max(d, c) (line 8).  Theorem 4: the tree is optimal; Prop. 3 then sets the
 * transfer times (src/model/homogeneous.c).
 *
 * The same loop with candidates restricted to the first K machines is
 * Algorithm 3 (greedy_k_reducers.c), so both share trd_greedy_tree.
 * Cost: O(n) time with the two-FIFO queue of greedy_queue.h, 16 bytes per
 * rank.  Makespan: optimal, between Lemma 5 and Prop. 6. */
#include <stdlib.h>

#include "core/error.h"
#include "plan/greedy_queue.h"
#include "plan/algorithms.h"

static double max2(double a, double b) { return a > b ? a : b; }

trd_status trd_greedy_tree(int32_t n, double d, double c, int64_t reducers,
                           int32_t *parent)
{
    trd_status st = TRD_OK;
    double *s = malloc((size_t)n * sizeof *s);
    int32_t *ring = malloc((size_t)n * sizeof *ring);
    if (!s || !ring) {
        st = trd_fail(TRD_ENOMEM, "greedy: cannot allocate %lld bytes for n = %ld",
                      (long long)n * 12, (long)n);
        goto done;
    }
    trd_greedy_queue q = {.s = s, .reinserted = ring, .cap = n};
    s[0] = 0.0; /* Alg. 1 line 4 */
    parent[0] = -1;
    trd_gq_push_fresh(&q, 0);
    for (int32_t i = 1; i < n; i++) {
        int32_t m = trd_gq_pop_min(&q); /* line 6 (Alg. 3 line 7) */
        s[i] = s[m] + c + d;            /* line 7 */
        s[m] += max2(d, c);             /* line 8 */
        parent[i] = m;                  /* line 9 */
        trd_gq_push_reinserted(&q, m);
        if (i < reducers) /* Alg. 3: only the first K machines may receive */
            trd_gq_push_fresh(&q, i);
    }
done:
    free(s);
    free(ring);
    return st;
}

trd_status trd_build_greedy(const trd_params *params, trd_tree *tree)
{
    return trd_greedy_tree(tree->n, params->d, params->c, params->n, tree->parent);
}
