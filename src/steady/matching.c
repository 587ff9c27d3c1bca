/* matching.c: one period's transfers cut into weighted matchings (Legrand,
 * Marchal and Robert 2004, Sec. 3.3; Schrijver, Combinatorial Optimization
 * vol. A, ch. 20, weighted bipartite edge colouring).
 *
 * Sec. 3.3 builds the bipartite graph G_B: node P_i becomes a sender
 * P_i^send (left side) and a receiver P_i^recv (right side), a transfer
 * P_i -> P_j an edge P_i^send - P_j^recv weighted by its duration.  Steps
 * that never make a node send twice or receive twice at once are matchings
 * of G_B, so a schedule of the period is a weighted edge colouring: matchings
 * M_1..M_k with durations w_1..w_k that together cover every edge's weight.
 * Schrijver ch. 20 (the weighted form of Koenig's edge-colouring theorem)
 * gives one of total duration Delta, the largest weighted degree; no
 * schedule is shorter, since a node of degree Delta is busy that long:
 *
 *   1. the transfers of one link (from, to) become one edge, weighted by the
 *      sum of their durations;
 *   2. dummy edges between vertices of degree < Delta make G_B
 *      Delta-regular (north-west corner greedy: at most 2n - 1 of them);
 *   3. the support of a Delta-regular bipartite graph has a perfect
 *      matching (Hall: a set S of senders carries |S| Delta of weight, which
 *      its neighbours can only absorb, Delta each, if |N(S)| >= |S|).  Take
 *      one, w = its lightest edge, emit it for w and subtract w: the graph
 *      stays regular (degree Delta - w) and one edge at least vanishes, so
 *      there are at most (links + 2n - 1) rounds, of total duration Delta;
 *   4. a round's share w of a link goes to the link's transfers in input
 *      order; a transfer cut over rounds has its amount cut in proportion
 *      to duration.
 *
 * A vertex of degree Delta has no dummy edge, so every round matches it by
 * a real edge: no emitted matching is empty.  A round's matching starts
 * from the previous one minus its vanished edges and is completed by
 * breadth-first augmenting paths, O(edges) each; one per vanished edge.
 * All arithmetic is exact (GMP rationals). */
#include "steady/matching.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define NONE SIZE_MAX

/* The transfers grouped by link: link l holds the transfers
 * order[first[l] .. first[l+1]-1], in input order. */
typedef struct links {
    size_t count;
    size_t *order, *first;
    size_t *cursor; /* link l: position in order of its next transfer to schedule */
    mpq_t *done;    /* link l: duration of that transfer already scheduled */
} links;

/* G_B padded to be Delta-regular, n vertices a side (senders on the left,
 * receivers on the right), with the current matching and search scratch. */
typedef struct graph {
    int32_t n;
    size_t nedges, cap;
    int32_t *left, *right; /* ends of edge e */
    size_t *link;          /* link of edge e; NONE for a dummy edge */
    mpq_t *w;              /* residual weight of edge e; 0 once it vanished */
    size_t *adj_first, *adj; /* edges of left u: adj[adj_first[u] .. adj_first[u+1]-1] */
    size_t *mate_l, *mate_r; /* matched edge of left u / right v, or NONE */
    int32_t *queue;          /* breadth-first search: left vertices to visit */
    int32_t *from_r;         /* left u: right vertex whose mate led to u, -1 at the root */
    size_t *via, *seen;      /* right v: edge that reached it, search stamp */
    size_t stamp;
} graph;

static void *alloc(size_t count, size_t size)
{
    return calloc(count ? count : 1, size);
}

/* count initialised rationals (0), or NULL. */
static mpq_t *qvec_new(size_t count)
{
    mpq_t *v = alloc(count, sizeof *v);
    for (size_t i = 0; v != NULL && i < count; i++)
        mpq_init(v[i]);
    return v;
}

static void qvec_free(mpq_t *v, size_t count)
{
    for (size_t i = 0; v != NULL && i < count; i++)
        mpq_clear(v[i]);
    free(v);
}

void trd_xfer_init(trd_xfer *x)
{
    x->from = x->to = x->label = 0;
    mpq_init(x->amount);
    mpq_init(x->duration);
}

void trd_xfer_clear(trd_xfer *x)
{
    mpq_clear(x->amount);
    mpq_clear(x->duration);
}

