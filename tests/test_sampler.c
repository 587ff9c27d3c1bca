/* test_sampler.c: the simulator's random cost factors (src/core/xoshiro.h,
 * src/core/ziggurat.h, src/ir/costs.h), against
 *   - xoshiro256++'s reference outputs from the state {0, 0, 0, 1} (the
 *     authors' C code, as published with xoshiro-fortran's test data) and
 *     splitmix64's first output from 0 (Vigna's splitmix64.c);
 *   - the ziggurats' defining recursion, recomputed here in long double
 *     from the tables' own r: every layer of area v, x_1 = r, x_{i+1} =
 *     f^-1(f(x_i) + v / x_i), the top closing at the mode, f and the
 *     integer thresholds k consistent with the widths;
 *   - the exact distributions, over 10^6 draws each (fixed seeds): the
 *     mean and the variance within 5 standard errors of the theory (the
 *     variance's from the fourth moment), the Kolmogorov-Smirnov (bounded
 *     above from 10^5 cells of u = F(x)) and the chi-square (1000
 *     equiprobable bins) statistics against the exact CDFs (GSL's, and
 *     1 - e^-x) at p > 1e-6; exponential, normal, and the cost factor
 *     for exp and gamma of CV 0.1, 0.5, 2 and 3.2 (both gamma samplers);
 *   - the ziggurats' tails (x > r, drawn by their own method), over 10^7
 *     draws: their probability and the mean excess over r;
 *   - trd_monte_carlo with 1, 2 and 3 threads: bitwise identical makespans
 *     (common random numbers: streams from (seed, run, kind) only). */
#include <gsl/gsl_cdf.h>

#include "core/ziggurat.h"
#include "ir/costs.h"
#include "testutil.h"

#define DRAWS 1000000
#define BINS 1000
#define P_MIN 1e-6   /* goodness of fit: reject below this p-value */
#define SIGMAS 5.0   /* moments: standard errors allowed */

static void xoshiro_reference_outputs(void **state)
{
    (void)state;
    static const uint64_t want[10] = {
        0x0000000000800000, 0x0000000000800011, 0x0002200000800011, 0x0002200044000020,
        0x00022000448008A1, 0x01102100802208A0, 0x0114002284200880, 0x0402896644A64095,
        0x8A14A0A244ACC891, 0x8C88BA4680B20495};
    trd_xoshiro g = {{0, 0, 0, 1}};
    for (int i = 0; i < 10; i++) {
        uint64_t got = trd_xoshiro_next(&g);
        TU_CHECK(got == want[i], "output %d: %016llx, reference %016llx", i + 1,
                 (unsigned long long)got, (unsigned long long)want[i]);
    }
    uint64_t sm = 0;
    assert_true(trd_splitmix64(&sm) == 0xe220a8397b1dcdafULL);
    trd_xoshiro_seed(&g, 0);
    assert_true(g.s[0] == 0xe220a8397b1dcdafULL);
    for (int i = 0; i < 1000; i++) { /* the uniforms' ranges */
        double u = trd_xoshiro_uniform(&g), p = trd_xoshiro_uniform_pos(&g);
        TU_CHECK(u >= 0 && u < 1 && p > 0 && p <= 1, "uniform %.17g, uniform_pos %.17g", u, p);
    }
}

/* One ziggurat's density and tail area, in long double. */
typedef struct zig_def {
    const char *name;
    long double (*f)(long double);
    long double (*finv)(long double);
    long double (*tail)(long double);
    double r, v;
    const trd_zig_layer *layer;
    const double *fx;
} zig_def;

static long double exp_f(long double x) { return expl(-x); }
static long double exp_finv(long double y) { return -logl(y); }
static long double exp_tail(long double r) { return expl(-r); }
static long double normal_f(long double x) { return expl(-x * x / 2); }
static long double normal_finv(long double y) { return sqrtl(-2 * logl(y)); }
static long double normal_tail(long double r)
{
    return sqrtl(acosl(-1.0L) / 2) * erfcl(r / sqrtl(2.0L));
}

static const zig_def *zig_defs(int which)
{
    static zig_def defs[2];
    defs[0] = (zig_def){"exp", exp_f, exp_finv, exp_tail, trd_zig_exp_r, trd_zig_exp_v,
                        trd_zig_exp_layer, trd_zig_exp_f};
    defs[1] = (zig_def){"normal", normal_f, normal_finv, normal_tail, trd_zig_normal_r,
                        trd_zig_normal_v, trd_zig_normal_layer, trd_zig_normal_f};
    return &defs[which];
}

