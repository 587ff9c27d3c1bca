/* plan_internal.h: what the files of src/plan/ share and no other layer
 * uses (the layers above call plan/builders.h; the layout is ir/). */
#ifndef TRD_PLAN_PLAN_INTERNAL_H
#define TRD_PLAN_PLAN_INTERNAL_H

#include "ir/plan_layout.h"
#include "plan/builders.h"

/* An exchange algorithm (recursive-doubling, ring, rabenseifner): writes
 * plan->blocks, plan->step_first and plan->steps (malloc'd, step_first[n]
 * steps; start/end 0) for plan->params, which plan.c has checked (n >= 1,
 * root a rank, allreduce set, segments >= 1 after the default).  It may
 * refuse params it cannot honour (e.g. noncommutative) with
 * TRD_EUNSUPPORTED and a message saying why.  (trd_schedule_fn,
 * registry.h.) */

/* Compiles the per-rank programs of an evaluated tree whose positions map
 * to ranks through rank[] (src/plan/schedule.c). */
trd_status trd_schedule_build(trd_plan *plan, const trd_timing *timing,
                              const int32_t *rank);

#endif
