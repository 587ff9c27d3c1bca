/* check_trees.c: the trees and matchings part of the independent check
 * (check.c says what is checked and why):
 *  - trees (Def. 1, Theorem 1): starting from one token per leaf (v[i,i] on
 *    its owner, each message on its source), every task and transfer of
 *    the tree fires exactly once, each consuming its inputs' tokens, and the
 *    tokens left are exactly the operation's results (v[0,N] on the
 *    target; each message on its destination) -- so every leaf is used
 *    once, tasks join adjacent intervals, transfers follow links; the
 *    weights add up to TP * period and sum w(T) chi_T = A;
 *  - matchings (Sec. 3.3): within one matching a node sends on one link
 *    only and receives on one link only, for at most the matching's
 *    duration; the durations add up to at most the period; the transfers
 *    add up to the trees' sends (w(T) or, for Prop. 4, r(T) times each). */
#include <stdlib.h>
#include <string.h>

#include "steady/check.h"

/* The type of v[k,m], by a scan of the types (not the builder's table). */
static int32_t interval(const trd_steady *st, int32_t k, int32_t m)
{
    for (int32_t t = 0; t < st->n_types; t++)
        if (st->types[t].k == k && st->types[t].m == m)
            return t;
    return -1;
}

/* A transfer of tree `which`: on a real link, known type. */
static trd_status hop_ok(const trd_steady *st, const trd_platform *pf, int32_t which,
                         const trd_sd_hop *h)
{
    if (h->link < 0 || h->link >= pf->n_links || pf->links[h->link].from != h->from ||
        pf->links[h->link].to != h->to || h->type < 0 || h->type >= st->n_types ||
        h->send < 0 || h->send >= st->n_sends || st->sends[h->send].link != h->link ||
        st->sends[h->send].type != h->type)
        return FAIL("tree %d: transfer %d -> %d is not on a link of the solution", (int)which,
                    (int)h->from, (int)h->to);
    return TRD_OK;
}

/* Fires what can fire until nothing can; tokens[t * n + i]. */
static void fire_all(const trd_steady *st, const trd_sd_tree *tr, int32_t n, int32_t *tokens,
                     uint8_t *done)
{
    bool progress = true;
    while (progress) {
        progress = false;
        for (int32_t h = 0; h < tr->n_hops; h++) {
            const trd_sd_hop *x = &tr->hops[h];
            if (done[h] || tokens[x->type * n + x->from] == 0)
                continue;
            tokens[x->type * n + x->from]--;
            tokens[x->type * n + x->to]++;
            done[h] = progress = true;
        }
        for (int32_t c = 0; c < tr->n_tasks; c++) {
            const trd_sd_task *x = &tr->tasks[c];
            int32_t a = interval(st, x->k, x->l) * n + x->node,
                    b = interval(st, x->l + 1, x->m) * n + x->node;
            if (done[tr->n_hops + c] || tokens[a] == 0 || tokens[b] == 0)
                continue;
            tokens[a]--;
            tokens[b]--;
            tokens[interval(st, x->k, x->m) * n + x->node]++;
            done[tr->n_hops + c] = progress = true;
        }
    }
}

/* Tasks valid, every one fired, exactly the results left. */
static trd_status replay(const trd_steady *st, const trd_platform *pf, int32_t which,
                         int32_t *tokens, uint8_t *done)
{
    const trd_sd_tree *tr = &st->trees[which];
    int32_t n = pf->n_nodes, p = st->n_members;
    trd_status r = TRD_OK;
    for (int32_t h = 0; r == TRD_OK && h < tr->n_hops; h++)
        r = hop_ok(st, pf, which, &tr->hops[h]);
    for (int32_t c = 0; r == TRD_OK && c < tr->n_tasks; c++) {
        const trd_sd_task *x = &tr->tasks[c];
        if (x->node < 0 || x->node >= n || pf->nodes[x->node].router ||
            !(0 <= x->k && x->k <= x->l && x->l < x->m && x->m < p) || x->comp < 0 ||
            x->comp >= st->n_comps)
            r = FAIL("tree %d: task T[%d,%d,%d] is not valid", (int)which, (int)x->k,
                     (int)x->l, (int)x->m);
    }
    if (r != TRD_OK)
        return r;
    memset(tokens, 0, (size_t)st->n_types * (size_t)n * sizeof *tokens);
    memset(done, 0, (size_t)(tr->n_hops + tr->n_tasks));
    for (int32_t t = 0; t < st->n_types; t++)
        if (leaf_of(st, &st->types[t]) >= 0)
            tokens[t * n + leaf_of(st, &st->types[t])]++;
    fire_all(st, tr, n, tokens, done);
    for (int32_t x = 0; x < tr->n_hops + tr->n_tasks; x++)
        if (!done[x])
            return FAIL("tree %d: %s %d never gets its inputs", (int)which,
                        x < tr->n_hops ? "transfer" : "task", (int)x);
    for (int32_t t = 0; t < st->n_types; t++)
        for (int32_t i = 0; i < n; i++)
            if (tokens[t * n + i] != (i == sink_of(st, &st->types[t])))
                return FAIL("tree %d: message type %d on '%s' is %s", (int)which, (int)t,
                            pf->nodes[i].name, tokens[t * n + i] ? "left over" : "missing");
    return TRD_OK;
}

