/* ziggurat.h: exact exponential and normal variates by the ziggurat
 * method (Marsaglia and Tsang 2000, "The Ziggurat Method for Generating
 * Random Variables", J. Stat. Softw. 5(8)) on xoshiro256++.
 *
 * The area under the density is cut into 256 layers of equal area v: a
 * base layer (a rectangle of width r plus the tail beyond r) and 255
 * rectangles stacked up to the mode.  One 64-bit number picks a layer i
 * (bits 0-7), for the normal a sign (bit 8), and a 53-bit uniform u (bits
 * 11-63, independent of the others); x = u * w_i lies in layer i's
 * rectangle.  When u < k_i, x is also under the next layer's width, so
 * entirely under the density: accepted with one comparison of integers,
 * ~99 % of draws (tables: ziggurat_tables.c, written by
 * scripts/ziggurat_tables.py).  Otherwise (ziggurat.c) x is in the wedge
 * between the rectangle and the density, accepted if a uniform height in
 * the layer falls under f(x), or in the base layer's strip standing for
 * the tail, drawn from the tail exactly.  Every path is exact: the
 * variates follow the density, not an approximation of it. */
#ifndef TRD_CORE_ZIGGURAT_H
#define TRD_CORE_ZIGGURAT_H

#include <stdint.h>

#include "core/xoshiro.h"

#define TRD_ZIG_LAYERS 256

/* Layer i: x = u * w (w = width / 2^53), inside the density for u < k. */
typedef struct trd_zig_layer {
    uint64_t k;
    double w;
} trd_zig_layer;

/* exp(-x) on [0, inf): r, v, the layers, and f at each layer's width
 * (f[i] and f[i + 1] bound layer i's heights; f[256] = 1, the mode). */
extern const double trd_zig_exp_r, trd_zig_exp_v;
extern const trd_zig_layer trd_zig_exp_layer[TRD_ZIG_LAYERS];
extern const double trd_zig_exp_f[TRD_ZIG_LAYERS + 1];
/* exp(-x^2/2) on [0, inf), the half normal, likewise. */
extern const double trd_zig_normal_r, trd_zig_normal_v;
extern const trd_zig_layer trd_zig_normal_layer[TRD_ZIG_LAYERS];
extern const double trd_zig_normal_f[TRD_ZIG_LAYERS + 1];

/* The draws that miss the fast test, given the number that missed. */
double trd_zig_exp_slow(trd_xoshiro *g, uint64_t bits);
double trd_zig_normal_slow(trd_xoshiro *g, uint64_t bits);

/* An exponential variate of mean 1. */
static inline double trd_zig_exp(trd_xoshiro *g)
{
    uint64_t b = trd_xoshiro_next(g), u = b >> 11;
    const trd_zig_layer *L = &trd_zig_exp_layer[b & 0xff];
    return u < L->k ? (double)u * L->w : trd_zig_exp_slow(g, b);
}

/* A standard normal variate. */
static inline double trd_zig_normal(trd_xoshiro *g)
{
    uint64_t b = trd_xoshiro_next(g), u = b >> 11;
    const trd_zig_layer *L = &trd_zig_normal_layer[b & 0xff];
    if (u >= L->k)
        return trd_zig_normal_slow(g, b);
    double x = (double)u * L->w;
    return b & 0x100 ? -x : x;
}

#endif
