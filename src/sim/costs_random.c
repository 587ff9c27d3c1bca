/* costs_random.c: random heterogeneous cost bases (trd_costs_random), the
 * instances of the heterogeneous planners' comparison
 * (docs/HETEROGENEOUS.md).  Two models of where speeds differ:
 *
 *   links  every ordered pair has a link of its own speed: d[i][j] =
 *          mean_d f_ij, the f_ij independent (a wide-area mesh);
 *   nodes  every rank has one network speed and a transfer runs at the
 *          slower end's: d[i][j] = mean_d max(f_i, f_j) (hosts with
 *          uneven network cards behind one switch, as the testbed builds).
 *
 * Every factor is log-uniform in [1, spread] (each decade of slowdown
 * equally likely), drawn from splitmix64 so that a seed gives the same
 * bases on every machine; combines are mean_c g_i likewise. */
#include <math.h>
#include <string.h>

#include "core/error.h"
#include "core/splitmix.h"
#include "ir/costs.h"

/* A factor log-uniform in [1, spread]: 53 random bits make u in [0, 1). */
static double factor(uint64_t *state, double log_spread)
{
    double u = (double)(trd_splitmix64(state) >> 11) * 0x1.0p-53;
    return exp(u * log_spread);
}

trd_status trd_costs_random(trd_costs *k, const char *model, double spread, uint64_t seed)
{
    if (!k)
        return trd_fail(TRD_EINVAL, "trd_costs_random: NULL costs");
    int nodes = !model ? -1 : !strcmp(model, "links") ? 0 : !strcmp(model, "nodes") ? 1 : -1;
    if (nodes < 0)
        return trd_fail(TRD_EINVAL, "unknown random cost model '%s'; valid models: links, nodes",
                        model ? model : "(null)");
    if (isnan(spread) || !isfinite(spread) || spread < 1)
        return trd_fail(TRD_EINVAL, "spread = %g is invalid: the slowest-to-fastest factor "
                        "must be finite and >= 1", spread);
    trd_status st = trd_costs_alloc_bases(k);
    if (st != TRD_OK)
        return st;
    int64_t n = k->n;
    uint64_t state = seed;
    double ls = log(spread);
    for (int64_t i = 0; nodes && i < n; i++)
        k->cvec[i] = factor(&state, ls); /* the ranks' network factors, for now */
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            double f = nodes ? fmax(k->cvec[i], k->cvec[j]) : i == j ? 0.0 : factor(&state, ls);
            k->dmat[i * n + j] = i == j ? 0.0 : k->mean_d * f;
        }
    for (int64_t i = 0; i < n; i++)
        k->cvec[i] = k->mean_c * factor(&state, ls);
    return TRD_OK;
}
