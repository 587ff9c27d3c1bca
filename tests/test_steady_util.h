/* test_steady_util.h: helpers shared by test_steady.c and
 * test_steady_random.c (header only): platforms built by hand or loaded
 * from tests/data/steady, solving that must succeed, exact comparisons.
 * Nothing here computes an expected value. */
#ifndef TRD_TESTS_STEADY_UTIL_H
#define TRD_TESTS_STEADY_UTIL_H

#include "testutil.h"

#include "platform/platform.h"
#include "steady/steady_internal.h"
#include "treduce/steady.h"

/* tests/data/steady/name, found from this file's own path. */
static inline const char *sd_data(const char *name)
{
    static char path[1024];
    const char *slash = strrchr(__FILE__, '/');
    snprintf(path, sizeof path, "%.*s/data/steady/%s", slash ? (int)(slash - __FILE__) : 1,
             slash ? __FILE__ : ".", name);
    return path;
}

static inline trd_platform *sd_load(const char *name)
{
    trd_platform *pf = NULL;
    trd_status st = trd_platform_load(sd_data(name), &pf);
    TU_CHECK(st == TRD_OK, "loading %s: %s", name, trd_errmsg());
    return pf;
}

static inline trd_platform *sd_new(void)
{
    trd_platform *pf = NULL;
    assert_int_equal(trd_platform_create(&pf), TRD_OK);
    return pf;
}

/* Adds a node; speed NULL makes a router. */
static inline int32_t sd_node(trd_platform *pf, const char *name, const char *speed)
{
    mpq_t s;
    int32_t id = -1;
    mpq_init(s);
    if (speed)
        assert_int_equal(trd_rational_parse(speed, "speed", s), TRD_OK);
    TU_CHECK(trd_platform_add_node(pf, name, speed == NULL, s, &id) == TRD_OK, "%s",
             trd_errmsg());
    mpq_clear(s);
    return id;
}

/* Adds from -> to (and to -> from when both) of cost `cost`. */
static inline void sd_link(trd_platform *pf, int32_t from, int32_t to, const char *cost, bool both)
{
    mpq_t c;
    mpq_init(c);
    assert_int_equal(trd_rational_parse(cost, "cost", c), TRD_OK);
    TU_CHECK(trd_platform_add_link(pf, from, to, c) == TRD_OK, "%s", trd_errmsg());
    if (both)
        TU_CHECK(trd_platform_add_link(pf, to, from, c) == TRD_OK, "%s", trd_errmsg());
    mpq_clear(c);
}

static inline trd_steady_spec sd_spec(trd_steady_problem problem, int32_t root,
                                      const int32_t *members, int32_t n)
{
    trd_steady_spec spec;
    trd_steady_spec_init(&spec);
    spec.problem = problem;
    spec.root = root;
    spec.members = members;
    spec.n_members = n;
    return spec;
}

/* trd_steady_solve that must succeed (its own checks included). */
static inline trd_steady *sd_solve(const trd_platform *pf, const trd_steady_spec *spec)
{
    trd_steady *st = NULL;
    trd_status s = trd_steady_solve(pf, spec, &st);
    TU_CHECK(s == TRD_OK && st != NULL, "%s on %d nodes: %s",
             trd_steady_problem_name(spec->problem), (int)trd_platform_node_count(pf),
             trd_errmsg());
    return st;
}

/* The throughput of a solve that must succeed. */
static inline void sd_throughput(const trd_platform *pf, const trd_steady_spec *spec, mpq_t tp)
{
    trd_steady *st = sd_solve(pf, spec);
    mpq_set(tp, st->throughput);
    trd_steady_free(st);
}

/* Runs every independent check of check.c again on st. */
static inline void sd_check_all(const trd_steady *st, const trd_platform *pf)
{
    TU_CHECK(trd_sd_check_solution(st, pf) == TRD_OK, "%s", trd_errmsg());
    TU_CHECK(trd_sd_check_trees(st, pf) == TRD_OK, "%s", trd_errmsg());
    TU_CHECK(trd_sd_check_matchings(st, pf, false) == TRD_OK, "%s", trd_errmsg());
    if (st->fixed_period)
        TU_CHECK(trd_sd_check_matchings(st, pf, true) == TRD_OK, "%s", trd_errmsg());
}

/* q == text exactly. */
static inline void sd_expect_q(const mpq_t q, const char *text, const char *what)
{
    mpq_t want;
    mpq_init(want);
    assert_int_equal(trd_rational_parse(text, "expected", want), TRD_OK);
    char got[256];
    gmp_snprintf(got, sizeof got, "%Qd", q);
    TU_CHECK(mpq_equal(q, want), "%s = %s, want %s", what, got, text);
    mpq_clear(want);
}

#endif
