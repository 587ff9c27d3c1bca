/* schedule.c: compiles an evaluated tree into the schedule IR (DESIGN.md).
 *
 * A rank with inputs x_1..x_m (in arrival order) runs
 *   RECV x_1 -> slot 1, COMBINE slot 1 into slot 0, RECV x_2 -> slot 2, ...
 *   SEND slot 0 to its parent.
 * COMBINE j depends on RECV j and COMBINE j-1, SEND on the last COMBINE;
 * RECVs depend on nothing: the port model (one transfer at a time in the
 * planners' model) orders them, FIFO by sender readiness.  RECV j+1 does not
 * wait for COMBINE j: that is the overlap of transfers with combines of
 * canon-antoniu Sec. 3.1, and why each input gets its own scratch slot.  The
 * side of a combine says on which side of the accumulated rank interval the
 * input lies. */
#include <math.h>
#include <stdlib.h>

#include "core/error.h"
#include "plan/plan_internal.h"

static size_t count_steps(const trd_timing *t, int32_t pos)
{
    size_t inputs = (size_t)(t->first[pos + 1] - t->first[pos]);
    return 2 * inputs + (pos != 0);
}

static trd_step step(int32_t kind, int32_t peer, int32_t buf, int32_t src,
                     int32_t dep0, int32_t dep1, double start, double end)
{
    return (trd_step){.kind = kind, .peer = peer, .buf = buf, .src = src,
                      .side = TRD_SIDE_RIGHT, .block = 0, .dep = {dep0, dep1},
                      .start = start, .end = end, .release = 0.0};
}

/* Writes the program of position pos (rank rank[pos]) at out. */
static void emit_program(const trd_plan *plan, const trd_timing *t,
                         const int32_t *rank, int32_t pos, trd_step *out)
{
    double d = plan->params.d, c = plan->params.c;
    int32_t me = rank[pos], k = 0, last_combine = -1;
    for (int32_t e = t->first[pos]; e < t->first[pos + 1]; e++) {
        int32_t from = t->child[e], j = e - t->first[pos];
        double a = t->send_start[from];
        out[k] = step(TRD_STEP_RECV, rank[from], j + 1, -1, -1, -1, a, a + d);
        out[k + 1] = step(TRD_STEP_COMBINE, -1, 0, j + 1, k, last_combine,
                          t->combine_end[e] - c, t->combine_end[e]);
        out[k + 1].side = rank[from] < me ? TRD_SIDE_LEFT : TRD_SIDE_RIGHT;
        last_combine = k + 1;
        k += 2;
    }
    if (pos != 0) {
        double a = t->send_start[pos];
        out[k] = step(TRD_STEP_SEND, plan->parent[me], 0, -1, last_combine, -1,
                      a, a + d);
        out[k].release = t->release ? t->release[pos] : 0.0;
    }
}

trd_status trd_schedule_build(trd_plan *plan, const trd_timing *t, const int32_t *rank)
{
    int32_t n = t->n;
    plan->step_first = calloc((size_t)n + 1, sizeof *plan->step_first);
    if (!plan->step_first)
        return trd_fail(TRD_ENOMEM, "schedule: out of memory for n = %ld", (long)n);
    for (int32_t pos = 0; pos < n; pos++)
        plan->step_first[rank[pos] + 1] = count_steps(t, pos);
    for (int32_t r = 0; r < n; r++)
        plan->step_first[r + 1] += plan->step_first[r];
    plan->steps = malloc((plan->step_first[n] + 1) * sizeof *plan->steps);
    if (!plan->steps)
        return trd_fail(TRD_ENOMEM, "schedule: cannot allocate %zu steps",
                        plan->step_first[n]);
    for (int32_t pos = 0; pos < n; pos++)
        emit_program(plan, t, rank, pos, plan->steps + plan->step_first[rank[pos]]);
    return TRD_OK;
}
