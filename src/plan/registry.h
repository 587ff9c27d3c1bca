/* registry.h: the algorithm table generated from registry.def. */
#ifndef TRD_PLAN_REGISTRY_H
#define TRD_PLAN_REGISTRY_H

#include "engine/policy.h"
#include "model/bounds.h"
#include "plan/tree.h"

typedef struct trd_plan trd_plan;
typedef trd_status (*trd_schedule_fn)(trd_plan *plan);
trd_status trd_schedule_recursive_doubling(trd_plan *plan);
trd_status trd_schedule_ring(trd_plan *plan);
trd_status trd_schedule_rabenseifner(trd_plan *plan);
trd_status trd_schedule_star(trd_plan *plan);
trd_status trd_schedule_star_reduce_bcast(trd_plan *plan);
/* Segment count chosen by a pipelined algorithm from params (d, c,
 * latency, n): reduce-parallel-pattern Sec. 3 and 4. */
typedef int64_t (*trd_segments_fn)(const trd_params *params);

/* What an algorithm can do (registry.def's capabilities column). */
enum {
    TRD_CAP_K = 1,           /* reads params.K */
    TRD_CAP_COSTS = 2,       /* reads params.costs; refuses to plan without them */
    TRD_CAP_COMMUTATIVE = 4  /* commutative operators only */
};

typedef struct trd_algo {
    const char *name;
    trd_build_fn build;   /* tree planners; NULL otherwise */
    trd_schedule_fn schedule; /* exchange algorithms; NULL otherwise */
    trd_segments_fn segments; /* pipelined trees: their segment count; NULL: 1 */
    trd_status (*policy)(int32_t n, trd_policy *out); /* NULL for planners */
    trd_bound_fn upper_bound;
    const char *bound_source;
    unsigned caps;        /* TRD_CAP_* */
    const char *description;
} trd_algo;

/* The entry of algorithm i < trd_algo_count(). */
const trd_algo *trd_algo_entry(size_t i);

/* TRD_EUNSUPPORTED, naming algorithm a and why, when its capabilities
 * refuse a non-commutative operator (TRD_CAP_COMMUTATIVE) or a plan
 * without heterogeneous costs (TRD_CAP_COSTS); else TRD_OK. */
trd_status trd_algo_check_operator(const trd_algo *a, bool noncommutative);
trd_status trd_algo_check_costs(const trd_algo *a, bool has_costs);

#endif
