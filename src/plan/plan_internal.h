/* plan_internal.h: the layout of trd_plan, shared by plan.c and schedule.c. */
#ifndef TRD_PLAN_PLAN_INTERNAL_H
#define TRD_PLAN_PLAN_INTERNAL_H

#include "model/homogeneous.h"
#include "plan/registry.h"

struct trd_plan {
    const trd_algo *algo;
    trd_params params;
    double makespan;
    double lower_bound;
    double upper_bound;
    int32_t *parent;     /* per rank; -1 at the root */
    double *send_start;  /* per rank; NaN at the root */
    size_t *step_first;  /* steps of rank r: steps[step_first[r] .. step_first[r+1]) */
    trd_step *steps;
};

/* Compiles the per-rank programs of an evaluated tree whose positions map
 * to ranks through rank[] (src/plan/schedule.c). */
trd_status trd_schedule_build(trd_plan *plan, const trd_timing *timing,
                              const int32_t *rank);

#endif
