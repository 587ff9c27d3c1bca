/* node.c: the aggregate memory bandwidth of k concurrent streams
 * (node.h).  The curve is measured (src/select/calibrate_streams.c) and
 * made monotone and bounded here, so that noise on a shared machine can
 * never make the model predict that more streams move bytes faster each,
 * or that adding one slows the sum. */
#include "model/node.h"

#include <math.h>

bool trd_node_clean_curve(double *bw, int32_t n)
{
    for (int32_t k = 0; k < n; k++)
        if (!isfinite(bw[k]) || !(bw[k] > 0))
            return false;
    for (int32_t k = 1; k < n; k++) {
        double most = (double)(k + 1) * bw[0];
        bw[k] = bw[k] < bw[k - 1] ? bw[k - 1] : bw[k];
        bw[k] = bw[k] > most ? most : bw[k];
    }
    return true;
}

bool trd_node_curve_valid(const double *bw, int32_t n)
{
    if (n < 0 || n > TRD_STREAMS_MAX || (n > 0 && !bw))
        return false;
    for (int32_t k = 0; k < n; k++)
        if (!isfinite(bw[k]) || !(bw[k] > 0) || (k > 0 && bw[k] < bw[k - 1]) ||
            bw[k] > (double)(k + 1) * bw[0] * (1 + 1e-12))
            return false;
    return true;
}

double trd_node_bandwidth(const double *bw, int32_t n, double k)
{
    if (n < 1 || !(k > 0))
        return 0.0;
    if (k <= 1)
        return k * bw[0];
    if (k >= n)
        return bw[n - 1];
    int32_t lo = (int32_t)k; /* 1 <= lo < n: B(lo) = bw[lo - 1] */
    double f = k - lo;
    return bw[lo - 1] + f * (bw[lo] - bw[lo - 1]);
}

double trd_node_slowdown(const double *bw, int32_t n, double k, double runnable)
{
    if (runnable > 0 && k > runnable)
        k = runnable;
    if (n < 1 || !(k > 1))
        return 1.0;
    double s = k * bw[0] / trd_node_bandwidth(bw, n, k);
    return s > 1 ? s : 1.0;
}
