/* test_bad_input.c: bad input at the library level (treduce.h contract:
 * bad input never crashes, returns a negative status, leaves *out NULL and
 * a message in trd_errmsg() that names the bad value).
 *
 * Checks trd_plan_create (and trd_makespan, which shares the checks):
 *   - n = 0, -5, TRD_N_MAX + 1 -> TRD_EINVAL naming n;
 *   - n = TRD_N_MAX -> TRD_ENOMEM, "too large", without allocating (the
 *     call must return at once; the test would run out of memory or time);
 *   - d = -1, d = NAN, c = INFINITY -> TRD_EINVAL naming "d =" / "c =";
 *   - K = 0 for greedy-k-transfers and greedy-k-reducers -> TRD_EINVAL
 *     naming K;
 *   - unknown algorithm "nope" -> TRD_ENOALGO listing every valid name;
 *   - root = n or -1 -> TRD_EINVAL naming root;
 *   - NULL arguments -> an error status, no crash;
 *   - d, c so large that the plan's times could overflow (1e308) -> TRD_EINVAL
 *     naming d and c, for every static algorithm; just below, every time
 *     of the plan is finite;
 * and after each failure *out is NULL (it is preset to a dummy pointer).
 * Across the library, every failing call leaves a message of its own in
 * trd_errmsg() (never an empty or a stale one). */
#include <time.h>

#include "testutil.h"
#include "treduce/platform.h"
#include "treduce/star.h"

static int dummy;
#define NOT_NULL ((trd_plan *)(void *)&dummy)

/* Expects algo(params) to fail with `want` and a message containing
 * `needle` (if not NULL), from both trd_plan_create and trd_makespan. */
static void expect_failure(const char *algo, const trd_params *p, trd_status want,
                           const char *needle)
{
    trd_plan *out = NOT_NULL;
    trd_status st = trd_plan_create(&out, algo, p);
    TU_CHECK(st == want, "%s n=%lld d=%g c=%g K=%lld root=%lld: status %d (%s), want %d",
             algo ? algo : "(null)", (long long)p->n, p->d, p->c, (long long)p->K,
             (long long)p->root, st, trd_errmsg(), want);
    TU_CHECK(out == NULL, "%s: *out not NULL after failure", algo ? algo : "(null)");
    TU_CHECK(!needle || strstr(trd_errmsg(), needle), "message '%s' lacks '%s'",
             trd_errmsg(), needle);
    double m = 12345.0;
    st = trd_makespan(algo, p, &m);
    TU_CHECK(st == want, "trd_makespan: status %d (%s), want %d", st, trd_errmsg(), want);
    TU_CHECK(!needle || strstr(trd_errmsg(), needle), "trd_makespan message '%s' lacks "
             "'%s'", trd_errmsg(), needle);
}

static void bad_n(void **state)
{
    (void)state;
    static const int64_t bad[] = {0, -5, TRD_N_MAX + 1};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        trd_params p = tu_params(bad[i], 1, 1, 0);
        char needle[64];
        snprintf(needle, sizeof needle, "n = %lld", (long long)bad[i]);
        expect_failure("greedy", &p, TRD_EINVAL, needle);
        expect_failure("chain", &p, TRD_EINVAL, needle);
    }
}

static void n_max_is_too_large(void **state)
{
    (void)state;
    trd_params p = tu_params(TRD_N_MAX, 1, 1, 0);
    assert_true(TRD_N_MAX == (int64_t)2147483646);
    clock_t t0 = clock();
    for (size_t i = 0; i < trd_algo_count(); i++) {
        if (trd_algo_is_dynamic(i)) /* no static plan at any n */
            continue;
        p.K = trd_algo_uses_k(i) ? 2 : 0;
        p.collective = tu_coll_of(i);
        expect_failure(trd_algo_name(i), &p, TRD_ENOMEM, "too large");
    }
    /* Planning 2^31 ranks takes minutes: refusing must take no time. */
    double seconds = (double)(clock() - t0) / CLOCKS_PER_SEC;
    TU_CHECK(seconds < 1.0, "refusing n = TRD_N_MAX took %g s of CPU", seconds);
}

