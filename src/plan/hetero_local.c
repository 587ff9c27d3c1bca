/* hetero_local.c: the local search of hetero-greedy (hetero_greedy.c).
 *
 * Backward growth decides each rank's place once, and under heterogeneous
 * costs some early choices are poor: a slow rank that should have sent
 * early to a lightly loaded receiver is attached last, where every
 * receiver is busy.  So the tree is improved by first-improvement descent
 * over two moves, evaluated exactly (the one-node evaluator of
 * src/model/homogeneous.c, each node taking its inputs in the better of
 * two orders: the order they become ready, or earliest completing
 * transfer first - list scheduling):
 *   - move an input x (with its subtree) to another receiver t;
 *   - exchange two ranks' places in the tree (their subtrees stay).
 * Only moves that can shorten the schedule are tried: x a rank on the
 * critical path or an input of one (the chain of binding transfers and
 * combines from the root's last combine back to a leaf), t among the 16
 * receivers x reaches cheapest (transfer plus combine), exchange partners
 * among the 16 ranks that would send cheapest to x's receiver; each
 * candidate keeps its first move that shortens the plan.  A move only
 * recomputes the paths from the old and new receiver up to the root,
 * stopping where a time does not change.  Rounds, each over the critical
 * path found at its start, until one improves nothing (at most 4n).
 *
 * The tree is kept over slots whose ranks (labels) an exchange swaps, so
 * that the structure stays put; times are kept per position. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "plan/hetero.h"

/* Targets per moved input and partners per exchanged rank. */
#define CHOICES 16
/* Above this many inputs a node takes them in ready order only (list
 * scheduling is quadratic). */
#define LIST_MAX 64

typedef struct search {
    const trd_cost_view *v;
    int32_t n;
    int32_t *parent, *kid, *next, *prev; /* per slot: the tree, children linked */
    int32_t *label, *slot_of;            /* slot -> position -> slot */
    double *ready;                       /* per position */
    int32_t *in, *alt, *pick, *crit, *cand; /* scratch */
    double *arrive, *end, *score;           /* scratch */
    double cur;
} search;

static bool earlier(const search *S, int32_t a, int32_t b)
{
    return S->ready[a] < S->ready[b] || (S->ready[a] == S->ready[b] && a < b);
}

static int32_t gather(const search *S, int32_t s)
{
    int32_t m = 0;
    for (int32_t k = S->kid[s]; k >= 0; k = S->next[k])
        S->in[m++] = S->label[k];
    for (int32_t i = 1; i < m; i++) /* ready order (insertion: m is small) */
        for (int32_t j = i; j > 0 && earlier(S, S->in[j], S->in[j - 1]); j--) {
            int32_t t = S->in[j];
            S->in[j] = S->in[j - 1];
            S->in[j - 1] = t;
        }
    return m;
}

/* Earliest completing transfer first: S->alt from S->in (ready order). */
static void list_order(search *S, int32_t pos, int32_t m)
{
    double port = -INFINITY;
    memcpy(S->alt, S->in, (size_t)m * sizeof *S->alt);
    for (int32_t j = 0; j < m; j++) {
        int32_t best = j;
        double best_end = INFINITY;
        for (int32_t k = j; k < m; k++) {
            int32_t x = S->alt[k];
            double end = fmax(S->ready[x], port) + trd_view_transfer(S->v, x, pos);
            if (end < best_end) { /* ties: the earlier ready, as scanned */
                best_end = end;
                best = k;
            }
        }
        int32_t t = S->alt[j];
        S->alt[j] = S->alt[best];
        S->alt[best] = t;
        port = best_end;
    }
}

/* When slot s finishes; *order (optional) gets its inputs' positions in
 * the order that achieves it. */
static double finish(search *S, int32_t s, const int32_t **order, int32_t *count)
{
    int32_t pos = S->label[s], m = gather(S, s);
    double e = trd_node_finish(S->v, pos, S->in, m, S->ready);
    const int32_t *best = S->in;
    if (m > 1 && m <= LIST_MAX) {
        list_order(S, pos, m);
        double f = trd_node_finish(S->v, pos, S->alt, m, S->ready);
        if (f < e) {
            e = f;
            best = S->alt;
        }
    }
    if (order) {
        *order = best;
        *count = m;
    }
    return e;
}

/* Recomputes slot s and its ancestors after a change at s: the first
 * `force` of them whatever happens (their inputs changed), then up to the
 * first whose time stays the same (nothing above it changes). */
static void update_up(search *S, int32_t s, int32_t force)
{
    for (; s >= 0; s = S->parent[s], force--) {
        double *r = &S->ready[S->label[s]], old = *r;
        *r = finish(S, s, NULL, NULL);
        if (force <= 1 && *r == old)
            return;
    }
}