static int rel_close(long double a, long double b, long double tol)
{
    return fabsl(a - b) <= tol * fmaxl(fabsl(a), fabsl(b));
}

/* Layer i's width, from the table (w = width / 2^53, exactly). */
static long double width(const zig_def *z, int i)
{
    return i < TRD_ZIG_LAYERS ? ldexpl(z->layer[i].w, 53) : 0.0L;
}

static void check_layers(const zig_def *z)
{
    long double r = z->r, v = r * z->f(r) + z->tail(r);
    TU_CHECK(rel_close(v, z->v, 1e-15L), "%s: v %.20Lg, table %.17g", z->name, v, z->v);
    TU_CHECK(rel_close(width(z, 0), v / z->f(r), 1e-15L) && width(z, 1) == r,
             "%s: base width %.20Lg, v / f(r) %.20Lg; x_1 %.20Lg, r %.17g", z->name,
             width(z, 0), v / z->f(r), width(z, 1), z->r);
    for (int i = 1; i < TRD_ZIG_LAYERS - 1; i++) {
        long double next = z->finv(z->f(width(z, i)) + v / width(z, i));
        TU_CHECK(rel_close(width(z, i + 1), next, 1e-12L), "%s: x_%d %.20Lg, recursion %.20Lg",
                 z->name, i + 1, width(z, i + 1), next);
    }
    long double top = z->f(width(z, 255)) + v / width(z, 255); /* the last layer: to f = 1 */
    TU_CHECK(fabsl(top - 1) <= 1e-13L, "%s: the top layer ends at f = %.20Lg, not 1", z->name,
             top);
    for (int i = 0; i <= TRD_ZIG_LAYERS; i++)
        TU_CHECK(rel_close(z->fx[i], z->f(width(z, i)), 1e-15L), "%s: f[%d] %.17g, f(x) %.20Lg",
                 z->name, i, z->fx[i], z->f(width(z, i)));
    for (int i = 0; i < TRD_ZIG_LAYERS; i++) {
        long double k = floorl(ldexpl(width(z, i + 1) / width(z, i), 53));
        TU_CHECK(fabsl((long double)z->layer[i].k - k) <= 1, "%s: k[%d] %llu, 2^53 x_%d / x_%d "
                 "%.1Lf", z->name, i, (unsigned long long)z->layer[i].k, i + 1, i, k);
    }
}

static void ziggurat_tables_follow_the_recursion(void **state)
{
    (void)state;
    check_layers(zig_defs(0));
    check_layers(zig_defs(1));
}

/* The Kolmogorov distribution's upper tail P(sqrt(n) D > lambda). */
static double kolmogorov_q(double lambda)
{
    if (lambda < 0.2)
        return 1.0;
    double q = 0;
    for (int k = 1; k <= 100; k++)
        q += (k % 2 ? 2.0 : -2.0) * exp(-2.0 * k * k * lambda * lambda);
    return fmin(1.0, fmax(0.0, q));
}

/* A distribution under test: its moments and its exact CDF. */
typedef struct dist {
    char name[64];
    double mean, var, kurtosis; /* excess kurtosis */
    double (*cdf)(double x, const struct dist *d);
    double shape, scale;
} dist;

static double cdf_exp(double x, const dist *d) { (void)d; return -expm1(-x); }
static double cdf_gamma(double x, const dist *d) { return gsl_cdf_gamma_P(x, d->shape, d->scale); }
static double cdf_normal(double x, const dist *d) { (void)d; return gsl_cdf_ugaussian_P(x); }

#define GRID (100 * BINS) /* u = F(x) counted in GRID cells, 100 per chi-square bin */

/* Kolmogorov-Smirnov's D = sup |G(u) - u| for the empirical CDF G of the
 * u = F(x), from counts in GRID cells: G is non-decreasing, so between
 * two cell edges |G - u| exceeds its value at an edge by at most a cell
 * width, which is added (the bound is never below D). */
static double ks_from_cells(const int64_t *cell, int64_t n)
{
    double D = 0;
    int64_t below = 0;
    for (int j = 0; j < GRID; j++) {
        below += cell[j];
        D = fmax(D, fabs((double)below / (double)n - (double)(j + 1) / GRID));
    }
    return D + 1.0 / GRID;
}

/* Mean and variance within SIGMAS standard errors; KS and chi-square
 * p-values above P_MIN. */
