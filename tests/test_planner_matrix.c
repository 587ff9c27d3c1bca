/* test_planner_matrix.c: every registered planner against the bounds and
 * the Prop. 3 closed form.
 *
 * For every algorithm of the registry (K in {1, 2, 3, 5} for those that
 * read K), every n <= 200 and every 7th n up to 1000, and (d, c) in
 * {(1,1), (1,0), (0,1), (2,1), (1,3)}:
 *   - lower_bound <= makespan <= upper_bound (relative tolerance 1e-9),
 *     the lower bound is Lemma 5's ceil(log2 n) max(d, c) computed here, and
 *     makespan == upper_bound where the bound's source says it is exact;
 *   - makespan equals trd_makespan() for the same parameters;
 *   - for planners whose transfers start as soon as possible (all but
 *     greedy-k-transfers, which delays them on purpose), the makespan
 *     equals the Prop. 3 closed form of tests/oracle/brute_force.c applied
 *     to the plan's parent array. */
#include "testutil.h"

#define N_DENSE 200
#define N_LAST 1000

static const int64_t k_values[] = {1, 2, 3, 5};

static int ceil_log2(int64_t n)
{
    int k = 0;
    while (((int64_t)1 << k) < n)
        k++;
    return k;
}

static int64_t next_n(int64_t n)
{
    if (n < N_DENSE)
        return n + 1;
    if (n == N_LAST)
        return n + 1;
    return n + 7 > N_LAST ? N_LAST : n + 7;
}

/* Every algorithm the issue names is registered (so the loops below are
 * not vacuous), and K is read exactly by the two K-limited ones. */
static void registry_lists_the_planners(void **state)
{
    (void)state;
    static const char *names[] = {"greedy", "greedy-k-transfers", "greedy-k-reducers",
                                  "binomial-strategy", "fibonacci-strategy",
                                  "binomial", "fibonacci", "chain", "flat"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t index = (size_t)-1;
        TU_CHECK(trd_algo_find(names[i], &index) == TRD_OK, "%s is not registered",
                 names[i]);
        assert_string_equal(trd_algo_name(index), names[i]);
        bool k_limited = strncmp(names[i], "greedy-k-", 9) == 0;
        TU_CHECK(trd_algo_uses_k(index) == k_limited, "%s uses_k", names[i]);
        TU_CHECK(!trd_algo_is_dynamic(index), "%s has no static plan", names[i]);
    }
}

static void check_one(const char *algo, int64_t n, double d, double c, int64_t K)
{
    trd_params p = tu_params(n, d, c, K);
    trd_plan *plan = tu_plan(algo, &p);
    double m = trd_plan_makespan(plan), lb = trd_plan_lower_bound(plan);
    double ub = trd_plan_upper_bound(plan);
    double lemma5 = ceil_log2(n) * fmax(d, c);
    TU_CHECK(tu_close(lb, lemma5), "%s n=%lld d=%g c=%g K=%lld: lower bound %.17g != %.17g",
             algo, (long long)n, d, c, (long long)K, lb, lemma5);
    TU_CHECK(lb <= m || tu_close(lb, m), "%s n=%lld d=%g c=%g K=%lld: makespan %.17g < "
             "lower bound %.17g", algo, (long long)n, d, c, (long long)K, m, lb);
    TU_CHECK(m <= ub || tu_close(m, ub), "%s n=%lld d=%g c=%g K=%lld: makespan %.17g > "
             "upper bound %.17g (%s)", algo, (long long)n, d, c, (long long)K, m, ub,
             trd_plan_upper_bound_source(plan));
    const char *source = trd_plan_upper_bound_source(plan);
    if (strncmp(source, "exact", 5) == 0) /* chain, flat: the bound is the length */
        TU_CHECK(tu_close(m, ub), "%s n=%lld d=%g c=%g: makespan %.17g, %s = %.17g", algo,
                 (long long)n, d, c, m, source, ub);
    double cheap = tu_makespan(algo, &p);
    TU_CHECK(tu_close(cheap, m), "%s n=%lld d=%g c=%g K=%lld: trd_makespan %.17g, plan %.17g",
             algo, (long long)n, d, c, (long long)K, cheap, m);
    if (strcmp(algo, "greedy-k-transfers") != 0) {
        int32_t *parent = tu_parents(plan);
        double want = trd_oracle_prop3_makespan((int32_t)n, parent, d, c);
        TU_CHECK(tu_close(m, want), "%s n=%lld d=%g c=%g K=%lld: makespan %.17g, "
                 "Prop. 3 of its tree %.17g", algo, (long long)n, d, c, (long long)K,
                 m, want);
        free(parent);
    }
    trd_plan_free(plan);
}

/* One planner over the whole (n, d, c, K) grid; state names it. */
static void planner_grid(void **state)
{
    size_t index = *(size_t *)*state;
    const char *algo = trd_algo_name(index);
    size_t nk = trd_algo_uses_k(index) ? sizeof k_values / sizeof k_values[0] : 1;
    for (int64_t n = 1; n <= N_LAST; n = next_n(n))
        for (size_t i = 0; i < TU_NPAIRS; i++)
            for (size_t j = 0; j < nk; j++)
                check_one(algo, n, tu_pairs[i][0], tu_pairs[i][1],
                          trd_algo_uses_k(index) ? k_values[j] : 0);
}

/* A segmented plan (pipelines, exchanges, trees cut into blocks) is
 * bounded per block, not by Lemma 5 on the whole buffer, which a pipeline
 * beats: still, no plan ends before its bound. */
static void segmented_plans_respect_their_bound(void **state)
{
    (void)state;
    static const double lat[] = {0.0, 0.05};
    for (size_t a = 0; a < trd_algo_count(); a++) {
        if (trd_algo_is_dynamic(a) || trd_algo_uses_costs(a) ||
            !strncmp(trd_algo_name(a), "star", 4))
            continue;
        for (int64_t n = 2; n <= 12; n++)
            for (int64_t m = 1; m <= 16; m *= 4)
                for (size_t l = 0; l < sizeof lat / sizeof lat[0]; l++) {
                    trd_params p = tu_params(n, 1.0, 0.7, trd_algo_uses_k(a) ? 2 : 0);
                    p.segments = trd_algo_kind_of(a) == TRD_KIND_PIPELINED ? 0 : m;
                    p.latency = lat[l];
                    p.collective = tu_coll_of(a);
                    trd_plan *plan = tu_plan(trd_algo_name(a), &p);
                    double ms = trd_plan_makespan(plan), lb = trd_plan_lower_bound(plan);
                    TU_CHECK(lb <= ms || tu_close(lb, ms), "%s n=%lld blocks=%ld latency=%g: "
                             "makespan %.17g below the lower bound %.17g", trd_algo_name(a),
                             (long long)n, (long)trd_plan_blocks(plan), lat[l], ms, lb);
                    trd_plan_free(plan);
                }
    }
}

int main(void)
{
    static const struct CMUnitTest before[] = {
        cmocka_unit_test(registry_lists_the_planners),
        cmocka_unit_test(segmented_plans_respect_their_bound),
    };
    return tu_run_per_planner(&(struct tu_per_planner){
        .group = "planner_matrix", .fn = planner_grid, .before = before,
        .nbefore = sizeof before / sizeof before[0]});
}
