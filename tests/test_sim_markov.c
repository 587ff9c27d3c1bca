/* test_sim_markov.c: trd_markov_tree_dyn (Tree-dyn, exponential transfers,
 * no computation; benoit-canon-marchal Sec. 5) against
 *   - the paper's closed form for even n (Sec. 5; docs/SIMULATION.md):
 *     E = mean_d (2 H(n/2 - 1) + 2/n),
 *     Var = mean_d^2 (2 sum_{i=1}^{n/2-1} 1/i^2 + 4/n^2), n = 2..200,
 *     for mean_d = 1, 2 (E doubles, Var x4) and 0.5;
 *   - an independent solver written here for every n = 1..201: first-step
 *     analysis of the absorbing chain on states (i transfers in flight,
 *     j ranks ready) whose transitions are derived from Tree-dyn's rule
 *     (a rank that becomes ready pairs with the one in the slot, or takes
 *     the slot), solving for the first two moments of the absorption time
 *     (Var = E[T^2] - E[T]^2, not a sum of per-state variances); and, for
 *     odd n, the closed form E = 2 H((n-1)/2) (start in s((n-1)/2, 1));
 *   - the simulator: trd_monte_carlo("tree-dyn", exponential mean 1, c = 0,
 *     100000 runs, seed 7) for n = 64 and 63: sample mean within 4
 *     standard errors of the chain's mean, sample variance within 5 %. */
#include "testutil.h"

#define SOLVER_N_MAX 256

static double harmonic(int64_t m)
{
    double h = 0;
    for (int64_t i = m; i >= 1; i--)
        h += 1.0 / (double)i;
    return h;
}

static void markov(int64_t n, double mean_d, double *mean, double *var)
{
    *mean = *var = NAN;
    trd_status st = trd_markov_tree_dyn(n, mean_d, mean, var);
    TU_CHECK(st == TRD_OK, "markov n=%lld mean_d=%g: %s", (long long)n, mean_d, trd_errmsg());
}

/* Relative closeness with a chosen tolerance. */
static int close_rel(double a, double b, double tol)
{
    return fabs(a - b) <= tol * fmax(1.0, fmax(fabs(a), fabs(b)));
}

/* The chain of Tree-dyn with unit rate: state (i, j), i transfers in
 * flight, j in {0, 1} ranks waiting in the slot.  m1[i][j], m2[i][j]: the
 * first two moments of the time to absorption.  Each transfer ends at rate
 * 1, so the state is left at rate i; the receiver then holds a partial
 * result: with the slot full it pairs (a transfer starts: i stays, slot
 * empties), with the slot empty it waits there (i - 1, slot full).  i = 0
 * is absorbing (the reduction is over).  For a holding time H ~ Exp(q)
 * followed by the remaining time R of the successor:
 *   E[H + R] = 1/q + E[R],  E[(H + R)^2] = 2/q^2 + 2 E[R]/q + E[R^2]. */
static void solve_chain(int64_t n, double *mean, double *var)
{
    static double m1[SOLVER_N_MAX / 2 + 2][2], m2[SOLVER_N_MAX / 2 + 2][2];
    assert_true(n >= 1 && n <= SOLVER_N_MAX);
    m1[0][0] = m1[0][1] = m2[0][0] = m2[0][1] = 0.0;
    /* successors of (i, *) are (i, 0) and (i - 1, 1): solve (i, 0) first */
    for (int64_t i = 1; i <= n / 2; i++)
        for (int pass = 0; pass < 2; pass++) {
            int j = pass == 0 ? 0 : 1;
            int64_t ni = j == 1 ? i : i - 1; /* ready receiver pairs, or waits */
            int nj = j == 1 ? 0 : 1;
            double q = (double)i;
            double r1 = m1[ni][nj], r2 = m2[ni][nj];
            m1[i][j] = 1.0 / q + r1;
            m2[i][j] = 2.0 / (q * q) + 2.0 * r1 / q + r2;
        }
    /* start: ranks pair two by two; with n odd the last one takes the slot */
    int64_t i0 = n / 2;
    int j0 = (int)(n % 2);
    if (n == 1) {
        *mean = *var = 0.0;
        return;
    }
    *mean = m1[i0][j0];
    *var = m2[i0][j0] - m1[i0][j0] * m1[i0][j0];
}

