/* costs.c: cost models for the simulator (benoit-canon-marchal Sec. 3.1 and
 * 6): homogeneous or heterogeneous bases (a d[i][j] matrix and a c[i]
 * vector, from a file or a named worst-case preset of Sec. 4), each cost
 * multiplied by a factor of mean 1 drawn from a constant, exponential or
 * gamma distribution with a given coefficient of variation, drawn by the
 * ziggurats of core/ziggurat.h. */
#include "ir/costs.h"

#include <errno.h>
#include <stdatomic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define MATRIX_N_MAX 16384 /* n*n doubles: 2 GiB at this n */

static trd_status check_mean(const char *name, double v)
{
    if (isnan(v) || !isfinite(v) || v < 0)
        return trd_fail(TRD_EINVAL, "%s = %g is invalid: a mean cost must be finite and >= 0",
                        name, v);
    return TRD_OK;
}

static trd_status check_dist(trd_dist dist, double cv)
{
    if (isnan(cv) || !isfinite(cv) || cv < 0)
        return trd_fail(TRD_EINVAL, "cv = %g is invalid: the coefficient of variation must be "
                        "finite and >= 0", cv);
    if (dist == TRD_DIST_EXP && cv != 1.0)
        return trd_fail(TRD_EINVAL, "cv = %g is invalid for the exponential distribution, "
                        "whose CV is 1 (use gamma for other CVs)", cv);
    if (dist == TRD_DIST_CONST && cv != 0.0)
        return trd_fail(TRD_EINVAL, "cv = %g is invalid for constant costs (CV 0); "
                        "use gamma or exp", cv);
    if (!isfinite(cv * cv) || 1.0 / (cv * cv) == 0.0)
        return trd_fail(TRD_EINVAL, "cv = %g is too large: gamma's shape 1/cv^2 and scale "
                        "cv^2 do not fit in a double", cv);
    if (dist != TRD_DIST_CONST && dist != TRD_DIST_EXP && dist != TRD_DIST_GAMMA)
        return trd_fail(TRD_EINVAL, "unknown distribution %d", (int)dist);
    return TRD_OK;
}

/* The sampler of the distribution: gamma with CV v has shape 1/v^2 and
 * scale v^2 (mean 1); shape 1 is the exponential.  Marsaglia & Tsang's
 * constants for shape a >= 1 are d = a - 1/3 and c = 1/sqrt(9d); a shape
 * below 1 is drawn as shape a + 1 times U^(1/a) (Marsaglia & Tsang Sec.
 * 7), with U^(1/a) = exp(-E/a) for E = -log U exponential. */
static void set_sampler(trd_costs *k)
{
    double v2 = k->cv * k->cv, shape = v2 > 0 ? 1.0 / v2 : 0.0;
    if (k->dist == TRD_DIST_EXP || (k->dist == TRD_DIST_GAMMA && k->cv == 1.0))
        k->draw = TRD_DRAW_EXP;
    else if (k->dist != TRD_DIST_GAMMA || k->cv == 0.0)
        k->draw = TRD_DRAW_ONE;
    else
        k->draw = shape >= 1.0 ? TRD_DRAW_GAMMA : TRD_DRAW_GAMMA_SMALL;
    if (k->draw == TRD_DRAW_GAMMA || k->draw == TRD_DRAW_GAMMA_SMALL) {
        double a = shape >= 1.0 ? shape : shape + 1.0;
        k->mt_d = a - 1.0 / 3.0;
        k->mt_c = 1.0 / sqrt(9.0 * k->mt_d);
        k->mt_scale = v2 * k->mt_d;
        k->inv_shape = 1.0 / shape;
    }
}

/* The last version handed out (trd_costs_new_version); atomic: models may
 * be made in several threads. */
static _Atomic uint64_t last_version;

void trd_costs_new_version(trd_costs *k)
{
    k->version = atomic_fetch_add_explicit(&last_version, 1, memory_order_relaxed) + 1;
}

