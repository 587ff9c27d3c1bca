/* plan_layout.h: the layout of a trd_plan - the IR every layer shares
 * (docs/ARCHITECTURE.md): per-rank programs of steps over B blocks, the
 * reduction tree they came from (if any), and the model's times.
 *
 * Written by the plan's builders (src/plan/: the algorithms, the fusion
 * pass, custom plans; src/sim/plan_times.c: the model's times of a run)
 * and never after they return; read by everyone else through the
 * accessors of treduce/plan.h, which plan_layout.c implements. */
#ifndef TRD_IR_PLAN_LAYOUT_H
#define TRD_IR_PLAN_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "treduce/treduce.h"

/* The registry entry of the plan's algorithm: the plan layer's type
 * (src/plan/registry.h), opaque here. */
struct trd_algo;

struct trd_plan {
    const struct trd_algo *algo;
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

/* Appends to a growing step array (the builders' helper). */
typedef struct trd_step_list {
    trd_step *steps;
    size_t len, cap;
} trd_step_list;
trd_status trd_step_push(trd_step_list *list, trd_step step);

/* Whether two plans run the same programs: the same blocks and, rank by
 * rank, the same steps (the model's times aside).  Several planners build
 * the same tree for some n. */
bool trd_plan_same_programs(const trd_plan *x, const trd_plan *y);

#endif
