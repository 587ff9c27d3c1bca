/* reduce.c: Series of Reduces (Legrand, Marchal and Robert 2004, Sec. 4.2,
 * LP SSR(G)).  Participants P_{r0} .. P_{rN} own v_0 .. v_N; the target
 * gets v[0,N] = v_0 ⊕ ... ⊕ v_N for a non-commutative ⊕, so only adjacent
 * intervals combine: task T_{k,l,m} computes v[k,m] = v[k,l] ⊕ v[l+1,m].
 *
 * Message types: every partial result v[k,m], 0 <= k <= m <= N, of size
 * size(v[k,m]).  v[k,k] is supplied without limit on its owner; v[0,N]
 * is delivered at the target (11), which never re-sends it (both
 * corrections of the paper: docs/STEADY.md, "Corrections, applied").
 * Columns cons(P_i, T_{k,l,m}) exist only on computing nodes (routers
 * compute nothing) that can hold v[k,m] (build.h); each takes
 * w(P_i, T) = task_size / speed_i of P_i's time (9), with (7) alpha <= 1. */
#include <stdio.h>
#include <stdlib.h>

#include "core/error.h"
#include "steady/build.h"

/* Parses a size (exact, > 0) named `what` in messages. */
static trd_status parse_size(const char *text, const char *what, mpq_t out)
{
    trd_status s = trd_rational_parse(text, what, out);
    if (s == TRD_OK && mpq_sgn(out) <= 0)
        return trd_fail(TRD_EINVAL, "%s = %s: must be > 0", what, text);
    return s;
}

/* Applies spec->sizes on top of the default message size. */
static trd_status listed_sizes(trd_steady *st, const trd_steady_spec *spec)
{
    int32_t p = st->n_members;
    uint8_t *seen = calloc((size_t)p * (size_t)p, 1);
    if (seen == NULL)
        return trd_fail(TRD_ENOMEM, "out of memory for the message sizes");
    trd_status s = TRD_OK;
    for (int32_t i = 0; s == TRD_OK && i < spec->n_sizes; i++) {
        const trd_steady_size *z = &spec->sizes[i];
        char what[64];
        snprintf(what, sizeof what, "size of v[%d,%d]", (int)z->k, (int)z->m);
        if (z->k < 0 || z->m < z->k || z->m >= p)
            s = trd_fail(TRD_EINVAL, "%s: need 0 <= k <= m < %d (participants)", what, (int)p);
        else if (seen[z->k * p + z->m]++)
            s = trd_fail(TRD_EINVAL, "%s given twice", what);
        else if (z->size == NULL)
            s = trd_fail(TRD_EINVAL, "%s: missing value", what);
        else
            s = parse_size(z->size, what, st->types[st->type_of[z->k * p + z->m]].size);
    }
    free(seen);
    return s;
}

trd_status trd_sd_reduce_types(trd_steady *st, const trd_steady_spec *spec)
{
    int32_t p = st->n_members, t = 0;
    st->type_of = malloc((size_t)p * (size_t)p * sizeof *st->type_of);
    trd_status s = st->type_of ? trd_sd_types_alloc(st)
                               : trd_fail(TRD_ENOMEM, "out of memory for %d participants", (int)p);
    mpq_t size;
    mpq_init(size);
    if (s == TRD_OK)
        s = parse_size(spec->message_size ? spec->message_size : "1", "message size", size);
    if (s == TRD_OK)
        s = parse_size(spec->task_size ? spec->task_size : "1", "task size", st->task_size);
    for (int32_t k = 0; s == TRD_OK && k < p; k++)
        for (int32_t m = k; m < p; m++, t++) {
            trd_sd_type *ty = &st->types[t];
            st->type_of[k * p + m] = t;
            ty->k = k;
            ty->m = m;
            ty->leaf = k == m ? st->members[k] : -1;
            ty->sink = k == 0 && m == p - 1 ? st->root : -1;
            mpq_set(ty->size, size);
        }
    mpq_clear(size);
    return s == TRD_OK ? listed_sizes(st, spec) : s;
}

/* Adds coef to cons[node, type], unless node is the type's leaf. */
static trd_status cons_entry(trd_sd_build *b, int32_t node, int32_t type, const mpq_t coef)
{
    int32_t row;
    if (node == b->st->types[type].leaf)
        return TRD_OK;
    trd_status s = trd_sd_row_cons(b, node, type, &row);
    return s == TRD_OK ? trd_lp_add_entry(&b->lp, row, coef) : s;
}

/* The column cons(node, T_{k,l,m}): (9) in cpu[node], (10) produces
 * v[k,m] and consumes v[k,l] and v[l+1,m]. */
static trd_status task_column(trd_sd_build *b, int32_t node, int32_t k, int32_t l, int32_t m,
                              const mpq_t work, mpq_t coef)
{
    const trd_steady *st = b->st;
    int32_t p = st->n_members, row;
    trd_status s;
    if ((s = trd_lp_add_col(&b->lp, 0)) != TRD_OK ||
        (s = trd_sd_row_cpu(b, node, &row)) != TRD_OK ||
        (s = trd_lp_add_entry(&b->lp, row, work)) != TRD_OK)
        return s;
    mpq_set_si(coef, 1, 1);
    if ((s = cons_entry(b, node, st->type_of[k * p + m], coef)) != TRD_OK)
        return s;
    mpq_set_si(coef, -1, 1);
    if ((s = cons_entry(b, node, st->type_of[k * p + l], coef)) != TRD_OK)
        return s;
    return cons_entry(b, node, st->type_of[(l + 1) * p + m], coef);
}

/* Records the column's meaning in b->comps. */
static trd_status push_comp(trd_sd_build *b, trd_sd_var_comp v)
{
    if (b->n_comps == b->cap_comps) {
        int32_t cap = b->cap_comps ? 2 * b->cap_comps : 256;
        void *q = realloc(b->comps, (size_t)cap * sizeof *b->comps);
        if (q == NULL)
            return trd_fail(TRD_ENOMEM, "out of memory for the task variables");
        b->comps = q;
        b->cap_comps = cap;
    }
    b->comps[b->n_comps++] = v;
    return TRD_OK;
}

/* Every task of one computing node that can hold its result. */
static trd_status node_columns(trd_sd_build *b, int32_t i, mpq_t work, mpq_t coef)
{
    const trd_steady *st = b->st;
    int32_t p = st->n_members, n = b->pf->n_nodes;
    mpq_div(work, st->task_size, b->pf->nodes[i].speed);
    trd_status s = TRD_OK;
    for (int32_t k = 0; s == TRD_OK && k < p; k++)
        for (int32_t m = k + 1; s == TRD_OK && m < p; m++) {
            if (!b->holds[(size_t)st->type_of[k * p + m] * (size_t)n + (size_t)i])
                continue;
            for (int32_t l = k; s == TRD_OK && l < m; l++)
                if ((s = push_comp(b, (trd_sd_var_comp){i, k, l, m})) == TRD_OK)
                    s = task_column(b, i, k, l, m, work, coef);
        }
    return s;
}

trd_status trd_sd_reduce_columns(trd_sd_build *b)
{
    mpq_t work, coef;
    mpq_inits(work, coef, NULL);
    trd_status s = TRD_OK;
    for (int32_t i = 0; s == TRD_OK && i < b->pf->n_nodes; i++)
        if (!b->pf->nodes[i].router)
            s = node_columns(b, i, work, coef);
    mpq_clears(work, coef, NULL);
    return s;
}
