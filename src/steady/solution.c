/* solution.c: the LP's solution as lists of nonzero send(i -> j, type)
 * and cons(i, T_{k,l,m}) rates, and the removal of send cycles.
 *
 * A cycle of sends of one type (i -> j -> ... -> i) moves nothing: removing
 * it keeps every conservation row and TP and only frees port time.  The LP
 * may return such cycles (degenerate optima); without them the sends of
 * each type form a DAG, which Fig. 8 needs to stop (a tree following a
 * cycle would never reach a leaf). */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "steady/build.h"

/* Appends every positive send and comp column to st. */
trd_status trd_sd_take_solution(trd_steady *st, const trd_sd_build *b, const mpq_t tp, mpq_t *x)
{
    const trd_platform *pf = b->pf;
    int32_t p = st->n_members;
    mpq_set(st->throughput, tp);
    st->sends = calloc((size_t)b->n_sends + 1, sizeof *st->sends);
    st->comps = calloc((size_t)b->n_comps + 1, sizeof *st->comps);
    if (st->sends == NULL || st->comps == NULL)
        return trd_fail(TRD_ENOMEM, "out of memory for the solution");
    for (int32_t s = 0; s < b->n_sends; s++) {
        if (mpq_sgn(x[1 + s]) == 0)
            continue;
        const trd_plink *l = &pf->links[b->sends[s].link];
        trd_sd_send *d = &st->sends[st->n_sends++];
        *d = (trd_sd_send){.link = b->sends[s].link, .from = l->from, .to = l->to,
                           .type = b->sends[s].type};
        mpq_init(d->rate);
        mpz_init(d->count);
        mpq_set(d->rate, x[1 + s]);
    }
    for (int32_t c = 0; c < b->n_comps; c++) {
        mpq_srcptr v = x[1 + b->n_sends + c];
        if (mpq_sgn(v) == 0)
            continue;
        const trd_sd_var_comp *vc = &b->comps[c];
        trd_sd_comp *d = &st->comps[st->n_comps++];
        *d = (trd_sd_comp){.node = vc->node, .k = vc->k, .l = vc->l, .m = vc->m,
                           .type = st->type_of[vc->k * p + vc->m],
                           .left = st->type_of[vc->k * p + vc->l],
                           .right = st->type_of[(vc->l + 1) * p + vc->m]};
        mpq_init(d->rate);
        mpz_init(d->count);
        mpq_set(d->rate, v);
    }
    return TRD_OK;
}

/* Scratch space of the cycle search over the sends of one type. */
typedef struct cycle_search {
    const trd_steady *st;
    const int32_t *edges; /* indices into st->sends, all of one type */
    int32_t n_edges;
    int8_t *state;        /* per node: 0 new, 1 on the path, 2 done */
    int32_t *next, *via;  /* per node: next edge to try, edge it was entered by */
    int32_t *path;        /* the nodes of the current path */
    int32_t *cycle, len;  /* the cycle found (send indices) */
} cycle_search;

/* The next positive edge out of u at or after position *at, or -1. */
static int32_t next_edge(const cycle_search *c, int32_t u, int32_t *at)
{
    for (; *at < c->n_edges; (*at)++) {
        const trd_sd_send *s = &c->st->sends[c->edges[*at]];
        if (s->from == u && mpq_sgn(s->rate) > 0)
            return c->edges[(*at)++];
    }
    return -1;
}

/* Depth-first search from `start`; true with c->cycle when one is found. */
static bool dfs(cycle_search *c, int32_t start)
{
    int32_t top = 0;
    c->path[top++] = start;
    c->state[start] = 1;
    while (top > 0) {
        int32_t u = c->path[top - 1], e = next_edge(c, u, &c->next[u]);
        if (e < 0) {
            c->state[u] = 2;
            top--;
            continue;
        }
        int32_t v = c->st->sends[e].to;
        if (c->state[v] == 1) { /* back edge: the path from v to u, then e */
            c->len = 0;
            c->cycle[c->len++] = e;
            for (int32_t w = u; w != v; w = c->st->sends[c->via[w]].from)
                c->cycle[c->len++] = c->via[w];
            return true;
        }
        if (c->state[v] == 0) {
            c->state[v] = 1;
            c->via[v] = e;
            c->path[top++] = v;
        }
    }
    return false;
}

