/* custom.c: a plan whose per-rank programs were written by the caller
 * rather than by a registered algorithm (every schedule is the same IR,
 * run by the same engine: docs/ARCHITECTURE.md).  The steady-state series of reduces
 * (src/steady/series.c) compiles to one; it names itself through a static
 * trd_algo entry that is not in registry.def, so it is neither listed by
 * `treduce list` nor part of the generic test matrices.  Such a plan has
 * no reduction tree (parent -1 everywhere), no closed-form bounds (NaN),
 * and the model makespan its builder gives. */
#include <math.h>
#include <stdlib.h>

#include "core/error.h"
#include "plan/plan_internal.h"

/* Step i of rank r's program (n ranks, B blocks) is well formed. */
static trd_status check_step(const trd_step *s, int32_t r, size_t i, int64_t n, int64_t B)
{
    bool fused = s->kind == TRD_STEP_RECV_COMBINE; /* both a transfer and a local step */
    bool transfer = s->kind == TRD_STEP_SEND || s->kind == TRD_STEP_RECV || fused ||
                    s->kind == TRD_STEP_SEND_INPUT;
    bool local = s->kind == TRD_STEP_COMBINE || s->kind == TRD_STEP_COPY || fused;
    int64_t covered = s->blocks > 1 ? s->blocks : 1;
    const char *bad = NULL;
    if (!transfer && !local)
        bad = "an unknown kind";
    else if (transfer && (s->peer < 0 || s->peer >= n || s->peer == r))
        bad = "a peer that is not another rank";
    else if (s->buf < 0 || (local && (s->src < 0 || s->src == s->buf)))
        bad = "a bad slot";
    else if ((s->kind == TRD_STEP_COMBINE || fused) && s->side != TRD_SIDE_LEFT &&
             s->side != TRD_SIDE_RIGHT)
        bad = "a bad side";
    else if (s->block < 0 || s->blocks < 0 || s->block + covered > B)
        bad = "blocks outside the buffer";
    else if (s->dep[0] < -1 || s->dep[1] < -1 || s->dep[0] >= (int64_t)i ||
             s->dep[1] >= (int64_t)i)
        bad = "a dependency that is not an earlier step";
    else if (!isfinite(s->release) || s->release < 0 ||
             (s->release > 0 && s->kind != TRD_STEP_SEND && s->kind != TRD_STEP_SEND_INPUT))
        bad = "a bad release time";
    else if (s->ship != 0) /* the fusion pass's (plan/fuse.c), checked there */
        bad = "a ship (only the fusion pass sets it)";
    if (bad)
        return trd_fail(TRD_EINVAL, "custom plan: rank %ld step %zu has %s", (long)r, i, bad);
    return TRD_OK;
}

static trd_status check_programs(const trd_params *p, const size_t *first, const trd_step *steps)
{
    trd_status st = TRD_OK;
    if (p->n < 1 || p->n > TRD_N_MAX || p->root < 0 || p->root >= p->n)
        return trd_fail(TRD_EINVAL, "custom plan: n = %lld, root = %lld: need 0 <= root < n",
                        (long long)p->n, (long long)p->root);
    if (p->segments < 1 || p->segments > TRD_SEGMENTS_MAX)
        return trd_fail(TRD_EINVAL, "custom plan: %lld blocks: need 1 to %d",
                        (long long)p->segments, TRD_SEGMENTS_MAX);
    for (int32_t r = 0; st == TRD_OK && r < p->n; r++) {
        if (first[r + 1] < first[r])
            return trd_fail(TRD_EINVAL, "custom plan: rank %ld's program ends before it "
                            "starts", (long)r);
        for (size_t i = 0; st == TRD_OK && i < first[r + 1] - first[r]; i++)
            st = check_step(&steps[first[r] + i], r, i, p->n, p->segments);
    }
    return st;
}

/* Frees the programs a failed call was given, and returns st. */
static trd_status drop(size_t *step_first, trd_step *steps, trd_status st)
{
    free(step_first);
    free(steps);
    return st;
}

trd_status trd_plan_custom(trd_plan **out, const trd_algo *algo, const trd_params *params,
                           size_t *step_first, trd_step *steps, double makespan)
{
    *out = NULL;
    trd_status st = check_programs(params, step_first, steps);
    if (st != TRD_OK)
        return drop(step_first, steps, st);
    size_t n = (size_t)params->n;
    trd_plan *plan = calloc(1, sizeof *plan);
    if (!plan)
        return drop(step_first, steps, trd_fail(TRD_ENOMEM, "custom plan: out of memory"));
    *plan = (trd_plan){.algo = algo, .params = *params, .makespan = makespan,
                       .lower_bound = NAN, .upper_bound = NAN, .step_first = step_first,
                       .steps = steps, .blocks = (int32_t)params->segments};
    plan->parent = malloc(n * sizeof *plan->parent);
    plan->send_start = malloc(n * sizeof *plan->send_start);
    if (!plan->parent || !plan->send_start) {
        trd_plan_free(plan); /* the programs with it */
        return trd_fail(TRD_ENOMEM, "custom plan: out of memory for n = %zu", n);
    }
    for (size_t r = 0; r < n; r++) {
        plan->parent[r] = -1;
        plan->send_start[r] = NAN;
    }
    *out = plan;
    return TRD_OK;
}
