/* build.c: the linear program shared by the three problems of Legrand,
 * Marchal and Robert (2004) -- one-port constraints (2)-(3) with (4)/(8),
 * the conservation law (5)/(10) and the throughput rows (6)/(11) -- and
 * its solution.  A gossip is the scatters of every participant sharing the
 * one-port rows (Sec. 3.5); a reduce adds computations (reduce.c).
 *
 * The corrections of the paper (docs/STEADY.md, "Corrections, applied")
 * are applied here, through each type's leaf and sink: the source of a
 * scatter (and of a gossip message) is exempt from conservation and never
 * receives its own messages; a destination never sends its own type, and
 * the reduce target never re-sends v[0,N]; the owner of v[i,i] has an
 * unlimited supply of it (no conservation row, never receives it). */
#include "steady/build.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

/* The out-neighbours of every node: adj[off[u] .. off[u+1]). */
static trd_status adjacency(const trd_platform *pf, int32_t **off, int32_t **adj)
{
    int32_t n = pf->n_nodes;
    *off = calloc((size_t)n + 1, sizeof **off);
    *adj = malloc((size_t)(pf->n_links ? pf->n_links : 1) * sizeof **adj);
    if (*off == NULL || *adj == NULL)
        return trd_fail(TRD_ENOMEM, "out of memory for the links of %d nodes", (int)n);
    for (int32_t e = 0; e < pf->n_links; e++) /* counts, then ends of ranges */
        (*off)[pf->links[e].from]++;
    for (int32_t u = 1; u <= n; u++)
        (*off)[u] += (*off)[u - 1];
    for (int32_t e = pf->n_links - 1; e >= 0; e--) /* ends become starts */
        (*adj)[--(*off)[pf->links[e].from]] = pf->links[e].to;
    return TRD_OK;
}

/* reach[a * n + b] for every pair, by one search from each node. */
static trd_status compute_reach(trd_sd_build *b)
{
    int32_t n = b->pf->n_nodes, *off = NULL, *adj = NULL;
    int32_t *stack = malloc((size_t)n * sizeof *stack);
    b->reach = calloc((size_t)n * (size_t)n, 1);
    trd_status st = adjacency(b->pf, &off, &adj);
    if (st == TRD_OK && (stack == NULL || b->reach == NULL))
        st = trd_fail(TRD_ENOMEM, "out of memory for the reachability of %d nodes", (int)n);
    for (int32_t a = 0; st == TRD_OK && a < n; a++) {
        uint8_t *seen = b->reach + (size_t)a * (size_t)n;
        int32_t top = 0;
        seen[a] = 1;
        stack[top++] = a;
        while (top > 0) {
            int32_t u = stack[--top];
            for (int32_t x = off[u]; x < off[u + 1]; x++)
                if (!seen[adj[x]]) {
                    seen[adj[x]] = 1;
                    stack[top++] = adj[x];
                }
        }
    }
    free(stack);
    free(off);
    free(adj);
    return st;
}

/* The nodes whose values a type contains: the participants k..m of a
 * reduce's v[k,m], the leaf of a scatter or gossip message. */
static void origins(const trd_steady *st, int32_t t, int32_t *first, int32_t *last,
                    const int32_t **nodes)
{
    const trd_sd_type *ty = &st->types[t];
    if (st->problem == TRD_STEADY_REDUCE) {
        *nodes = st->members;
        *first = ty->k;
        *last = ty->m;
    } else {
        *nodes = &ty->leaf;
        *first = *last = 0;
    }
}

/* Where a type must end: its sink, or the reduce target. */
static int32_t destination(const trd_steady *st, int32_t t)
{
    return st->problem == TRD_STEADY_REDUCE ? st->root : st->types[t].sink;
}

static trd_status compute_holds(trd_sd_build *b)
{
    const trd_steady *st = b->st;
    int32_t n = b->pf->n_nodes;
    b->holds = malloc((size_t)st->n_types * (size_t)n);
    if (b->holds == NULL)
        return trd_fail(TRD_ENOMEM, "out of memory for %d message types", (int)st->n_types);
    for (int32_t t = 0; t < st->n_types; t++) {
        int32_t first, last, dest = destination(st, t);
        const int32_t *nodes;
        origins(st, t, &first, &last, &nodes);
        for (int32_t i = 0; i < n; i++) {
            uint8_t ok = b->reach[(size_t)i * (size_t)n + (size_t)dest];
            for (int32_t q = first; ok && q <= last; q++)
                ok = b->reach[(size_t)nodes[q] * (size_t)n + (size_t)i];
            b->holds[(size_t)t * (size_t)n + (size_t)i] = ok;
        }
    }
    return TRD_OK;
}

/* Sets st->reachable and, when false, st->unreachable naming up to three
 * (origin, destination) pairs with no path. */
