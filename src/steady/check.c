/* check.c: an independent check of a steady-state result, written from
 * the problems' definitions (Legrand, Marchal and Robert 2004, Sec. 2-4,
 * and docs/STEADY.md, "Corrections, applied") rather than from the LP
 * builder: it recomputes every port and processor load and every
 * conservation balance from the solution's rates, replays every tree on
 * tokens, and adds up the matchings.  Each function returns TRD_EBACKEND
 * naming the first violated constraint.
 *
 *  - one-port (2)-(3): per node, sum of send * size * c over out-links <= 1,
 *    over in-links <= 1; computation (7), (9): sum of cons * task / speed
 *    <= 1, no task on a router;
 *  - conservation (5), (10): per node i and type t, received + computed =
 *    sent + consumed (+ TP where i is t's destination, (6), (11)), except
 *    where i has an unlimited supply of t (the source's messages, v[i,i]
 *    on its owner: the corrections); a destination never sends its own type;
 *  - counts per period = rate * period, integers;
 *  - trees and matchings: check_trees.c. */
#include <stdlib.h>
#include <string.h>

#include "steady/check.h"

mpq_t *trd_sd_qvec(size_t n)
{
    mpq_t *v = malloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; v != NULL && i < n; i++)
        mpq_init(v[i]);
    return v;
}

void trd_sd_qvec_free(mpq_t *v, size_t n)
{
    for (size_t i = 0; v != NULL && i < n; i++)
        mpq_clear(v[i]);
    free(v);
}

/* rate > 0 and count = rate * period. */
static bool count_ok(const mpq_t rate, const mpz_t count, const mpz_t period, mpq_t tmp)
{
    mpq_set_z(tmp, period);
    mpq_mul(tmp, tmp, rate);
    return mpq_sgn(rate) > 0 && mpz_cmp_ui(mpq_denref(tmp), 1) == 0 &&
           mpz_cmp(mpq_numref(tmp), count) == 0;
}

/* One send: on a real link, the corrections respected; loads and balances. */
static trd_status check_send(const trd_steady *st, const trd_platform *pf, const trd_sd_send *s,
                             mpq_t *load, mpq_t *bal, mpq_t tmp)
{
    int32_t n = pf->n_nodes;
    if (s->link < 0 || s->link >= pf->n_links || pf->links[s->link].from != s->from ||
        pf->links[s->link].to != s->to || s->type < 0 || s->type >= st->n_types)
        return FAIL("send on link %d does not match the platform", (int)s->link);
    const trd_sd_type *ty = &st->types[s->type];
    if (s->from == sink_of(st, ty))
        return FAIL("'%s' sends on its own message type %d (a destination never does)",
                    pf->nodes[s->from].name, (int)s->type);
    if (!count_ok(s->rate, s->count, st->period, tmp))
        return FAIL("send %s -> %s: rate not > 0 or count != rate * period",
                    pf->nodes[s->from].name, pf->nodes[s->to].name);
    mpq_mul(tmp, s->rate, ty->size);
    mpq_mul(tmp, tmp, pf->links[s->link].cost);
    mpq_add(load[s->from], load[s->from], tmp);         /* out-port */
    mpq_add(load[n + s->to], load[n + s->to], tmp);     /* in-port */
    size_t at = (size_t)s->type * (size_t)n;
    mpq_sub(bal[at + (size_t)s->from], bal[at + (size_t)s->from], s->rate);
    mpq_add(bal[at + (size_t)s->to], bal[at + (size_t)s->to], s->rate);
    return TRD_OK;
}

/* The type of v[k,m] if it is one, else -1. */
static int32_t interval(const trd_steady *st, int32_t k, int32_t m)
{
    for (int32_t t = 0; t < st->n_types; t++)
        if (st->types[t].k == k && st->types[t].m == m)
            return t;
    return -1;
}

