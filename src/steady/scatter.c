/* scatter.c: Series of Scatters (Legrand, Marchal and Robert 2004, Sec. 3.1,
 * LP SSSP(G)): the source sends a distinct unit-size message m_t to every
 * target t; TP messages reach every target per time unit.  One message type
 * per target, supplied without limit at the source (exempt from
 * conservation) and delivered at its target, which never sends it on
 * (docs/STEADY.md, "Corrections, applied").  The LP itself is the shared network part (build.c). */
#include "steady/steady_internal.h"

trd_status trd_sd_scatter_types(trd_steady *st)
{
    trd_status s = trd_sd_types_alloc(st);
    for (int32_t q = 0; s == TRD_OK && q < st->n_members; q++) {
        trd_sd_type *ty = &st->types[q];
        ty->k = -1;
        ty->m = q;
        ty->leaf = st->root;
        ty->sink = st->members[q];
    }
    return s;
}