static void bad_costs(void **state)
{
    (void)state;
    trd_params p = tu_params(10, -1, 1, 0);
    expect_failure("greedy", &p, TRD_EINVAL, "d =");
    p = tu_params(10, NAN, 1, 0);
    expect_failure("greedy", &p, TRD_EINVAL, "d =");
    p = tu_params(10, 1, INFINITY, 0);
    expect_failure("greedy", &p, TRD_EINVAL, "c =");
    p = tu_params(10, 1, -INFINITY, 0);
    expect_failure("binomial", &p, TRD_EINVAL, "c =");
    p = tu_params(10, 1, NAN, 0);
    expect_failure("flat", &p, TRD_EINVAL, "c =");
    p = tu_params(10, 1, 1, 0);
    p.latency = 0.5;
    p.flight = -0.1;
    expect_failure("flat", &p, TRD_EINVAL, "flight =");
    p.flight = NAN;
    expect_failure("binomial", &p, TRD_EINVAL, "flight =");
    p.flight = 0.75; /* above the latency it is part of */
    expect_failure("greedy", &p, TRD_EINVAL, "above latency");
    p.flight = 0;
    p.recv_combine_saving = -0.1;
    expect_failure("binomial", &p, TRD_EINVAL, "recv_combine_saving = -0.1");
    p.recv_combine_saving = 1.5;
    expect_failure("pipeline", &p, TRD_EINVAL, "outside [0, 1]");
    p.recv_combine_saving = NAN;
    expect_failure("flat", &p, TRD_EINVAL, "recv_combine_saving = nan");
}

static void k_zero(void **state)
{
    (void)state;
    trd_params p = tu_params(10, 1, 1, 0);
    expect_failure("greedy-k-transfers", &p, TRD_EINVAL, "K = 0");
    expect_failure("greedy-k-reducers", &p, TRD_EINVAL, "K = 0");
    p.K = -3;
    expect_failure("greedy-k-reducers", &p, TRD_EINVAL, "K = -3");
}

static void unknown_algorithm(void **state)
{
    (void)state;
    trd_params p = tu_params(10, 1, 1, 0);
    expect_failure("nope", &p, TRD_ENOALGO, "greedy");
    expect_failure("nope", &p, TRD_ENOALGO, "nope");
    for (size_t i = 0; i < trd_algo_count(); i++) /* every valid name listed */
        expect_failure("nope", &p, TRD_ENOALGO, trd_algo_name(i));
    size_t index = 99;
    assert_int_equal(trd_algo_find("nope", &index), TRD_ENOALGO);
    assert_int_equal(index, 99);
    assert_non_null(strstr(trd_errmsg(), "greedy"));
}

static void bad_root(void **state)
{
    (void)state;
    static const int64_t roots[] = {10, -1, 11};
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
        trd_params p = tu_params(10, 1, 1, 0);
        p.root = roots[i];
        char needle[64];
        snprintf(needle, sizeof needle, "root = %lld", (long long)roots[i]);
        expect_failure("greedy", &p, TRD_EINVAL, needle);
        p.noncommutative = true;
        expect_failure("binomial", &p, TRD_EINVAL, needle);
    }
}

static void null_arguments(void **state)
{
    (void)state;
    trd_params p = tu_params(10, 1, 1, 0);
    assert_true(trd_plan_create(NULL, "greedy", &p) < 0);
    expect_failure(NULL, &p, TRD_ENOALGO, NULL);
    trd_plan *out = NOT_NULL;
    assert_true(trd_plan_create(&out, "greedy", NULL) < 0);
    assert_null(out);
    double m = 0;
    assert_true(trd_makespan("greedy", NULL, &m) < 0);
    assert_true(trd_makespan(NULL, &p, &m) < 0);
    assert_true(trd_makespan("greedy", &p, NULL) < 0);
    size_t index;
    assert_true(trd_algo_find(NULL, &index) < 0);
    assert_true(trd_algo_find("greedy", NULL) < 0);
    trd_plan_free(NULL); /* a no-op, like free(NULL) */
}

/* Every time a plan reports, finite. */
static void check_times_finite(const trd_plan *plan)
{
    const char *name = trd_plan_algo(plan);
    TU_CHECK(isfinite(trd_plan_makespan(plan)) && isfinite(trd_plan_lower_bound(plan)) &&
                 !isinf(trd_plan_upper_bound(plan)),
             "%s: makespan %g, bounds %g, %g", name, trd_plan_makespan(plan),
             trd_plan_lower_bound(plan), trd_plan_upper_bound(plan));
    for (int32_t r = 0; r < trd_plan_params(plan)->n; r++)
        for (size_t i = 0; i < trd_plan_step_count(plan, r); i++) {
            const trd_step *st = trd_plan_step(plan, r, i);
            TU_CHECK(isfinite(st->start) && isfinite(st->end) && isfinite(st->release),
                     "%s: rank %ld step %zu: %g .. %g", name, (long)r, i, st->start, st->end);
        }
}

