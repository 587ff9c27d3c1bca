/* lp.c: the LP wrapper of lp.h over QSopt_ex (exact rational simplex:
 * QSexact_solver solves in doubles, then re-solves at growing precision
 * until the basis is proven optimal in rationals). */
#include "steady/lp.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <qsopt_ex/QSopt_ex.h>

#include "core/error.h"

void trd_lp_init(trd_lp *lp)
{
    memset(lp, 0, sizeof *lp);
}

void trd_lp_clear(trd_lp *lp)
{
    for (int32_t c = 0; c < lp->n_cols; c++)
        mpq_clear(lp->obj[c]);
    for (int32_t e = 0; e < lp->n_entries; e++)
        mpq_clear(lp->val[e]);
    free(lp->sense);
    free(lp->rhs);
    free(lp->beg);
    free(lp->cnt);
    free(lp->obj);
    free(lp->ind);
    free(lp->val);
    trd_lp_init(lp);
}

/* Resizes the array *a to cap elements of elem bytes. */
static trd_status resize(void **a, size_t elem, int32_t cap)
{
    void *a2 = realloc(*a, (size_t)cap * elem);
    if (a2 == NULL)
        return trd_fail(TRD_ENOMEM, "out of memory building the linear program");
    *a = a2;
    return TRD_OK;
}

/* The capacity after *cap when n elements are used: doubled when full. */
static trd_status next_cap(int32_t n, int32_t cap, int32_t *out)
{
    if (cap > INT32_MAX / 2)
        return trd_fail(TRD_ENOMEM, "linear program too large (%d elements)", (int)n);
    *out = n < cap ? cap : cap ? 2 * cap : 64;
    return TRD_OK;
}

trd_status trd_lp_add_row(trd_lp *lp, char sense, long rhs, int32_t *row)
{
    int32_t cap = 0;
    trd_status st = next_cap(lp->n_rows, lp->cap_rows, &cap);
    if (st == TRD_OK && cap != lp->cap_rows) {
        if ((st = resize((void **)&lp->sense, sizeof *lp->sense, cap)) == TRD_OK &&
            (st = resize((void **)&lp->rhs, sizeof *lp->rhs, cap)) == TRD_OK)
            lp->cap_rows = cap;
    }
    if (st != TRD_OK)
        return st;
    lp->sense[lp->n_rows] = sense;
    lp->rhs[lp->n_rows] = rhs;
    *row = lp->n_rows++;
    return TRD_OK;
}

trd_status trd_lp_add_col(trd_lp *lp, long obj)
{
    if (lp->n_cols >= TRD_LP_MAX_COLUMNS)
        return trd_fail(TRD_EUNSUPPORTED, "the linear program needs more than %d variables",
                        TRD_LP_MAX_COLUMNS);
    int32_t cap = 0;
    trd_status st = next_cap(lp->n_cols, lp->cap_cols, &cap);
    if (st == TRD_OK && cap != lp->cap_cols) {
        if ((st = resize((void **)&lp->beg, sizeof *lp->beg, cap)) == TRD_OK &&
            (st = resize((void **)&lp->cnt, sizeof *lp->cnt, cap)) == TRD_OK &&
            (st = resize((void **)&lp->obj, sizeof *lp->obj, cap)) == TRD_OK)
            lp->cap_cols = cap;
    }
    if (st != TRD_OK)
        return st;
    lp->beg[lp->n_cols] = lp->n_entries;
    lp->cnt[lp->n_cols] = 0;
    mpq_init(lp->obj[lp->n_cols]);
    mpq_set_si(lp->obj[lp->n_cols], obj, 1);
    lp->n_cols++;
    return TRD_OK;
}

trd_status trd_lp_add_entry(trd_lp *lp, int32_t row, const mpq_t coef)
{
    int32_t c = lp->n_cols - 1, cap = 0;
    for (int e = lp->beg[c]; e < lp->n_entries; e++)
        if (lp->ind[e] == row) {
            mpq_add(lp->val[e], lp->val[e], coef);
            return TRD_OK;
        }
    trd_status st = next_cap(lp->n_entries, lp->cap_entries, &cap);
    if (st == TRD_OK && cap != lp->cap_entries) {
        if ((st = resize((void **)&lp->ind, sizeof *lp->ind, cap)) == TRD_OK &&
            (st = resize((void **)&lp->val, sizeof *lp->val, cap)) == TRD_OK)
            lp->cap_entries = cap;
    }
    if (st != TRD_OK)
        return st;
    lp->ind[lp->n_entries] = row;
    mpq_init(lp->val[lp->n_entries]);
    mpq_set(lp->val[lp->n_entries], coef);
    lp->n_entries++;
    lp->cnt[c]++;
    return TRD_OK;
}

/* QSopt_ex's start (EGlpNumStart) replaces GMP's allocator, process-wide,
 * by a memory pool that is not thread-safe and cannot free blocks it did
 * not allocate (nor can malloc free its blocks).  So the pool is kept to
 * QSopt_ex: at load time, before any thread or GMP number exists, we start
 * QSopt_ex and then route GMP's allocations by thread -- to the pool while
 * this thread is inside QSopt_ex (in_qsopt), to GMP's own functions
 * everywhere else.  QSopt_ex's numbers are made and freed inside it; the
 * only numbers crossing the boundary are read, never written, on the other
 * side (the solution is copied out).  QSopt_ex also keeps its precision in
 * globals, so one solve runs at a time (solve_lock).  QSexactClear is never
 * called: it logs and the pool stays reachable till exit. */
