/* builders.h: what the layers above the planners (sim, runtime, steady)
 * may call besides treduce/plan.h: the plan's builders for the evaluator
 * alone, for programs written elsewhere and without the fusion pass, the
 * checks of parameters, and the costs and work a plan is timed under. */
#ifndef TRD_PLAN_BUILDERS_H
#define TRD_PLAN_BUILDERS_H

#include "ir/plan_layout.h"
#include "model/homogeneous.h"
#include "plan/registry.h"

/* The checked path of trd_plan_create (makespan_only false) and of
 * trd_makespan (true: a tree the evaluator times gets no programs).  A
 * plan is never written after it returns. */
trd_status trd_plan_build(trd_plan **out, const char *algo_name, const trd_params *params,
                          bool makespan_only);

/* A plan of programs written by the caller (src/plan/custom.c), named by
 * `algo`: a static entry outside registry.def, whose name and
 * bound_source must be set (the rest may be NULL).  params gives n, root
 * (the rank that ends with the result), segments (the blocks B, 1 to
 * TRD_SEGMENTS_MAX) and the flags; rank r's program is
 * steps[step_first[r] .. step_first[r + 1]).  step_first and steps
 * (malloc'd) are taken over, even on failure.  Every step is checked
 * (kind, peer another rank, slots, side, blocks inside B, deps earlier,
 * release on SENDs only): TRD_EINVAL names the first bad one.  makespan is
 * the model's prediction (NaN: simulated with params' d and c on demand);
 * no tree, no bounds (NaN). */
trd_status trd_plan_custom(trd_plan **out, const trd_algo *algo, const trd_params *params,
                           size_t *step_first, trd_step *steps, double makespan);

/* trd_plan_create's checks of params for algo (ranges, root, K, costs,
 * collective, operator, memory, times that could overflow), for a
 * builder of plans other than trd_plan_create (sim/plan_times.c). */
trd_status trd_plan_check_params(const trd_algo *algo, const trd_params *params);

/* As trd_plan_create, without the fusion pass (plan/fuse.c): the
 * programs as the algorithm wrote them (tests of the pass). */
trd_status trd_plan_create_unfused(trd_plan **out, const char *algo_name,
                                   const trd_params *params);

/* The costs a plan of p is timed under: p->costs over positions rotated
 * by p->root (a commutative numbering), else the homogeneous d, c. */
trd_cost_view trd_plan_cost_view(const trd_params *p);

/* The work (trd_plan_work) of a transfer and of a combine of `share` of
 * the buffer under p's costs (plan.c). */
double trd_transfer_work(const trd_params *p, double share);
double trd_combine_work(const trd_params *p, double share);


#endif
