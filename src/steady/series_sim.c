/* series_sim.c: the plan of a Series of Reduces (series.c) simulated by the
 * engine over the virtual-time transport (src/sim/virtual.c) with the
 * platform's costs - the check of asymptotic optimality (Legrand, Marchal
 * and Robert 2004, Prop. 1 and 3): results per time unit approach TP.
 *
 * Costs: the heterogeneous model of the simulator (a transfer i -> j costs
 * d[i][j], a combine on i c[i], each times the share of the buffer the
 * step covers).  A step of this plan covers one block of R, a share the
 * engine computes in single precision as 1/R; d and c are divided by that
 * very share, so a message of v[k,m] on link e costs size * cost(e) and a
 * task on node i task_size / speed_i up to rounding.  One d per link means
 * one message size: trees sending messages of different sizes are refused.
 * Port model: one-port full duplex (Sec. 2); computations overlap
 * communications, and the plan itself runs one computation at a time per
 * node.  A result counts when the step leaving it in slot 0 of the target
 * completes. */
#include <math.h>
#include <stdlib.h>

#include "core/error.h"
#include "engine/engine.h"
#include "sim/virtual.h"
#include "steady/series.h"

/* The messages every tree sends all have one size, into *size. */
static trd_status message_size(const trd_steady *st, mpq_t size)
{
    bool any = false;
    for (int32_t i = 0; i < st->n_trees; i++)
        for (int32_t h = 0; h < st->trees[i].n_hops; h++) {
            const mpq_t *s = &st->types[st->trees[i].hops[h].type].size;
            if (any && !mpq_equal(size, *s))
                return trd_fail(TRD_EUNSUPPORTED, "steady-state series: the simulator costs "
                                "one message size per link; these trees send messages of "
                                "different sizes");
            mpq_set(size, *s);
            any = true;
        }
    return TRD_OK;
}

/* d[i][j] = size * cost(i -> j) and c[i] = task_size / speed_i, divided
 * by the share of one block of `blocks` as the engine computes it. */
static trd_status platform_costs(const trd_steady *st, const trd_platform *pf, int32_t blocks,
                                 trd_costs **out)
{
    int32_t n = pf->n_nodes;
    double share = (double)((float)1 / (float)blocks); /* engine.c: compile_scale */
    mpq_t size, q;
    mpq_inits(size, q, NULL);
    trd_status r = message_size(st, size);
    if (r == TRD_OK)
        r = trd_costs_create(out, n, TRD_DIST_CONST, 1.0, 1.0, 0.0);
    if (r == TRD_OK)
        r = trd_costs_alloc_bases(*out);
    for (int64_t i = 0; r == TRD_OK && i < (int64_t)n * n; i++)
        (*out)->dmat[i] = 0.0; /* no link: never used */
    for (int32_t e = 0; r == TRD_OK && e < pf->n_links; e++) {
        mpq_mul(q, size, pf->links[e].cost);
        (*out)->dmat[(int64_t)pf->links[e].from * n + pf->links[e].to] = mpq_get_d(q) / share;
    }
    for (int32_t i = 0; r == TRD_OK && i < n; i++) {
        (*out)->cvec[i] = 0.0; /* routers never combine */
        if (!pf->nodes[i].router) {
            mpq_div(q, st->task_size, pf->nodes[i].speed);
            (*out)->cvec[i] = mpq_get_d(q) / share;
        }
    }
    mpq_clears(size, q, NULL);
    if (r != TRD_OK) {
        trd_costs_free(*out);
        *out = NULL;
    }
    return r;
}

/* The virtual transport, noting when each watched step completes. */
typedef struct watch {
    trd_transport inner;
    const int32_t *op_of; /* per engine id: the operation it completes, or -1 */
    double *done;         /* per operation: its completion time */
} watch;

static trd_status w_post(void *ctx, int32_t rank, int32_t id, const trd_step *s)
{
    watch *w = ctx;
    return w->inner.post(w->inner.ctx, rank, id, s);
}

static trd_status w_wait_any(void *ctx, int32_t *rank, int32_t *id, int32_t *from)
{
    watch *w = ctx;
    trd_status st = w->inner.wait_any(w->inner.ctx, rank, id, from);
    if (st == TRD_OK && w->op_of[*id] >= 0)
        w->done[w->op_of[*id]] = w->inner.now(w->inner.ctx);
    return st;
}

/* Engine ids of the completing steps (ids number the steps rank after
 * rank, engine.c). */