/* The contract of trd_matchings_build: nodes, ends, durations, amounts. */
static trd_status check_input(const trd_xfer *x, int32_t count, int32_t n_nodes)
{
    if (n_nodes <= 0)
        return trd_fail(TRD_EINVAL, "matchings: n_nodes = %d, must be > 0", n_nodes);
    if (count < 0 || (count > 0 && x == NULL))
        return trd_fail(TRD_EINVAL, "matchings: %d transfers at %p", count, (const void *)x);
    /* Bounds the matchings (links + 2n) and the parts of one (n + count). */
    if ((int64_t)count + 2 * (int64_t)n_nodes > INT32_MAX)
        return trd_fail(TRD_EINVAL, "matchings: %d transfers on %d nodes, too many", count,
                        n_nodes);
    for (int32_t i = 0; i < count; i++) {
        const trd_xfer *t = &x[i];
        char q[64];
        if (t->from < 0 || t->from >= n_nodes || t->to < 0 || t->to >= n_nodes)
            return trd_fail(TRD_EINVAL, "matchings: transfer %d is %d -> %d, nodes are 0..%d",
                            i, t->from, t->to, n_nodes - 1);
        if (t->from == t->to)
            return trd_fail(TRD_EINVAL, "matchings: transfer %d goes from node %d to itself", i,
                            t->from);
        if (mpq_sgn(t->duration) <= 0) {
            gmp_snprintf(q, sizeof q, "%Qd", t->duration);
            return trd_fail(TRD_EINVAL, "matchings: transfer %d (%d -> %d) has duration %s, "
                            "must be > 0", i, t->from, t->to, q);
        }
        if (mpq_sgn(t->amount) < 0) {
            gmp_snprintf(q, sizeof q, "%Qd", t->amount);
            return trd_fail(TRD_EINVAL, "matchings: transfer %d (%d -> %d) has amount %s, "
                            "must be >= 0", i, t->from, t->to, q);
        }
    }
    return TRD_OK;
}

/* One stable counting-sort pass of the transfer indices in[] into out[],
 * on the sender (by_from) or on the receiver. */
static void sort_pass(const trd_xfer *x, const size_t *in, size_t *out, size_t count,
                      size_t *bucket, int32_t n, bool by_from)
{
    memset(bucket, 0, ((size_t)n + 1) * sizeof *bucket);
    for (size_t i = 0; i < count; i++)
        bucket[(by_from ? x[in[i]].from : x[in[i]].to) + 1]++;
    for (int32_t k = 0; k < n; k++)
        bucket[k + 1] += bucket[k];
    for (size_t i = 0; i < count; i++)
        out[bucket[by_from ? x[in[i]].from : x[in[i]].to]++] = in[i];
}

static void links_free(links *L)
{
    free(L->order);
    free(L->first);
    free(L->cursor);
    qvec_free(L->done, L->count);
}

/* Step 1: the transfers sorted by (from, to, index), cut into links. */
static trd_status links_build(links *L, const trd_xfer *x, size_t count, int32_t n)
{
    trd_status st = TRD_OK;
    size_t *tmp = alloc(count, sizeof *tmp), *bucket = alloc((size_t)n + 1, sizeof *bucket);
    L->order = alloc(count, sizeof *L->order);
    L->first = alloc(count + 1, sizeof *L->first);
    if (tmp == NULL || bucket == NULL || L->order == NULL || L->first == NULL) {
        st = trd_fail(TRD_ENOMEM, "matchings: no memory to sort %zu transfers", count);
        goto done;
    }
    for (size_t i = 0; i < count; i++)
        tmp[i] = i;
    sort_pass(x, tmp, L->order, count, bucket, n, false);
    sort_pass(x, L->order, tmp, count, bucket, n, true);
    memcpy(L->order, tmp, count * sizeof *tmp);
    for (size_t i = 0; i < count; i++) {
        const trd_xfer *a = &x[L->order[i]], *b = i ? &x[L->order[i - 1]] : NULL;
        if (b == NULL || a->from != b->from || a->to != b->to)
            L->first[L->count++] = i;
    }
    L->first[L->count] = count;
    L->cursor = alloc(L->count, sizeof *L->cursor);
    L->done = qvec_new(L->count);
    if (L->cursor == NULL || L->done == NULL) {
        st = trd_fail(TRD_ENOMEM, "matchings: no memory for %zu links", L->count);
        goto done;
    }
    for (size_t l = 0; l < L->count; l++)
        L->cursor[l] = L->first[l];
done:
    free(tmp);
    free(bucket);
    return st;
}

static void graph_free(graph *g)
{
    free(g->left);
    free(g->right);
    free(g->link);
    qvec_free(g->w, g->cap);
    free(g->adj_first);
    free(g->adj);
    free(g->mate_l);
    free(g->mate_r);
    free(g->queue);
    free(g->from_r);
    free(g->via);
    free(g->seen);
}

