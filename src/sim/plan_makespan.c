/* plan_makespan.c: trd_plan_makespan and trd_makespan.
 *
 * The planner (plan.c) stores the tree evaluator's makespan (Prop. 3)
 * where it covers the plan: an unsegmented tree reduce without flight or
 * receive-and-combine saving.  Every other plan (segmented, allreduce,
 * exchange, flight, a saving, a custom plan given none) is timed here, by the simulator that sits above the plans:
 * plan.c never calls it.  Nothing is cached in the plan, so a plan is
 * never written after trd_plan_create and any number of threads may read
 * it at once; the price is a simulation per call for those plans (the
 * runtime, which never asks, pays nothing). */
#include <math.h>

#include "core/error.h"
#include "plan/builders.h"
#include "sim/sim.h"

static trd_status plan_makespan(const trd_plan *plan, double *makespan)
{
    *makespan = plan->makespan;
    return isnan(*makespan) ? trd_plan_simulate_makespan(plan, makespan) : TRD_OK;
}

double trd_plan_makespan(const trd_plan *plan)
{
    double makespan;
    return plan_makespan(plan, &makespan) == TRD_OK ? makespan : NAN;
}

trd_status trd_makespan(const char *algo_name, const trd_params *params, double *makespan)
{
    trd_plan *plan;
    if (!makespan)
        return trd_fail(TRD_EINVAL, "treduce: NULL argument (makespan)");
    trd_status st = trd_plan_build(&plan, algo_name, params, true);
    if (st == TRD_OK)
        st = plan_makespan(plan, makespan);
    trd_plan_free(plan);
    return st;
}
