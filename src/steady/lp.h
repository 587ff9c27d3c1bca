/* lp.h: a thin wrapper over QSopt_ex's exact rational simplex.  The
 * caller adds rows (sense and a small integer right-hand side) and
 * columns (objective coefficient, lower bound 0, no upper bound, entries
 * in any row created so far or later); trd_lp_solve maximises and returns
 * the exact optimum.  Keeps QSopt_ex out of every other header. */
#ifndef TRD_STEADY_LP_H
#define TRD_STEADY_LP_H

#include <gmp.h>
#include <stdint.h>

#include "treduce/treduce.h"

typedef struct trd_lp {
    int32_t n_rows, n_cols, n_entries;
    int32_t cap_rows, cap_cols, cap_entries;
    char *sense;  /* per row: 'L' (<=) or 'E' (=) */
    long *rhs;    /* per row */
    int *beg, *cnt; /* per column: its entries' first index and count */
    mpq_t *obj;     /* per column */
    int *ind;       /* per entry: row */
    mpq_t *val;     /* per entry: coefficient */
} trd_lp;

void trd_lp_init(trd_lp *lp);
void trd_lp_clear(trd_lp *lp);

/* Adds the row `... sense rhs` and returns its index in *row. */
trd_status trd_lp_add_row(trd_lp *lp, char sense, long rhs, int32_t *row);
/* The most columns an LP may have: QSopt_ex takes seconds for 15,094 and
 * about a minute for 49,859 (docs/BENCHMARKS.md "bench/steady"); far
 * beyond, a solve runs for hours with no sign of life, so it is refused
 * up front. */
#define TRD_LP_MAX_COLUMNS 60000

/* Starts a new column (variable >= 0) with objective coefficient obj;
 * TRD_EUNSUPPORTED past TRD_LP_MAX_COLUMNS. */
trd_status trd_lp_add_col(trd_lp *lp, long obj);
/* Adds coef to the entry of the last column in `row`. */
trd_status trd_lp_add_entry(trd_lp *lp, int32_t row, const mpq_t coef);

/* Maximises; objective in *value, variables in x[0 .. n_cols-1] (each
 * mpq_init'ed by the caller).  TRD_EBACKEND if QSopt_ex fails or finds no
 * optimum (infeasible or unbounded: a bug of the caller's model). */
trd_status trd_lp_solve(const trd_lp *lp, mpq_t value, mpq_t *x);

#endif