/* Room for cap edges on n vertices a side, no edge, nothing matched. */
static trd_status graph_alloc(graph *g, int32_t n, size_t cap)
{
    size_t un = (size_t)n;
    g->n = n;
    g->left = alloc(cap, sizeof *g->left);
    g->right = alloc(cap, sizeof *g->right);
    g->link = alloc(cap, sizeof *g->link);
    g->w = qvec_new(cap);
    g->cap = g->w != NULL ? cap : 0;
    g->adj_first = alloc(un + 1, sizeof *g->adj_first);
    g->adj = alloc(cap, sizeof *g->adj);
    g->mate_l = alloc(un, sizeof *g->mate_l);
    g->mate_r = alloc(un, sizeof *g->mate_r);
    g->queue = alloc(un, sizeof *g->queue);
    g->from_r = alloc(un, sizeof *g->from_r);
    g->via = alloc(un, sizeof *g->via);
    g->seen = alloc(un, sizeof *g->seen);
    if (g->left == NULL || g->right == NULL || g->link == NULL || g->w == NULL ||
        g->adj_first == NULL || g->adj == NULL || g->mate_l == NULL || g->mate_r == NULL ||
        g->queue == NULL || g->from_r == NULL || g->via == NULL || g->seen == NULL)
        return trd_fail(TRD_ENOMEM, "matchings: no memory for %zu edges on %d nodes", cap, n);
    for (size_t v = 0; v < un; v++)
        g->mate_l[v] = g->mate_r[v] = NONE;
    return TRD_OK;
}

/* Step 1: one edge per link, weighted by the sum of its durations. */
static void add_real_edges(graph *g, const links *L, const trd_xfer *x)
{
    for (size_t l = 0; l < L->count; l++) {
        size_t e = g->nedges++;
        g->left[e] = x[L->order[L->first[l]]].from;
        g->right[e] = x[L->order[L->first[l]]].to;
        g->link[e] = l;
        for (size_t k = L->first[l]; k < L->first[l + 1]; k++)
            mpq_add(g->w[e], g->w[e], x[L->order[k]].duration);
    }
}

/* Step 2: delta = the largest weighted degree, then dummy edges up to it.
 * The deficiencies Delta - deg(v) add up to n Delta - (total weight) on
 * both sides; pairing the first deficient sender with the first deficient
 * receiver for the smaller deficiency zeroes one of the 2n at least each
 * time, and the last one two, hence at most 2n - 1 dummy edges. */
static trd_status pad_to_regular(graph *g, mpq_t delta)
{
    size_t un = (size_t)g->n;
    mpq_t *defl = qvec_new(un), *defr = qvec_new(un);
    if (defl == NULL || defr == NULL) {
        qvec_free(defl, defl != NULL ? un : 0);
        qvec_free(defr, defr != NULL ? un : 0);
        return trd_fail(TRD_ENOMEM, "matchings: no memory for the degrees of %d nodes", g->n);
    }
    for (size_t e = 0; e < g->nedges; e++) {
        mpq_add(defl[g->left[e]], defl[g->left[e]], g->w[e]);
        mpq_add(defr[g->right[e]], defr[g->right[e]], g->w[e]);
    }
    for (size_t v = 0; v < un; v++) {
        if (mpq_cmp(defl[v], delta) > 0)
            mpq_set(delta, defl[v]);
        if (mpq_cmp(defr[v], delta) > 0)
            mpq_set(delta, defr[v]);
    }
    for (size_t v = 0; v < un; v++) {
        mpq_sub(defl[v], delta, defl[v]);
        mpq_sub(defr[v], delta, defr[v]);
    }
    for (int32_t i = 0, j = 0; i < g->n && j < g->n;) {
        if (mpq_sgn(defl[i]) == 0 || mpq_sgn(defr[j]) == 0) {
            i += mpq_sgn(defl[i]) == 0;
            j += mpq_sgn(defr[j]) == 0;
            continue;
        }
        size_t e = g->nedges++;
        g->left[e] = i;
        g->right[e] = j;
        g->link[e] = NONE;
        mpq_set(g->w[e], mpq_cmp(defl[i], defr[j]) < 0 ? defl[i] : defr[j]);
        mpq_sub(defl[i], defl[i], g->w[e]);
        mpq_sub(defr[j], defr[j], g->w[e]);
    }
    qvec_free(defl, un);
    qvec_free(defr, un);
    return TRD_OK;
}

