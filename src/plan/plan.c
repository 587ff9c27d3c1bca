/* plan.c: trd_plan_create and the plan accessors.
 *
 * Creating a plan is: check the parameters, let the registered planner
 * build its tree over positions, evaluate the tree under the one-port
 * overlap model, homogeneous or with params.costs
 * (src/model/homogeneous.c), map positions to ranks
 * (src/plan/number.c), and compile the per-rank schedule
 * (src/plan/schedule.c).  Every planner goes through this one path. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/memory.h"
#include "model/hetero_bound.h"
#include "plan/fuse.h"
#include "plan/number.h"
#include "plan/plan_internal.h"
#include "ir/costs.h"

/* Rough peak memory of a plan per rank (tree, timing, numbering, steps). */
#define BYTES_PER_RANK 256.0

void trd_params_init(trd_params *p)
{
    *p = (trd_params){.n = 1, .d = 1.0, .c = 1.0, .K = 0, .root = 0,
                      .noncommutative = false, .segments = 0, .latency = 0.0,
                      .combine_fixed = 0.0,
                      .allreduce = false, .flight = 0.0, .recv_combine_saving = 0.0};
}

trd_collective trd_params_collective(const trd_params *p)
{
    return p->allreduce && p->collective == TRD_COLL_REDUCE ? TRD_COLL_ALLREDUCE : p->collective;
}

static trd_status check_cost(const char *name, double v)
{
    if (isnan(v))
        return trd_fail(TRD_EINVAL, "%s = nan is not a number: costs must be finite and >= 0", name);
    if (!isfinite(v) || v < 0)
        return trd_fail(TRD_EINVAL, "%s = %g is invalid: costs must be finite and >= 0", name, v);
    return TRD_OK;
}

/* Heterogeneous costs: for these ranks, and whole transfers (a per-message
 * latency would have to be part of every d[i][j]). */
static trd_status check_costs(const trd_params *p)
{
    if (!p->costs)
        return TRD_OK;
    if (trd_costs_n(p->costs) != p->n)
        return trd_fail(TRD_EINVAL, "the heterogeneous costs are for n = %lld ranks, the plan "
                        "has n = %lld", (long long)trd_costs_n(p->costs), (long long)p->n);
    if (p->latency != 0 || p->combine_fixed != 0 || p->flight != 0 ||
        p->recv_combine_saving != 0)
        return trd_fail(TRD_EINVAL, "latency = %g, combine_fixed = %g, flight = %g, "
                        "recv_combine_saving = %g: with heterogeneous costs they must be 0 "
                        "(each d[i][j] and c[i] is a whole transfer or combine)", p->latency,
                        p->combine_fixed, p->flight, p->recv_combine_saving);
    return TRD_OK;
}

/* Whether the tree evaluator (Prop. 3) times plans under p: it knows no
 * flight, charges every message a whole transfer, and knows no nodes
 * (their shared links, far_d). */
static bool evaluator_model(const trd_params *p)
{
    return p->flight == 0 && p->recv_combine_saving == 0 && !p->node_of;
}

trd_cost_view trd_plan_cost_view(const trd_params *p)
{
    const trd_costs *k = p->costs;
    if (!k)
        return trd_view_homogeneous(p->d, p->c);
    return (trd_cost_view){.d = k->dmat, .c = k->cvec, .d0 = k->mean_d, .c0 = k->mean_c,
                           .n = (int32_t)p->n, .root = (int32_t)p->root};
}

static trd_status check_nodes(const trd_params *p)
{
    for (int64_t r = 0; p->node_of && r < p->n; r++)
        if (p->node_of[r] < 0 || p->node_of[r] >= p->n)
            return trd_fail(TRD_EINVAL, "node_of[%lld] = %ld is not a node: need 0 <= node < "
                            "n = %lld", (long long)r, (long)p->node_of[r], (long long)p->n);
    return TRD_OK;
}

