/* homogeneous.c: the evaluator of the homogeneous model (canon-antoniu
 * Sec. 3.1 and Prop. 2-3, with ERRATA's reading: inputs are taken earliest
 * first).
 *
 * A node with inputs ready at r_1 <= ... <= r_m receives input j at
 * a_j = max(r_j, a_{j-1} + d) (one port, FIFO) and finishes combining it at
 * e_j = max(a_j + d, e_{j-1}) + c, which unrolls to Prop. 2's
 * e_m = max_j (r_j + d + (m - j) max(d, c) + c).  Nodes are processed
 * children first, so the whole tree costs O(n log n) (one sort per node). */
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

/* Receives and combines v's inputs in arrival order; sets their send
 * starts, the combine ends, and v's ready time. */
static void serve_inputs(const trd_tree *tree, double d, double c, int32_t v,
                         arrival *buf, trd_timing *t)
{
    int32_t lo = t->first[v], m = t->first[v + 1] - lo;
    for (int32_t j = 0; j < m; j++)
        buf[j] = (arrival){t->ready[t->child[lo + j]], t->child[lo + j]};
    qsort(buf, (size_t)m, sizeof *buf, by_ready);
    double a = -INFINITY, e = 0.0;
    for (int32_t j = 0; j < m; j++) {
        a = max2(buf[j].ready, a + d);
        e = max2(a + d, e) + c;
        t->child[lo + j] = buf[j].pos;
        t->send_start[buf[j].pos] = a;
        t->combine_end[lo + j] = e;
    }
    double release = tree->release ? tree->release[v] : 0.0;
    t->ready[v] = max2(e, release);
}

trd_status trd_evaluate(const trd_tree *tree, double d, double c, trd_timing *t)
{
    int32_t n = tree->n;
    size_t nn = (size_t)n;
    *t = (trd_timing){.n = n, .release = tree->release};
    t->order = malloc(nn * sizeof *t->order);
    t->first = calloc(nn + 1, sizeof *t->first);
    t->child = malloc(nn * sizeof *t->child);
    t->ready = malloc(nn * sizeof *t->ready);
    t->send_start = malloc(nn * sizeof *t->send_start);
    t->combine_end = malloc(nn * sizeof *t->combine_end);
    arrival *buf = malloc(nn * sizeof *buf);
    trd_status st = TRD_OK;
    if (!t->order || !t->first || !t->child || !t->ready || !t->send_start ||
        !t->combine_end || !buf) {
        st = trd_fail(TRD_ENOMEM, "evaluate: cannot allocate the timing of n = %ld ranks",
                      (long)n);
        goto done;
    }
    st = link_children(tree, t);
    if (st != TRD_OK)
        goto done;
    for (int32_t i = n - 1; i >= 0; i--)
        serve_inputs(tree, d, c, t->order[i], buf, t);
    t->send_start[0] = NAN;
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
    free(t->combine_end);
    *t = (trd_timing){0};
}
