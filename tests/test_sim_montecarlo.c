/* test_sim_montecarlo.c: trd_monte_carlo's reproducibility contract and
 * statistics (treduce.h: "results are identical for any thread count";
 * samples in run order), against
 *   - itself with another thread count: threads = 1, 2, 3 and 0 (all
 *     cores) give bitwise identical samples and statistics for binomial,
 *     fibonacci, tree-dyn and nc-tree-dyn (gamma CV 0.7, mean_c 0.5,
 *     1500 runs = several work blocks);
 *   - trd_simulate(seed, run r), the single-run path: samples[r] equal it
 *     exactly (run order);
 *   - another seed: the samples change;
 *   - statistics recomputed here from the samples: mean (1e-12 relative),
 *     sample standard deviation (n - 1, 1e-9), min and max (exact), the
 *     10/50/90 % quantiles by linear interpolation between order statistics
 *     at (runs - 1) p (GSL's definition, docs/SIMULATION.md; 1e-12), and
 *     min <= q10 <= q50 <= q90 <= max;
 *   - constant costs: every run identical, std 0, and equal to the plan's
 *     makespan (trd_makespan); gamma with CV 0 equals constant costs;
 *   - the progress callback: non-decreasing done <= total, last call
 *     (total, total). */
#include "testutil.h"

#define RUNS 1500
#define N 37

static const char *algos[] = {"binomial", "fibonacci", "tree-dyn", "nc-tree-dyn"};
#define NALGOS (sizeof algos / sizeof algos[0])

static trd_costs *gamma_costs(int64_t n, double cv)
{
    trd_costs *costs = NULL;
    trd_status st = trd_costs_create(&costs, n, TRD_DIST_GAMMA, 1.0, 0.5, cv);
    TU_CHECK(st == TRD_OK, "gamma costs cv=%g: %s", cv, trd_errmsg());
    return costs;
}

static void mc(const char *algo, const trd_costs *costs, uint64_t seed, int64_t runs,
               int threads, trd_mc_stats *stats, double *samples)
{
    trd_params p = tu_params(N, 1, 0.5, 0);
    trd_status st = trd_monte_carlo(algo, &p, costs, TRD_PORT_HALF, seed, runs, threads,
                                    NULL, NULL, stats, samples);
    TU_CHECK(st == TRD_OK, "%s seed %llu threads %d: %s", algo, (unsigned long long)seed,
             threads, trd_errmsg());
}

static void assert_same_stats(const trd_mc_stats *a, const trd_mc_stats *b, const char *what)
{
    TU_CHECK(a->runs == b->runs && a->mean == b->mean && a->std == b->std && a->q10 == b->q10 &&
             a->q50 == b->q50 && a->q90 == b->q90 && a->min == b->min && a->max == b->max,
             "%s: statistics differ (mean %.17g vs %.17g)", what, a->mean, b->mean);
}

static void same_samples_for_any_thread_count(void **state)
{
    (void)state;
    static const int threads[] = {2, 3, 0};
    trd_costs *costs = gamma_costs(N, 0.7);
    double *ref = tu_alloc(RUNS, sizeof *ref), *got = tu_alloc(RUNS, sizeof *got);
    for (size_t a = 0; a < NALGOS; a++) {
        trd_mc_stats s1, s;
        mc(algos[a], costs, 42, RUNS, 1, &s1, ref);
        for (size_t t = 0; t < 3; t++) {
            memset(got, 0, RUNS * sizeof *got);
            mc(algos[a], costs, 42, RUNS, threads[t], &s, got);
            TU_CHECK(memcmp(ref, got, RUNS * sizeof *ref) == 0, "%s: samples with %d threads "
                     "differ from 1 thread", algos[a], threads[t]);
            assert_same_stats(&s1, &s, algos[a]);
        }
        static const int64_t runs[] = {0, 1, 255, 256, 257, 1000, RUNS - 1};
        trd_params p = tu_params(N, 1, 0.5, 0);
        for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
            double one = NAN;
            assert_int_equal(trd_simulate(algos[a], &p, costs, TRD_PORT_HALF, 42, runs[k], &one),
                             TRD_OK);
            TU_CHECK(one == ref[runs[k]], "%s run %lld: sample %.17g, trd_simulate %.17g",
                     algos[a], (long long)runs[k], ref[runs[k]], one);
        }
        mc(algos[a], costs, 43, RUNS, 2, &s, got);
        int64_t differ = 0;
        for (int i = 0; i < RUNS; i++)
            differ += got[i] != ref[i];
        TU_CHECK(differ > RUNS / 2, "%s: seeds 42 and 43 differ in only %lld runs", algos[a],
                 (long long)differ);
    }
    free(ref);
    free(got);
    trd_costs_free(costs);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(const double *sorted, int64_t n, double f)
{
    double pos = (double)(n - 1) * f;
    int64_t i = (int64_t)floor(pos);
    double delta = pos - (double)i;
    return i + 1 < n ? (1 - delta) * sorted[i] + delta * sorted[i + 1] : sorted[i];
}

