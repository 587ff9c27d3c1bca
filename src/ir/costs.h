/* costs.h: the layout of trd_costs, read by the virtual-time transport. */
#ifndef TRD_IR_COSTS_H
#define TRD_IR_COSTS_H

#include "core/ziggurat.h"
#include "treduce/treduce.h"

/* How a factor is drawn, fixed with the distribution (costs.c). */
typedef enum trd_draw {
    TRD_DRAW_ONE,        /* constant, or gamma with CV 0 */
    TRD_DRAW_EXP,        /* exponential, or gamma with CV 1 (shape 1) */
    TRD_DRAW_GAMMA,      /* gamma, shape >= 1: Marsaglia-Tsang */
    TRD_DRAW_GAMMA_SMALL /* gamma, shape < 1: shape + 1, times U^(1/shape) */
} trd_draw;

struct trd_costs {
    int64_t n;
    trd_dist dist;
    double mean_d, mean_c, cv;
    double latency; /* added to every transfer, never scaled or drawn */
    double flight;  /* of that latency, the part after the ports are free
                       (trd_params.flight): 0 <= flight <= latency */
    double recv_combine_saving; /* the share of a transfer's drawn part a
                       RECV_COMBINE's message saves (trd_params) */
    double combine_fixed; /* added to every combine, likewise */
    double *dmat; /* n*n transfer bases (i sends to j at [i*n+j]), or NULL */
    double *cvec; /* n combine bases, or NULL */
    uint64_t version; /* new at every change of the bases, unique over all
                         models: what a plan cached for them depends on */
    /* the sampler, precomputed once for the distribution */
    trd_draw draw;
    double mt_d, mt_c, mt_scale; /* Marsaglia-Tsang: d, c and the scale * d */
    double inv_shape;            /* TRD_DRAW_GAMMA_SMALL: 1 / shape */
};

/* (Re)allocates dmat and cvec for n ranks; refuses n above the matrix limit.
 * The bases have changed: a new version. */
trd_status trd_costs_alloc_bases(trd_costs *costs);
/* The version of costs' bases; 0 for NULL (no heterogeneous costs). */
static inline uint64_t trd_costs_version(const trd_costs *k) { return k ? k->version : 0; }

/* Copies src's bases (or its means, when it has none) into dst, for the
 * same n. */
trd_status trd_costs_copy_bases(trd_costs *dst, const trd_costs *src);

/* Drops the bases (homogeneous again, a new version). */
void trd_costs_drop_bases(trd_costs *costs);
/* Sets costs->version to a value no model had before. */
void trd_costs_new_version(trd_costs *costs);

/* A gamma factor (TRD_DRAW_GAMMA or TRD_DRAW_GAMMA_SMALL) drawn with rng. */
double trd_costs_gamma(const trd_costs *costs, trd_xoshiro *rng);

/* A factor of mean 1 drawn from the costs' distribution with rng (the
 * ziggurats of core/ziggurat.h on xoshiro256++: the same rng state gives
 * the same factor on every machine).  Inline: a simulation draws one per
 * transfer and combine. */
static inline double trd_costs_factor(const trd_costs *costs, trd_xoshiro *rng)
{
    switch (costs->draw) {
    case TRD_DRAW_EXP:
        return trd_zig_exp(rng);
    case TRD_DRAW_ONE:
        return 1.0;
    default:
        return trd_costs_gamma(costs, rng);
    }
}

static inline double trd_costs_transfer_base(const trd_costs *k, int32_t from, int32_t to)
{
    return k->dmat ? k->dmat[(int64_t)from * k->n + to] : k->mean_d;
}

static inline double trd_costs_combine_base(const trd_costs *k, int32_t rank)
{
    return k->cvec ? k->cvec[rank] : k->mean_c;
}

#endif