trd_status trd_costs_create(trd_costs **out, int64_t n, trd_dist dist, double mean_d,
                            double mean_c, double cv)
{
    trd_status st;
    *out = NULL;
    if (n < 1 || n > TRD_N_MAX)
        return trd_fail(TRD_EINVAL, "n = %lld is out of range: need 1 <= n <= %lld",
                        (long long)n, (long long)TRD_N_MAX);
    if ((st = check_mean("mean-d", mean_d)) != TRD_OK ||
        (st = check_mean("mean-c", mean_c)) != TRD_OK || (st = check_dist(dist, cv)) != TRD_OK)
        return st;
    trd_costs *k = calloc(1, sizeof *k);
    if (!k)
        return trd_fail(TRD_ENOMEM, "costs: out of memory");
    *k = (trd_costs){.n = n, .dist = dist, .mean_d = mean_d, .mean_c = mean_c, .cv = cv};
    set_sampler(k);
    trd_costs_new_version(k);
    *out = k;
    return TRD_OK;
}

void trd_costs_free(trd_costs *k)
{
    if (!k)
        return;
    free(k->dmat);
    free(k->cvec);
    free(k);
}

/* Marsaglia & Tsang (2000), "A simple method for generating gamma
 * variables", ACM TOMS 26(3), with the constants of set_sampler. */
double trd_costs_gamma(const trd_costs *k, trd_xoshiro *rng)
{
    double small = k->draw == TRD_DRAW_GAMMA_SMALL ? exp(-trd_zig_exp(rng) * k->inv_shape)
                                                   : 1.0;
    double x, v, u;
    for (;;) {
        do {
            x = trd_zig_normal(rng);
            v = 1.0 + k->mt_c * x;
        } while (v <= 0.0);
        v = v * v * v;
        u = trd_xoshiro_uniform_pos(rng);
        if (u < 1.0 - 0.0331 * (x * x) * (x * x))
            break;
        if (log(u) < 0.5 * x * x + k->mt_d * (1.0 - v + log(v)))
            break;
    }
    return k->mt_scale * v * small;
}

trd_status trd_costs_alloc_bases(trd_costs *k)
{
    if (k->n > MATRIX_N_MAX)
        return trd_fail(TRD_EINVAL, "heterogeneous costs need an n x n matrix: n = %lld is "
                        "above the limit of %d", (long long)k->n, MATRIX_N_MAX);
    free(k->dmat);
    free(k->cvec);
    k->dmat = malloc((size_t)(k->n * k->n) * sizeof *k->dmat);
    k->cvec = malloc((size_t)k->n * sizeof *k->cvec);
    trd_costs_new_version(k);
    if (!k->dmat || !k->cvec) {
        trd_costs_drop_bases(k);
        return trd_fail(TRD_ENOMEM, "costs: cannot allocate the %lld x %lld matrix",
                        (long long)k->n, (long long)k->n);
    }
    return TRD_OK;
}

void trd_costs_drop_bases(trd_costs *k)
{
    free(k->dmat);
    free(k->cvec);
    k->dmat = k->cvec = NULL;
    trd_costs_new_version(k);
}

trd_status trd_costs_copy_bases(trd_costs *dst, const trd_costs *src)
{
    if (dst->n != src->n)
        return trd_fail(TRD_EINVAL, "costs: bases for n = %lld ranks given to a model of "
                        "n = %lld", (long long)src->n, (long long)dst->n);
    dst->mean_d = src->mean_d;
    dst->mean_c = src->mean_c;
    if (!src->dmat) {
        trd_costs_drop_bases(dst);
        return TRD_OK;
    }
    trd_status st = trd_costs_alloc_bases(dst);
    if (st == TRD_OK) {
        memcpy(dst->dmat, src->dmat, (size_t)(src->n * src->n) * sizeof *dst->dmat);
        memcpy(dst->cvec, src->cvec, (size_t)src->n * sizeof *dst->cvec);
    }
    return st;
}