static void unlink_slot(search *S, int32_t x)
{
    if (S->prev[x] >= 0)
        S->next[S->prev[x]] = S->next[x];
    else
        S->kid[S->parent[x]] = S->next[x];
    if (S->next[x] >= 0)
        S->prev[S->next[x]] = S->prev[x];
}

static void link_slot(search *S, int32_t x, int32_t p)
{
    S->parent[x] = p;
    S->prev[x] = -1;
    S->next[x] = S->kid[p];
    if (S->kid[p] >= 0)
        S->prev[S->kid[p]] = x;
    S->kid[p] = x;
}

/* Whether the last change shortened the plan; if so it is the new time. */
static bool improved(search *S)
{
    if (!(S->ready[0] < S->cur - 1e-12 * S->cur))
        return false;
    S->cur = S->ready[0];
    return true;
}

/* Moves input x to receiver t; keeps the move if it shortens the plan. */
static bool try_move(search *S, int32_t x, int32_t t)
{
    int32_t p = S->parent[x];
    if (t == x || t == p)
        return false;
    for (int32_t u = t; u >= 0; u = S->parent[u])
        if (u == x)
            return false; /* t lies in x's subtree */
    unlink_slot(S, x);
    link_slot(S, x, t);
    update_up(S, p, 1);
    update_up(S, t, 1);
    if (improved(S))
        return true;
    unlink_slot(S, x);
    link_slot(S, x, p);
    update_up(S, t, 1);
    update_up(S, p, 1);
    return false;
}

static void swap_labels(search *S, int32_t a, int32_t b)
{
    int32_t t = S->label[a];
    S->label[a] = S->label[b];
    S->label[b] = t;
    S->slot_of[S->label[a]] = a;
    S->slot_of[S->label[b]] = b;
    update_up(S, a, 2); /* a's time moved to another position; its receiver */
    update_up(S, b, 2); /* receives from another rank */
}

/* Exchanges the ranks of slots a and b; keeps it if it helps. */
static bool try_swap(search *S, int32_t a, int32_t b)
{
    if (a == b || a == 0 || b == 0)
        return false;
    swap_labels(S, a, b);
    if (improved(S))
        return true;
    swap_labels(S, a, b);
    return false;
}

/* Lists in S->crit the critical path: slots from the root down to a leaf,
 * each the input that binds its receiver's finish, found by walking the
 * receiver's schedule back (a combine that waited for the previous one, a
 * transfer that waited for the port) to an input's own ready time.
 * Returns its length. */
static int32_t critical_path(search *S)
{
    int32_t count = 0, s = 0, m;
    const int32_t *order;
    for (;;) {
        S->crit[count++] = s;
        finish(S, s, &order, &m);
        if (m == 0)
            return count;
        int32_t pos = S->label[s];
        double a = -INFINITY, e = 0.0;
        for (int32_t j = 0; j < m; j++) {
            a = S->arrive[j] = fmax(S->ready[order[j]], a) +
                               trd_view_transfer(S->v, order[j], pos);
            e = S->end[j] = fmax(a, e) + trd_view_combine(S->v, pos);
        }
        int32_t j = m - 1;
        while (j > 0 && S->end[j - 1] >= S->arrive[j])
            j--;
        while (j > 0 && S->arrive[j - 1] > S->ready[order[j]])
            j--;
        s = S->slot_of[order[j]];
    }
}

/* The CHOICES slots of least score[] (NaN: excluded), in S->pick. */
static int32_t best_choices(search *S, const double *score)
{
    int32_t k = 0;
    for (int32_t t = 0; t < S->n; t++) {
        if (isnan(score[t]))
            continue;
        int32_t i = k < CHOICES ? k++ : CHOICES;
        while (i > 0 && score[t] < score[S->pick[i - 1]]) {
            if (i < CHOICES)
                S->pick[i] = S->pick[i - 1];
            i--;
        }
        if (i < CHOICES)
            S->pick[i] = t;
    }
    return k;
}

/* The first of the CHOICES slots of least S->score (NaN: excluded) with
 * which try(S, x, slot) shortens the plan. */
static bool first_improving(search *S, int32_t x, bool (*try)(search *, int32_t, int32_t))
{
    int32_t k = best_choices(S, S->score);
    for (int32_t i = 0; i < k; i++)
        if (try(S, x, S->pick[i]))
            return true;
    return false;
}

