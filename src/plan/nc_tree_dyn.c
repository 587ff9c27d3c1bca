/* nc_tree_dyn.c: Non-Commut-Tree-dyn of benoit-canon-marchal Sec. 3.2, the
 * dynamic policy for non-commutative operators.
 *
 * Every rank holds the reduction of a contiguous rank interval [lo, hi]
 * (initially [r, r]).  A rank that becomes idle looks for an idle rank
 * holding a neighbour interval, ending at lo - 1 (checked first) or
 * starting at hi + 1; if there is one, it sends its value to it and that
 * rank combines the two on the correct side; otherwise it waits in the table
 * of idle ranks.  Figure 3 shows why this may need one step more than
 * ceil(log2 n).  O(1) per decision: idle ranks are indexed by the two ends
 * of their intervals. */
#include <stdlib.h>

#include "core/error.h"
#include "plan/algorithms.h"

typedef struct nc_tree_dyn {
    int32_t n, active;
    int32_t *lo, *hi;      /* interval held by each rank */
    int32_t *idle_by_lo;   /* idle rank whose interval starts at i, or -1 */
    int32_t *idle_by_hi;   /* idle rank whose interval ends at i, or -1 */
} nc_tree_dyn;

static void set_idle(nc_tree_dyn *t, int32_t rank, int32_t value)
{
    t->idle_by_lo[t->lo[rank]] = value;
    t->idle_by_hi[t->hi[rank]] = value;
}

static trd_action idle(void *state, int32_t rank, int32_t *peer)
{
    nc_tree_dyn *t = state;
    if (t->active == 1)
        return TRD_ACT_DONE;
    int32_t q = t->lo[rank] > 0 ? t->idle_by_hi[t->lo[rank] - 1] : -1;
    if (q < 0 && t->hi[rank] + 1 < t->n)
        q = t->idle_by_lo[t->hi[rank] + 1];
    if (q < 0) {
        set_idle(t, rank, rank);
        return TRD_ACT_WAIT;
    }
    set_idle(t, q, -1);
    if (t->lo[rank] < t->lo[q])
        t->lo[q] = t->lo[rank];
    else
        t->hi[q] = t->hi[rank];
    t->active--;
    *peer = q;
    return TRD_ACT_SEND;
}

static void reset(void *state)
{
    nc_tree_dyn *t = state;
    t->active = t->n;
    for (int32_t r = 0; r < t->n; r++) {
        t->lo[r] = t->hi[r] = r;
        t->idle_by_lo[r] = t->idle_by_hi[r] = -1;
    }
}

static void destroy(void *state)
{
    nc_tree_dyn *t = state;
    if (!t)
        return;
    free(t->lo);
    free(t->hi);
    free(t->idle_by_lo);
    free(t->idle_by_hi);
    free(t);
}

trd_status trd_policy_nc_tree_dyn(int32_t n, trd_policy *out)
{
    nc_tree_dyn *t = calloc(1, sizeof *t);
    if (t) {
        t->n = n;
        t->lo = malloc((size_t)n * sizeof *t->lo);
        t->hi = malloc((size_t)n * sizeof *t->hi);
        t->idle_by_lo = malloc((size_t)n * sizeof *t->idle_by_lo);
        t->idle_by_hi = malloc((size_t)n * sizeof *t->idle_by_hi);
    }
    if (!t || !t->lo || !t->hi || !t->idle_by_lo || !t->idle_by_hi) {
        destroy(t);
        return trd_fail(TRD_ENOMEM, "nc-tree-dyn: out of memory for n = %ld", (long)n);
    }
    reset(t);
    *out = (trd_policy){.state = t, .idle = idle, .reset = reset, .destroy = destroy};
    return TRD_OK;
}