static void check_sample(const dist *d, const double *x, int64_t n)
{
    double sum = 0, ss = 0;
    for (int64_t i = 0; i < n; i++)
        sum += x[i];
    double mean = sum / (double)n;
    for (int64_t i = 0; i < n; i++)
        ss += (x[i] - mean) * (x[i] - mean);
    double var = ss / (double)(n - 1);
    double se_mean = sqrt(d->var / (double)n), se_var = d->var * sqrt((2 + d->kurtosis) / (double)n);
    TU_CHECK(fabs(mean - d->mean) <= SIGMAS * se_mean, "%s: mean %.6f, theory %.6f (se %.2e)",
             d->name, mean, d->mean, se_mean);
    TU_CHECK(fabs(var - d->var) <= SIGMAS * se_var, "%s: variance %.6f, theory %.6f (se %.2e)",
             d->name, var, d->var, se_var);
    static int64_t cell[GRID];
    memset(cell, 0, sizeof cell);
    for (int64_t i = 0; i < n; i++) { /* u = F(x): uniform if F is right */
        int j = (int)(d->cdf(x[i], d) * GRID);
        cell[j < GRID ? j : GRID - 1]++;
    }
    double chi2 = 0, expect = (double)n / BINS;
    for (int b = 0; b < BINS; b++) {
        int64_t count = 0;
        for (int j = b * (GRID / BINS); j < (b + 1) * (GRID / BINS); j++)
            count += cell[j];
        chi2 += ((double)count - expect) * ((double)count - expect) / expect;
    }
    double p_chi2 = gsl_cdf_chisq_Q(chi2, BINS - 1);
    double D = ks_from_cells(cell, n), p_ks = kolmogorov_q(sqrt((double)n) * D);
    print_message("%-28s mean %+.2f se, variance %+.2f se, KS p %.3f, chi-square p %.3f\n",
                  d->name, (mean - d->mean) / se_mean, (var - d->var) / se_var, p_ks, p_chi2);
    TU_CHECK(p_ks > P_MIN, "%s: Kolmogorov-Smirnov D = %.3e (sqrt(n) D = %.3f), p = %.2e",
             d->name, D, sqrt((double)n) * D, p_ks);
    TU_CHECK(p_chi2 > P_MIN, "%s: chi-square %.1f on %d degrees of freedom, p = %.2e", d->name,
             chi2, BINS - 1, p_chi2);
}

static void ziggurats_draw_their_distributions(void **state)
{
    (void)state;
    double *x = tu_alloc(DRAWS, sizeof *x);
    trd_xoshiro g;
    trd_xoshiro_seed(&g, 20001);
    for (int i = 0; i < DRAWS; i++)
        x[i] = trd_zig_exp(&g);
    dist e = {"exponential (ziggurat)", 1, 1, 6, cdf_exp, 0, 0};
    check_sample(&e, x, DRAWS);
    for (int i = 0; i < DRAWS; i++)
        x[i] = trd_zig_normal(&g);
    dist nd = {"normal (ziggurat)", 0, 1, 0, cdf_normal, 0, 0};
    check_sample(&nd, x, DRAWS);
    free(x);
}

/* trd_costs_factor for exp and for gamma of each CV (shape 1/CV^2, scale
 * CV^2, excess kurtosis 6 CV^2). */
static void cost_factors_follow_their_distributions(void **state)
{
    (void)state;
    static const double cvs[] = {1.0, 0.1, 0.5, 2.0, 3.2};
    double *x = tu_alloc(DRAWS, sizeof *x);
    for (size_t c = 0; c < sizeof cvs / sizeof cvs[0]; c++) {
        double cv = cvs[c];
        trd_costs *k = NULL;
        assert_int_equal(trd_costs_create(&k, 2, cv == 1.0 ? TRD_DIST_EXP : TRD_DIST_GAMMA, 1, 0,
                                          cv), TRD_OK);
        trd_xoshiro g;
        trd_xoshiro_seed(&g, 777 + c);
        for (int i = 0; i < DRAWS; i++)
            x[i] = trd_costs_factor(k, &g);
        dist d = {"", 1, cv * cv, 6 * cv * cv, cv == 1.0 ? cdf_exp : cdf_gamma, 1 / (cv * cv),
                  cv * cv};
        snprintf(d.name, sizeof d.name, "cost factor, %s CV %g", cv == 1.0 ? "exp" : "gamma", cv);
        check_sample(&d, x, DRAWS);
        trd_costs_free(k);
    }
    free(x);
}

