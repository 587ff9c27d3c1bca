/* hetero_bound.h: a lower bound on any reduction under heterogeneous costs. */
#ifndef TRD_MODEL_HETERO_BOUND_H
#define TRD_MODEL_HETERO_BOUND_H

#include "model/homogeneous.h"

/* A lower bound on the makespan of every tree and receive order of n
 * positions (position 0 the root) under `costs` in the one-port overlap
 * model: the larger of the relaxed Alg. 1 bound and the path bound
 * (hetero_bound.c).  O(n^2) time, O(n) memory; NaN when out of memory. */
double trd_bound_hetero(const trd_cost_view *costs, int32_t n);

/* Each half, for the tests. */
double trd_bound_hetero_relaxed(const trd_cost_view *costs, int32_t n);
double trd_bound_hetero_paths(const trd_cost_view *costs, int32_t n);

#endif
