/* plan_internal.h: the layout of trd_plan, shared by plan.c and schedule.c. */
#ifndef TRD_PLAN_PLAN_INTERNAL_H
#define TRD_PLAN_PLAN_INTERNAL_H

#include "model/homogeneous.h"
#include "plan/registry.h"

struct trd_plan {
    const trd_algo *algo;
    trd_params params;
    double makespan;     /* the tree evaluator's; NaN where it does not
                            cover the plan (src/sim/plan_makespan.c) */
    double lower_bound;
    double upper_bound;
    int32_t *parent;     /* per rank; -1 at the root */
    double *send_start;  /* per rank; NaN at the root */
    size_t *step_first;  /* steps of rank r: steps[step_first[r] .. step_first[r+1]) */
    trd_step *steps;
    int32_t blocks;      /* B: the buffer is cut into B blocks (>= 1) */
    bool timed;          /* the steps' start/end are model times (an
                            unsegmented tree reduce, or a recorded run:
                            sim/plan_times.c); otherwise 0 and the
                            makespan comes from the simulator */
};

/* The checked path of trd_plan_create (makespan_only false) and of
 * trd_makespan (true: a tree the evaluator times gets no programs).  A
 * plan is never written after it returns. */
trd_status trd_plan_build(trd_plan **out, const char *algo_name, const trd_params *params,
                          bool makespan_only);

/* An exchange algorithm (recursive-doubling, ring, rabenseifner): writes
 * plan->blocks, plan->step_first and plan->steps (malloc'd, step_first[n]
 * steps; start/end 0) for plan->params, which plan.c has checked (n >= 1,
 * root a rank, allreduce set, segments >= 1 after the default).  It may
 * refuse params it cannot honour (e.g. noncommutative) with
 * TRD_EUNSUPPORTED and a message saying why.  (trd_schedule_fn,
 * registry.h.) */

/* Appends to a growing step array (the exchange builders' helper). */
typedef struct trd_step_list {
    trd_step *steps;
    size_t len, cap;
} trd_step_list;
trd_status trd_step_push(trd_step_list *list, trd_step step);

/* Compiles the per-rank programs of an evaluated tree whose positions map
 * to ranks through rank[] (src/plan/schedule.c). */
trd_status trd_schedule_build(trd_plan *plan, const trd_timing *timing,
                              const int32_t *rank);

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

/* Whether two plans run the same programs: the same blocks and, rank by
 * rank, the same steps (the model's times aside).  Several planners build
 * the same tree for some n (plan.c). */
bool trd_plan_same_programs(const trd_plan *x, const trd_plan *y);

#endif