/* The first improving move of x to one of its cheapest receivers. */
static bool move_improves(search *S, int32_t x)
{
    for (int32_t t = 0; t < S->n; t++)
        S->score[t] = t == x ? NAN
                      : trd_view_transfer(S->v, S->label[x], S->label[t]) +
                            trd_view_combine(S->v, S->label[t]);
    return first_improving(S, x, try_move);
}

/* The first improving exchange of slot a with a rank that would send
 * cheaply to a's receiver. */
static bool swap_improves(search *S, int32_t a)
{
    int32_t to = S->label[S->parent[a]];
    for (int32_t b = 0; b < S->n; b++)
        S->score[b] = b == 0 || b == a || S->label[b] == to
                          ? NAN
                          : trd_view_transfer(S->v, S->label[b], to) +
                                trd_view_combine(S->v, S->label[b]);
    return first_improving(S, a, try_swap);
}

/* One round over the critical path found at its start: each critical
 * rank and input of one (listed first: moves reorder the children lists)
 * makes its first improving move, if any, then each critical rank its
 * first improving exchange.  Whether any did. */
static bool round_improves(search *S)
{
    int32_t ncrit = critical_path(S), ncand = 0;
    for (int32_t c = 0; c < ncrit; c++) {
        int32_t s = S->crit[c];
        if (s != 0)
            S->cand[ncand++] = s;
        for (int32_t k = S->kid[s]; k >= 0; k = S->next[k])
            if (c + 1 >= ncrit || k != S->crit[c + 1])
                S->cand[ncand++] = k;
    }
    bool any = false;
    for (int32_t i = 0; i < ncand; i++)
        any |= move_improves(S, S->cand[i]);
    for (int32_t c = 1; c < ncrit; c++)
        any |= swap_improves(S, S->crit[c]);
    return any;
}

/* Everything the search needs, in one block (S->ready owns it). */
static trd_status alloc_search(search *S, int32_t n)
{
    size_t nn = (size_t)n;
    double *d = malloc(nn * 4 * sizeof(double) + (nn * 10 + CHOICES + 1) * sizeof(int32_t));
    if (!d)
        return trd_fail(TRD_ENOMEM, "hetero-greedy: out of memory for n = %ld", (long)n);
    S->ready = d;
    S->arrive = d + nn;
    S->end = d + 2 * nn;
    S->score = d + 3 * nn;
    int32_t *p = (int32_t *)(d + 4 * nn);
    int32_t **ints[] = {&S->parent, &S->kid,   &S->next, &S->prev, &S->label,
                        &S->slot_of, &S->in,   &S->alt,  &S->crit, &S->cand};
    for (size_t k = 0; k < sizeof ints / sizeof *ints; k++, p += nn)
        *ints[k] = p;
    S->pick = p;
    return TRD_OK;
}

/* Slots = positions at first; times computed children first. */
static void load_tree(search *S, const int32_t *parent)
{
    int32_t n = S->n;
    for (int32_t s = 0; s < n; s++) {
        S->kid[s] = -1;
        S->label[s] = S->slot_of[s] = s;
    }
    S->parent[0] = -1;
    for (int32_t s = n - 1; s >= 1; s--)
        link_slot(S, s, parent[s]);
    int32_t head = 0, tail = 1; /* breadth-first order in S->cand */
    S->cand[0] = 0;
    while (head < tail)
        for (int32_t k = S->kid[S->cand[head++]]; k >= 0; k = S->next[k])
            S->cand[tail++] = k;
    for (int32_t i = n - 1; i >= 0; i--)
        S->ready[S->label[S->cand[i]]] = finish(S, S->cand[i], NULL, NULL);
    S->cur = S->ready[0];
}

/* The searched tree in positions, with each node's receive order. */
static void store_tree(search *S, trd_hetero_tree *out)
{
    const int32_t *order;
    int32_t m;
    for (int32_t s = 0; s < S->n; s++) {
        int32_t pos = S->label[s];
        out->parent[pos] = s == 0 ? -1 : S->label[S->parent[s]];
        finish(S, s, &order, &m);
        for (int32_t j = 0; j < m; j++)
            out->seq[order[j]] = j;
    }
    out->seq[0] = 0;
    out->makespan = S->cur;
}

trd_status trd_hetero_local_search(const trd_cost_view *costs, int32_t n, trd_hetero_tree *tree)
{
    search S = {.v = costs, .n = n};
    trd_status st = alloc_search(&S, n);
    if (st == TRD_OK) {
        load_tree(&S, tree->parent);
        for (int64_t r = 0; r < 4 * (int64_t)n && round_improves(&S); r++)
            continue;
        if (S.cur < tree->makespan)
            store_tree(&S, tree);
    }
    free(S.ready);
    return st;
}