static trd_status find_unreachable(trd_steady *st, const trd_sd_build *b)
{
    char msg[512] = "";
    size_t len = 0;
    int32_t n = b->pf->n_nodes, pairs = 0;
    for (int32_t t = 0; t < st->n_types; t++) {
        int32_t first, last, dest = destination(st, t);
        const int32_t *nodes;
        if (st->types[t].sink < 0)
            continue;
        origins(st, t, &first, &last, &nodes);
        for (int32_t q = first; q <= last; q++) {
            if (b->reach[(size_t)nodes[q] * (size_t)n + (size_t)dest])
                continue;
            if (++pairs <= 3 && len < sizeof msg)
                len += (size_t)snprintf(msg + len, sizeof msg - len, "%s'%s' cannot reach '%s'",
                                        pairs > 1 ? "; " : "", b->pf->nodes[nodes[q]].name,
                                        b->pf->nodes[dest].name);
        }
    }
    if (pairs > 3 && len < sizeof msg)
        snprintf(msg + len, sizeof msg - len, "; and %d more", (int)(pairs - 3));
    st->reachable = pairs == 0;
    free(st->unreachable);
    st->unreachable = strdup(msg);
    return st->unreachable ? TRD_OK : trd_fail(TRD_ENOMEM, "out of memory");
}

/* A row of the table of build.h, created on first use in *slot. */
static trd_status lazy_row(trd_sd_build *b, int32_t *slot, char sense, long rhs, int32_t *row)
{
    trd_status st = TRD_OK;
    if (*slot < 0)
        st = trd_lp_add_row(&b->lp, sense, rhs, slot);
    *row = *slot;
    return st;
}

trd_status trd_sd_row_cons(trd_sd_build *b, int32_t node, int32_t type, int32_t *row)
{
    size_t at = (size_t)node * (size_t)b->st->n_types + (size_t)type;
    return lazy_row(b, &b->cons_row[at], 'E', 0, row);
}

trd_status trd_sd_row_cpu(trd_sd_build *b, int32_t node, int32_t *row)
{
    return lazy_row(b, &b->cpu_row[node], 'L', 1, row);
}

/* Column 0: TP, counted at every type's sink (6), (11). */
static trd_status tp_column(trd_sd_build *b)
{
    mpq_t minus_one;
    mpq_init(minus_one);
    mpq_set_si(minus_one, -1, 1);
    trd_status st = trd_lp_add_col(&b->lp, 1);
    for (int32_t t = 0; st == TRD_OK && t < b->st->n_types; t++) {
        int32_t row, sink = b->st->types[t].sink;
        if (sink >= 0 && (st = trd_sd_row_cons(b, sink, t, &row)) == TRD_OK)
            st = trd_lp_add_entry(&b->lp, row, minus_one);
    }
    mpq_clear(minus_one);
    return st;
}

/* Whether send(link, type) may be nonzero: both ends can hold the type,
 * the receiver is not its leaf and the sender not its sink (docs/STEADY.md,
 * "Corrections, applied"). */
static bool can_send(const trd_sd_build *b, int32_t link, int32_t t)
{
    const trd_plink *l = &b->pf->links[link];
    const trd_sd_type *ty = &b->st->types[t];
    size_t n = (size_t)b->pf->n_nodes, at = (size_t)t * n;
    return b->holds[at + (size_t)l->from] && b->holds[at + (size_t)l->to] &&
           l->to != ty->leaf && l->from != ty->sink;
}

/* The entries of send(link, t): one-port rows (4)/(8), conservation at both
 * ends (none at the leaf). */
static trd_status send_entries(trd_sd_build *b, int32_t link, int32_t t, mpq_t busy,
                               mpq_t coef)
{
    const trd_plink *l = &b->pf->links[link];
    int32_t row;
    trd_status st;
    mpq_mul(busy, b->st->types[t].size, l->cost);
    if ((st = lazy_row(b, &b->out_row[l->from], 'L', 1, &row)) != TRD_OK ||
        (st = trd_lp_add_entry(&b->lp, row, busy)) != TRD_OK ||
        (st = lazy_row(b, &b->in_row[l->to], 'L', 1, &row)) != TRD_OK ||
        (st = trd_lp_add_entry(&b->lp, row, busy)) != TRD_OK)
        return st;
    mpq_set_si(coef, 1, 1);
    if ((st = trd_sd_row_cons(b, l->to, t, &row)) != TRD_OK ||
        (st = trd_lp_add_entry(&b->lp, row, coef)) != TRD_OK)
        return st;
    if (l->from == b->st->types[t].leaf)
        return TRD_OK;
    mpq_set_si(coef, -1, 1);
    if ((st = trd_sd_row_cons(b, l->from, t, &row)) != TRD_OK)
        return st;
    return trd_lp_add_entry(&b->lp, row, coef);
}

