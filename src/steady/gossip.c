/* gossip.c: Series of Gossips, the personalised all-to-all (Legrand,
 * Marchal and Robert 2004, Sec. 3.5, LP SSPA2A(G)): every participant k
 * sends a distinct unit-size message m_{k,l} to every other participant l;
 * TP messages of every pair arrive per time unit.  The scatters of all
 * participants sharing the one-port rows: one type per ordered pair, with
 * leaf k (exempt from conservation) and sink l (never sends it on), as
 * docs/STEADY.md, "Corrections, applied", says. */
#include "steady/steady_internal.h"

trd_status trd_sd_gossip_types(trd_steady *st)
{
    int32_t p = st->n_members, t = 0;
    trd_status s = trd_sd_types_alloc(st);
    for (int32_t k = 0; s == TRD_OK && k < p; k++)
        for (int32_t l = 0; l < p; l++) {
            if (l == k)
                continue;
            trd_sd_type *ty = &st->types[t++];
            ty->k = k;
            ty->m = l;
            ty->leaf = st->members[k];
            ty->sink = st->members[l];
        }
    return s;
}
