/* markov.c: expected makespan and variance of Tree-dyn with exponential
 * transfers (rate lambda = 1/mean_d) and no computation, by first-step
 * analysis of its continuous-time Markov chain (benoit-canon-marchal
 * Sec. 5).
 *
 * State s(i, j): i transfers in flight, j = 1 when a rank waits in the
 * slot.  Each state is left at rate i*lambda: from s(i,0) the receiver of
 * the finished transfer goes into the empty slot (-> s(i-1,1)); from s(i,1)
 * it pairs with the waiting rank and a new transfer starts (-> s(i,0)).
 * Start: s(n/2, 0) for even n, s((n-1)/2, 1) for odd n; absorbing state
 * s(0, 1).  First-step analysis, w(s) = phi(s) + sum_t p(s,t) w(t), with
 * phi = 1/(i lambda) gives the mean and phi = 1/(i lambda)^2 the variance
 * (the holding times are independent exponentials).  For even n this is
 * E = (2 H(n/2-1) + 2/n)/lambda, Var = (2 sum_{i<n/2} 1/i^2 + 4/n^2)/lambda^2
 * (the result of Sec. 5; docs/SIMULATION.md, "treduce markov"). */
#include <math.h>

#include "core/error.h"
#include "treduce/treduce.h"

/* w(start) by first-step analysis.  Every state has a single successor,
 * so w(s) = phi(s) + w(successor) is computed from the absorbing state
 * s(0,1) (w = 0) back through its predecessors: s(1,0), s(1,1), s(2,0), ...
 * (the predecessor of s(i,0) is s(i,1), that of s(i,1) is s(i+1,0)). */
static void first_step(int64_t start_i, int start_j, double lambda, double *mean,
                       double *var)
{
    double w_mean = 0.0, w_var = 0.0;
    int64_t i = 1;
    int j = 0;
    for (;;) {
        double rate = (double)i * lambda;
        w_mean += 1.0 / rate;         /* phi = expected holding time */
        w_var += 1.0 / (rate * rate); /* phi = its variance */
        if (i == start_i && j == start_j)
            break;
        if (j == 0) {
            j = 1;
        } else {
            j = 0;
            i++;
        }
    }
    *mean = w_mean;
    *var = w_var;
}

trd_status trd_markov_tree_dyn(int64_t n, double mean_d, double *mean, double *variance)
{
    if (n < 1 || n > TRD_N_MAX)
        return trd_fail(TRD_EINVAL, "n = %lld is out of range: need 1 <= n <= %lld",
                        (long long)n, (long long)TRD_N_MAX);
    if (isnan(mean_d) || !isfinite(mean_d) || mean_d <= 0)
        return trd_fail(TRD_EINVAL, "mean-d = %g is invalid: the mean transfer time must be "
                        "finite and > 0", mean_d);
    if (!mean || !variance)
        return trd_fail(TRD_EINVAL, "markov: NULL argument");
    if (n == 1) {
        *mean = *variance = 0.0;
        return TRD_OK;
    }
    /* with rate 1, then scaled: 1/mean_d would lose a subnormal mean_d and
     * (i lambda)^2 underflow for a large one */
    double m, v;
    if (n % 2 == 0)
        first_step(n / 2, 0, 1.0, &m, &v);
    else
        first_step((n - 1) / 2, 1, 1.0, &m, &v);
    if (!isfinite(m * mean_d) || !isfinite(v * mean_d * mean_d))
        return trd_fail(TRD_EINVAL, "mean-d = %g is too large: the variance of the makespan "
                        "(%.4g mean-d^2) overflows a double", mean_d, v);
    *mean = m * mean_d;
    *variance = v * mean_d * mean_d;
    return TRD_OK;
}