static void even_n_matches_paper_closed_form(void **state)
{
    (void)state;
    static const double scales[] = {1.0, 2.0, 0.5};
    for (int64_t n = 2; n <= 200; n += 2) {
        double sq = 0.0;
        for (int64_t i = 1; i <= n / 2 - 1; i++)
            sq += 1.0 / ((double)i * (double)i);
        double e = 2.0 * harmonic(n / 2 - 1) + 2.0 / (double)n;
        double v = 2.0 * sq + 4.0 / ((double)n * (double)n);
        for (size_t k = 0; k < 3; k++) {
            double s = scales[k], mean, var;
            markov(n, s, &mean, &var);
            TU_CHECK(close_rel(mean, s * e, 1e-12), "n=%lld mean_d=%g: E %.17g, paper %.17g",
                     (long long)n, s, mean, s * e);
            TU_CHECK(close_rel(var, s * s * v, 1e-12), "n=%lld mean_d=%g: Var %.17g, paper "
                     "%.17g", (long long)n, s, var, s * s * v);
        }
    }
}

static void every_n_matches_own_chain_solver(void **state)
{
    (void)state;
    for (int64_t n = 1; n <= 201; n++) {
        double mean, var, want_mean, want_var;
        markov(n, 1.0, &mean, &var);
        solve_chain(n, &want_mean, &want_var);
        /* E[T^2] - E[T]^2 loses a few digits: 1e-9 relative */
        TU_CHECK(close_rel(mean, want_mean, 1e-12), "n=%lld: E %.17g, chain solver %.17g",
                 (long long)n, mean, want_mean);
        TU_CHECK(close_rel(var, want_var, 1e-9), "n=%lld: Var %.17g, chain solver %.17g",
                 (long long)n, var, want_var);
        if (n % 2 == 1) {
            double e_odd = 2.0 * harmonic((n - 1) / 2);
            TU_CHECK(close_rel(mean, e_odd, 1e-12), "odd n=%lld: E %.17g, 2H((n-1)/2) %.17g",
                     (long long)n, mean, e_odd);
        }
    }
    double mean = -1, var = -1;
    markov(1, 3.0, &mean, &var);
    assert_true(mean == 0.0 && var == 0.0);
    markov(2, 3.0, &mean, &var); /* one transfer of mean 3 */
    TU_CHECK(close_rel(mean, 3.0, 1e-15) && close_rel(var, 9.0, 1e-15), "n=2: %g %g", mean,
             var);
}

static void monte_carlo_matches(int64_t n)
{
    enum { RUNS = 100000 };
    trd_params p = tu_params(n, 1, 0, 0);
    trd_costs *costs = NULL;
    assert_int_equal(trd_costs_create(&costs, n, TRD_DIST_EXP, 1.0, 0.0, 1.0), TRD_OK);
    double *samples = tu_alloc(RUNS, sizeof *samples);
    trd_mc_stats s;
    trd_status st = trd_monte_carlo("tree-dyn", &p, costs, TRD_PORT_HALF, 7, RUNS, 0, NULL,
                                    NULL, &s, samples);
    TU_CHECK(st == TRD_OK, "monte carlo n=%lld: %s", (long long)n, trd_errmsg());
    double sum = 0, sum2 = 0;
    for (int i = 0; i < RUNS; i++)
        sum += samples[i];
    double mc_mean = sum / RUNS;
    for (int i = 0; i < RUNS; i++)
        sum2 += (samples[i] - mc_mean) * (samples[i] - mc_mean);
    double mc_var = sum2 / (RUNS - 1);
    double mean, var;
    markov(n, 1.0, &mean, &var);
    double se = sqrt(mc_var / RUNS);
    TU_CHECK(fabs(mc_mean - mean) <= 4 * se, "n=%lld: MC mean %.6f, Markov %.6f (se %.6f)",
             (long long)n, mc_mean, mean, se);
    TU_CHECK(fabs(mc_var - var) <= 0.05 * var, "n=%lld: MC variance %.6f, Markov %.6f",
             (long long)n, mc_var, var);
    TU_CHECK(close_rel(s.mean, mc_mean, 1e-12), "stats mean %.17g, samples %.17g", s.mean,
             mc_mean);
    free(samples);
    trd_costs_free(costs);
}

static void monte_carlo_even(void **state)
{
    (void)state;
    monte_carlo_matches(64);
}

static void monte_carlo_odd(void **state)
{
    (void)state;
    monte_carlo_matches(63);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(even_n_matches_paper_closed_form),
        cmocka_unit_test(every_n_matches_own_chain_solver),
        cmocka_unit_test(monte_carlo_even),
        cmocka_unit_test(monte_carlo_odd),
    };
    return cmocka_run_group_tests_name("sim_markov", tests, NULL, NULL);
}