static trd_status check_params(const trd_algo *algo, const trd_params *p)
{
    trd_status st;
    if (p->n < 1 || p->n > TRD_N_MAX)
        return trd_fail(TRD_EINVAL, "n = %lld is out of range: need 1 <= n <= %lld",
                        (long long)p->n, (long long)TRD_N_MAX);
    if ((st = check_cost("d", p->d)) != TRD_OK || (st = check_cost("c", p->c)) != TRD_OK)
        return st;
    if (p->root < 0 || p->root >= p->n)
        return trd_fail(TRD_EINVAL, "root = %lld is not a rank: need 0 <= root < n = %lld",
                        (long long)p->root, (long long)p->n);
    if ((algo->caps & TRD_CAP_K) && p->K < 1)
        return trd_fail(TRD_EINVAL, "%s needs K >= 1 (got K = %lld)", algo->name,
                        (long long)p->K);
    if (!(algo->caps & TRD_CAP_K) && p->K < 0)
        return trd_fail(TRD_EINVAL, "K = %lld is negative", (long long)p->K);
    if ((st = check_cost("latency", p->latency)) != TRD_OK)
        return st;
    if (p->latency > p->d)
        return trd_fail(TRD_EINVAL, "latency = %g is above d = %g: it is the part of a "
                        "transfer paid per message", p->latency, p->d);
    if ((st = check_cost("flight", p->flight)) != TRD_OK)
        return st;
    if (p->flight > p->latency)
        return trd_fail(TRD_EINVAL, "flight = %g is above latency = %g: it is the part of "
                        "the latency a message spends in flight", p->flight, p->latency);
    if (!(p->recv_combine_saving >= 0 && p->recv_combine_saving <= 1))
        return trd_fail(TRD_EINVAL, "recv_combine_saving = %g is outside [0, 1]: it is the "
                        "share of a transfer a receive-and-combine does not pay",
                        p->recv_combine_saving);
    if ((st = check_cost("combine_fixed", p->combine_fixed)) != TRD_OK ||
        (st = check_cost("far_d", p->far_d)) != TRD_OK ||
        (st = check_cost("far_latency", p->far_latency)) != TRD_OK)
        return st;
    if (p->far_d > 0 && p->far_latency > p->far_d)
        return trd_fail(TRD_EINVAL, "far_latency = %g is above far_d = %g: it is the part of a "
                        "transfer between nodes paid per message", p->far_latency, p->far_d);
    if (p->combine_fixed > p->c)
        return trd_fail(TRD_EINVAL, "combine_fixed = %g is above c = %g: it is the part of a "
                        "combine paid per call", p->combine_fixed, p->c);
    if (p->segments < 0 || p->segments > TRD_SEGMENTS_MAX)
        return trd_fail(TRD_EINVAL, "segments = %lld is out of range: need 0 (the "
                        "algorithm's choice) to %d", (long long)p->segments,
                        TRD_SEGMENTS_MAX);
    if (p->allreduce && p->collective != TRD_COLL_REDUCE && p->collective != TRD_COLL_ALLREDUCE)
        return trd_fail(TRD_EINVAL, "allreduce is set with collective = %s: set one of them",
                        trd_collective_name(p->collective) ? trd_collective_name(p->collective)
                                                           : "out of range");
    if ((st = trd_algo_check_collective(algo, trd_params_collective(p))) != TRD_OK ||
        (st = check_nodes(p)) != TRD_OK)
        return st;
    double blocks = p->segments ? (double)p->segments : 1.0;
    if ((st = trd_check_memory(p->n, BYTES_PER_RANK * blocks, "a plan")) != TRD_OK ||
        (st = trd_algo_check_operator(algo, p->noncommutative)) != TRD_OK ||
        (st = trd_algo_check_costs(algo, p->costs != NULL)) != TRD_OK ||
        (st = trd_algo_check_ranks(algo, p->n)) != TRD_OK)
        return st;
    return check_costs(p);
}

/* A plan's times stay below this, so that any of them can still be
 * scaled to nanoseconds or summed over a billion simulated runs. */
#define TIME_MAX (DBL_MAX / 1e9)

/* Refuses costs whose plan times could exceed TIME_MAX.  A schedule ends
 * before the sum of its steps' durations (a step that waits, waits for
 * another step), a transfer lasts at most d plus its flight (<= d) and a
 * combine c, and no algorithm has more than 2 n^2 transfers and n^2
 * combines per block (ring's allreduce: 2(n-1) rounds of n): every time
 * stays below 4 n^2 blocks (d + c). */
