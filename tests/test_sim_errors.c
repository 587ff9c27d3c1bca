/* test_sim_errors.c: bad input to the simulation API (treduce.h contract:
 * bad input never crashes, returns a negative status and leaves a message
 * in trd_errmsg() that names the bad value; *out is NULL after a failed
 * create).  The oracle is the contract itself: each case states the status
 * and the text the message must contain.
 *   - trd_costs_create: n = 0 / -3, mean-d < 0 or inf, mean-c NaN, cv < 0
 *     or NaN, exponential with CV != 1, constant with CV != 0, an unknown
 *     distribution;
 *   - trd_simulate / trd_monte_carlo: runs = 0, threads = -1 or too many,
 *     NULL outputs, cost model for another n, unknown algorithm (also when
 *     the error comes back from a worker thread), tree-dyn with a
 *     non-commutative operator (TRD_EUNSUPPORTED, pointing to nc-tree-dyn),
 *     an unknown port model, planner errors (K, root) passed through;
 *   - trd_markov_tree_dyn: n = 0, mean_d = 0, < 0, NaN, inf, NULL outputs;
 *     a mean_d whose variance overflows (1e308) is refused, a subnormal one
 *     (1e-320) gives a mean > 0;
 *   - results that would overflow a double are refused, never returned as
 *     inf or NaN: gamma with cv = 1e300, Monte-Carlo makespans near 1e308;
 *   - trd_costs_load: missing 'n' header, wrong N, N not a whole number
 *     ("2.0"), a negative value, 'abc', NaN / inf / hexadecimal /
 *     out-of-range numbers, too few and extra values (messages name the
 *     file, the line and the value; comments count as lines), a missing
 *     file or a folder (TRD_EIO); a number longer than any line buffer is
 *     read whole (19 values with one 70,000 characters long stay 19); a
 *     failed load leaves the model homogeneous;
 *   - trd_costs_preset: an unknown name lists the valid names, D < 0 or
 *     NaN, n above the matrix limit. */
#include "testutil.h"

#include <unistd.h>

static void expect_error(trd_status st, trd_status want, const char *needle,
                         const char *needle2, const char *what)
{
    TU_CHECK(st == want, "%s: status %d (%s), want %d", what, st, trd_errmsg(), want);
    TU_CHECK(!needle || strstr(trd_errmsg(), needle), "%s: message '%s' lacks '%s'", what,
             trd_errmsg(), needle);
    TU_CHECK(!needle2 || strstr(trd_errmsg(), needle2), "%s: message '%s' lacks '%s'", what,
             trd_errmsg(), needle2);
}

static int dummy;
#define NOT_NULL ((trd_costs *)(void *)&dummy)

static void create_fails(int64_t n, trd_dist dist, double d, double c, double cv,
                         const char *needle, const char *needle2)
{
    trd_costs *out = NOT_NULL;
    trd_status st = trd_costs_create(&out, n, dist, d, c, cv);
    char what[128];
    snprintf(what, sizeof what, "costs n=%lld dist=%d d=%g c=%g cv=%g", (long long)n,
             (int)dist, d, c, cv);
    expect_error(st, TRD_EINVAL, needle, needle2, what);
    TU_CHECK(out == NULL, "%s: *out not NULL after failure", what);
}

static void bad_cost_models(void **state)
{
    (void)state;
    create_fails(0, TRD_DIST_CONST, 1, 0, 0, "n = 0", "out of range");
    create_fails(-3, TRD_DIST_CONST, 1, 0, 0, "n = -3", NULL);
    create_fails(TRD_N_MAX + 1, TRD_DIST_CONST, 1, 0, 0, "n = 2147483647", NULL);
    create_fails(4, TRD_DIST_CONST, -1, 0, 0, "mean-d = -1", NULL);
    create_fails(4, TRD_DIST_CONST, INFINITY, 0, 0, "mean-d = inf", NULL);
    create_fails(4, TRD_DIST_CONST, 1, NAN, 0, "mean-c = nan", NULL);
    create_fails(4, TRD_DIST_GAMMA, 1, 0, -0.5, "cv = -0.5", NULL);
    create_fails(4, TRD_DIST_GAMMA, 1, 0, NAN, "cv = nan", NULL);
    create_fails(4, TRD_DIST_EXP, 1, 0, 0.5, "cv = 0.5", "exponential");
    create_fails(4, TRD_DIST_CONST, 1, 0, 1, "cv = 1", "constant");
    create_fails(4, (trd_dist)7, 1, 0, 0, "unknown distribution 7", NULL);
    trd_costs *ok = NULL; /* the boundary values are accepted */
    assert_int_equal(trd_costs_create(&ok, 1, TRD_DIST_EXP, 0, 0, 1), TRD_OK);
    assert_non_null(ok);
    trd_costs_free(ok);
    trd_costs_free(NULL);
}

