/* testutil.h: small helpers shared by the cmocka tests (header only, so
 * tests/CMakeLists.txt needs no extra source).  Nothing here computes an
 * expected value: expected values come from tests/oracle or from closed
 * forms written in the tests themselves. */
#ifndef TRD_TESTS_TESTUTIL_H
#define TRD_TESTS_TESTUTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "oracle/oracle.h"
#include "treduce/treduce.h"

/* The (d, c) pairs of the issue: d = c, c = 0, d = 0, d > c, d < c. */
static const double tu_pairs[][2] = {{1, 1}, {1, 0}, {0, 1}, {2, 1}, {1, 3}};
#define TU_NPAIRS (sizeof tu_pairs / sizeof tu_pairs[0])

/* Fails the test with a formatted message when cond is false. */
#define TU_CHECK(cond, ...)                                      \
    do {                                                         \
        if (!(cond)) {                                           \
            print_error("check failed: %s\n  ", #cond);          \
            print_error(__VA_ARGS__);                            \
            print_error("\n");                                   \
            fail();                                              \
        }                                                        \
    } while (0)

/* a == b up to a relative tolerance of 1e-9 (absolute near 0). */
static inline int tu_close(double a, double b)
{
    double scale = fmax(1.0, fmax(fabs(a), fabs(b)));
    return fabs(a - b) <= 1e-9 * scale;
}

static inline trd_params tu_params(int64_t n, double d, double c, int64_t K)
{
    trd_params p;
    trd_params_init(&p);
    p.n = n;
    p.d = d;
    p.c = c;
    p.K = K;
    return p;
}

/* A cost model kept until the process exits (plans borrow theirs): the
 * homogeneous one of (n, d, c) when seed is 0 (no bases: every transfer d,
 * every combine c), else random heterogeneous bases (model "links", factors
 * up to 10, that seed) over means d, c.  NULL when d or c is not a valid
 * mean (a test of bad input then gets the error it expects). */
static inline const trd_costs *tu_costs(int64_t n, double d, double c, uint64_t seed)
{
    static struct {
        trd_costs *k;
        int64_t n;
        double d, c;
        uint64_t seed;
    } *kept;
    static size_t nkept;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* ranks ask at once */
    pthread_mutex_lock(&lock);
    trd_costs *k = NULL;
    for (size_t i = 0; i < nkept && !k; i++)
        if (kept[i].n == n && kept[i].d == d && kept[i].c == c && kept[i].seed == seed)
            k = kept[i].k;
    if (!k && trd_costs_create(&k, n, TRD_DIST_CONST, d, c, 0.0) == TRD_OK) {
        void *grown = NULL;
        if ((seed && trd_costs_random(k, "links", 10.0, seed) != TRD_OK) ||
            !(grown = realloc(kept, (nkept + 1) * sizeof *kept))) {
            trd_costs_free(k);
            k = NULL;
        } else {
            kept = grown;
            kept[nkept].k = k;
            kept[nkept].n = n;
            kept[nkept].d = d;
            kept[nkept].c = c;
            kept[nkept++].seed = seed;
        }
    }
    pthread_mutex_unlock(&lock);
    return k;
}

/* Creates a plan that must succeed (fails the test with trd_errmsg()). */
/* The first collective (trd_collective) algorithm a's row runs: reduce
 * where it runs one, allreduce for the exchanges, ... */
static inline trd_collective tu_coll_of(size_t a)
{
    trd_collective c = TRD_COLL_REDUCE;
    while (c < TRD_COLL_EXSCAN && !trd_algo_runs(a, c))
        c++;
    return c;
}

static inline trd_plan *tu_plan(const char *algo, const trd_params *p)
{
    trd_plan *plan = NULL;
    trd_status st = trd_plan_create(&plan, algo, p);
    TU_CHECK(st == TRD_OK && plan != NULL,
             "%s n=%lld d=%g c=%g K=%lld root=%lld nc=%d: %s", algo,
             (long long)p->n, p->d, p->c, (long long)p->K, (long long)p->root,
             (int)p->noncommutative, trd_errmsg());
    return plan;
}

/* A plan that must be refused with status want and a message saying
 * `says` ("" for any). */
static inline void tu_expect_refused(const char *algo, const trd_params *p, trd_status want,
                                     const char *says)
{
    trd_plan *plan = NULL;
    trd_status st = trd_plan_create(&plan, algo, p);
    TU_CHECK(st == want && plan == NULL && strstr(trd_errmsg(), says), "%s collective %d "
             "allreduce %d nc %d: %s (%s), expected %s saying '%s'", algo,
             (int)p->collective, (int)p->allreduce, (int)p->noncommutative,
             trd_strerror(st), trd_errmsg(), trd_strerror(want), says);
    trd_plan_free(plan);
}

/* The registry index of algorithm name, which must be an exchange one
 * (the allreduce, reduce-scatter and scan schedules). */
static inline size_t tu_exchange_algo(const char *name)
{
    size_t index;
    assert_int_equal(trd_algo_find(name, &index), TRD_OK);
    assert_int_equal(trd_algo_kind_of(index), TRD_KIND_EXCHANGE);
    return index;
}

/* trd_makespan that must succeed. */
static inline double tu_makespan(const char *algo, const trd_params *p)
{
    double m = NAN;
    trd_status st = trd_makespan(algo, p, &m);
    TU_CHECK(st == TRD_OK, "%s n=%lld d=%g c=%g K=%lld: %s", algo, (long long)p->n,
             p->d, p->c, (long long)p->K, trd_errmsg());
    return m;
}

/* Allocation that fails the test instead of returning NULL. */
static inline void *tu_alloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size);
    assert_non_null(p);
    return p;
}