static trd_status check_range(const trd_params *p)
{
    double d = fmax(p->d, p->far_d), c = p->c;
    if (p->costs) { /* the largest of the bases: every step costs at most that */
        const trd_costs *k = p->costs;
        for (int64_t i = 0; k->dmat && i < p->n * p->n; i++)
            d = fmax(d, k->dmat[i]);
        for (int64_t i = 0; k->cvec && i < p->n; i++)
            c = fmax(c, k->cvec[i]);
    }
    double n = (double)p->n, bound = 4.0 * n * n * (double)p->segments * (d + c);
    if (bound <= TIME_MAX)
        return TRD_OK;
    return trd_fail(TRD_EINVAL, "d = %g and c = %g are too large for n = %lld ranks and %lld "
                    "segment%s: the plan's times could overflow (keep 4 n^2 segments (d + c) "
                    "below %.3g)", d, c, (long long)p->n, (long long)p->segments,
                    p->segments == 1 ? "" : "s", TIME_MAX);
}

trd_status trd_plan_check_params(const trd_algo *algo, const trd_params *p)
{
    trd_status st = check_params(algo, p);
    trd_params whole = *p;
    whole.segments = p->segments > 1 ? p->segments : 1;
    return st == TRD_OK ? check_range(&whole) : st;
}

/* trd_lower_bound for the blocks the plan cuts its buffer into (an
 * exchange's own, or params.segments). */
static double block_bound(const trd_plan *plan)
{
    trd_params p = plan->params;
    p.segments = plan->blocks;
    return trd_lower_bound(&p);
}

/* Copies the evaluated tree into rank space and compiles the schedule. */
static trd_status fill_plan(trd_plan *plan, const trd_timing *t, const int32_t *rank)
{
    int32_t n = t->n;
    plan->parent = malloc((size_t)n * sizeof *plan->parent);
    plan->send_start = malloc((size_t)n * sizeof *plan->send_start);
    if (!plan->parent || !plan->send_start)
        return trd_fail(TRD_ENOMEM, "plan: out of memory for n = %ld", (long)n);
    bool evaluated = plan->timed && evaluator_model(&plan->params); /* its times are the plan's */
    for (int32_t pos = 0; pos < n; pos++) {
        plan->send_start[rank[pos]] = evaluated ? t->send_start[pos] : NAN;
        plan->parent[rank[pos]] = -1;
    }
    for (int32_t v = 0; v < n; v++)
        for (int32_t e = t->first[v]; e < t->first[v + 1]; e++)
            plan->parent[rank[t->child[e]]] = rank[v];
    plan->lower_bound = block_bound(plan);
    plan->upper_bound = plan->algo->upper_bound && plan->timed && !plan->params.costs
                            ? plan->algo->upper_bound(&plan->params) : NAN; /* homogeneous */
    return trd_schedule_build(plan, t, rank);
}

/* Whether a tree plan of p is evaluated under p->costs: its positions
 * must then be its ranks rotated by the root, which a non-commutative
 * numbering is not (that one depends on the evaluation's receive order). */
static bool evaluated_under_costs(const trd_algo *a, const trd_params *p)
{
    return p->costs && ((a->caps & TRD_CAP_COSTS) || !p->noncommutative);
}

/* Builds, evaluates and (unless makespan_only) numbers and compiles a
 * tree plan.  With heterogeneous costs, the tree is evaluated under them
 * (receives in the order the senders become ready there), except a
 * non-commutative one of a homogeneous planner: that one is evaluated
 * under its d, c, and timed under the costs by the simulator. */
static trd_status build_tree_plan(trd_plan *plan, bool makespan_only)
{
    int32_t n = (int32_t)plan->params.n;
    trd_tree tree = {.n = n, .parent = malloc((size_t)n * sizeof(int32_t))};
    int32_t *rank = malloc((size_t)n * sizeof *rank);
    trd_timing timing = {0};
    trd_cost_view costs = evaluated_under_costs(plan->algo, &plan->params)
                              ? trd_plan_cost_view(&plan->params)
                              : trd_view_homogeneous(plan->params.d, plan->params.c);
    trd_status st = TRD_OK;
    if (!tree.parent || !rank) {
        st = trd_fail(TRD_ENOMEM, "plan: out of memory for n = %ld", (long)n);
        goto done;
    }
    if ((st = plan->algo->build(&plan->params, &tree)) != TRD_OK ||
        (st = trd_evaluate_costs(&tree, &costs, &timing)) != TRD_OK)
        goto done;
    plan->makespan = timing.makespan;
    if (makespan_only && plan->timed && evaluator_model(&plan->params))
        goto done; /* the evaluator's makespan is the plan's: no programs needed */
    if ((st = trd_number_ranks(&timing, plan->params.root, plan->params.noncommutative,
                               rank)) != TRD_OK)
        goto done;
    st = fill_plan(plan, &timing, rank);
done:
    free(tree.parent);
    free(tree.release);
    free(tree.seq);
    free(rank);
    trd_timing_free(&timing);
    return st;
}

