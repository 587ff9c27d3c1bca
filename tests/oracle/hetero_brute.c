/* hetero_brute.c: the heterogeneous one-port overlap model without the
 * library, by exhaustive enumeration.
 *
 * The model (benoit-canon-marchal Sec. 3.1 costs in canon-antoniu's Sec.
 * 3.1 model): machine v receives its inputs one at a time in a chosen
 * order; input x can leave once x has finished (r_x), and not before the
 * previous transfer into v has ended; it takes d[x][v]; v combines each
 * input in turn, c[v] each, a combine starting once its input has arrived
 * and the previous combine has ended.  A machine has finished when its
 * last combine ends (a leaf at 0).  Every quantity starts as early as
 * that allows.
 *
 * trd_oracle_hetero_brute tries every tree on labelled machines with the
 * given root (each other machine picks any parent; the arrays that are not
 * trees are dropped) and every receive order of every machine, and returns
 * the least finish time of the root.  n <= 6: 6^5 parent arrays, at most
 * 5! orders each.  Nothing here calls libtreduce. */
#include <math.h>
#include <stdbool.h>

#include "oracle.h"

#define BRUTE_MAX 6

typedef struct brute {
    int32_t n, root;
    const double *d, *c;
    int32_t parent[BRUTE_MAX];
    int32_t kids[BRUTE_MAX][BRUTE_MAX], nkids[BRUTE_MAX]; /* in receive order */
    double best;
} brute;

/* Finish time of v, its inputs taken in kids[v] order. */
static double finish(const brute *b, int32_t v)
{
    double port = -INFINITY, done = 0.0;
    for (int32_t j = 0; j < b->nkids[v]; j++) {
        int32_t x = b->kids[v][j];
        double leave = finish(b, x);
        if (leave < port)
            leave = port;
        port = leave + b->d[x * b->n + v];
        done = (port > done ? port : done) + b->c[v];
    }
    return done;
}

double trd_oracle_hetero_makespan(int32_t n, int32_t root, const int32_t *const *order,
                                  const int32_t *count, const double *d, const double *c)
{
    brute b = {.n = n, .root = root, .d = d, .c = c};
    if (n < 1 || n > BRUTE_MAX)
        return NAN;
    for (int32_t v = 0; v < n; v++) {
        b.nkids[v] = count[v];
        for (int32_t j = 0; j < count[v]; j++)
            b.kids[v][j] = order[v][j];
    }
    return finish(&b, root);
}

/* Whether parent[] reaches the root from every machine without a cycle. */
static bool is_tree(const brute *b)
{
    for (int32_t v = 0; v < b->n; v++) {
        int32_t u = v, steps = 0;
        while (u != b->root && steps++ < b->n)
            u = b->parent[u];
        if (u != b->root)
            return false;
    }
    return true;
}

static void swap(int32_t *a, int32_t *b)
{
    int32_t t = *a;
    *a = *b;
    *b = t;
}

/* Every order of the inputs of machines v, v+1, ..., n-1 (permutations of
 * kids[v][k..] by swapping in place). */
static void orders(brute *b, int32_t v, int32_t k)
{
    if (v == b->n) {
        double m = finish(b, b->root);
        if (m < b->best)
            b->best = m;
        return;
    }
    if (k >= b->nkids[v]) {
        orders(b, v + 1, 0);
        return;
    }
    for (int32_t i = k; i < b->nkids[v]; i++) {
        swap(&b->kids[v][k], &b->kids[v][i]);
        orders(b, v, k + 1);
        swap(&b->kids[v][k], &b->kids[v][i]);
    }
}

static void trees(brute *b, int32_t v)
{
    if (v == b->n) {
        if (!is_tree(b))
            return;
        for (int32_t u = 0; u < b->n; u++)
            b->nkids[u] = 0;
        for (int32_t u = 0; u < b->n; u++)
            if (u != b->root)
                b->kids[b->parent[u]][b->nkids[b->parent[u]]++] = u;
        orders(b, 0, 0);
        return;
    }
    if (v == b->root) {
        trees(b, v + 1);
        return;
    }
    for (int32_t p = 0; p < b->n; p++)
        if (p != v) {
            b->parent[v] = p;
            trees(b, v + 1);
        }
}

double trd_oracle_hetero_brute(int32_t n, int32_t root, const double *d, const double *c)
{
    if (n < 1 || n > BRUTE_MAX || root < 0 || root >= n)
        return NAN;
    brute b = {.n = n, .root = root, .d = d, .c = c, .best = INFINITY};
    b.parent[root] = -1;
    if (n == 1)
        return 0.0;
    trees(&b, 0);
    return b.best;
}
