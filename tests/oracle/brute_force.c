/* brute_force.c: makespans without the library.
 *
 * trd_oracle_prop3_makespan is Proposition 3 of canon-antoniu read as its
 * proof's induction needs (docs/MODEL.md: earliest first, not the "j-th
 * largest" the statement prints): a machine i with m_i inputs whose transfer
 * times, sorted earliest first, are t_i^1 <= ... <= t_i^m, sends at
 *     t_i = max_j (t_i^j + d + (m_i - j) max(d, c) + c)
 * (0 for a leaf), and the root finishes at its own t.  It is computed by
 * depth (deepest machines first) straight from the formula, with no
 * simulation of ports, unlike src/model/homogeneous.c.
 *
 * trd_oracle_brute_force enumerates every parent array with parent[i] < i
 * (every rooted tree on n machines has such a labelling: number it in
 * breadth-first order), optionally keeps only the trees with at most K
 * distinct receiving machines, and returns the smallest Prop. 3 makespan.
 * Nothing here calls libtreduce. */
#include <math.h>
#include <stdlib.h>

#include "oracle.h"

static int ascending(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Fills depth[] (edges up to the root) for every machine; returns 0, or
 * -1 when parent[] is not one tree (bad index, cycle).  path[] is scratch. */
static int fill_depths(int32_t n, const int32_t *parent, int32_t *depth, int32_t *path)
{
    for (int32_t v = 0; v < n; v++) {
        int32_t len = 0, u = v;
        while (depth[u] < 0 && parent[u] != -1) {
            if (len == n)
                return -1; /* cycle */
            path[len++] = u;
            u = parent[u];
            if (u < 0 || u >= n)
                return -1;
        }
        int32_t base = depth[u] >= 0 ? depth[u] : 0; /* u is known or the root */
        depth[u] = base;
        while (len > 0)
            depth[path[--len]] = ++base;
    }
    return 0;
}

/* The inputs of every machine as CSR lists input[first[v] .. first[v + 1]),
 * in increasing machine order; cursor[] is scratch of n entries. */
static void link_inputs(int32_t n, const int32_t *parent, int32_t *first,
                        int32_t *input, int32_t *cursor)
{
    for (int32_t v = 0; v < n; v++)
        if (parent[v] != -1)
            first[parent[v] + 1]++;
    for (int32_t v = 0; v < n; v++) {
        first[v + 1] += first[v];
        cursor[v] = first[v];
    }
    for (int32_t v = 0; v < n; v++)
        if (parent[v] != -1)
            input[cursor[parent[v]]++] = v;
}

double trd_oracle_prop3_makespan(int32_t n, const int32_t *parent, double d, double c)
{
    double result = NAN, big = d > c ? d : c;
    size_t nn = n > 0 ? (size_t)n : 1;
    int32_t *depth = malloc(nn * sizeof *depth);
    int32_t *order = malloc(nn * sizeof *order);
    int32_t *count = calloc(nn + 1, sizeof *count);
    int32_t *first = calloc(nn + 1, sizeof *first);
    int32_t *input = malloc(nn * sizeof *input);
    double *t = malloc(nn * sizeof *t);
    double *in = malloc(nn * sizeof *in);
    int32_t root = -1;
    if (n < 1 || !depth || !order || !count || !first || !input || !t || !in)
        goto done;
    for (int32_t v = 0; v < n; v++) {
        depth[v] = -1;
        if (parent[v] == -1) {
            if (root != -1)
                goto done; /* two roots */
            root = v;
        }
    }
    if (root == -1 || fill_depths(n, parent, depth, order) != 0)
        goto done;
    for (int32_t v = 0; v < n; v++) /* counting sort, deepest first */
        count[n - 1 - depth[v]]++;
    for (int32_t k = 0; k < n; k++)
        count[k + 1] += count[k];
    for (int32_t v = n - 1; v >= 0; v--)
        order[--count[n - 1 - depth[v]]] = v;
    link_inputs(n, parent, first, input, count);
    /* A machine's inputs are deeper, so their t is final when it is reached. */
    for (int32_t k = 0; k < n; k++) {
        int32_t v = order[k], m = first[v + 1] - first[v];
        for (int32_t j = 0; j < m; j++)
            in[j] = t[input[first[v] + j]];
        qsort(in, (size_t)m, sizeof *in, ascending);
        double tv = 0.0;
        for (int32_t j = 1; j <= m; j++) { /* j-th earliest input */
            double x = in[j - 1] + d + (m - j) * big + c;
            if (x > tv)
                tv = x;
        }
        t[v] = tv;
    }
    result = t[root];
done:
    free(depth);
    free(order);
    free(count);
    free(first);
    free(input);
    free(t);
    free(in);
    return result;
}

typedef struct search {
    int32_t n, max_reducers, reducers;
    double d, c, best;
    int32_t parent[9];
    int32_t inputs[9]; /* inputs received so far by each machine */
} search;

static void enumerate(search *st, int32_t i)
{
    if (i == st->n) {
        double m = trd_oracle_prop3_makespan(st->n, st->parent, st->d, st->c);
        if (m < st->best)
            st->best = m;
        return;
    }
    for (int32_t p = 0; p < i; p++) {
        int fresh = st->inputs[p] == 0;
        if (fresh && st->reducers == st->max_reducers)
            continue; /* p would be one receiving machine too many */
        st->reducers += fresh;
        st->inputs[p]++;
        st->parent[i] = p;
        enumerate(st, i + 1);
        st->inputs[p]--;
        st->reducers -= fresh;
    }
}

double trd_oracle_brute_force(int32_t n, double d, double c, int32_t max_reducers)
{
    if (n < 1 || n > 9 || max_reducers < 1)
        return NAN;
    search st = {.n = n, .max_reducers = max_reducers, .d = d, .c = c,
                 .best = INFINITY};
    st.parent[0] = -1;
    if (n == 1)
        return 0.0;
    enumerate(&st, 1);
    return st.best;
}
