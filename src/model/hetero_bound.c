/* hetero_bound.c: lower bounds on the makespan of a reduction under the
 * heterogeneous costs of benoit Sec. 3.1 (d[i][j], c[i]) in the one-port
 * overlap model of canon-antoniu Sec. 3.1, for any tree and any receive
 * orders.  Lemma 5 of canon-antoniu has no heterogeneous version; these two
 * replace it, and trd_bound_hetero returns the larger.
 *
 * Relaxed Alg. 1.  Lowering a cost never lengthens the best schedule: for a
 * fixed tree and receive orders the earliest times are max-plus expressions
 * of the costs (homogeneous.c), non-decreasing in each.  So lower every
 * transfer into the root to the root's cheapest input din, every other
 * transfer to the cheapest one between two other ranks dmin, and every
 * combine off the root to the cheapest such cmin (the root keeps its c_r).
 * The non-root ranks of that instance are interchangeable, so Alg. 1's
 * backward growth is optimal for it: in reversed time a rank attached at s
 * offers its k-th input slot at s + cmin + dmin + (k - 1) max(dmin, cmin),
 * the root at c_r + din + (k - 1) max(din, c_r), and taking the earliest
 * slot every time gives, for every i, an i-th smallest attachment time no
 * later than any schedule's (each schedule draws its slots from ranks
 * attached no earlier, the exchange argument of Theorem 4).  Its makespan,
 * the latest attachment, bounds the original instance from below.
 *
 * Paths.  Rank i's value reaches the root along its path in the tree; on
 * each hop u -> w it is sent (d[u][w]) and then combined at w (c[w]) before
 * w can send anything on, so the root finishes no earlier than the
 * cheapest such path from i, for every i: the longest shortest path to the
 * root with hop weights d[u][w] + c[w] (Dijkstra on the dense matrix).
 *
 * The first is tight for homogeneous costs (it is Alg. 1's optimum); the
 * second when one slow rank dominates (fib-root-slow).  Both O(n^2). */
#include "model/hetero_bound.h"

#include <math.h>
#include <stdlib.h>

static double max2(double a, double b) { return a > b ? a : b; }

/* The cheapest transfer into the root (din), between two other ranks
 * (dmin), and combine off the root (cmin). */
static void cheapest(const trd_cost_view *v, int32_t n, double *din, double *dmin,
                     double *cmin)
{
    *din = *dmin = *cmin = INFINITY;
    for (int32_t i = 1; i < n; i++) {
        *din = fmin(*din, trd_view_transfer(v, i, 0));
        *cmin = fmin(*cmin, trd_view_combine(v, i));
        for (int32_t j = 1; j < n; j++)
            if (i != j)
                *dmin = fmin(*dmin, trd_view_transfer(v, i, j));
    }
}

double trd_bound_hetero_relaxed(const trd_cost_view *v, int32_t n)
{
    if (n < 2)
        return 0.0;
    double din, dmin, cmin, cr = trd_view_combine(v, 0);
    cheapest(v, n, &din, &dmin, &cmin);
    /* at[k]: when the k-th rank was attached; filled[k]: its slots taken */
    double *at = malloc((size_t)n * sizeof *at), last = 0.0;
    int32_t *filled = calloc((size_t)n, sizeof *filled), root_filled = 0;
    if (!at || !filled) {
        free(at);
        free(filled);
        return NAN;
    }
    for (int32_t i = 0; i < n - 1; i++) {
        int32_t best = -1; /* the owner of the earliest free slot; -1: the root */
        double s = cr + din + root_filled * max2(din, cr);
        for (int32_t k = 0; k < i; k++) {
            double slot = at[k] + cmin + dmin + filled[k] * max2(dmin, cmin);
            if (slot < s) {
                s = slot;
                best = k;
            }
        }
        if (best < 0)
            root_filled++;
        else
            filled[best]++;
        at[i] = last = s;
    }
    free(at);
    free(filled);
    return last;
}

double trd_bound_hetero_paths(const trd_cost_view *v, int32_t n)
{
    double *dist = malloc((size_t)n * sizeof *dist);
    char *done = calloc((size_t)n, 1);
    double longest = NAN;
    if (!dist || !done)
        goto out;
    for (int32_t i = 0; i < n; i++)
        dist[i] = i == 0 ? 0.0 : INFINITY;
    longest = 0.0;
    for (int32_t step = 0; step < n; step++) {
        int32_t u = -1;
        for (int32_t i = 0; i < n; i++)
            if (!done[i] && (u < 0 || dist[i] < dist[u]))
                u = i;
        done[u] = 1;
        longest = max2(longest, dist[u]);
        for (int32_t x = 0; x < n; x++) /* x sends to u, which combines */
            if (!done[x])
                dist[x] = fmin(dist[x], dist[u] + trd_view_transfer(v, x, u) +
                                            trd_view_combine(v, u));
    }
out:
    free(dist);
    free(done);
    return longest;
}

double trd_bound_hetero(const trd_cost_view *costs, int32_t n)
{
    return max2(trd_bound_hetero_relaxed(costs, n), trd_bound_hetero_paths(costs, n));
}