/* Beyond r each ziggurat draws from the tail by its own method (the
 * exponential: r plus an exponential; the normal: Marsaglia's tail
 * method); 10^6 draws see too few of them, so 10^7 are counted here:
 * P(X > r) (binomial standard error) and the mean excess over r, for the
 * exponential 1, for the normal phi(r) / Q(r) - r (standard error from
 * the excess's variance, estimated). */
static void check_tail(const char *name, double (*draw)(trd_xoshiro *), double r, double p_tail,
                       double want_excess)
{
    const int64_t n = 10 * DRAWS;
    trd_xoshiro g;
    trd_xoshiro_seed(&g, 4242);
    int64_t hits = 0;
    double sum = 0, sum2 = 0;
    for (int64_t i = 0; i < n; i++) {
        double x = fabs(draw(&g));
        if (x > r) {
            hits++;
            sum += x - r;
            sum2 += (x - r) * (x - r);
        }
    }
    double want = p_tail * (double)n, se = sqrt(want * (1 - p_tail));
    TU_CHECK(fabs((double)hits - want) <= SIGMAS * se, "%s: %lld draws beyond r, expected %.1f "
             "(se %.1f)", name, (long long)hits, want, se);
    double mean = sum / (double)hits, sd = sqrt(sum2 / (double)hits - mean * mean);
    TU_CHECK(fabs(mean - want_excess) <= SIGMAS * sd / sqrt((double)hits),
             "%s: mean excess over r %.5f, expected %.5f (se %.5f)", name, mean, want_excess,
             sd / sqrt((double)hits));
}

static void ziggurat_tails(void **state)
{
    (void)state;
    double r = trd_zig_normal_r, q = gsl_cdf_ugaussian_Q(r);
    check_tail("exponential", trd_zig_exp, trd_zig_exp_r, exp(-trd_zig_exp_r), 1.0);
    check_tail("|normal|", trd_zig_normal, r, 2 * q, exp(-r * r / 2) / sqrt(2 * acos(-1.0)) / q - r);
}

/* Bitwise identical makespans for 1, 2 and 3 threads (more runs than one
 * work block per thread, so the threads interleave), for every sampler. */
static void monte_carlo_same_for_1_2_3_threads(void **state)
{
    (void)state;
    enum { RUNS = 2000, N = 64 };
    static const struct { trd_dist dist; double cv; } cases[] = {
        {TRD_DIST_EXP, 1.0}, {TRD_DIST_GAMMA, 0.5}, {TRD_DIST_GAMMA, 2.0}};
    static const char *algos[] = {"binomial", "tree-dyn"};
    double *ref = tu_alloc(RUNS, sizeof *ref), *got = tu_alloc(RUNS, sizeof *got);
    trd_params p = tu_params(N, 1, 1, 0);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (size_t a = 0; a < 2; a++) {
            trd_costs *k = NULL;
            assert_int_equal(trd_costs_create(&k, N, cases[c].dist, 1, 1, cases[c].cv), TRD_OK);
            for (int threads = 1; threads <= 3; threads++) {
                trd_mc_stats s;
                double *out = threads == 1 ? ref : got;
                memset(out, 0, RUNS * sizeof *out);
                trd_status st = trd_monte_carlo(algos[a], &p, k, TRD_PORT_HALF, 11, RUNS,
                                                threads, NULL, NULL, &s, out);
                TU_CHECK(st == TRD_OK, "%s: %s", algos[a], trd_errmsg());
                int64_t first = -1;
                for (int64_t i = 0; i < RUNS && first < 0; i++)
                    if (memcmp(&ref[i], &out[i], sizeof *out) != 0)
                        first = i;
                TU_CHECK(first < 0, "%s, CV %g: run %lld with %d threads: %.17g, 1 thread "
                         "%.17g", algos[a], cases[c].cv, (long long)first, threads,
                         out[first], ref[first]);
            }
            TU_CHECK(ref[0] != ref[1] && ref[1] != ref[RUNS - 1], "%s: runs not random",
                     algos[a]);
            trd_costs_free(k);
        }
    free(ref);
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(xoshiro_reference_outputs),
        cmocka_unit_test(ziggurat_tables_follow_the_recursion),
        cmocka_unit_test(ziggurats_draw_their_distributions),
        cmocka_unit_test(cost_factors_follow_their_distributions),
        cmocka_unit_test(ziggurat_tails),
        cmocka_unit_test(monte_carlo_same_for_1_2_3_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