static trd_costs *costs_for(int64_t n)
{
    trd_costs *k = NULL;
    assert_int_equal(trd_costs_create(&k, n, TRD_DIST_GAMMA, 1, 0.5, 0.5), TRD_OK);
    return k;
}

static void bad_simulation_calls(void **state)
{
    (void)state;
    trd_costs *k5 = costs_for(5);
    trd_params p = tu_params(5, 1, 1, 0), p6 = tu_params(6, 1, 1, 0);
    trd_mc_stats s;
    double m;
    expect_error(trd_monte_carlo("binomial", &p, k5, TRD_PORT_HALF, 1, 0, 1, NULL, NULL, &s,
                                 NULL), TRD_EINVAL, "runs = 0", NULL, "runs 0");
    expect_error(trd_monte_carlo("binomial", &p, k5, TRD_PORT_HALF, 1, -5, 1, NULL, NULL, &s,
                                 NULL), TRD_EINVAL, "runs = -5", NULL, "runs -5");
    expect_error(trd_monte_carlo("binomial", &p, k5, TRD_PORT_HALF, 1, 10, -1, NULL, NULL, &s,
                                 NULL), TRD_EINVAL, "threads = -1", NULL, "threads -1");
    expect_error(trd_monte_carlo("binomial", &p, k5, TRD_PORT_HALF, 1, 10, 100000, NULL, NULL,
                                 &s, NULL), TRD_EINVAL, "threads = 100000", NULL, "threads");
    expect_error(trd_monte_carlo("binomial", &p, k5, TRD_PORT_HALF, 1, 10, 1, NULL, NULL, NULL,
                                 NULL), TRD_EINVAL, "stats", NULL, "NULL stats");
    expect_error(trd_simulate("binomial", &p6, k5, TRD_PORT_HALF, 1, 0, &m), TRD_EINVAL,
                 "n = 5", "n = 6", "n mismatch");
    expect_error(trd_monte_carlo("tree-dyn", &p6, k5, TRD_PORT_HALF, 1, 10, 2, NULL, NULL, &s,
                                 NULL), TRD_EINVAL, "n = 5", "n = 6", "n mismatch (mc)");
    expect_error(trd_simulate("binomial", &p, k5, (trd_port)5, 1, 0, &m), TRD_EINVAL,
                 "unknown port model 5", NULL, "port");
    expect_error(trd_simulate("binomial", &p, k5, TRD_PORT_HALF, 1, 0, NULL), TRD_EINVAL,
                 "makespan", NULL, "NULL makespan");
    expect_error(trd_simulate("binomial", NULL, k5, TRD_PORT_HALF, 1, 0, &m), TRD_EINVAL,
                 "NULL", NULL, "NULL params");
    expect_error(trd_simulate("binomial", &p, NULL, TRD_PORT_HALF, 1, 0, &m), TRD_EINVAL,
                 "NULL", NULL, "NULL costs");
    trd_params k0 = p, root5 = p;
    root5.root = 5;
    expect_error(trd_simulate("greedy-k-transfers", &k0, k5, TRD_PORT_HALF, 1, 0, &m),
                 TRD_EINVAL, "K >= 1", NULL, "K = 0");
    expect_error(trd_simulate("binomial", &root5, k5, TRD_PORT_HALF, 1, 0, &m), TRD_EINVAL,
                 "root = 5", NULL, "root = n");
    trd_costs_free(k5);
}

/* The unknown-algorithm message lists every registered name. */
static void expect_algo_list(trd_status st, const char *bad, const char *what)
{
    char needle[96];
    snprintf(needle, sizeof needle, "unknown algorithm '%s'", bad);
    expect_error(st, TRD_ENOALGO, needle, "valid names", what);
    for (size_t i = 0; i < trd_algo_count(); i++)
        TU_CHECK(strstr(trd_errmsg(), trd_algo_name(i)), "%s: message '%s' lacks '%s'", what,
                 trd_errmsg(), trd_algo_name(i));
}