static void overflowing_costs(void **state)
{
    (void)state;
    for (size_t i = 0; i < trd_algo_count(); i++) {
        if (trd_algo_is_dynamic(i))
            continue;
        trd_params p = tu_params(8, 1e308, 1e308, trd_algo_uses_k(i) ? 2 : 0);
        p.collective = tu_coll_of(i);
        if (!strncmp(trd_algo_name(i), "star", 4))
            p.n = 6; /* the star algorithms need n = k! */
        bool costs = trd_algo_uses_costs(i); /* bases at their mean: d and c */
        p.costs = costs ? tu_costs(p.n, p.d, p.c, 0) : NULL;
        expect_failure(trd_algo_name(i), &p, TRD_EINVAL, "d = 1e+308 and c = 1e+308");
        expect_failure(trd_algo_name(i), &p, TRD_EINVAL, "too large");
        p.d = p.c = 1e290;
        p.costs = costs ? tu_costs(p.n, p.d, p.c, 0) : NULL;
        trd_plan *plan = tu_plan(trd_algo_name(i), &p);
        check_times_finite(plan);
        trd_plan_free(plan);
    }
}

/* Sets a message of its own, then: fn must fail and replace it with one
 * that is not empty. */
static void fails_with_message(trd_status st, const char *what)
{
    TU_CHECK(st < 0, "%s did not fail", what);
    TU_CHECK(trd_errmsg()[0] != '\0' && !strstr(trd_errmsg(), "sentinel-name"),
             "%s: message '%s' is empty or left from an earlier call", what, trd_errmsg());
}

static void sentinel(void)
{
    size_t index;
    assert_int_equal(trd_algo_find("sentinel-name", &index), TRD_ENOALGO);
    assert_non_null(strstr(trd_errmsg(), "sentinel-name"));
}

static void every_failure_has_a_message(void **state)
{
    (void)state;
    trd_params p = tu_params(0, 1, 1, 0);
    trd_plan *plan = NULL;
    trd_costs *k = NULL;
    trd_platform *pf = NULL;
    trd_profile pr;
    trd_comm *comm[2];
    trd_op *op = NULL;
    trd_type type;
    double m, v;
    sentinel();
    fails_with_message(trd_plan_create(&plan, "greedy", &p), "trd_plan_create");
    sentinel();
    fails_with_message(trd_markov_tree_dyn(8, 1e308, &m, &v), "trd_markov_tree_dyn");
    sentinel();
    fails_with_message(trd_costs_create(&k, 4, TRD_DIST_GAMMA, 1, 0, 1e300), "trd_costs_create");
    assert_int_equal(trd_costs_create(&k, 4, TRD_DIST_CONST, 1, 0, 0), TRD_OK);
    sentinel();
    fails_with_message(trd_costs_load(k, "/tmp"), "trd_costs_load");
    trd_costs_free(k);
    sentinel();
    fails_with_message(trd_platform_load("/nonexistent/p.json", &pf), "trd_platform_load");
    sentinel();
    fails_with_message(trd_profile_load("/nonexistent/p.json", &pr, NULL), "trd_profile_load");
    sentinel();
    fails_with_message(trd_comm_threads_create(comm, 0, NULL), "trd_comm_threads_create");
    sentinel();
    fails_with_message(trd_type_parse("quad", &type), "trd_type_parse");
    sentinel();
    fails_with_message(trd_op_builtin(&op, TRD_OP_BAND, TRD_DOUBLE), "trd_op_builtin");
    sentinel();
    fails_with_message(trd_star_steps("nope", 3, &(int64_t){0}), "trd_star_steps");
}

/* The failures above must not have poisoned later calls. */
static void valid_call_after_failures(void **state)
{
    (void)state;
    trd_params p = tu_params(10, 1, 1, 0);
    trd_plan *plan = tu_plan("greedy", &p);
    assert_true(trd_plan_makespan(plan) > 0);
    trd_plan_free(plan);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_n),
        cmocka_unit_test(n_max_is_too_large),
        cmocka_unit_test(bad_costs),
        cmocka_unit_test(k_zero),
        cmocka_unit_test(unknown_algorithm),
        cmocka_unit_test(bad_root),
        cmocka_unit_test(null_arguments),
        cmocka_unit_test(overflowing_costs),
        cmocka_unit_test(every_failure_has_a_message),
        cmocka_unit_test(valid_call_after_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