/* The edges of each sender, for the searches of step 3. */
static void build_adjacency(graph *g)
{
    for (size_t e = 0; e < g->nedges; e++)
        g->adj_first[g->left[e] + 1]++;
    for (int32_t u = 0; u < g->n; u++)
        g->adj_first[u + 1] += g->adj_first[u];
    for (size_t e = 0; e < g->nedges; e++)
        g->adj[g->adj_first[g->left[e]]++] = e;
    for (int32_t u = g->n; u > 0; u--) /* the fill moved each start to the next */
        g->adj_first[u] = g->adj_first[u - 1];
    g->adj_first[0] = 0;
}

/* Steps 1 and 2: G_B, Delta-regular, Delta in delta. */
static trd_status graph_build(graph *g, const links *L, const trd_xfer *x, int32_t n,
                              mpq_t delta)
{
    trd_status st = graph_alloc(g, n, L->count + 2 * (size_t)n - 1);
    if (st != TRD_OK)
        return st;
    add_real_edges(g, L, x);
    st = pad_to_regular(g, delta);
    if (st == TRD_OK)
        build_adjacency(g);
    return st;
}

/* Matches the search's free right vertex v, flipping the path back to the
 * root: each left u on it takes the edge that reached v and gives its old
 * mate to the right vertex before it. */
static void flip_path(graph *g, int32_t v)
{
    while (v >= 0) {
        size_t e = g->via[v];
        int32_t u = g->left[e];
        int32_t before = g->from_r[u];
        g->mate_l[u] = e;
        g->mate_r[v] = e;
        v = before;
    }
}

/* Breadth-first search for an augmenting path from the free sender root
 * over the edges still present (step 3); true when it matched root. */
static bool augment(graph *g, int32_t root)
{
    size_t head = 0, tail = 0;
    g->stamp++;
    g->queue[tail++] = root;
    g->from_r[root] = -1;
    while (head < tail) {
        int32_t u = g->queue[head++];
        for (size_t k = g->adj_first[u]; k < g->adj_first[u + 1]; k++) {
            size_t e = g->adj[k];
            int32_t v = g->right[e];
            if (mpq_sgn(g->w[e]) == 0 || g->seen[v] == g->stamp)
                continue;
            g->seen[v] = g->stamp;
            g->via[v] = e;
            if (g->mate_r[v] == NONE) {
                flip_path(g, v);
                return true;
            }
            int32_t next = g->left[g->mate_r[v]];
            g->from_r[next] = v;
            g->queue[tail++] = next;
        }
    }
    return false;
}

/* A perfect matching of the support (step 3), grown from what is left of
 * the previous round's. */
static bool match_all(graph *g)
{
    for (int32_t u = 0; u < g->n; u++)
        if (g->mate_l[u] == NONE && !augment(g, u))
            return false;
    return true;
}

/* Appends one initialised transfer to m, growing its array (capacity cap). */
static trd_status push_part(trd_matching *m, size_t *cap, trd_xfer **part)
{
    if ((size_t)m->count == *cap) {
        size_t grown = *cap ? 2 * *cap : 4;
        trd_xfer *p = realloc(m->xfers, grown * sizeof *p);
        if (p == NULL)
            return trd_fail(TRD_ENOMEM, "matchings: no memory for %zu transfers", grown);
        m->xfers = p;
        *cap = grown;
    }
    *part = &m->xfers[m->count++];
    trd_xfer_init(*part);
    return TRD_OK;
}

/* Step 4: gives the share of link l in this round to its transfers in input
 * order; a part of duration d of transfer t carries amount(t) d / duration(t).
 * The share never exceeds what the link has left (its edge's weight). */
static trd_status split_share(trd_matching *m, size_t *cap, links *L, size_t l,
                              const trd_xfer *x, mpq_t share)
{
    trd_status st = TRD_OK;
    mpq_t rest;
    mpq_init(rest);
    while (st == TRD_OK && mpq_sgn(share) > 0) {
        const trd_xfer *t = &x[L->order[L->cursor[l]]];
        trd_xfer *part = NULL;
        st = push_part(m, cap, &part);
        if (st != TRD_OK)
            break;
        part->from = t->from;
        part->to = t->to;
        part->label = t->label;
        mpq_sub(rest, t->duration, L->done[l]);
        mpq_set(part->duration, mpq_cmp(share, rest) < 0 ? share : rest);
        mpq_div(part->amount, part->duration, t->duration);
        mpq_mul(part->amount, part->amount, t->amount);
        mpq_sub(share, share, part->duration);
        mpq_add(L->done[l], L->done[l], part->duration);
        if (mpq_equal(L->done[l], t->duration)) {
            L->cursor[l]++;
            mpq_set_ui(L->done[l], 0, 1);
        }
    }
    mpq_clear(rest);
    return st;
}

