/* build.h: the linear program of a steady-state problem while it is being
 * written (build.c: the network part shared by every problem, reduce.c:
 * the computations of a Series of Reduces) and read back (solution.c).
 *
 * Columns: 0 is TP, then one per send(link, type), then one per
 * cons(node, T_{k,l,m}).  Rows are created on first use:
 *   out[i]     sum over links i -> j, types t of send * size(t) * c(i,j) <= 1   (2)
 *   in[j]      the same over links i -> j                                <= 1   (3)
 *   cpu[i]     sum of cons(i, T) * task_size / speed_i                   <= 1   (7, 9)
 *   cons[i,t]  received + computed - sent - consumed - [i = sink(t)] TP   = 0   (5, 10, 11)
 * with no conservation row where i holds an unlimited supply of t
 * (i = leaf(t): the scatter source; v[i,i] on its owner: docs/STEADY.md,
 * "Corrections, applied").
 * Only variables that can be nonzero exist (see trd_sd_can_send). */
#ifndef TRD_STEADY_BUILD_H
#define TRD_STEADY_BUILD_H

#include "steady/lp.h"
#include "steady/steady_internal.h"

typedef struct trd_sd_var_send {
    int32_t link, type;
} trd_sd_var_send;

typedef struct trd_sd_var_comp {
    int32_t node, k, l, m;
} trd_sd_var_comp;

typedef struct trd_sd_build {
    trd_lp lp;
    const trd_steady *st;
    const trd_platform *pf;
    uint8_t *reach;    /* [a * n + b]: b can be reached from a (a reaches a) */
    uint8_t *holds;    /* [t * n + i]: a message of type t can be on node i
                          and still be useful: i is reachable from every
                          node whose value it contains, and reaches where
                          t must go */
    int32_t *cons_row; /* [i * n_types + t], -1 until used */
    int32_t *out_row, *in_row, *cpu_row; /* per node, -1 until used */
    int32_t n_sends, cap_sends, n_comps, cap_comps;
    trd_sd_var_send *sends; /* column 1 + s */
    trd_sd_var_comp *comps; /* column 1 + n_sends + c */
} trd_sd_build;

/* Rows of the table above (created on first use). */
trd_status trd_sd_row_cons(trd_sd_build *b, int32_t node, int32_t type, int32_t *row);
trd_status trd_sd_row_cpu(trd_sd_build *b, int32_t node, int32_t *row);

/* reduce.c: the cons(node, T_{k,l,m}) columns (after every send column). */
trd_status trd_sd_reduce_columns(trd_sd_build *b);

/* solution.c: st->throughput, st->sends and st->comps from the LP's
 * values x (TP, sends, comps in column order). */
trd_status trd_sd_take_solution(trd_steady *st, const trd_sd_build *b, const mpq_t tp,
                                mpq_t *x);

#endif