static int32_t *completions(const trd_series *s)
{
    size_t total = 0, base = 0;
    for (int32_t r = 0; r < trd_plan_params(s->plan)->n; r++) {
        size_t n = trd_plan_step_count(s->plan, r);
        base = r == s->target ? total : base;
        total += n;
    }
    int32_t *op_of = malloc((total + 1) * sizeof *op_of);
    for (size_t i = 0; op_of && i < total; i++)
        op_of[i] = -1;
    for (int64_t op = 0; op_of && op < s->ops; op++)
        op_of[base + (size_t)s->done_step[op]] = (int32_t)op;
    return op_of;
}

/* Runs the plan once; done[op] gets each result's time. */
static trd_status run(const trd_series *s, const trd_costs *costs, double *done)
{
    int32_t n = (int32_t)trd_plan_params(s->plan)->n;
    trd_engine *engine = NULL;
    trd_virtual virt = {0};
    int32_t *op_of = completions(s);
    trd_status r = op_of ? trd_engine_create(&engine, s->plan, n, NULL)
                         : trd_fail(TRD_ENOMEM, "steady-state series: out of memory");
    if (r == TRD_OK)
        r = trd_virtual_init(&virt, n, TRD_PORT_FULL, costs);
    if (r == TRD_OK) {
        trd_virtual_reset(&virt, 0, 0);
        watch w = {.inner = trd_virtual_transport(&virt), .op_of = op_of, .done = done};
        trd_transport t = {.ctx = &w, .post = w_post, .wait_any = w_wait_any,
                           .now = trd_transport_inner_now,
                           .attach = trd_transport_inner_attach};
        r = trd_engine_run(engine, &t, NULL);
    }
    if (virt.ranks)
        trd_virtual_destroy(&virt);
    trd_engine_free(engine);
    free(op_of);
    return r;
}

static int by_time(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Results per time unit in the steady state (t sorted), or R / makespan
 * when there is none to measure.  A result's time depends only on steps
 * planned no later than its own (deps and the chains of series.c), so the
 * results of operations that entered at least `depth` periods after the
 * first and before the last come as in an endless run: W per period, in
 * the same pattern every period.  With R >= 4 W (depth + 2) the middle
 * half of the results is such; they are counted over the most whole
 * periods that fit between the first-quarter and the last-quarter result,
 * from the middle of the widest gap between results in the period after
 * the first-quarter one: exact for a periodic stream of results, however
 * bursty within a period. */
static double steady_rate(const double *t, int64_t R, double P, int64_t W, int32_t depth)
{
    int64_t i1 = R / 4, i3 = R - 1 - R / 4, lo = i1, hi;
    if ((double)R < 4.0 * (double)W * (depth + 2))
        return (double)R / t[R - 1];
    double start = t[i1], gap = 0.0;
    for (int64_t i = i1; i < i3 && t[i] < t[i1] + P; i++)
        if (t[i + 1] - t[i] > gap) {
            gap = t[i + 1] - t[i];
            start = t[i] + gap / 2;
        }
    double m = floor((t[i3] - start) / P);
    if (m < 1) /* not with W results per period */
        return (double)R / t[R - 1];
    while (t[lo] < start)
        lo++;
    for (hi = lo; hi < R && t[hi] < start + m * P; hi++)
        continue;
    return (double)(hi - lo) / (m * P);
}

static void measure(const trd_series *s, double tp, double *done, trd_steady_series_stats *out)
{
    int64_t R = s->ops;
    qsort(done, (size_t)R, sizeof *done, by_time);
    *out = (trd_steady_series_stats){.ops = R, .tp = tp, .period = s->period,
                                     .period_ops = s->period_ops, .depth = s->depth,
                                     .makespan = done[R - 1]};
    out->throughput = (double)R / out->makespan;
    out->steady_throughput = steady_rate(done, R, s->period, s->period_ops, s->depth);
    out->ratio_to_tp = out->steady_throughput / tp;
}

trd_status trd_steady_series_simulate(const trd_steady *st, const trd_platform *pf, int64_t ops,
                                      trd_steady_series_stats *out)
{
    trd_series s;
    trd_costs *costs = NULL;
    double *done = NULL;
    if (!out)
        return trd_fail(TRD_EINVAL, "steady-state series: NULL argument (out)");
    trd_status r = trd_series_build(st, pf, ops, &s);
    if (r == TRD_OK)
        r = platform_costs(st, pf, (int32_t)ops, &costs);
    if (r == TRD_OK && !(done = malloc((size_t)ops * sizeof *done)))
        r = trd_fail(TRD_ENOMEM, "steady-state series: out of memory");
    if (r == TRD_OK)
        r = run(&s, costs, done);
    if (r == TRD_OK)
        measure(&s, mpq_get_d(st->throughput), done, out);
    free(done);
    trd_costs_free(costs);
    trd_series_free(&s);
    return r;
}
