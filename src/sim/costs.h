/* costs.h: the layout of trd_costs, read by the virtual-time transport. */
#ifndef TRD_SIM_COSTS_H
#define TRD_SIM_COSTS_H

#include <gsl/gsl_rng.h>

#include "treduce/treduce.h"

struct trd_costs {
    int64_t n;
    trd_dist dist;
    double mean_d, mean_c, cv;
    double *dmat; /* n*n transfer bases (i sends to j at [i*n+j]), or NULL */
    double *cvec; /* n combine bases, or NULL */
};

/* (Re)allocates dmat and cvec for n ranks; refuses n above the matrix limit. */
trd_status trd_costs_alloc_bases(trd_costs *costs);

/* A factor of mean 1 drawn from the costs' distribution with rng. */
double trd_costs_factor(const trd_costs *costs, gsl_rng *rng);

static inline double trd_costs_transfer_base(const trd_costs *k, int32_t from, int32_t to)
{
    return k->dmat ? k->dmat[(int64_t)from * k->n + to] : k->mean_d;
}

static inline double trd_costs_combine_base(const trd_costs *k, int32_t rank)
{
    return k->cvec ? k->cvec[rank] : k->mean_c;
}

#endif
