/* homogeneous.c: the evaluator of the one-port overlap model (canon-antoniu
 * Sec. 3.1 and Prop. 2-3, read as docs/MODEL.md does: inputs are taken
 * earliest first, the proof's order, not the "j-th largest" the statement
 * prints), for homogeneous costs and, through a cost view, for the
 * heterogeneous d[i][j], c[i] of benoit Sec. 3.1.
 *
 * A node v with inputs received in the order 1..m (ready at r_j) receives
 * input j at a_j = max(r_j, a_{j-1} + d_{j-1}) (one port) and finishes
 * combining it at e_j = max(a_j + d_j, e_{j-1}) + c_v.  Homogeneous and in
 * ready order this unrolls to Prop. 2's e_m = max_j (r_j + d + (m - j)
 * max(d, c) + c).  Nodes are processed children first, so the whole tree
 * costs O(n log n) (one sort per node). */
#include "model/homogeneous.h"

#include <math.h>
#include <stdlib.h>

#include "core/error.h"

typedef struct arrival {
    double ready;
    int32_t pos;
} arrival;

static int by_ready(const void *a, const void *b)
{
    const arrival *x = a, *y = b;
    if (x->ready != y->ready)
        return x->ready < y->ready ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

static double max2(double a, double b) { return a > b ? a : b; }

/* Children lists (CSR) and the breadth-first order; rejects non-trees. */
static trd_status link_children(const trd_tree *tree, trd_timing *t)
{
    int32_t n = tree->n;
    if (tree->parent[0] != -1)
        return trd_fail(TRD_EINVAL, "tree: position 0 must be the root (parent -1)");
    for (int32_t v = 1; v < n; v++) {
        int32_t p = tree->parent[v];
        if (p < 0 || p >= n || p == v)
            return trd_fail(TRD_EINVAL, "tree: position %ld has invalid parent %ld",
                            (long)v, (long)p);
        t->first[p + 1]++;
    }
    for (int32_t v = 0; v < n; v++)
        t->first[v + 1] += t->first[v];
    int32_t *fill = t->order; /* borrowed as a cursor array until BFS */
    for (int32_t v = 0; v < n; v++)
        fill[v] = t->first[v];
    for (int32_t v = 1; v < n; v++)
        t->child[fill[tree->parent[v]]++] = v;
    int32_t head = 0, tail = 1;
    t->order[0] = 0;
    while (head < tail) {
        int32_t v = t->order[head++];
        for (int32_t e = t->first[v]; e < t->first[v + 1]; e++)
            t->order[tail++] = t->child[e];
    }
    if (tail != n)
        return trd_fail(TRD_EINVAL, "tree: %ld positions are not connected to the root",
                        (long)(n - tail));
    return TRD_OK;
}

double trd_node_finish(const trd_cost_view *costs, int32_t v, const int32_t *inputs,
                       int32_t m, const double *ready)
{
    double arrived = -INFINITY, e = 0.0, c = trd_view_combine(costs, v);
    for (int32_t j = 0; j < m; j++) {
        arrived = max2(ready[inputs[j]], arrived) + trd_view_transfer(costs, inputs[j], v);
        e = max2(arrived, e) + c;
    }
    return e;
}

/* Lays v's inputs in child[] in tree->seq order; TRD_EINVAL unless the
 * seq of v's inputs are 0 .. m-1. */
static trd_status order_by_seq(const trd_tree *tree, int32_t v, int32_t *inputs, int32_t m,
                               int32_t *scratch)
{
    for (int32_t j = 0; j < m; j++)
        scratch[j] = -1;
    for (int32_t j = 0; j < m; j++) {
        int32_t x = inputs[j], k = tree->seq[x];
        if (k < 0 || k >= m || scratch[k] >= 0)
            return trd_fail(TRD_EINVAL, "tree: position %ld has receive order %ld among the "
                            "%ld inputs of position %ld", (long)x, (long)k, (long)m, (long)v);
        scratch[k] = x;
    }
    for (int32_t j = 0; j < m; j++)
        inputs[j] = scratch[j];
    return TRD_OK;
}

/* Lays v's inputs in child[] in the order their senders become ready. */
static void order_by_ready(const trd_timing *t, int32_t *inputs, int32_t m, arrival *buf)
{
    for (int32_t j = 0; j < m; j++)
        buf[j] = (arrival){t->ready[inputs[j]], inputs[j]};
    qsort(buf, (size_t)m, sizeof *buf, by_ready);
    for (int32_t j = 0; j < m; j++)
        inputs[j] = buf[j].pos;
}

/* Receives and combines v's inputs in their order; sets their transfer
 * times, the combine times, and v's ready time. */
static trd_status serve_inputs(const trd_tree *tree, const trd_cost_view *costs, int32_t v,
                               arrival *buf, trd_timing *t)
{
    int32_t lo = t->first[v], m = t->first[v + 1] - lo, *inputs = t->child + lo;
    if (tree->seq) {
        trd_status st = order_by_seq(tree, v, inputs, m, (int32_t *)buf);
        if (st != TRD_OK)
            return st;
    } else {
        order_by_ready(t, inputs, m, buf);
    }
    double arrived = -INFINITY, e = 0.0, c = trd_view_combine(costs, v);
    for (int32_t j = 0; j < m; j++) {
        int32_t x = inputs[j];
        t->send_start[x] = max2(t->ready[x], arrived);
        arrived = t->send_start[x] + trd_view_transfer(costs, x, v);
        t->send_end[x] = arrived;
        t->combine_start[lo + j] = max2(arrived, e);
        e = t->combine_start[lo + j] + c;
        t->combine_end[lo + j] = e;
    }
    double release = tree->release ? tree->release[v] : 0.0;
    t->ready[v] = max2(e, release);
    return TRD_OK;
}

trd_status trd_evaluate(const trd_tree *tree, double d, double c, trd_timing *out)
{
    trd_cost_view costs = trd_view_homogeneous(d, c);
    return trd_evaluate_costs(tree, &costs, out);
}

trd_status trd_evaluate_costs(const trd_tree *tree, const trd_cost_view *costs,
                              trd_timing *t)
{
    int32_t n = tree->n;
    size_t nn = (size_t)n;
    *t = (trd_timing){.n = n, .release = tree->release, .ordered = tree->seq != NULL};
    t->order = malloc(nn * sizeof *t->order);
    t->first = calloc(nn + 1, sizeof *t->first);
    t->child = malloc(nn * sizeof *t->child);
    t->ready = malloc(nn * sizeof *t->ready);
    t->send_start = malloc(nn * sizeof *t->send_start);
    t->send_end = malloc(nn * sizeof *t->send_end);
    t->combine_start = malloc(nn * sizeof *t->combine_start);
    t->combine_end = malloc(nn * sizeof *t->combine_end);
    arrival *buf = malloc(nn * sizeof *buf);
    trd_status st = TRD_OK;
    if (!t->order || !t->first || !t->child || !t->ready || !t->send_start || !t->send_end ||
        !t->combine_start || !t->combine_end || !buf) {
        st = trd_fail(TRD_ENOMEM, "evaluate: cannot allocate the timing of n = %ld ranks",
                      (long)n);
        goto done;
    }
    st = link_children(tree, t);
    for (int32_t i = n - 1; i >= 0 && st == TRD_OK; i--)
        st = serve_inputs(tree, costs, t->order[i], buf, t);
    if (st != TRD_OK)
        goto done;
    t->send_start[0] = NAN;
    t->send_end[0] = NAN;
    t->makespan = t->ready[0];
done:
    free(buf);
    if (st != TRD_OK)
        trd_timing_free(t);
    return st;
}

void trd_timing_free(trd_timing *t)
{
    free(t->order);
    free(t->first);
    free(t->child);
    free(t->ready);
    free(t->send_start);
    free(t->send_end);
    free(t->combine_start);
    free(t->combine_end);
    *t = (trd_timing){0};
}
