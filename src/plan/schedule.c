/* schedule.c: compiles an evaluated tree into the schedule IR
 * (docs/MODEL.md, "The schedule IR").
 *
 * A rank with inputs x_1..x_m (in arrival order) runs
 *   RECV x_1 -> slot 1, COMBINE slot 1 into slot 0, RECV x_2 -> slot 2, ...
 *   SEND slot 0 to its parent.
 * COMBINE j depends on RECV j and COMBINE j-1, SEND on the last COMBINE;
 * RECVs depend on nothing: the port model (one transfer at a time in the
 * planners' model) orders them, FIFO by sender readiness - unless the tree
 * fixed the receive order (trd_tree.seq: a heterogeneous planner may take a
 * later sender first), and then RECV j+1 depends on RECV j.  RECV j+1 does
 * not wait for COMBINE j: that is the overlap of transfers with combines of
 * canon-antoniu Sec. 3.1, and why each input gets its own scratch slot.  The
 * side of a combine says on which side of the accumulated rank interval the
 * input lies.
 *
 * Segmented (B blocks, reduce-parallel-pattern Sec. 3 and 4): the program
 * above runs once per block, block after block, each step covering its
 * block only, so block k+1 travels while block k is combined.  Allreduce:
 * after block b is reduced, it is broadcast down the same tree, the latest
 * input first (it heads the deepest subtree, as a binomial broadcast sends
 * to its largest subtree first); a rank receives block b back into slot 0
 * once its own SEND of block b is done with it. */
#include <math.h>
#include <stdlib.h>

#include "core/error.h"
#include "plan/plan_internal.h"

static size_t count_steps(const trd_timing *t, int32_t pos, int32_t blocks, bool allreduce)
{
    size_t inputs = (size_t)(t->first[pos + 1] - t->first[pos]);
    size_t reduce = 2 * inputs + (pos != 0);
    size_t bcast = allreduce ? inputs + (pos != 0) : 0;
    return (reduce + bcast) * (size_t)blocks;
}

static trd_step step(int32_t kind, int32_t peer, int32_t buf, int32_t src,
                     int32_t dep0, int32_t dep1, int32_t block)
{
    return (trd_step){.kind = kind, .peer = peer, .buf = buf, .src = src,
                      .side = TRD_SIDE_RIGHT, .block = block, .blocks = 1,
                      .dep = {dep0, dep1}};
}

/* Where a program is written and how far it got. */
typedef struct emitter {
    trd_step *out;
    int32_t k;
} emitter;

static int32_t emit(emitter *em, trd_step s)
{
    em->out[em->k] = s;
    return em->k++;
}

/* The reduce part of block b for position pos; returns the index of its
 * SEND (-1 at the root) and sets *combined to its last COMBINE (-1 if none). */
static int32_t emit_reduce(const trd_plan *plan, const trd_timing *t, const int32_t *rank,
                           int32_t pos, int32_t b, emitter *em, int32_t *combined)
{
    int32_t me = rank[pos], last = -1, recv = -1;
    for (int32_t e = t->first[pos]; e < t->first[pos + 1]; e++) {
        int32_t from = t->child[e], j = e - t->first[pos];
        int32_t after = t->ordered ? recv : -1; /* a fixed order: after the last RECV */
        recv = emit(em, step(TRD_STEP_RECV, rank[from], j + 1, -1, after, -1, b));
        trd_step comb = step(TRD_STEP_COMBINE, -1, 0, j + 1, recv, last, b);
        comb.side = rank[from] < me ? TRD_SIDE_LEFT : TRD_SIDE_RIGHT;
        last = emit(em, comb);
    }
    *combined = last;
    if (pos == 0)
        return -1;
    return emit(em, step(TRD_STEP_SEND, plan->parent[me], 0, -1, last, -1, b));
}

/* The broadcast of block b (allreduce): receive it from the parent, then
 * pass it to the inputs, latest first. */
static void emit_bcast(const trd_plan *plan, const trd_timing *t, const int32_t *rank,
                       int32_t pos, int32_t b, int32_t sent, int32_t combined, emitter *em)
{
    int32_t me = rank[pos], ready = combined;
    if (pos != 0)
        ready = emit(em, step(TRD_STEP_RECV, plan->parent[me], 0, -1, sent, -1, b));
    for (int32_t e = t->first[pos + 1] - 1; e >= t->first[pos]; e--)
        emit(em, step(TRD_STEP_SEND, rank[t->child[e]], 0, -1, ready, -1, b));
}

/* The model times of an unsegmented reduce (the plan's own timing). */
static void set_times(const trd_timing *t, int32_t pos, trd_step *out)
{
    int32_t k = 0;
    for (int32_t e = t->first[pos]; e < t->first[pos + 1]; e++, k += 2) {
        out[k].start = t->send_start[t->child[e]];
        out[k].end = t->send_end[t->child[e]];
        out[k + 1].start = t->combine_start[e];
        out[k + 1].end = t->combine_end[e];
    }
    if (pos != 0) {
        out[k].start = t->send_start[pos];
        out[k].end = t->send_end[pos];
        out[k].release = t->release ? t->release[pos] : 0.0;
    }
}

/* Writes the program of position pos (rank rank[pos]) at out. */
static void emit_program(const trd_plan *plan, const trd_timing *t, const int32_t *rank,
                         int32_t pos, trd_step *out)
{
    emitter em = {.out = out, .k = 0};
    for (int32_t b = 0; b < plan->blocks; b++) {
        int32_t combined, sent = emit_reduce(plan, t, rank, pos, b, &em, &combined);
        if (plan->params.allreduce)
            emit_bcast(plan, t, rank, pos, b, sent, combined, &em);
    }
    if (plan->timed)
        set_times(t, pos, out);
    else if (pos != 0 && t->release) /* Alg. 2's delays hold in every block */
        for (int32_t k = 0; k < em.k; k++)
            if (out[k].kind == TRD_STEP_SEND && out[k].peer == plan->parent[rank[pos]])
                out[k].release = t->release[pos];
}

trd_status trd_schedule_build(trd_plan *plan, const trd_timing *t, const int32_t *rank)
{
    int32_t n = t->n;
    plan->step_first = calloc((size_t)n + 1, sizeof *plan->step_first);
    if (!plan->step_first)
        return trd_fail(TRD_ENOMEM, "schedule: out of memory for n = %ld", (long)n);
    for (int32_t pos = 0; pos < n; pos++)
        plan->step_first[rank[pos] + 1] =
            count_steps(t, pos, plan->blocks, plan->params.allreduce);
    for (int32_t r = 0; r < n; r++)
        plan->step_first[r + 1] += plan->step_first[r];
    plan->steps = calloc(plan->step_first[n] + 1, sizeof *plan->steps);
    if (!plan->steps)
        return trd_fail(TRD_ENOMEM, "schedule: cannot allocate %zu steps",
                        plan->step_first[n]);
    for (int32_t pos = 0; pos < n; pos++)
        emit_program(plan, t, rank, pos, plan->steps + plan->step_first[rank[pos]]);
    return TRD_OK;
}
