/* hetero_exact.c: hetero-exact, the optimal reduction tree and receive
 * orders for heterogeneous costs d[i][j], c[i] (benoit Sec. 3.1) in the
 * one-port overlap model of canon-antoniu Sec. 3.1, by branch and bound,
 * for n <= 9 ranks.  It measures hetero-greedy's gap
 * (docs/HETEROGENEOUS.md) and can be run like any plan.
 *
 * Search space.  Lemma 1 of canon-antoniu: every schedule is built by
 * attaching machines one at a time to machines already in the tree.  In
 * reversed time (hetero_greedy.c) a tree with its receive orders is built
 * by attaching each node's inputs latest first, each getting
 * sigma_x = max(C_v + c_v, P_v) + d[x][v], and its makespan is the largest
 * sigma - the earliest schedule of that tree and those orders, which the
 * evaluator reproduces.  To enumerate each (tree, orders) once, nodes are
 * opened in the order they were attached (breadth first); the open node
 * either takes one more input among the unattached ranks (received before
 * its others) or is closed for good.
 *
 * Bounds.  sigma never decreases along a branch, so the largest so far
 * bounds it.  Each unattached x will hang below an open node u (sigma_x
 * >= base_u + d[x][u], base_u = max(C_u + c_u, P_u)) or below another
 * unattached y, itself below an open node (sigma_y >= min base + its
 * cheapest send, then sigma_x >= sigma_y + c_y + d[x][y]); the least of
 * these, for the worst x, bounds the branch too.  The incumbent is
 * hetero-greedy's tree; when it meets the lower bound of hetero_bound.c
 * the search is skipped.  Inputs are tried cheapest transfer first, so a
 * branch stops at the first input whose sigma alone reaches the incumbent.
 *
 * Cost: exponential (at most (2n-2)!/(n-1)! structures, 5.2e8 at n = 9;
 * near-homogeneous costs, where many trees tie, visit ~2e5 nodes at
 * n = 9, each bounded in O(n^2)). */
#include <math.h>

#include "core/error.h"
#include "model/hetero_bound.h"
#include "plan/hetero.h"
#include "plan/plan_internal.h"

#define EXACT_MAX 9

typedef struct bb {
    int32_t n;
    double d[EXACT_MAX][EXACT_MAX], c[EXACT_MAX], dout[EXACT_MAX]; /* dout: cheapest send */
    int32_t by_cost[EXACT_MAX][EXACT_MAX]; /* inputs of v, cheapest transfer first */
    int32_t open[EXACT_MAX], count;        /* attached nodes, in attach order */
    double sigma[EXACT_MAX], comb[EXACT_MAX], port[EXACT_MAX];
    int32_t parent[EXACT_MAX], nkids[EXACT_MAX], rank_in[EXACT_MAX];
    char attached[EXACT_MAX];
    double best; /* the incumbent's makespan, less a rounding tolerance */
    trd_hetero_tree *out;
} bb;

static double max2(double a, double b) { return a > b ? a : b; }

static double base(const bb *B, int32_t u) { return max2(B->comb[u] + B->c[u], B->port[u]); }

/* A lower bound on the largest sigma once every node is attached, with
 * nodes open[cur..count) still able to take inputs. */
static double bound(const bb *B, int32_t cur, double longest)
{
    double lowest = INFINITY; /* the least base of an open node */
    for (int32_t k = cur; k < B->count; k++)
        lowest = fmin(lowest, base(B, B->open[k]));
    for (int32_t x = 0; x < B->n; x++) {
        if (B->attached[x])
            continue;
        double lx = INFINITY;
        for (int32_t k = cur; k < B->count; k++)
            lx = fmin(lx, base(B, B->open[k]) + B->d[x][B->open[k]]);
        for (int32_t y = 0; y < B->n; y++)
            if (!B->attached[y] && y != x)
                lx = fmin(lx, lowest + B->dout[y] + B->c[y] + B->d[x][y]);
        longest = max2(longest, lx);
    }
    return longest;
}