/* An exchange algorithm: its own programs; no tree (parent -1 everywhere). */
static trd_status build_exchange_plan(trd_plan *plan)
{
    size_t n = (size_t)plan->params.n;
    plan->parent = malloc(n * sizeof *plan->parent);
    plan->send_start = malloc(n * sizeof *plan->send_start);
    if (!plan->parent || !plan->send_start)
        return trd_fail(TRD_ENOMEM, "plan: out of memory for n = %zu", n);
    for (size_t r = 0; r < n; r++) {
        plan->parent[r] = -1;
        plan->send_start[r] = NAN;
    }
    plan->upper_bound = NAN;
    trd_status st = plan->algo->schedule(plan);
    plan->lower_bound = block_bound(plan); /* the schedule chose the blocks */
    return st;
}

/* The segment count (params.segments, else the algorithm's choice), the
 * programs, and the makespan: the tree evaluator's for an unsegmented tree
 * reduce in its model (evaluator_model; under params.costs when there are some, unless a
 * non-commutative numbering keeps them out of the evaluator), the
 * simulator's (same engine, constant costs) otherwise. */
static trd_status build_plan(trd_plan *plan, bool makespan_only, bool fuse)
{
    trd_params *p = &plan->params;
    const trd_algo *a = plan->algo;
    if (p->segments == 0)
        p->segments = a->segments ? a->segments(p) : 1;
    trd_status st = check_range(p);
    if (st != TRD_OK)
        return st;
    plan->blocks = (int32_t)p->segments;
    plan->timed = a->build && plan->blocks == 1 && !p->allreduce &&
                  (!p->costs || evaluated_under_costs(a, p));
    st = a->build ? build_tree_plan(plan, makespan_only) : build_exchange_plan(plan);
    if (st == TRD_OK && fuse && plan->steps) /* every plan seen runs fused (plan/fuse.c) */
        st = trd_fuse_plan((size_t)p->n, plan->step_first, &plan->steps, plan->blocks);
    if (st == TRD_OK && !(plan->timed && evaluator_model(p)))
        plan->makespan = NAN; /* the simulator's (src/sim/plan_makespan.c) */
    return st;
}

/* The checked path shared by trd_plan_build and trd_plan_create_unfused. */
static trd_status new_plan(trd_plan **out, const char *algo_name,
                           const trd_params *params, bool makespan_only, bool fuse)
{
    size_t index;
    trd_status st;
    if (out)
        *out = NULL; /* on every failure, including a NULL params */
    if (!out || !params)
        return trd_fail(TRD_EINVAL, "treduce: NULL argument");
    if ((st = trd_algo_find(algo_name, &index)) != TRD_OK)
        return st;
    const trd_algo *algo = trd_algo_entry(index);
    if (algo->kind == TRD_KIND_DYNAMIC)
        return trd_fail(TRD_EUNSUPPORTED, "%s is a dynamic algorithm: it pairs ranks at run "
                        "time and has no static plan (simulate or run it instead)", algo->name);
    if ((st = check_params(algo, params)) != TRD_OK)
        return st;
    trd_plan *plan = calloc(1, sizeof *plan);
    if (!plan)
        return trd_fail(TRD_ENOMEM, "treduce: out of memory");
    plan->algo = algo;
    plan->params = *params;
    /* One truth inside a plan: the tree builders read allreduce. */
    plan->params.collective = trd_params_collective(params);
    plan->params.allreduce = plan->params.collective == TRD_COLL_ALLREDUCE;
    if ((st = build_plan(plan, makespan_only, fuse)) != TRD_OK) {
        trd_plan_free(plan);
        return st;
    }
    *out = plan;
    return TRD_OK;
}

trd_status trd_plan_create(trd_plan **out, const char *algo_name, const trd_params *params)
{
    return new_plan(out, algo_name, params, false, true);
}

trd_status trd_plan_build(trd_plan **out, const char *algo_name, const trd_params *params,
                          bool makespan_only)
{
    return new_plan(out, algo_name, params, makespan_only, true);
}

