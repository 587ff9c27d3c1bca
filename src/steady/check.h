/* check.h: what check.c (the solution) and check_trees.c (trees and
 * matchings) share: the problems' definitions of where a message type
 * comes from and goes to, written apart from the LP builder. */
#ifndef TRD_STEADY_CHECK_H
#define TRD_STEADY_CHECK_H

#include <stddef.h>

#include "core/error.h"
#include "steady/steady_internal.h"

#define FAIL(...) trd_fail(TRD_EBACKEND, "steady-state check: " __VA_ARGS__)

/* The node with an unlimited supply of a type: the scatter source, the
 * gossip sender, the owner of v[k,k]; -1 for other partial results. */
static inline int32_t leaf_of(const trd_steady *st, const trd_sd_type *ty)
{
    switch (st->problem) {
    case TRD_STEADY_SCATTER: return st->root;
    case TRD_STEADY_GOSSIP: return st->members[ty->k];
    default: return ty->k == ty->m ? st->members[ty->k] : -1;
    }
}

/* The node where a type is delivered: the scatter or gossip destination,
 * the reduce target for v[0,N]; -1 for other partial results. */
static inline int32_t sink_of(const trd_steady *st, const trd_sd_type *ty)
{
    if (st->problem != TRD_STEADY_REDUCE)
        return st->members[ty->m];
    return ty->k == 0 && ty->m == st->n_members - 1 ? st->root : -1;
}

/* n rationals set to 0 (NULL when out of memory); freeing them. */
mpq_t *trd_sd_qvec(size_t n);
void trd_sd_qvec_free(mpq_t *v, size_t n);

#endif
