/* test_optimality.c: Theorems 4 and 9 of canon-antoniu on small inputs.
 *
 * Checks, for every n <= 7 and (d, c) in {(1,1), (0,1), (1,0), (2,1), (1,3)}:
 *   - "greedy" (Algorithm 1) reaches the optimum over ALL reduction trees;
 *   - "greedy-k-reducers" (Algorithm 3) with K = 1 .. n-1 reaches the
 *     optimum over the trees with at most K receiving machines;
 * against the exhaustive search of tests/oracle/brute_force.c (every parent
 * array with parent[i] < i, evaluated with the Prop. 3 closed form).  The
 * oracle itself is first checked on values the paper gives in closed form
 * (Lemma 5 / Prop. 6 are tight when min(d, c) = 0, and the flat tree is the
 * only tree with one receiving machine). */
#include "testutil.h"

#define N_MAX 7

static int ceil_log2(int n)
{
    int k = 0;
    while ((1 << k) < n)
        k++;
    return k;
}

/* Oracle self-check against closed forms the paper proves. */
static void brute_force_matches_closed_forms(void **state)
{
    (void)state;
    for (int n = 1; n <= N_MAX; n++) {
        /* min(d, c) = 0: Lemma 5 and Prop. 6 meet at ceil(log2 n) max(d, c). */
        double lb = ceil_log2(n) * 1.0;
        TU_CHECK(trd_oracle_brute_force(n, 1, 0, n) == lb, "n=%d (1,0)", n);
        TU_CHECK(trd_oracle_brute_force(n, 0, 1, n) == lb, "n=%d (0,1)", n);
        /* K = 1: only the flat tree, d + (n-2) max(d, c) + c. */
        if (n >= 2) {
            double flat = 2 + (n - 2) * 3.0 + 3;
            TU_CHECK(trd_oracle_brute_force(n, 2, 3, 1) == flat, "n=%d flat", n);
        }
    }
    /* n = 3, d = c = 1: a Fibonacci tree of order 2, length 3 (Prop. 16);
     * the chain would take 4. */
    assert_true(trd_oracle_brute_force(3, 1, 1, 3) == 3.0);
    /* n = 4, one receiver: the flat tree, d + 2 max(d, c) + c = 4. */
    assert_true(trd_oracle_brute_force(4, 1, 1, 1) == 4.0);
}

static void greedy_is_optimal(void **state)
{
    (void)state;
    for (size_t k = 0; k < TU_NPAIRS; k++) {
        double d = tu_pairs[k][0], c = tu_pairs[k][1];
        for (int n = 1; n <= N_MAX; n++) {
            double opt = trd_oracle_brute_force(n, d, c, n);
            trd_params p = tu_params(n, d, c, 0);
            double got = tu_makespan("greedy", &p);
            TU_CHECK(tu_close(got, opt), "greedy n=%d d=%g c=%g: %.17g, optimum %.17g",
                     n, d, c, got, opt);
        }
    }
}

static void k_reducers_is_optimal(void **state)
{
    (void)state;
    for (size_t k = 0; k < TU_NPAIRS; k++) {
        double d = tu_pairs[k][0], c = tu_pairs[k][1];
        for (int n = 2; n <= N_MAX; n++) {
            for (int K = 1; K <= n - 1; K++) {
                double opt = trd_oracle_brute_force(n, d, c, K);
                trd_params p = tu_params(n, d, c, K);
                double got = tu_makespan("greedy-k-reducers", &p);
                TU_CHECK(tu_close(got, opt),
                         "greedy-k-reducers n=%d K=%d d=%g c=%g: %.17g, optimum %.17g",
                         n, K, d, c, got, opt);
            }
        }
    }
}

/* The plan of greedy-k-reducers really has at most K receiving ranks (the
 * optimum above is only meaningful if the constraint holds). */
static void k_reducers_respects_k(void **state)
{
    (void)state;
    for (size_t k = 0; k < TU_NPAIRS; k++) {
        double d = tu_pairs[k][0], c = tu_pairs[k][1];
        for (int n = 2; n <= N_MAX; n++) {
            for (int K = 1; K <= n - 1; K++) {
                trd_params p = tu_params(n, d, c, K);
                trd_plan *plan = tu_plan("greedy-k-reducers", &p);
                int receives[N_MAX] = {0}, receivers = 0;
                for (int r = 0; r < n; r++) {
                    int32_t q = trd_plan_parent(plan, r);
                    if (q >= 0 && !receives[q]++)
                        receivers++;
                }
                TU_CHECK(receivers <= K, "n=%d K=%d d=%g c=%g: %d receivers", n, K, d,
                         c, receivers);
                trd_plan_free(plan);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(brute_force_matches_closed_forms),
        cmocka_unit_test(greedy_is_optimal),
        cmocka_unit_test(k_reducers_is_optimal),
        cmocka_unit_test(k_reducers_respects_k),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
