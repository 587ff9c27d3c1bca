/* registry.h: the algorithm table generated from registry.def. */
#ifndef TRD_PLAN_REGISTRY_H
#define TRD_PLAN_REGISTRY_H

#include "engine/policy.h"
#include "model/bounds.h"
#include "plan/tree.h"

typedef struct trd_algo {
    const char *name;
    trd_build_fn build;   /* NULL for dynamic algorithms */
    trd_status (*policy)(int32_t n, trd_policy *out); /* NULL for planners */
    trd_bound_fn upper_bound;
    const char *bound_source;
    bool uses_k;
    const char *description;
} trd_algo;

/* The entry of algorithm i < trd_algo_count(). */
const trd_algo *trd_algo_entry(size_t i);

#endif
