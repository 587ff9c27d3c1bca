/* schedule.c: the communications of one period as weighted matchings
 * (Legrand, Marchal and Robert 2004, Sec. 3.3 and end of Sec. 4.3): the
 * bipartite graph with an edge P_i^send -> P_j^recv per (link, message
 * type) weighted by its busy time -- messages per period * size * c(i,j),
 * the messages being those of the trees, each used w(T) times (or r(T)
 * times in the fixed-period schedule of Prop. 4) -- cut into matchings by
 * the weighted edge colouring of matching.c.  Their total length is the
 * largest weighted degree, at most the period when the one-port
 * constraints hold; checked here.  On failure *out holds nothing. */
#include <stdlib.h>

#include "core/error.h"
#include "steady/steady_internal.h"

/* amount[s]: messages of send entry s per period, from the trees. */
static void tree_amounts(const trd_steady *st, bool fixed, mpz_t *amount)
{
    for (int32_t i = 0; i < st->n_trees; i++) {
        const trd_sd_tree *tr = &st->trees[i];
        for (int32_t h = 0; h < tr->n_hops; h++)
            mpz_add(amount[tr->hops[h].send], amount[tr->hops[h].send],
                    fixed ? tr->fixed : tr->weight);
    }
}

/* One transfer per send entry with a positive amount; *n of them. */
static void fill_xfers(const trd_steady *st, const trd_platform *pf, mpz_t *amount,
                       trd_xfer *xf, int32_t *n)
{
    *n = 0;
    for (int32_t s = 0; s < st->n_sends; s++) {
        if (mpz_sgn(amount[s]) == 0)
            continue;
        const trd_sd_send *sd = &st->sends[s];
        trd_xfer *x = &xf[(*n)++];
        x->from = sd->from;
        x->to = sd->to;
        x->label = sd->type;
        mpq_set_z(x->amount, amount[s]);
        mpq_mul(x->duration, x->amount, st->types[sd->type].size);
        mpq_mul(x->duration, x->duration, pf->links[sd->link].cost);
    }
}

trd_status trd_sd_build_matchings(const trd_steady *st, const trd_platform *pf, bool fixed,
                                  trd_matchings *out)
{
    int32_t ns = st->n_sends, n = 0;
    mpz_t *amount = malloc(((size_t)ns + 1) * sizeof *amount);
    trd_xfer *xf = malloc(((size_t)ns + 1) * sizeof *xf);
    trd_status r = TRD_OK;
    if (amount == NULL || xf == NULL) {
        free(amount);
        free(xf);
        return trd_fail(TRD_ENOMEM, "out of memory for the matchings");
    }
    for (int32_t s = 0; s < ns; s++) {
        mpz_init(amount[s]);
        trd_xfer_init(&xf[s]);
    }
    tree_amounts(st, fixed, amount);
    fill_xfers(st, pf, amount, xf, &n);
    r = trd_matchings_build(xf, n, st->n_nodes, out);
    mpq_t period;
    mpq_init(period);
    if (fixed)
        mpq_set_si(period, (long)st->fixed_period, 1);
    else
        mpq_set_z(period, st->period);
    if (r == TRD_OK && mpq_cmp(out->total, period) > 0)
        r = trd_fail(TRD_EBACKEND, "the matchings last longer than the period");
    if (r != TRD_OK)
        trd_matchings_free(out); /* trd_matchings_build set it up even when failing */
    mpq_clear(period);
    for (int32_t s = 0; s < ns; s++) {
        mpz_clear(amount[s]);
        trd_xfer_clear(&xf[s]);
    }
    free(amount);
    free(xf);
    return r;
}