static void *(*gmp_alloc)(size_t), *(*gmp_realloc)(void *, size_t, size_t);
static void (*gmp_free)(void *, size_t);
static void *(*pool_alloc)(size_t), *(*pool_realloc)(void *, size_t, size_t);
static void (*pool_free)(void *, size_t);
static _Thread_local bool in_qsopt;
static pthread_mutex_t solve_lock = PTHREAD_MUTEX_INITIALIZER;

static void *route_alloc(size_t n)
{
    return in_qsopt ? pool_alloc(n) : gmp_alloc(n);
}

static void *route_realloc(void *p, size_t old, size_t n)
{
    return in_qsopt ? pool_realloc(p, old, n) : gmp_realloc(p, old, n);
}

static void route_free(void *p, size_t n)
{
    if (in_qsopt)
        pool_free(p, n);
    else
        gmp_free(p, n);
}

/* QSopt_ex reports recoverable trouble (a failed factor update that it
 * redoes, a precision that it raises) on stderr; its failures reach us as
 * return codes, so the reports are dropped. */
static void qs_quiet(const char *message, void *data)
{
    (void)message;
    (void)data;
}

__attribute__((constructor)) static void qs_start(void)
{
    QSlog_set_handler(qs_quiet, NULL);
    mp_get_memory_functions(&gmp_alloc, &gmp_realloc, &gmp_free);
    QSexactStart();
    QSexact_set_precision(128);
    mp_get_memory_functions(&pool_alloc, &pool_realloc, &pool_free);
    mp_set_memory_functions(route_alloc, route_realloc, route_free);
}

/* n rationals set to v (inside QSopt_ex: pool memory), or NULL. */
static mpq_t *mpq_array(int32_t n, const mpq_t v)
{
    mpq_t *a = malloc((size_t)(n ? n : 1) * sizeof *a);
    for (int32_t i = 0; a != NULL && i < n; i++) {
        mpq_init(a[i]);
        mpq_set(a[i], v);
    }
    return a;
}

static void mpq_array_free(mpq_t *a, int32_t n)
{
    for (int32_t i = 0; a != NULL && i < n; i++)
        mpq_clear(a[i]);
    free(a);
}

/* Loads the problem into QSopt_ex (which copies every array). */
static mpq_QSprob load(const trd_lp *lp)
{
    mpq_t zero;
    mpq_init(zero);
    mpq_t *rhs = mpq_array(lp->n_rows, zero), *lower = mpq_array(lp->n_cols, zero),
          *upper = mpq_array(lp->n_cols, mpq_ILL_MAXDOUBLE);
    mpq_QSprob p = NULL;
    if (rhs != NULL && lower != NULL && upper != NULL) {
        for (int32_t r = 0; r < lp->n_rows; r++)
            mpq_set_si(rhs[r], lp->rhs[r], 1);
        p = mpq_QSload_prob("steady", lp->n_cols, lp->n_rows, lp->cnt, lp->beg, lp->ind,
                            lp->val, QS_MAX, lp->obj, rhs, lp->sense, lower, upper, NULL,
                            NULL);
    }
    mpq_array_free(rhs, lp->n_rows);
    mpq_array_free(lower, lp->n_cols);
    mpq_array_free(upper, lp->n_cols);
    mpq_clear(zero);
    return p;
}

/* Inside QSopt_ex: solves p, leaves the optimum in value and x (pool
 * numbers). */
static trd_status run(const trd_lp *lp, mpq_QSprob p, mpq_t value, mpq_t *x)
{
    int status = 0;
    if (p == NULL)
        return trd_fail(TRD_EBACKEND, "QSopt_ex could not load the linear program "
                        "(%d rows, %d columns)", (int)lp->n_rows, (int)lp->n_cols);
    mpq_QSset_param(p, QS_PARAM_SIMPLEX_DISPLAY, 0);
    if (QSexact_solver(p, NULL, NULL, NULL, DUAL_SIMPLEX, &status) != 0)
        return trd_fail(TRD_EBACKEND, "QSopt_ex failed on the linear program (%d rows, %d "
                        "columns)", (int)lp->n_rows, (int)lp->n_cols);
    if (status != QS_LP_OPTIMAL)
        return trd_fail(TRD_EBACKEND, "QSopt_ex found no optimum (status %d) on the "
                        "linear program (%d rows, %d columns)", status, (int)lp->n_rows,
                        (int)lp->n_cols);
    if (mpq_QSget_objval(p, (mpq_t *)value) != 0 || mpq_QSget_x_array(p, x) != 0)
        return trd_fail(TRD_EBACKEND, "QSopt_ex gave no solution");
    return TRD_OK;
}

trd_status trd_lp_solve(const trd_lp *lp, mpq_t value, mpq_t *x)
{
    mpq_t zero, obj, *qx;
    mpq_init(zero);
    pthread_mutex_lock(&solve_lock);
    in_qsopt = true;
    mpq_init(obj);
    qx = mpq_array(lp->n_cols, zero);
    mpq_QSprob p = load(lp);
    trd_status st = qx ? run(lp, p, obj, qx) : trd_fail(TRD_ENOMEM, "out of memory");
    in_qsopt = false; /* copy the solution out into the caller's numbers */
    for (int32_t c = 0; st == TRD_OK && c < lp->n_cols; c++)
        mpq_set(x[c], qx[c]);
    mpq_set(value, obj);
    in_qsopt = true;
    mpq_array_free(qx, lp->n_cols);
    mpq_clear(obj);
    if (p != NULL)
        mpq_QSfree_prob(p);
    in_qsopt = false;
    pthread_mutex_unlock(&solve_lock);
    mpq_clear(zero);
    return st;
}