trd_status trd_plan_create_unfused(trd_plan **out, const char *algo_name,
                                   const trd_params *params)
{
    return new_plan(out, algo_name, params, false, false);
}

/* Lemma 5 and the heterogeneous bound treat the buffer as indivisible.  A
 * plan cut into B blocks is bounded per block instead: whatever the
 * schedule, one block must still be reduced over the same levels, each a
 * transfer or a combine of at least one block (latency + (d - latency)/B,
 * combine_fixed + (c - combine_fixed)/B; costs scaled by 1/B). */
double trd_lower_bound(const trd_params *params)
{
    double blocks = params->segments > 1 ? (double)params->segments : 1.0;
    if (!params->costs) {
        trd_params block = *params;
        block.d = params->latency + (params->d - params->latency) / blocks;
        block.c = params->combine_fixed + (params->c - params->combine_fixed) / blocks;
        return trd_bound_lemma5(&block);
    }
    if (trd_costs_n(params->costs) != params->n || params->root < 0 ||
        params->root >= params->n)
        return NAN;
    trd_cost_view costs = trd_plan_cost_view(params);
    return trd_bound_hetero(&costs, (int32_t)params->n) / blocks;
}

const char *trd_plan_algo(const trd_plan *plan) { return plan->algo->name; }
/* Of a transfer's flight, the part its copy outlasts counts too: a
 * receiver that waited a whole segment's copy has lost its core and must
 * be woken (where ranks outnumber cores a pipeline's per-segment hops cost
 * more than its latency, docs/RUNTIME_INTERNALS.md, "Prediction"), while
 * a small message's flight is the receiver idly waiting. */
double trd_transfer_work(const trd_params *p, double share)
{
    double copy = (p->d - p->latency) * share;
    return p->latency - p->flight + copy + (copy < p->flight ? copy : p->flight);
}

double trd_combine_work(const trd_params *p, double share)
{
    return p->combine_fixed + (p->c - p->combine_fixed) * share;
}

/* At the costs the simulator charges (src/sim/virtual.c transfer_cost,
 * combine_cost) for a step of rank r; COPY steps are free in the model.
 * Except a message combined on arrival: its SEND counts its whole copy,
 * where the simulator charges what recv_combine_saving leaves of it.
 * Charging that instead made `auto` pick a pipeline more often where
 * ranks outnumber cores, several times slower than the best at 64 KiB to
 * 16 MiB: the whole copy stands in for the wake-ups of a pipeline's
 * segments, which the model lacks. */
static double step_work(const trd_params *p, int32_t r, const trd_step *s, int32_t blocks)
{
    double share = (double)(s->blocks > 1 ? s->blocks : 1) / (double)blocks;
    const trd_costs *k = p->costs; /* then latency, combine_fixed, flight are 0 */
    if (s->kind == TRD_STEP_SEND || s->kind == TRD_STEP_SEND_INPUT)
        return k ? trd_costs_transfer_base(k, r, s->peer) * share : trd_transfer_work(p, share);
    if (s->kind == TRD_STEP_COMBINE || s->kind == TRD_STEP_RECV_COMBINE) /* its SEND: the move */
        return k ? trd_costs_combine_base(k, r) * share : trd_combine_work(p, share);
    return 0.0;
}

double trd_plan_work(const trd_plan *plan)
{
    double work = 0.0;
    for (int32_t r = 0; r < (int32_t)plan->params.n; r++)
        for (size_t i = plan->step_first[r]; i < plan->step_first[r + 1]; i++)
            work += step_work(&plan->params, r, &plan->steps[i], plan->blocks);
    return work;
}

double trd_plan_lower_bound(const trd_plan *plan) { return plan->lower_bound; }
double trd_plan_upper_bound(const trd_plan *plan) { return plan->upper_bound; }

/* The paper's bounds are for the homogeneous model, whole buffers and a
 * reduce: where one does not apply, the source says why. */
const char *trd_plan_upper_bound_source(const trd_plan *plan)
{
    const char *source = plan->algo->bound_source;
    if (!isnan(plan->upper_bound) || !strncmp(source, "none", 4))
        return source;
    if (plan->params.costs)
        return "none (heterogeneous costs)";
    if (plan->params.allreduce)
        return "none (allreduce)";
    if (plan->blocks > 1)
        return "none (segmented)";
    return "none";
}