static void unknown_and_unsupported_algorithms(void **state)
{
    (void)state;
    trd_costs *k8 = costs_for(8);
    trd_params p = tu_params(8, 1, 1, 0);
    trd_mc_stats s;
    double m;
    expect_algo_list(trd_simulate("nope", &p, k8, TRD_PORT_HALF, 1, 0, &m), "nope", "simulate");
    expect_algo_list(trd_simulate(NULL, &p, k8, TRD_PORT_HALF, 1, 0, &m), "(null)",
                     "simulate NULL");
    /* raised in a worker thread, reported by the caller's thread */
    expect_algo_list(trd_monte_carlo("tree-dyn2", &p, k8, TRD_PORT_HALF, 1, 1000, 2, NULL, NULL,
                                     &s, NULL), "tree-dyn2", "monte carlo");
    p.noncommutative = true;
    expect_error(trd_simulate("tree-dyn", &p, k8, TRD_PORT_HALF, 1, 0, &m), TRD_EUNSUPPORTED,
                 "tree-dyn", "nc-tree-dyn", "tree-dyn noncommutative");
    expect_error(trd_monte_carlo("tree-dyn", &p, k8, TRD_PORT_HALF, 1, 100, 2, NULL, NULL, &s,
                                 NULL), TRD_EUNSUPPORTED, "nc-tree-dyn", NULL, "mc tree-dyn nc");
    m = -1; /* nc-tree-dyn is the one for non-commutative operators */
    assert_int_equal(trd_simulate("nc-tree-dyn", &p, k8, TRD_PORT_HALF, 1, 0, &m), TRD_OK);
    assert_true(m > 0);
    trd_costs_free(k8);
}

static void bad_markov_arguments(void **state)
{
    (void)state;
    double mean = 1, var = 1;
    expect_error(trd_markov_tree_dyn(0, 1, &mean, &var), TRD_EINVAL, "n = 0", NULL, "n 0");
    expect_error(trd_markov_tree_dyn(-4, 1, &mean, &var), TRD_EINVAL, "n = -4", NULL, "n -4");
    expect_error(trd_markov_tree_dyn(TRD_N_MAX + 1, 1, &mean, &var), TRD_EINVAL,
                 "n = 2147483647", NULL, "n max");
    expect_error(trd_markov_tree_dyn(8, 0, &mean, &var), TRD_EINVAL, "mean-d = 0", NULL,
                 "mean_d 0");
    expect_error(trd_markov_tree_dyn(8, -2, &mean, &var), TRD_EINVAL, "mean-d = -2", NULL,
                 "mean_d -2");
    expect_error(trd_markov_tree_dyn(8, NAN, &mean, &var), TRD_EINVAL, "mean-d = nan", NULL,
                 "mean_d nan");
    expect_error(trd_markov_tree_dyn(8, INFINITY, &mean, &var), TRD_EINVAL, "mean-d = inf",
                 NULL, "mean_d inf");
    expect_error(trd_markov_tree_dyn(8, 1, NULL, &var), TRD_EINVAL, "NULL", NULL, "NULL mean");
    expect_error(trd_markov_tree_dyn(8, 1, &mean, NULL), TRD_EINVAL, "NULL", NULL, "NULL var");
}