static void record(bb *B, double longest)
{
    B->best = longest * (1.0 - 1e-12);
    B->out->makespan = longest;
    for (int32_t x = 0; x < B->n; x++) {
        B->out->parent[x] = B->parent[x];
        B->out->seq[x] = x == 0 ? 0 : B->nkids[B->parent[x]] - 1 - B->rank_in[x];
    }
}

static void search(bb *B, int32_t cur, double longest)
{
    if (B->count == B->n) {
        if (longest < B->best)
            record(B, longest);
        return;
    }
    if (cur == B->count || bound(B, cur, longest) >= B->best)
        return;
    int32_t v = B->open[cur];
    double b = base(B, v);
    for (int32_t k = 0; k < B->n; k++) {
        int32_t x = B->by_cost[v][k];
        if (x < 0)
            break;
        if (B->attached[x])
            continue;
        double s = b + B->d[x][v];
        if (s >= B->best)
            break; /* the next inputs cost more */
        double comb = B->comb[v], port = B->port[v];
        B->comb[v] += B->c[v];
        B->port[v] = s;
        B->sigma[x] = B->comb[x] = B->port[x] = s;
        B->parent[x] = v;
        B->rank_in[x] = B->nkids[v]++;
        B->attached[x] = 1;
        B->open[B->count++] = x;
        search(B, cur, max2(longest, s));
        B->count--;
        B->attached[x] = 0;
        B->nkids[v]--;
        B->comb[v] = comb;
        B->port[v] = port;
    }
    search(B, cur + 1, longest); /* v takes no more inputs */
}

/* Copies the costs and sorts each node's possible inputs by transfer. */
static void load_costs(bb *B, const trd_cost_view *v)
{
    for (int32_t i = 0; i < B->n; i++) {
        B->c[i] = trd_view_combine(v, i);
        B->dout[i] = INFINITY;
        for (int32_t j = 0; j < B->n; j++) {
            B->d[i][j] = trd_view_transfer(v, i, j);
            if (i != j)
                B->dout[i] = fmin(B->dout[i], B->d[i][j]);
        }
    }
    for (int32_t u = 0; u < B->n; u++) {
        int32_t m = 0;
        for (int32_t x = 1; x < B->n; x++) {
            if (x == u)
                continue;
            int32_t i = m++;
            for (; i > 0 && B->d[x][u] < B->d[B->by_cost[u][i - 1]][u]; i--)
                B->by_cost[u][i] = B->by_cost[u][i - 1];
            B->by_cost[u][i] = x;
        }
        for (; m < B->n; m++)
            B->by_cost[u][m] = -1;
    }
}

trd_status trd_build_hetero_exact(const trd_params *params, trd_tree *tree)
{
    int32_t n = tree->n;
    if (n > EXACT_MAX)
        return trd_fail(TRD_EUNSUPPORTED, "hetero-exact searches every tree and receive order: "
                        "n = %ld is above its limit of %d ranks (use hetero-greedy)", (long)n,
                        EXACT_MAX);
    trd_status st = trd_tree_add_seq(tree);
    trd_cost_view costs = trd_plan_cost_view(params);
    trd_hetero_tree out = {.parent = tree->parent, .seq = tree->seq};
    if (st == TRD_OK)
        st = trd_hetero_greedy_tree(&costs, n, &out); /* the incumbent */
    if (st != TRD_OK || out.makespan <= trd_bound_hetero(&costs, n) * (1.0 + 1e-12))
        return st;
    bb B = {.n = n, .count = 1, .out = &out, .best = out.makespan * (1.0 - 1e-12)};
    load_costs(&B, &costs);
    B.open[0] = 0;
    B.attached[0] = 1;
    B.parent[0] = -1;
    search(&B, 0, 0.0);
    return TRD_OK;
}
