/* hetero_greedy.c: hetero-greedy, a reduction tree for the heterogeneous
 * costs of benoit Sec. 3.1 (rank i sends to rank j in d[i][j], combines
 * in c[i]) under the one-port overlap model of canon-antoniu Sec. 3.1.
 * Canon and Antoniu leave heterogeneous costs open (their Sec. 8); this
 * planner is a heuristic, measured against the exact optimum
 * (hetero_exact.c) and a lower bound in docs/HETEROGENEOUS.md.
 *
 * It grows Algorithm 1 backwards from the root in reversed time, as the
 * paper does, with per-rank costs.  A rank v attached at reversed time
 * sigma_v offers its inputs slots: the next input x (received before those
 * attached so far) must have arrived by max(C_v + c_v, P_v), where C_v is
 * when the combine of the previous one must start (sigma_v at first, then
 * c_v earlier per input) and P_v when its transfer began (one port), so x
 * gets sigma_x = max(C_v + c_v, P_v) + d[x][v] (Alg. 1 lines 6-8 with
 * d[x][v], c_v: for homogeneous costs the same keys, so the same tree).
 * Every rank now differs, so each step picks a pair (x, v), as the
 * broadcast heuristics of Bhat, Raghavendra and Prasanna do ("Efficient
 * collective communication in distributed heterogeneous systems", ICDCS
 * 1999: ECEF, the earliest completing edge first, and its look-ahead
 * variant): the pair of smallest sigma_x + lambda q_x, where q_x rates x
 * as a receiver for later steps (c_x plus the mean, or the least, of the
 * transfers into x).  Four runs, lambda = 0 (pure ECEF: Alg. 1 on
 * homogeneous costs), 0.5 and 1 with the mean, 0.5 with the least, keep
 * the tree of least makespan; the reversed times of a tree and its
 * receive orders are its exact schedule (the largest sigma is the
 * makespan the evaluator gives).  A local search (hetero_local.c) then
 * moves inputs and exchanges ranks around the critical path (up to 32
 * ranks, from each run's tree).  On
 * homogeneous costs the first run is Alg. 1's optimal tree and nothing
 * can improve it, so hetero-greedy is optimal there (tests check it).
 *
 * Commutative operators only: the costs tie each rank to its place, so
 * the renumbering of canon-antoniu Sec. 4.1 is not free.
 *
 * Cost: per run, a heap of receivers keyed by their best pair; each
 * receiver keeps its 32 lightest candidates, refilled by an O(n) scan when
 * they are all taken (O(n^2) per run when refills are rare, O(n^3 / 32) at
 * worst); 4 runs; then the local search (at most 4n rounds over the
 * critical path, 16 targets per move).  Memory O(n), plus up to 2048
 * ranks a copy of the costs by receiver (refills read it in a row). */
#include <math.h>
#include <stdlib.h>

#include "core/error.h"
#include "plan/hetero.h"
#include "plan/plan_internal.h"

static double max2(double a, double b) { return a > b ? a : b; }

/* A candidate input of a receiver, by its weight d[x][v] + lambda q_x. */
typedef struct cand {
    double w;
    int32_t x;
} cand;

static bool lighter(cand a, cand b) { return a.w < b.w || (a.w == b.w && a.x < b.x); }

/* Candidates a receiver keeps sorted at a time: refilled with the next
 * lightest when they are all taken, so that a receiver costs O(n) per
 * refill instead of a sort of all n.  A receiver is first queued with a
 * lower bound of its best pair (its cheapest input, the least rate) and
 * scanned only when that reaches the top of the heap: most ranks end as
 * leaves, and are never scanned. */
#define CHUNK 128

/* The receivers' copy of the transfers (grow.in) up to this many entries
 * (32 MiB; 2048 ranks); beyond, the costs are read in place. */
#define IN_COPY_MAX ((int64_t)1 << 22)

