/* test_greedy_oracle.c: the O(n) greedy of the library against the
 * binary-heap Algorithms 1 and 3 of tests/oracle/greedy_heap.c.
 *
 * For n in {1, 2, 3, 10, 100, 1000, 12345, 100000} and (d, c) in
 * {(1,1), (1,0), (0,1), (2,1), (1,3)}:
 *   - "greedy" has the same parent array as the heap Algorithm 1 (both
 *     break ties of the argmin by (s, smaller position)), and its makespan
 *     (trd_makespan and the plan) equals the Prop. 3 closed form of the
 *     oracle's tree (tests/oracle/brute_force.c);
 *   - "greedy-k-reducers" with K in {1, 2, 3, 7, 64, n} likewise equals the
 *     heap Algorithm 3 with reducers = K.
 * The plans use root 0 and commutative numbering, so rank = position. */
#include "testutil.h"

static const int32_t sizes[] = {1, 2, 3, 10, 100, 1000, 12345, 100000};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define N_BIG 100000

/* Compares algo (K) with the heap oracle run with `reducers`. */
static void compare(const char *algo, int32_t n, double d, double c, int64_t K,
                    int64_t reducers, int32_t *want)
{
    assert_int_equal(trd_oracle_greedy_heap(n, d, c, reducers, want), 0);
    trd_params p = tu_params(n, d, c, K);
    trd_plan *plan = tu_plan(algo, &p);
    int32_t mismatches = 0, first = -1;
    for (int32_t r = 0; r < n; r++)
        if (trd_plan_parent(plan, r) != want[r]) {
            mismatches++;
            first = first < 0 ? r : first;
        }
    TU_CHECK(mismatches == 0,
             "%s n=%d d=%g c=%g K=%lld: %d parents differ from the heap oracle, first "
             "rank %d: %d vs %d", algo, n, d, c, (long long)K, mismatches, first,
             first >= 0 ? trd_plan_parent(plan, first) : 0, first >= 0 ? want[first] : 0);
    double prop3 = trd_oracle_prop3_makespan(n, want, d, c);
    double cheap = tu_makespan(algo, &p);
    TU_CHECK(tu_close(cheap, prop3), "%s n=%d d=%g c=%g K=%lld: trd_makespan %.17g, "
             "Prop. 3 of the oracle tree %.17g", algo, n, d, c, (long long)K, cheap, prop3);
    TU_CHECK(tu_close(trd_plan_makespan(plan), prop3),
             "%s n=%d d=%g c=%g K=%lld: plan makespan %.17g, Prop. 3 %.17g", algo, n, d,
             c, (long long)K, trd_plan_makespan(plan), prop3);
    trd_plan_free(plan);
}

static void greedy_matches_heap(void **state)
{
    (void)state;
    int32_t *want = tu_alloc(N_BIG, sizeof *want);
    for (size_t i = 0; i < NSIZES; i++)
        for (size_t j = 0; j < TU_NPAIRS; j++)
            compare("greedy", sizes[i], tu_pairs[j][0], tu_pairs[j][1], 0, sizes[i], want);
    free(want);
}

static void k_reducers_matches_heap(void **state)
{
    (void)state;
    static const int64_t ks[] = {1, 2, 3, 7, 64};
    int32_t *want = tu_alloc(N_BIG, sizeof *want);
    for (size_t i = 0; i < NSIZES; i++)
        for (size_t j = 0; j < TU_NPAIRS; j++) {
            double d = tu_pairs[j][0], c = tu_pairs[j][1];
            for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++)
                compare("greedy-k-reducers", sizes[i], d, c, ks[k], ks[k], want);
            compare("greedy-k-reducers", sizes[i], d, c, sizes[i], sizes[i], want);
        }
    free(want);
}

/* Oracle self-check by hand, on a case where the tie rule matters
 * (d = c = 1, n = 5: at i = 3 machines 0 and 1 tie at s = 2): the oracle
 * must pick the smaller position. */
static void oracle_tie_rule(void **state)
{
    (void)state;
    int32_t parent[5];
    assert_int_equal(trd_oracle_greedy_heap(5, 1, 1, 5, parent), 0);
    /* i=1: M=0, s1=2, s0=1; i=2: M=0, s2=3, s0=2; i=3: s0 = s1 = 2, M=0,
     * s3=4, s0=3; i=4: M=1 (s1=2). */
    static const int32_t want[5] = {-1, 0, 0, 0, 1};
    assert_memory_equal(parent, want, sizeof want);
    /* reducers = 1: every machine sends to the root (flat tree). */
    assert_int_equal(trd_oracle_greedy_heap(5, 1, 1, 1, parent), 0);
    for (int i = 1; i < 5; i++)
        assert_int_equal(parent[i], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(oracle_tie_rule),
        cmocka_unit_test(greedy_matches_heap),
        cmocka_unit_test(k_reducers_matches_heap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