int64_t trd_costs_n(const trd_costs *k) { return k ? k->n : 0; }

double trd_costs_transfer(const trd_costs *k, int64_t from, int64_t to)
{
    if (!k || from < 0 || from >= k->n || to < 0 || to >= k->n)
        return NAN;
    return trd_costs_transfer_base(k, (int32_t)from, (int32_t)to);
}

double trd_costs_combine(const trd_costs *k, int64_t rank)
{
    if (!k || rank < 0 || rank >= k->n)
        return NAN;
    return trd_costs_combine_base(k, (int32_t)rank);
}

void trd_costs_mean(const trd_costs *k, double *mean_d, double *mean_c)
{
    double d = 0.0, c = 0.0;
    for (int32_t i = 0; i < k->n; i++) {
        c += trd_costs_combine_base(k, i);
        for (int32_t j = 0; j < k->n; j++)
            d += i == j ? 0.0 : trd_costs_transfer_base(k, i, j);
    }
    *mean_d = k->n > 1 ? d / ((double)k->n * (double)(k->n - 1)) : 0.0;
    *mean_c = c / (double)k->n;
}

const char *trd_costs_preset_names(void)
{
    return "lower-to-higher, higher-to-lower, fib-root-slow";
}

trd_status trd_costs_preset(trd_costs *k, const char *name, double D)
{
    if (isnan(D) || !isfinite(D) || D < 0)
        return trd_fail(TRD_EINVAL, "D = %g is invalid: the slow-link factor must be finite "
                        "and >= 0", D);
    int which = !name ? -1 : !strcmp(name, "lower-to-higher") ? 0
                           : !strcmp(name, "higher-to-lower") ? 1
                           : !strcmp(name, "fib-root-slow") ? 2 : -1;
    if (which < 0)
        return trd_fail(TRD_EINVAL, "unknown cost preset '%s'; valid presets: %s",
                        name ? name : "(null)", trd_costs_preset_names());
    trd_status st = trd_costs_alloc_bases(k);
    if (st != TRD_OK)
        return st;
    int64_t n = k->n;
    for (int64_t i = 0; i < n; i++) {
        k->cvec[i] = k->mean_c;
        for (int64_t j = 0; j < n; j++) {
            bool slow = which == 0 ? i >= j : which == 1 ? i > j : j == 0;
            k->dmat[i * n + j] = slow ? D * k->mean_d : k->mean_d;
        }
    }
    return TRD_OK;
}

trd_status trd_costs_nodes(trd_costs *k, const int32_t *node_of, double D)
{
    trd_costs_drop_bases(k); /* homogeneous on every failure, as trd_costs_load */
    if (!node_of)
        return trd_fail(TRD_EINVAL, "trd_costs_nodes: NULL argument (node_of)");
    if (isnan(D) || !isfinite(D) || D < 0)
        return trd_fail(TRD_EINVAL, "D = %g is invalid: the factor of a transfer between "
                        "nodes must be finite and >= 0", D);
    int64_t n = k->n;
    for (int64_t i = 0; i < n; i++)
        if (node_of[i] < 0 || node_of[i] >= n)
            return trd_fail(TRD_EINVAL, "node_of[%lld] = %ld is not a node: need 0 <= it < "
                            "n = %lld", (long long)i, (long)node_of[i], (long long)n);
    trd_status st = trd_costs_alloc_bases(k);
    if (st != TRD_OK)
        return st;
    for (int64_t i = 0; i < n; i++) {
        k->cvec[i] = k->mean_c;
        for (int64_t j = 0; j < n; j++)
            k->dmat[i * n + j] = i == j ? 0 : node_of[i] == node_of[j] ? k->mean_d
                                                                      : D * k->mean_d;
    }
    return TRD_OK;
}