/* Appends the round's matching for duration w: the real edges' transfers,
 * by sender. */
static trd_status emit(trd_matchings *out, const graph *g, links *L, const trd_xfer *x,
                       const mpq_t w)
{
    trd_status st = TRD_OK;
    trd_matching *m = &out->list[out->count++];
    size_t cap = 0;
    mpq_t share;
    mpq_init(m->duration);
    mpq_set(m->duration, w);
    m->count = 0;
    m->xfers = NULL;
    mpq_init(share);
    for (int32_t u = 0; st == TRD_OK && u < g->n; u++) {
        size_t e = g->mate_l[u];
        if (g->link[e] == NONE)
            continue;
        mpq_set(share, w);
        st = split_share(m, &cap, L, g->link[e], x, share);
    }
    mpq_clear(share);
    return st;
}

/* w = the weight of the lightest matched edge: the round's duration. */
static void lightest_matched(const graph *g, mpq_t w)
{
    mpq_set(w, g->w[g->mate_l[0]]);
    for (int32_t u = 1; u < g->n; u++)
        if (mpq_cmp(g->w[g->mate_l[u]], w) < 0)
            mpq_set(w, g->w[g->mate_l[u]]);
}

/* Subtracts w from every matched edge and unmatches those that vanish. */
static void subtract_round(graph *g, const mpq_t w)
{
    for (int32_t u = 0; u < g->n; u++) {
        size_t e = g->mate_l[u];
        mpq_sub(g->w[e], g->w[e], w);
        if (mpq_sgn(g->w[e]) == 0)
            g->mate_l[u] = g->mate_r[g->right[e]] = NONE;
    }
}

/* Steps 3 and 4 until the regular graph of degree delta is used up.  Each
 * round removes an edge, so g->nedges rounds at most (the list's size). */
static trd_status decompose(graph *g, links *L, const trd_xfer *x, const mpq_t delta,
                            trd_matchings *out)
{
    trd_status st = TRD_OK;
    mpq_t left, w;
    out->list = alloc(g->nedges, sizeof *out->list);
    if (out->list == NULL)
        return trd_fail(TRD_ENOMEM, "matchings: no memory for %zu matchings", g->nedges);
    mpq_init(left);
    mpq_init(w);
    mpq_set(left, delta);
    while (st == TRD_OK && mpq_sgn(left) > 0) {
        if ((size_t)out->count == g->nedges || !match_all(g)) {
            st = trd_fail(TRD_EINVAL, "matchings: internal error, no perfect matching in a "
                          "regular bipartite graph (round %d)", out->count + 1);
            break;
        }
        lightest_matched(g, w);
        st = emit(out, g, L, x, w);
        if (st != TRD_OK)
            break;
        subtract_round(g, w);
        mpq_sub(left, left, w);
    }
    mpq_clear(left);
    mpq_clear(w);
    return st;
}

static void clear_list(trd_matchings *m)
{
    for (int32_t k = 0; m->list != NULL && k < m->count; k++) {
        for (int32_t i = 0; i < m->list[k].count; i++)
            trd_xfer_clear(&m->list[k].xfers[i]);
        free(m->list[k].xfers);
        mpq_clear(m->list[k].duration);
    }
    free(m->list);
    m->list = NULL;
    m->count = 0;
}

trd_status trd_matchings_build(const trd_xfer *xfers, int32_t count, int32_t n_nodes,
                               trd_matchings *out)
{
    if (out == NULL)
        return trd_fail(TRD_EINVAL, "matchings: out is NULL");
    links L = {0};
    graph g = {0};
    out->count = 0;
    out->list = NULL;
    mpq_init(out->total);
    trd_status st = check_input(xfers, count, n_nodes);
    if (st != TRD_OK)
        goto done;
    st = links_build(&L, xfers, (size_t)count, n_nodes);
    if (st != TRD_OK)
        goto done;
    st = graph_build(&g, &L, xfers, n_nodes, out->total);
    if (st != TRD_OK)
        goto done;
    st = decompose(&g, &L, xfers, out->total, out);
done:
    if (st != TRD_OK) {
        clear_list(out);
        mpq_set_ui(out->total, 0, 1);
    }
    links_free(&L);
    graph_free(&g);
    return st;
}

void trd_matchings_free(trd_matchings *m)
{
    if (m == NULL)
        return;
    clear_list(m);
    mpq_clear(m->total);
}