static bool find_cycle(cycle_search *c, int32_t n_nodes)
{
    memset(c->state, 0, (size_t)n_nodes);
    memset(c->next, 0, (size_t)n_nodes * sizeof *c->next);
    for (int32_t i = 0; i < c->n_edges; i++) {
        int32_t u = c->st->sends[c->edges[i]].from;
        if (c->state[u] == 0 && dfs(c, u))
            return true;
    }
    return false;
}

/* Subtracts the cycle's smallest rate from each of its sends. */
static void cancel(trd_steady *st, const cycle_search *c)
{
    mpq_t least;
    mpq_init(least);
    mpq_set(least, st->sends[c->cycle[0]].rate);
    for (int32_t i = 1; i < c->len; i++)
        if (mpq_cmp(st->sends[c->cycle[i]].rate, least) < 0)
            mpq_set(least, st->sends[c->cycle[i]].rate);
    for (int32_t i = 0; i < c->len; i++)
        mpq_sub(st->sends[c->cycle[i]].rate, st->sends[c->cycle[i]].rate, least);
    mpq_clear(least);
}

/* Drops the sends whose rate became 0. */
static void compact(trd_steady *st)
{
    int32_t kept = 0;
    for (int32_t s = 0; s < st->n_sends; s++) {
        if (mpq_sgn(st->sends[s].rate) == 0) {
            mpq_clear(st->sends[s].rate);
            mpz_clear(st->sends[s].count);
        } else {
            st->sends[kept++] = st->sends[s];
        }
    }
    st->n_sends = kept;
}

/* by_type[off[t] .. off[t+1]): the sends of type t. */
static void group_by_type(const trd_steady *st, int32_t *off, int32_t *by_type)
{
    memset(off, 0, ((size_t)st->n_types + 1) * sizeof *off);
    for (int32_t s = 0; s < st->n_sends; s++)
        off[st->sends[s].type]++;
    for (int32_t t = 1; t <= st->n_types; t++)
        off[t] += off[t - 1];
    for (int32_t s = st->n_sends - 1; s >= 0; s--)
        by_type[--off[st->sends[s].type]] = s;
}

trd_status trd_sd_cancel_cycles(trd_steady *st)
{
    int32_t n = st->n_nodes, ns = st->n_sends;
    int32_t *off = malloc(((size_t)st->n_types + 1) * sizeof *off);
    int32_t *by_type = malloc(((size_t)ns + 1) * sizeof *by_type);
    cycle_search c = {.st = st, .state = malloc((size_t)n),
                      .next = malloc((size_t)n * sizeof(int32_t)),
                      .via = malloc((size_t)n * sizeof(int32_t)),
                      .path = malloc((size_t)n * sizeof(int32_t)),
                      .cycle = malloc((size_t)n * sizeof(int32_t))};
    trd_status s = TRD_OK;
    if (!off || !by_type || !c.state || !c.next || !c.via || !c.path || !c.cycle)
        s = trd_fail(TRD_ENOMEM, "out of memory for the cycle search");
    if (s == TRD_OK)
        group_by_type(st, off, by_type);
    for (int32_t t = 0; s == TRD_OK && t < st->n_types; t++) {
        c.edges = by_type + off[t];
        c.n_edges = off[t + 1] - off[t];
        while (find_cycle(&c, n))
            cancel(st, &c);
    }
    if (s == TRD_OK)
        compact(st);
    free(off);
    free(by_type);
    free(c.state);
    free(c.next);
    free(c.via);
    free(c.path);
    free(c.cycle);
    return s;
}