static trd_status check_comp(const trd_steady *st, const trd_platform *pf, const trd_sd_comp *c,
                             mpq_t *load, mpq_t *bal, mpq_t tmp)
{
    int32_t n = pf->n_nodes, p = st->n_members;
    if (st->problem != TRD_STEADY_REDUCE || c->node < 0 || c->node >= n ||
        pf->nodes[c->node].router || !(0 <= c->k && c->k <= c->l && c->l < c->m && c->m < p))
        return FAIL("task T[%d,%d,%d] on node %d is not a valid task", (int)c->k, (int)c->l,
                    (int)c->m, (int)c->node);
    int32_t out = interval(st, c->k, c->m), a = interval(st, c->k, c->l),
            b = interval(st, c->l + 1, c->m);
    if (out != c->type || a != c->left || b != c->right)
        return FAIL("task T[%d,%d,%d] has wrong message types", (int)c->k, (int)c->l, (int)c->m);
    if (!count_ok(c->rate, c->count, st->period, tmp))
        return FAIL("task T[%d,%d,%d] on '%s': rate not > 0 or count != rate * period",
                    (int)c->k, (int)c->l, (int)c->m, pf->nodes[c->node].name);
    mpq_mul(tmp, c->rate, st->task_size);
    mpq_div(tmp, tmp, pf->nodes[c->node].speed);
    mpq_add(load[2 * n + c->node], load[2 * n + c->node], tmp);
    mpq_add(bal[(size_t)out * (size_t)n + (size_t)c->node],
            bal[(size_t)out * (size_t)n + (size_t)c->node], c->rate);
    mpq_sub(bal[(size_t)a * (size_t)n + (size_t)c->node],
            bal[(size_t)a * (size_t)n + (size_t)c->node], c->rate);
    mpq_sub(bal[(size_t)b * (size_t)n + (size_t)c->node],
            bal[(size_t)b * (size_t)n + (size_t)c->node], c->rate);
    return TRD_OK;
}

/* Loads <= 1 and balances = TP at destinations, 0 elsewhere. */
static trd_status check_totals(const trd_steady *st, const trd_platform *pf, mpq_t *load,
                               mpq_t *bal)
{
    static const char *const what[] = {"sends", "receives", "computes"};
    int32_t n = pf->n_nodes;
    for (int32_t x = 0; x < 3 * n; x++)
        if (mpq_cmp_ui(load[x], 1, 1) > 0)
            return FAIL("'%s' %s more than one time unit per time unit", pf->nodes[x % n].name,
                        what[x / n]);
    for (int32_t t = 0; t < st->n_types; t++)
        for (int32_t i = 0; i < n; i++) {
            const trd_sd_type *ty = &st->types[t];
            mpq_srcptr b = bal[(size_t)t * (size_t)n + (size_t)i];
            if (i == leaf_of(st, ty))
                continue;
            if (i == sink_of(st, ty) ? !mpq_equal(b, st->throughput) : mpq_sgn(b) != 0)
                return FAIL("conservation of message type %d fails on '%s'", (int)t,
                            pf->nodes[i].name);
        }
    return TRD_OK;
}

trd_status trd_sd_check_solution(const trd_steady *st, const trd_platform *pf)
{
    size_t n = (size_t)pf->n_nodes, nb = (size_t)st->n_types * n;
    if (st->n_nodes != pf->n_nodes || st->n_links != pf->n_links)
        return FAIL("solved on another platform");
    if (mpq_sgn(st->throughput) < 0 || (!st->reachable && mpq_sgn(st->throughput) != 0))
        return FAIL("throughput is negative, or positive while unreachable");
    mpq_t *load = trd_sd_qvec(3 * n), *bal = trd_sd_qvec(nb), tmp;
    mpq_init(tmp);
    trd_status r = load && bal ? TRD_OK : trd_fail(TRD_ENOMEM, "out of memory for the check");
    for (int32_t s = 0; r == TRD_OK && s < st->n_sends; s++)
        r = check_send(st, pf, &st->sends[s], load, bal, tmp);
    for (int32_t c = 0; r == TRD_OK && c < st->n_comps; c++)
        r = check_comp(st, pf, &st->comps[c], load, bal, tmp);
    if (r == TRD_OK)
        r = check_totals(st, pf, load, bal);
    mpq_clear(tmp);
    trd_sd_qvec_free(load, 3 * n);
    trd_sd_qvec_free(bal, nb);
    return r;
}