/* Writes len bytes of text to a new file /tmp/trd_test_XXXXXX; path (at
 * least 32 bytes) gets its name; the caller unlinks it. */
static inline void tu_temp_file(const char *text, size_t len, char *path, size_t size)
{
    snprintf(path, size, "/tmp/trd_test_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_true(write(fd, text, len) == (ssize_t)len);
    close(fd);
}

/* The plan's parent of every rank. */
static inline int32_t *tu_parents(const trd_plan *plan)
{
    int32_t n = (int32_t)trd_plan_params(plan)->n;
    int32_t *parent = tu_alloc((size_t)n, sizeof *parent);
    for (int32_t r = 0; r < n; r++)
        parent[r] = trd_plan_parent(plan, r);
    return parent;
}


/* Which per-planner group tu_run_per_planner runs: one cmocka test per
 * static planner of the homogeneous model in the registry (dynamic ones
 * have no static plan, see treduce.h; those for heterogeneous costs have
 * other bounds and need costs: test_hetero.c), named after the planner, calling fn with *state pointing at
 * the planner's registry index; the tests of `before` run ahead of them and
 * those of `after` behind them.  The group fails before running anything
 * when fewer than min_planners static planners are registered. */
struct tu_per_planner {
    const char *group;
    CMUnitTestFunction fn;
    const struct CMUnitTest *before;
    size_t nbefore;
    const struct CMUnitTest *after;
    size_t nafter;
    size_t min_planners;
};

#define TU_MAX_ALGOS 64

/* Runs the group spec describes; returns what cmocka returns (or 1). */
static inline int tu_run_per_planner(const struct tu_per_planner *spec)
{
    static size_t algo_index[TU_MAX_ALGOS];
    size_t count = trd_algo_count(), m = 0, nstatic = 0;
    if (count > TU_MAX_ALGOS) {
        fprintf(stderr, "raise TU_MAX_ALGOS to %zu\n", count);
        return 1;
    }
    struct CMUnitTest *tests = calloc(spec->nbefore + count + spec->nafter, sizeof *tests);
    if (tests == NULL) {
        fprintf(stderr, "%s: out of memory\n", spec->group);
        return 1;
    }
    for (size_t i = 0; i < spec->nbefore; i++)
        tests[m++] = spec->before[i];
    for (size_t i = 0; i < count; i++) {
        if (trd_algo_kind_of(i) != TRD_KIND_TREE || trd_algo_uses_costs(i))
            continue; /* the groups test the homogeneous tree model */
        algo_index[i] = i;
        tests[m++] = (struct CMUnitTest){.name = trd_algo_name(i),
                                         .test_func = spec->fn,
                                         .initial_state = &algo_index[i]};
        nstatic++;
    }
    if (nstatic < spec->min_planners) {
        fprintf(stderr, "only %zu static planners registered\n", nstatic);
        free(tests);
        return 1;
    }
    for (size_t i = 0; i < spec->nafter; i++)
        tests[m++] = spec->after[i];
    int rc = _cmocka_run_group_tests(spec->group, tests, m, NULL, NULL);
    free(tests);
    return rc;
}

#endif