static trd_status send_columns(trd_sd_build *b)
{
    mpq_t busy, coef;
    mpq_inits(busy, coef, NULL);
    trd_status st = TRD_OK;
    for (int32_t e = 0; st == TRD_OK && e < b->pf->n_links; e++)
        for (int32_t t = 0; st == TRD_OK && t < b->st->n_types; t++) {
            if (!can_send(b, e, t))
                continue;
            if (b->n_sends == b->cap_sends) {
                int32_t cap = b->cap_sends ? 2 * b->cap_sends : 256;
                void *p = realloc(b->sends, (size_t)cap * sizeof *b->sends);
                if (p == NULL) {
                    st = trd_fail(TRD_ENOMEM, "out of memory for the send variables");
                    break;
                }
                b->sends = p;
                b->cap_sends = cap;
            }
            b->sends[b->n_sends++] = (trd_sd_var_send){e, t};
            if ((st = trd_lp_add_col(&b->lp, 0)) == TRD_OK)
                st = send_entries(b, e, t, busy, coef);
        }
    mpq_clears(busy, coef, NULL);
    return st;
}

static int32_t *minus_ones(size_t n)
{
    int32_t *a = malloc((n ? n : 1) * sizeof *a);
    if (a != NULL)
        memset(a, 0xff, (n ? n : 1) * sizeof *a);
    return a;
}

static void build_clear(trd_sd_build *b)
{
    trd_lp_clear(&b->lp);
    free(b->reach);
    free(b->holds);
    free(b->cons_row);
    free(b->out_row);
    free(b->in_row);
    free(b->cpu_row);
    free(b->sends);
    free(b->comps);
}

/* Writes the whole LP into b (after reach and holds). */
static trd_status write_lp(trd_sd_build *b)
{
    size_t n = (size_t)b->pf->n_nodes;
    b->cons_row = minus_ones(n * (size_t)b->st->n_types);
    b->out_row = minus_ones(n);
    b->in_row = minus_ones(n);
    b->cpu_row = minus_ones(n);
    if (!b->cons_row || !b->out_row || !b->in_row || !b->cpu_row)
        return trd_fail(TRD_ENOMEM, "out of memory for the linear program's rows");
    trd_status st;
    if ((st = tp_column(b)) != TRD_OK || (st = send_columns(b)) != TRD_OK)
        return st;
    return b->st->problem == TRD_STEADY_REDUCE ? trd_sd_reduce_columns(b) : TRD_OK;
}

/* write_lp, with what to do when the LP is too large to solve. */
static trd_status written(const trd_steady *st, trd_sd_build *b)
{
    trd_status s = write_lp(b);
    if (s != TRD_EUNSUPPORTED)
        return s;
    bool scatter = st->problem == TRD_STEADY_SCATTER;
    return trd_fail(s, "the linear program needs more than %d variables: %d %s on %d nodes "
                    "are too many to solve exactly in reasonable time%s; choose fewer with "
                    "--%s", TRD_LP_MAX_COLUMNS, (int)st->n_members,
                    scatter ? "targets" : "participants", (int)b->pf->n_nodes,
                    st->problem == TRD_STEADY_REDUCE ? " (a reduce has O(N^3) tasks per node)"
                                                     : "",
                    scatter ? "targets" : "participants");
}

/* Solves the written LP and stores its solution in st. */
static trd_status solve(trd_steady *st, trd_sd_build *b)
{
    int32_t n = b->lp.n_cols;
    mpq_t tp, *x = malloc((size_t)n * sizeof *x);
    if (x == NULL)
        return trd_fail(TRD_ENOMEM, "out of memory for %d LP variables", (int)n);
    mpq_init(tp);
    for (int32_t c = 0; c < n; c++)
        mpq_init(x[c]);
    trd_status s = trd_lp_solve(&b->lp, tp, x);
    if (s == TRD_OK)
        s = trd_sd_take_solution(st, b, tp, x);
    for (int32_t c = 0; c < n; c++)
        mpq_clear(x[c]);
    free(x);
    mpq_clear(tp);
    return s;
}

trd_status trd_sd_solve_lp(trd_steady *st, const trd_platform *pf)
{
    trd_sd_build b;
    memset(&b, 0, sizeof b);
    trd_lp_init(&b.lp);
    b.st = st;
    b.pf = pf;
    trd_status s;
    if ((s = compute_reach(&b)) == TRD_OK && (s = compute_holds(&b)) == TRD_OK &&
        (s = find_unreachable(st, &b)) == TRD_OK && st->reachable &&
        (s = written(st, &b)) == TRD_OK) {
        st->lp_rows = b.lp.n_rows;
        st->lp_cols = b.lp.n_cols;
        s = solve(st, &b);
    }
    build_clear(&b);
    return s;
}