/* amount[s] (sends) and amount[n_sends + c] (comps): sum over trees of
 * weight (or r(T)) times the task's occurrences. */
static void tree_sums(const trd_steady *st, bool fixed, mpz_t *amount, mpz_t total)
{
    for (int32_t i = 0; i < st->n_trees; i++) {
        const trd_sd_tree *tr = &st->trees[i];
        mpz_srcptr w = fixed ? tr->fixed : tr->weight;
        mpz_add(total, total, w);
        for (int32_t h = 0; h < tr->n_hops; h++)
            mpz_add(amount[tr->hops[h].send], amount[tr->hops[h].send], w);
        for (int32_t c = 0; c < tr->n_tasks; c++)
            mpz_add(amount[st->n_sends + tr->tasks[c].comp],
                    amount[st->n_sends + tr->tasks[c].comp], w);
    }
}

static mpz_t *zvec(size_t n)
{
    mpz_t *v = malloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; v != NULL && i < n; i++)
        mpz_init(v[i]);
    return v;
}

static void zvec_free(mpz_t *v, size_t n)
{
    for (size_t i = 0; v != NULL && i < n; i++)
        mpz_clear(v[i]);
    free(v);
}

/* sum w(T) chi_T = A, sum w(T) = TP * period, weights > 0. */
static trd_status check_sums(const trd_steady *st, mpz_t *amount)
{
    mpz_t total;
    mpz_init(total);
    tree_sums(st, false, amount, total);
    mpq_t tp;
    mpq_init(tp);
    mpq_set_z(tp, st->period);
    mpq_mul(tp, tp, st->throughput);
    trd_status r = mpz_cmp_ui(mpq_denref(tp), 1) || mpz_cmp(mpq_numref(tp), total)
                       ? FAIL("the tree weights do not add up to TP * period")
                       : TRD_OK;
    for (int32_t i = 0; r == TRD_OK && i < st->n_trees; i++)
        if (mpz_sgn(st->trees[i].weight) <= 0)
            r = FAIL("tree %d has weight <= 0", (int)i);
    for (int32_t s = 0; r == TRD_OK && s < st->n_sends; s++)
        if (mpz_cmp(amount[s], st->sends[s].count))
            r = FAIL("the trees send %d -> %d (type %d) other than the solution's count",
                     (int)st->sends[s].from, (int)st->sends[s].to, (int)st->sends[s].type);
    for (int32_t c = 0; r == TRD_OK && c < st->n_comps; c++)
        if (mpz_cmp(amount[st->n_sends + c], st->comps[c].count))
            r = FAIL("the trees compute T[%d,%d,%d] on node %d other than the solution's count",
                     (int)st->comps[c].k, (int)st->comps[c].l, (int)st->comps[c].m,
                     (int)st->comps[c].node);
    mpq_clear(tp);
    mpz_clear(total);
    return r;
}

trd_status trd_sd_check_trees(const trd_steady *st, const trd_platform *pf)
{
    size_t nt = (size_t)st->n_types * (size_t)pf->n_nodes, na = (size_t)st->n_sends +
                                                                 (size_t)st->n_comps;
    int32_t most = 1;
    for (int32_t i = 0; i < st->n_trees; i++)
        if (st->trees[i].n_hops + st->trees[i].n_tasks > most)
            most = st->trees[i].n_hops + st->trees[i].n_tasks;
    int32_t *tokens = malloc((nt ? nt : 1) * sizeof *tokens);
    uint8_t *done = malloc((size_t)most);
    mpz_t *amount = zvec(na);
    trd_status r = tokens && done && amount ? TRD_OK : trd_fail(TRD_ENOMEM, "out of memory");
    for (int32_t i = 0; r == TRD_OK && i < st->n_trees; i++)
        r = replay(st, pf, i, tokens, done);
    if (r == TRD_OK)
        r = check_sums(st, amount);
    free(tokens);
    free(done);
    zvec_free(amount, na);
    return r;
}

/* One matching: per node, one out-link and one in-link, each busy at most
 * the matching's duration; adds each transfer to got[send] / took[send]. */