static void statistics_match_the_samples(void **state)
{
    (void)state;
    trd_costs *costs = gamma_costs(N, 0.7);
    double *x = tu_alloc(RUNS, sizeof *x);
    for (size_t a = 0; a < NALGOS; a++) {
        trd_mc_stats s;
        mc(algos[a], costs, 5, RUNS, 2, &s, x);
        double sum = 0, ss = 0;
        for (int i = 0; i < RUNS; i++)
            sum += x[i];
        double mean = sum / RUNS;
        for (int i = 0; i < RUNS; i++)
            ss += (x[i] - mean) * (x[i] - mean);
        double sd = sqrt(ss / (RUNS - 1));
        qsort(x, RUNS, sizeof *x, cmp_double);
        assert_int_equal(s.runs, RUNS);
        TU_CHECK(tu_close(s.mean, mean) && fabs(s.mean - mean) <= 1e-12 * mean,
                 "%s: mean %.17g, samples %.17g", algos[a], s.mean, mean);
        TU_CHECK(fabs(s.std - sd) <= 1e-9 * sd, "%s: std %.17g, samples %.17g", algos[a],
                 s.std, sd);
        TU_CHECK(s.min == x[0] && s.max == x[RUNS - 1], "%s: min %g max %g, samples %g %g",
                 algos[a], s.min, s.max, x[0], x[RUNS - 1]);
        double q[3] = {quantile(x, RUNS, 0.1), quantile(x, RUNS, 0.5), quantile(x, RUNS, 0.9)};
        TU_CHECK(fabs(s.q10 - q[0]) <= 1e-12 * q[0] && fabs(s.q50 - q[1]) <= 1e-12 * q[1] &&
                 fabs(s.q90 - q[2]) <= 1e-12 * q[2], "%s: quantiles %g %g %g, samples %g %g "
                 "%g", algos[a], s.q10, s.q50, s.q90, q[0], q[1], q[2]);
        TU_CHECK(s.min <= s.q10 && s.q10 <= s.q50 && s.q50 <= s.q90 && s.q90 <= s.max,
                 "%s: min %g q10 %g q50 %g q90 %g max %g", algos[a], s.min, s.q10, s.q50,
                 s.q90, s.max);
        TU_CHECK(s.min < s.max && s.std > 0, "%s: random costs gave no spread", algos[a]);
    }
    free(x);
    trd_costs_free(costs);
}

/* Common random numbers with nothing random: every run is the same. */
static void constant_costs_give_identical_runs(void **state)
{
    (void)state;
    trd_costs *konst = NULL, *gamma0 = gamma_costs(N, 0.0);
    assert_int_equal(trd_costs_create(&konst, N, TRD_DIST_CONST, 1.0, 0.5, 0.0), TRD_OK);
    double *x = tu_alloc(300, sizeof *x), *y = tu_alloc(300, sizeof *y);
    for (size_t a = 0; a < NALGOS; a++) {
        trd_mc_stats s, g;
        mc(algos[a], konst, 9, 300, 2, &s, x);
        mc(algos[a], gamma0, 10, 300, 2, &g, y);
        for (int i = 0; i < 300; i++)
            TU_CHECK(x[i] == x[0] && y[i] == x[0], "%s: run %d took %.17g / %.17g, run 0 "
                     "%.17g", algos[a], i, x[i], y[i], x[0]);
        TU_CHECK(s.std == 0 && s.min == s.max && s.q10 == x[0] && s.mean == x[0],
                 "%s: constant costs, std %g", algos[a], s.std);
        assert_same_stats(&s, &g, "gamma with CV 0 vs constant");
        size_t index;
        assert_int_equal(trd_algo_find(algos[a], &index), TRD_OK);
        if (!trd_algo_is_dynamic(index)) {
            trd_params p = tu_params(N, 1, 0.5, 0);
            double model = tu_makespan(algos[a], &p);
            TU_CHECK(x[0] == model, "%s: simulated %.17g, plan %.17g", algos[a], x[0], model);
        }
    }
    trd_mc_stats one;
    trd_costs *g = gamma_costs(N, 0.7);
    mc("tree-dyn", g, 3, 1, 4, &one, x); /* a single run, more threads than runs */
    TU_CHECK(one.runs == 1 && one.std == 0 && one.min == x[0] && one.max == x[0] &&
             one.q10 == x[0] && one.q90 == x[0] && one.mean == x[0], "one run: %g %g",
             one.mean, x[0]);
    free(x);
    free(y);
    trd_costs_free(g);
    trd_costs_free(konst);
    trd_costs_free(gamma0);
}

typedef struct progress_log {
    int64_t calls, last_done, last_total;
    bool bad;
} progress_log;

static void on_progress(void *ctx, int64_t done, int64_t total)
{
    progress_log *log = ctx;
    if (done < log->last_done || done > total || total != RUNS)
        log->bad = true;
    log->calls++;
    log->last_done = done;
    log->last_total = total;
}

static void progress_reaches_total(void **state)
{
    (void)state;
    trd_costs *costs = gamma_costs(N, 0.7);
    trd_params p = tu_params(N, 1, 0.5, 0);
    progress_log log = {0};
    trd_mc_stats s;
    assert_int_equal(trd_monte_carlo("fibonacci", &p, costs, TRD_PORT_HALF, 1, RUNS, 2,
                                     on_progress, &log, &s, NULL),
                     TRD_OK);
    TU_CHECK(log.calls >= 1 && !log.bad && log.last_done == RUNS && log.last_total == RUNS,
             "progress: %lld calls, last %lld / %lld, bad %d", (long long)log.calls,
             (long long)log.last_done, (long long)log.last_total, (int)log.bad);
    assert_int_equal(s.runs, RUNS);
    trd_costs_free(costs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_samples_for_any_thread_count),
        cmocka_unit_test(statistics_match_the_samples),
        cmocka_unit_test(constant_costs_give_identical_runs),
        cmocka_unit_test(progress_reaches_total),
    };
    return cmocka_run_group_tests_name("sim_montecarlo", tests, NULL, NULL);
}
