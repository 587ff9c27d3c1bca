/* ziggurat.c: the ziggurats' rare paths (ziggurat.h): the wedges and the
 * tails, Marsaglia and Tsang 2000, Sec. 2 and 3. */
#include "core/ziggurat.h"

#include <math.h>

/* Layer i >= 1 holds heights f[i]..f[i + 1] over [0, width_i): a point at
 * x in its wedge is under the density when a uniform height is. */
static int under(trd_xoshiro *g, const double *f, int i, double fx)
{
    return f[i] + trd_xoshiro_uniform(g) * (f[i + 1] - f[i]) < fx;
}

/* Beyond r the exponential is r plus an exponential (it has no memory):
 * a draw in the base layer's tail strip adds r and starts again. */
double trd_zig_exp_slow(trd_xoshiro *g, uint64_t b)
{
    double shift = 0.0;
    for (;;) {
        int i = (int)(b & 0xff);
        uint64_t u = b >> 11;
        double x = (double)u * trd_zig_exp_layer[i].w;
        if (u < trd_zig_exp_layer[i].k)
            return shift + x;
        if (i == 0)
            shift += trd_zig_exp_r;
        else if (under(g, trd_zig_exp_f, i, exp(-x)))
            return shift + x;
        b = trd_xoshiro_next(g);
    }
}

/* The normal's tail beyond r (Marsaglia 1964): t = E1 / r, accepted when
 * 2 E2 > t^2, gives r + t with the density of the tail. */
static double normal_tail(trd_xoshiro *g)
{
    const double r = trd_zig_normal_r;
    for (;;) {
        double t = trd_zig_exp(g) / r, e = trd_zig_exp(g);
        if (2.0 * e > t * t)
            return r + t;
    }
}

double trd_zig_normal_slow(trd_xoshiro *g, uint64_t b)
{
    for (;;) {
        int i = (int)(b & 0xff);
        uint64_t u = b >> 11;
        double x = (double)u * trd_zig_normal_layer[i].w;
        if (u < trd_zig_normal_layer[i].k ||
            (i > 0 && under(g, trd_zig_normal_f, i, exp(-0.5 * x * x))))
            return b & 0x100 ? -x : x;
        if (i == 0) {
            double t = normal_tail(g);
            return b & 0x100 ? -t : t;
        }
        b = trd_xoshiro_next(g);
    }
}