static trd_status check_one(const trd_steady *st, const trd_platform *pf, const trd_matching *m,
                            const int32_t *send_of, mpq_t *busy, int32_t *peer, mpq_t *got,
                            mpq_t *took)
{
    int32_t n = pf->n_nodes;
    for (int32_t x = 0; x < 2 * n; x++) {
        mpq_set_ui(busy[x], 0, 1);
        peer[x] = -1;
    }
    if (mpq_sgn(m->duration) <= 0)
        return FAIL("a matching has a duration <= 0");
    for (int32_t i = 0; i < m->count; i++) {
        const trd_xfer *x = &m->xfers[i];
        int32_t link = x->from >= 0 && x->from < n && x->to >= 0 && x->to < n
                           ? trd_platform_link(pf, x->from, x->to) : -1;
        int32_t s = link >= 0 && x->label >= 0 && x->label < st->n_types
                        ? send_of[link * st->n_types + x->label] : -1;
        if (s < 0 || mpq_sgn(x->duration) <= 0)
            return FAIL("a matching has a transfer %d -> %d not in the schedule", (int)x->from,
                        (int)x->to);
        if ((peer[x->from] >= 0 && peer[x->from] != x->to) ||
            (peer[n + x->to] >= 0 && peer[n + x->to] != x->from))
            return FAIL("a matching uses two links out of or into one node (one-port)");
        peer[x->from] = x->to;
        peer[n + x->to] = x->from;
        mpq_add(busy[x->from], busy[x->from], x->duration);
        mpq_add(busy[n + x->to], busy[n + x->to], x->duration);
        if (mpq_cmp(busy[x->from], m->duration) > 0 || mpq_cmp(busy[n + x->to], m->duration) > 0)
            return FAIL("a node is busy longer than its matching");
        mpq_add(got[s], got[s], x->amount);
        mpq_add(took[s], took[s], x->duration);
    }
    return TRD_OK;
}

/* The transfers add up to the trees' sends, with the right durations. */
static trd_status check_amounts(const trd_steady *st, const trd_platform *pf, bool fixed,
                                mpq_t *got, mpq_t *took)
{
    size_t na = (size_t)st->n_sends + (size_t)st->n_comps;
    mpz_t *want = zvec(na), total;
    mpq_t q;
    mpz_init(total);
    mpq_init(q);
    trd_status r = want ? TRD_OK : trd_fail(TRD_ENOMEM, "out of memory");
    if (r == TRD_OK)
        tree_sums(st, fixed, want, total);
    for (int32_t s = 0; r == TRD_OK && s < st->n_sends; s++) {
        mpq_set_z(q, want[s]);
        if (!mpq_equal(q, got[s]))
            r = FAIL("the matchings send %d -> %d (type %d) other than the trees",
                     (int)st->sends[s].from, (int)st->sends[s].to, (int)st->sends[s].type);
        mpq_mul(q, q, st->types[st->sends[s].type].size);
        mpq_mul(q, q, pf->links[st->sends[s].link].cost);
        if (r == TRD_OK && !mpq_equal(q, took[s]))
            r = FAIL("the matchings' transfer times on %d -> %d are wrong",
                     (int)st->sends[s].from, (int)st->sends[s].to);
    }
    mpq_clear(q);
    mpz_clear(total);
    zvec_free(want, na);
    return r;
}

/* send_of[link * n_types + type]: index in st->sends, or -1. */
static int32_t *send_index(const trd_steady *st, const trd_platform *pf)
{
    size_t size = (size_t)pf->n_links * (size_t)st->n_types;
    int32_t *send_of = malloc((size ? size : 1) * sizeof *send_of);
    if (send_of == NULL)
        return NULL;
    memset(send_of, 0xff, (size ? size : 1) * sizeof *send_of);
    for (int32_t s = 0; s < st->n_sends; s++)
        send_of[st->sends[s].link * st->n_types + st->sends[s].type] = s;
    return send_of;
}

trd_status trd_sd_check_matchings(const trd_steady *st, const trd_platform *pf, bool fixed)
{
    const trd_matchings *ms = fixed ? &st->fixed_matchings : &st->matchings;
    size_t n = (size_t)pf->n_nodes, ns = (size_t)st->n_sends;
    int32_t *send_of = send_index(st, pf), *peer = malloc(2 * (n + 1) * sizeof *peer);
    mpq_t *busy = trd_sd_qvec(2 * n), *got = trd_sd_qvec(ns), *took = trd_sd_qvec(ns), sum,
          limit;
    mpq_inits(sum, limit, NULL);
    trd_status r = send_of && peer && busy && got && took
                       ? TRD_OK : trd_fail(TRD_ENOMEM, "out of memory");
    for (int32_t i = 0; r == TRD_OK && i < ms->count; i++) {
        r = check_one(st, pf, &ms->list[i], send_of, busy, peer, got, took);
        mpq_add(sum, sum, ms->list[i].duration);
    }
    if (r == TRD_OK)
        r = check_amounts(st, pf, fixed, got, took);
    mpq_set_z(limit, st->period);
    if (fixed)
        mpq_set_si(limit, (long)st->fixed_period, 1);
    if (r == TRD_OK && mpq_cmp(sum, limit) > 0)
        r = FAIL("the matchings last longer than the period");
    mpq_clears(sum, limit, NULL);
    free(send_of);
    free(peer);
    trd_sd_qvec_free(busy, 2 * n);
    trd_sd_qvec_free(got, ns);
    trd_sd_qvec_free(took, ns);
    return r;
}