/* Writes text to a new temporary file; path gets its name. */
static void temp_file(char *path, size_t size, const char *text)
{
    snprintf(path, size, "/tmp/trd_costs_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* Loading `text` into a 2-rank model fails with EINVAL, a message naming the
 * file (with ":line" when line > 0) and `needle`; the model stays
 * homogeneous (a run costs mean_d = 1 per transfer). */
static void load_fails(const char *text, int line, const char *needle)
{
    char path[64], where[96];
    temp_file(path, sizeof path, text);
    trd_costs *k = NULL;
    assert_int_equal(trd_costs_create(&k, 2, TRD_DIST_CONST, 1, 0, 0), TRD_OK);
    trd_status st = trd_costs_load(k, path);
    if (line > 0)
        snprintf(where, sizeof where, "%s:%d:", path, line);
    else
        snprintf(where, sizeof where, "%s", path);
    expect_error(st, TRD_EINVAL, where, needle, text);
    unlink(path);
    trd_params p = tu_params(2, 1, 0, 0);
    double m = NAN;
    assert_int_equal(trd_simulate("binomial", &p, k, TRD_PORT_HALF, 1, 0, &m), TRD_OK);
    TU_CHECK(m == 1.0, "after the failed load of '%s' a transfer takes %g, not mean_d = 1",
             text, m);
    trd_costs_free(k);
}

static void malformed_cost_files(void **state)
{
    (void)state;
    load_fails("0 5\n5 0\n0 0\n", 1, "expected 'n N' first");
    load_fails("# comment\nm 2\n0 5\n5 0\n0 0\n", 2, "expected 'n N' first");
    load_fails("", 0, "expected 'n N' first");
    load_fails("n 3\n0 5 5\n5 0 5\n5 5 0\n0 0 0\n", 1, "for n = 3 ranks");
    load_fails("n two\n0 5\n5 0\n0 0\n", 1, "invalid n 'two'");
    load_fails("n 2.0\n0 5\n5 0\n0 0\n", 1, "invalid n '2.0'");
    load_fails("n 0x2\n0 5\n5 0\n0 0\n", 1, "invalid n '0x2'");
    load_fails("n 2\n0 0x1p3\n5 0\n0 0\n", 2, "invalid transfer time '0x1p3'");
    load_fails("n 2\n0 -1\n5 0\n0 0\n", 2, "invalid transfer time '-1': must not be negative");
    load_fails("n 2\n0 5\n5 abc\n0 0\n", 3, "invalid transfer time 'abc'");
    load_fails("n 2\n0 5 # ok\n# a comment line\n5 0\n0 x\n", 5, "invalid combine time 'x'");
    load_fails("n 2\n0 nan\n5 0\n0 0\n", 2, "'nan'");
    load_fails("n 2\n0 inf\n5 0\n0 0\n", 2, "'inf'");
    load_fails("n 2\n0 1e999\n5 0\n0 0\n", 2, "'1e999': overflows");
    load_fails("n 2\n0 1e-320\n5 0\n0 0\n", 2, "'1e-320': underflows"); /* subnormal */
    load_fails("n 2\n0 1e-400\n5 0\n0 0\n", 2, "'1e-400': underflows");
    load_fails("n 2\n0 -1e-320\n5 0\n0 0\n", 2, "'-1e-320': underflows");
    load_fails("n 2\n0 5x\n5 0\n0 0\n", 2, "'5x'");
    load_fails("n 2\n0 5\n5 0\n0\n", 0, "ends before combine time");
    load_fails("n 2\n0 5\n5\n", 0, "ends before transfer time");
    load_fails("n 2\n0 5\n5 0\n0 0\n\n7\n", 6, "unexpected data after the 2 combine times");
    trd_costs *k = NULL;
    assert_int_equal(trd_costs_create(&k, 2, TRD_DIST_CONST, 1, 0, 0), TRD_OK);
    const char *missing = "/nonexistent-dir/costs.txt";
    expect_error(trd_costs_load(k, missing), TRD_EIO, missing, "cannot read", "missing file");
    expect_error(trd_costs_load(k, "/tmp"), TRD_EIO, "/tmp", "folder", "a folder");
    char path[64]; /* a good file does change the costs: 0 -> 1 takes 5 */
    temp_file(path, sizeof path, "# ok\nn 2\n0 5\n5 0\n0.5 0.5\n");
    assert_int_equal(trd_costs_load(k, path), TRD_OK);
    unlink(path);
    trd_params p = tu_params(2, 1, 0, 0);
    double m = NAN;
    assert_int_equal(trd_simulate("binomial", &p, k, TRD_PORT_HALF, 1, 0, &m), TRD_OK);
    TU_CHECK(m == 5.5, "loaded costs: %g, want d[1][0] + c[0] = 5.5", m);
    trd_costs_free(k);
}

/* n = 4 needs 20 values.  Each of `values` is "1" but value `long_one`,
 * "1.000...0" of 70,000 characters (longer than any line buffer: it must
 * be read as one number, not split into two). */
static trd_status load_long(int values, int long_one, trd_costs **k)
{
    size_t size = 80000 + 8 * (size_t)values;
    char *text = tu_alloc(size, 1), path[64];
    size_t len = (size_t)snprintf(text, size, "n 4\n");
    for (int i = 0; i < values; i++) {
        if (i == long_one) {
            len += (size_t)snprintf(text + len, size - len, "1.");
            memset(text + len, '0', 69998);
            len += 69998;
        } else {
            text[len++] = '1';
        }
        text[len++] = i % 4 == 3 ? '\n' : ' ';
    }
    text[len] = '\0';
    temp_file(path, sizeof path, text);
    free(text);
    assert_int_equal(trd_costs_create(k, 4, TRD_DIST_CONST, 1, 0, 0), TRD_OK);
    trd_status st = trd_costs_load(*k, path);
    unlink(path);
    return st;
}

static void long_numbers_read_whole(void **state)
{
    (void)state;
    trd_costs *k = NULL;
    expect_error(load_long(19, 5, &k), TRD_EINVAL, "ends before combine time", NULL,
                 "19 values, one of them long");
    trd_costs_free(k);
    assert_int_equal(load_long(20, 5, &k), TRD_OK);
    trd_params p = tu_params(4, 1, 0, 0);
    double m = NAN; /* every transfer and combine costs 1: the long "1.000..." too */
    assert_int_equal(trd_simulate("chain", &p, k, TRD_PORT_HALF, 1, 0, &m), TRD_OK);
    TU_CHECK(m == 6.0, "chain of 4 with unit costs: %g, want 6", m);
    trd_costs_free(k);
}

/* Inputs whose results overflow a double are refused; none comes back as
 * inf or NaN with TRD_OK. */
static void overflowing_results_refused(void **state)
{
    (void)state;
    double mean = 0, var = 0;
    expect_error(trd_markov_tree_dyn(8, 1e308, &mean, &var), TRD_EINVAL, "mean-d = 1e+308",
                 "overflows", "markov 1e308");
    assert_int_equal(trd_markov_tree_dyn(8, 1e150, &mean, &var), TRD_OK);
    TU_CHECK(isfinite(mean) && isfinite(var) && var > 1e300, "mean %g var %g", mean, var);
    assert_int_equal(trd_markov_tree_dyn(8, 1e-320, &mean, &var), TRD_OK); /* subnormal */
    TU_CHECK(mean > 0 && mean < 1e-318, "mean %g for a mean transfer of 1e-320", mean);
    create_fails(4, TRD_DIST_GAMMA, 1, 0, 1e300, "cv = 1e+300", "too large");
    trd_costs *k = NULL;
    assert_int_equal(trd_costs_create(&k, 8, TRD_DIST_GAMMA, 1e306, 0, 10), TRD_OK);
    trd_params p = tu_params(8, 1, 0, 0);
    trd_mc_stats stats;
    expect_error(trd_monte_carlo("tree-dyn", &p, k, TRD_PORT_HALF, 1, 200, 1, NULL, NULL,
                                 &stats, NULL),
                 TRD_EINVAL, "mean-d 1e+306", "double", "monte carlo near 1e308");
    trd_costs_free(k);
}

static void bad_presets(void **state)
{
    (void)state;
    trd_costs *k = costs_for(4);
    expect_error(trd_costs_preset(k, "nope", 2), TRD_EINVAL, "unknown cost preset 'nope'",
                 trd_costs_preset_names(), "unknown preset");
    static const char *names[] = {"lower-to-higher", "higher-to-lower", "fib-root-slow"};
    for (size_t i = 0; i < 3; i++) {
        TU_CHECK(strstr(trd_errmsg(), names[i]), "message '%s' lacks '%s'", trd_errmsg(),
                 names[i]);
        assert_int_equal(trd_costs_preset(k, names[i], 2), TRD_OK);
    }
    expect_error(trd_costs_preset(k, NULL, 2), TRD_EINVAL, "unknown cost preset", NULL, "NULL");
    expect_error(trd_costs_preset(k, "lower-to-higher", -1), TRD_EINVAL, "D = -1", NULL, "D<0");
    expect_error(trd_costs_preset(k, "lower-to-higher", NAN), TRD_EINVAL, "D = nan", NULL,
                 "D nan");
    trd_costs_free(k);
    trd_costs *big = NULL; /* refused before allocating 20000^2 doubles */
    assert_int_equal(trd_costs_create(&big, 20000, TRD_DIST_CONST, 1, 0, 0), TRD_OK);
    expect_error(trd_costs_preset(big, "fib-root-slow", 2), TRD_EINVAL, "n = 20000",
                 "limit", "matrix limit");
    trd_costs_free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_cost_models),
        cmocka_unit_test(bad_simulation_calls),
        cmocka_unit_test(unknown_and_unsupported_algorithms),
        cmocka_unit_test(bad_markov_arguments),
        cmocka_unit_test(malformed_cost_files),
        cmocka_unit_test(long_numbers_read_whole),
        cmocka_unit_test(overflowing_results_refused),
        cmocka_unit_test(bad_presets),
    };
    return cmocka_run_group_tests_name("sim_errors", tests, NULL, NULL);
}