/* Up to this many ranks, the local search starts from each run's tree
 * (the best of four searches: half the gap to the optimum at n <= 9 of
 * one search, docs/HETEROGENEOUS.md); above, from the best run's only. */
#define SEARCH_EACH_MAX 32

/* A receiver in the heap, keyed by its best pair's sigma + lambda q. */
typedef struct entry {
    double key;
    int32_t v;
} entry;

static bool before(entry a, entry b) { return a.key < b.key || (a.key == b.key && a.v < b.v); }

static void heap_push(entry *h, int32_t *len, entry e)
{
    int32_t i = (*len)++;
    while (i > 0 && before(e, h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = e;
}

static entry heap_pop(entry *h, int32_t *len)
{
    entry top = h[0], last = h[--*len];
    int32_t i = 0;
    for (;;) {
        int32_t k = 2 * i + 1;
        if (k >= *len)
            break;
        if (k + 1 < *len && before(h[k + 1], h[k]))
            k++;
        if (!before(h[k], last))
            break;
        h[i] = h[k];
        i = k;
    }
    h[i] = last;
    return top;
}

/* One run of the backward growth. */
typedef struct grow {
    const trd_cost_view *v;
    int32_t n;
    const double *q, *in_least; /* rates; each receiver's cheapest input */
    const double *in;           /* NULL, or in[v*n + x]: the transfer x -> v */
    double lambda, q_least;
    cand *chunk;            /* per receiver v: chunk[v*CHUNK ..], lightest first */
    int32_t *head, *filled; /* the next one to try, how many there are
                               (-1: not scanned yet) */
    int32_t *nkids, *rank_in;
    double *sigma, *comb, *port;
    char *attached;
    entry *heap;
    int32_t len;
} grow;

static double base(const grow *g, int32_t v)
{
    return max2(g->comb[v] + trd_view_combine(g->v, v), g->port[v]);
}

/* The transfer x -> v: from the receivers' copy when there is one (a
 * refill reads a receiver's inputs in a row instead of a matrix column). */
static double transfer(const grow *g, int32_t x, int32_t v)
{
    return g->in ? g->in[(int64_t)v * g->n + x] : trd_view_transfer(g->v, x, v);
}

static cand weight(const grow *g, int32_t x, int32_t v)
{
    return (cand){transfer(g, x, v) + g->lambda * g->q[x], x};
}

/* Refills v's chunk with its CHUNK lightest unattached candidates heavier
 * than those it had (every position but v and the root may send to v). */
static void refill(grow *g, int32_t v)
{
    cand *c = g->chunk + (int64_t)v * CHUNK, last = {-INFINITY, -1};
    if (g->filled[v] > 0)
        last = c[g->filled[v] - 1];
    int32_t k = 0;
    for (int32_t x = 1; x < g->n; x++) {
        if (x == v || g->attached[x])
            continue;
        cand w = weight(g, x, v);
        if (!lighter(last, w) || (k == CHUNK && !lighter(w, c[k - 1])))
            continue;
        int32_t i = k < CHUNK ? k++ : CHUNK - 1;
        for (; i > 0 && lighter(w, c[i - 1]); i--)
            c[i] = c[i - 1];
        c[i] = w;
    }
    g->filled[v] = k;
    g->head[v] = 0;
}

/* v's lightest unattached candidate, or -1. */
static int32_t next_candidate(grow *g, int32_t v)
{
    const cand *c = g->chunk + (int64_t)v * CHUNK;
    for (;;) {
        while (g->head[v] < g->filled[v] && g->attached[c[g->head[v]].x])
            g->head[v]++;
        if (g->head[v] < g->filled[v])
            return c[g->head[v]].x;
        if (g->filled[v] < CHUNK)
            return -1; /* the last refill found them all */
        refill(g, v);
    }
}

/* Queues v with its best pair, if it has a candidate left; an unscanned
 * receiver with a lower bound of it. */
static void queue(grow *g, int32_t v)
{
    if (g->filled[v] < 0) {
        heap_push(g->heap, &g->len,
                  (entry){base(g, v) + g->in_least[v] + g->lambda * g->q_least, v});
        return;
    }
    int32_t x = next_candidate(g, v);
    if (x >= 0)
        heap_push(g->heap, &g->len,
                  (entry){base(g, v) + transfer(g, x, v) + g->lambda * g->q[x], v});
}

static void attach(grow *g, int32_t x, int32_t v, int32_t *parent)
{
    g->sigma[x] = base(g, v) + transfer(g, x, v); /* Alg. 1 line 7 */
    g->comb[v] += trd_view_combine(g->v, v);                  /* line 8 */
    g->port[v] = g->sigma[x];
    parent[x] = v;                                            /* line 9 */
    g->rank_in[x] = g->nkids[v]++;
    g->attached[x] = 1;
    g->comb[x] = g->port[x] = g->sigma[x];
}

/* Grows the whole tree; out gets parent, seq (the reverse of the attach
 * order: each input is received before those attached earlier) and the
 * largest sigma. */
static void grow_tree(grow *g, trd_hetero_tree *out)
{
    int32_t n = g->n;
    for (int32_t x = 0; x < n; x++) {
        g->attached[x] = 0;
        g->nkids[x] = 0;
    }
    g->len = 0;
    g->sigma[0] = g->comb[0] = g->port[0] = 0.0;
    g->attached[0] = 1;
    out->parent[0] = -1;
    out->makespan = 0.0;
    g->filled[0] = -1;
    queue(g, 0);
    for (int32_t done = 1; done < n;) {
        int32_t v = heap_pop(g->heap, &g->len).v;
        if (g->filled[v] < 0) { /* its bound came first: scan it */
            g->filled[v] = 0;
            refill(g, v);
            queue(g, v);
            continue;
        }
        int32_t x = g->chunk[(int64_t)v * CHUNK + g->head[v]].x;
        if (g->attached[x]) { /* taken since v was queued: its next pair */
            queue(g, v);
            continue;
        }
        attach(g, x, v, out->parent);
        out->makespan = max2(out->makespan, g->sigma[x]);
        done++;
        g->filled[x] = -1;
        queue(g, x);
        queue(g, v);
    }
    for (int32_t x = 1; x < n; x++)
        out->seq[x] = g->nkids[out->parent[x]] - 1 - g->rank_in[x];
    out->seq[0] = 0;
}

/* q_x = c_x plus the mean (or the least) transfer into x from a rank that
 * may send (not the root).  Row by row: the matrix is read in order. */
static void receiver_rates(const trd_cost_view *v, int32_t n, double *mean, double *least,
                           double *in_least)
{
    for (int32_t x = 0; x < n; x++) {
        mean[x] = 0.0;
        in_least[x] = INFINITY;
    }
    for (int32_t y = 1; y < n; y++)
        for (int32_t x = 0; x < n; x++)
            if (y != x) {
                double d = trd_view_transfer(v, y, x);
                mean[x] += d;
                in_least[x] = in_least[x] < d ? in_least[x] : d;
            }
    for (int32_t x = 0; x < n; x++) {
        int32_t senders = n - 1 - (x != 0);
        double c = trd_view_combine(v, x);
        if (senders == 0)
            in_least[x] = 0.0;
        least[x] = c + in_least[x];
        mean[x] = c + (senders > 0 ? mean[x] / senders : 0.0);
    }
}


/* Everything a run needs, in one block (g->chunk owns it), widest first. */
static trd_status alloc_grow(grow *g, int32_t n)
{
    size_t nn = (size_t)n;
    char *p = malloc(nn * (CHUNK * sizeof(cand) + sizeof(entry) + 3 * sizeof(double) +
                           4 * sizeof(int32_t) + 1));
    if (!p)
        return trd_fail(TRD_ENOMEM, "hetero-greedy: out of memory for n = %ld", (long)n);
    g->chunk = (cand *)p;
    g->heap = (entry *)(g->chunk + nn * CHUNK);
    g->sigma = (double *)(g->heap + nn);
    g->comb = g->sigma + nn;
    g->port = g->comb + nn;
    g->head = (int32_t *)(g->port + nn);
    g->filled = g->head + nn;
    g->nkids = g->filled + nn;
    g->rank_in = g->nkids + nn;
    g->attached = (char *)(g->rank_in + nn);
    return TRD_OK;
}

/* The four runs (lambda, rate): the best tree goes to out. */
static trd_status best_run(const trd_cost_view *v, int32_t n, trd_hetero_tree *out)
{
    static const struct { double lambda; int least; } runs[] = {{0.0, 0}, {0.5, 0},
                                                                 {1.0, 0}, {0.5, 1}};
    grow g = {.v = v, .n = n};
    double *mean = malloc((size_t)n * sizeof *mean), *least = malloc((size_t)n * sizeof *least);
    double *in_least = malloc((size_t)n * sizeof *in_least);
    int32_t *parent = malloc((size_t)n * sizeof *parent), *seq = malloc((size_t)n * sizeof *seq);
    trd_status st = alloc_grow(&g, n);
    if (st == TRD_OK && (!mean || !least || !in_least || !parent || !seq))
        st = trd_fail(TRD_ENOMEM, "hetero-greedy: out of memory for n = %ld", (long)n);
    if (st == TRD_OK)
        receiver_rates(v, n, mean, least, in_least);
    g.in_least = in_least;
    double *in = (int64_t)n * n <= IN_COPY_MAX ? malloc((size_t)n * (size_t)n * sizeof *in) : NULL;
    for (int32_t x = 0; in && x < n; x++) /* row by row: the matrix in order */
        for (int32_t t = 0; t < n; t++)
            in[(int64_t)t * n + x] = trd_view_transfer(v, x, t);
    g.in = in;
    out->makespan = INFINITY;
    for (size_t r = 0; st == TRD_OK && r < sizeof runs / sizeof runs[0]; r++) {
        trd_hetero_tree t = {.parent = parent, .seq = seq};
        g.lambda = runs[r].lambda;
        g.q = runs[r].least ? least : mean;
        g.q_least = INFINITY;
        for (int32_t x = 1; x < n; x++)
            g.q_least = g.q_least < g.q[x] ? g.q_least : g.q[x];
        grow_tree(&g, &t);
        if (n <= SEARCH_EACH_MAX && st == TRD_OK)
            st = trd_hetero_local_search(v, n, &t);
        if (t.makespan < out->makespan) {
            out->makespan = t.makespan;
            for (int32_t x = 0; x < n; x++) {
                out->parent[x] = parent[x];
                out->seq[x] = seq[x];
            }
        }
    }
    free(g.chunk);
    free(in);
    free(mean);
    free(least);
    free(in_least);
    free(parent);
    free(seq);
    return st;
}

trd_status trd_hetero_greedy_tree(const trd_cost_view *costs, int32_t n, trd_hetero_tree *out)
{
    if (n == 1) {
        out->parent[0] = -1;
        out->seq[0] = 0;
        out->makespan = 0.0;
        return TRD_OK;
    }
    trd_status st = best_run(costs, n, out);
    if (st != TRD_OK || n <= SEARCH_EACH_MAX)
        return st;
    return trd_hetero_local_search(costs, n, out);
}

trd_status trd_build_hetero_greedy(const trd_params *params, trd_tree *tree)
{
    trd_cost_view costs = trd_plan_cost_view(params);
    trd_status st = trd_tree_add_seq(tree);
    if (st != TRD_OK)
        return st;
    trd_hetero_tree t = {.parent = tree->parent, .seq = tree->seq};
    return trd_hetero_greedy_tree(&costs, tree->n, &t);
}
