/* plan_times.c: trd_plan_step_times and trd_plan_record.
 *
 * The times of a plan's steps are those of the run trd_plan_makespan
 * times (plan_makespan.c): the tree evaluator's, kept in the steps, where
 * it covers the plan; otherwise the simulator's, with the same constant
 * costs and port model, recorded here by a transport that wraps the
 * virtual one: the virtual transport notes when each step begins
 * (trd_virtual_trace), the wrapper when it ends.  A dynamic algorithm's
 * run is recorded the same way, step by step as its policy posts them,
 * and written down as a custom plan (src/plan/custom.c): what one run of
 * it did, drawn and printed like any plan. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "plan/builders.h"
#include "sim/sim.h"

/* One step as it ran: its rank, the step (a RECV's peer known once it
 * arrived), and its times. */
typedef struct ran {
    int32_t rank;
    trd_step step;
} ran;

/* The recording transport: the virtual one inside; for a static engine
 * the times by plan order (slot = id), for a dynamic one the steps in
 * the order they were posted (slot = the post's number). */
typedef struct recorder {
    trd_transport inner;
    trd_virtual *virt;
    double *start, *end; /* by slot */
    int32_t *slot_of;    /* dynamic: by id, the slot of its latest post; NULL: static */
    ran *steps;          /* dynamic: by slot */
    int32_t len, cap;    /* dynamic: slots used, allocated */
} recorder;

static trd_status grow(recorder *w)
{
    int32_t cap = w->cap ? 2 * w->cap : 64;
    ran *steps = realloc(w->steps, (size_t)cap * sizeof *steps);
    if (steps)
        w->steps = steps;
    double *start = steps ? realloc(w->start, (size_t)cap * sizeof *start) : NULL;
    if (start)
        w->start = start;
    double *end = start ? realloc(w->end, (size_t)cap * sizeof *end) : NULL;
    if (!end)
        return trd_fail(TRD_ENOMEM, "plan times: out of memory for %ld steps", (long)cap);
    w->end = end;
    w->cap = cap;
    return TRD_OK;
}

static trd_status rec_post(void *ctx, int32_t rank, int32_t id, const trd_step *s)
{
    recorder *w = ctx;
    if (w->slot_of) {
        trd_status st = w->len == w->cap ? grow(w) : TRD_OK;
        if (st != TRD_OK)
            return st;
        w->steps[w->len] = (ran){.rank = rank, .step = *s};
        w->slot_of[id] = w->len++;
    }
    return w->inner.post(w->inner.ctx, rank, id, s);
}

static trd_status rec_wait(void *ctx, int32_t *rank, int32_t *id, int32_t *from)
{
    recorder *w = ctx;
    trd_status st = w->inner.wait_any(w->inner.ctx, rank, id, from);
    if (st != TRD_OK)
        return st;
    int32_t k = w->slot_of ? w->slot_of[*id] : *id;
    w->start[k] = w->virt->started[*id];
    w->end[k] = w->virt->now;
    if (w->slot_of && w->steps[k].step.kind == TRD_STEP_RECV)
        w->steps[k].step.peer = *from; /* it received from any rank */
    return TRD_OK;
}

/* Runs engine once in the simulator under p's constant costs, one-port
 * full duplex (as trd_plan_simulate_makespan), through the recorder w;
 * *makespan and *result_rank (optional) as trd_sim_run's. */
static trd_status record_run(const trd_params *p, trd_engine *engine, recorder *w,
                             double *makespan, int32_t *result_rank)
{
    trd_costs costs = trd_plan_constant_costs(p);
    trd_virtual virt = {0};
    trd_status st = trd_virtual_init(&virt, (int32_t)p->n, TRD_PORT_FULL, &costs);
    if (st == TRD_OK)
        st = trd_virtual_set_nodes(&virt, p->node_of, p->far_d, p->far_latency);
    if (st == TRD_OK)
        st = trd_virtual_trace(&virt);
    if (st == TRD_OK) {
        trd_virtual_reset(&virt, 0, 0);
        w->inner = trd_virtual_transport(&virt);
        w->virt = &virt;
        trd_transport t = {.ctx = w, .post = rec_post, .wait_any = rec_wait,
                           .now = trd_transport_inner_now,
                           .attach = trd_transport_inner_attach};
        st = trd_engine_run(engine, &t, result_rank);
        *makespan = virt.now;
    }
    if (virt.ranks)
        trd_virtual_destroy(&virt);
    return st;
}

trd_status trd_plan_step_times(const trd_plan *plan, double *start, double *end)
{
    if (!plan || !start || !end)
        return trd_fail(TRD_EINVAL, "plan times: NULL argument");
    size_t total = trd_plan_total_steps(plan);
    if (plan->timed && !isnan(plan->makespan)) { /* the evaluator's, or a recorded run */
        for (size_t k = 0; k < total; k++) {
            start[k] = plan->steps[k].start;
            end[k] = plan->steps[k].end;
        }
        return TRD_OK;
    }
    trd_engine *engine = NULL;
    const trd_params *p = trd_plan_params(plan);
    trd_status st = trd_engine_create(&engine, plan, (int32_t)p->n, NULL);
    /* the engine's ids are the plan's steps in rank order (engine.h) */
    recorder w = {.start = start, .end = end};
    double makespan;
    if (st == TRD_OK)
        st = record_run(p, engine, &w, &makespan, NULL);
    trd_engine_free(engine);
    return st;
}

/* Rank r's recorded steps, in the order they ran, as its program: each
 * after the one before (a policy gives a rank its next step once the
 * last is done), a RECV's side fixed, the times kept. */
static trd_status write_programs(const recorder *w, int32_t n, size_t **first_out,
                                 trd_step **steps_out)
{
    size_t *first = calloc((size_t)n + 1, sizeof *first);
    trd_step *steps = malloc(((size_t)w->len + 1) * sizeof *steps);
    if (!first || !steps) {
        free(first);
        free(steps);
        return trd_fail(TRD_ENOMEM, "plan: out of memory for a recorded run of %ld ranks",
                        (long)n);
    }
    for (int32_t k = 0; k < w->len; k++)
        first[w->steps[k].rank + 1]++;
    for (int32_t r = 0; r < n; r++)
        first[r + 1] += first[r];
    size_t *next = calloc((size_t)n, sizeof *next);
    if (!next) {
        free(first);
        free(steps);
        return trd_fail(TRD_ENOMEM, "plan: out of memory for a recorded run");
    }
    for (int32_t k = 0; k < w->len; k++) {
        int32_t r = w->steps[k].rank;
        size_t i = next[r]++;
        trd_step s = w->steps[k].step;
        s.dep[0] = i > 0 ? (int32_t)i - 1 : -1;
        s.dep[1] = -1;
        s.start = w->start[k];
        s.end = w->end[k];
        steps[first[r] + i] = s;
    }
    free(next);
    *first_out = first;
    *steps_out = steps;
    return TRD_OK;
}

/* The tree of a recorded run: each rank's one SEND names its parent. */
static void write_tree(trd_plan *plan)
{
    for (int32_t r = 0; r < (int32_t)plan->params.n; r++) {
        plan->parent[r] = -1;
        plan->send_start[r] = NAN;
        for (size_t i = 0; i < trd_plan_step_count(plan, r); i++) {
            const trd_step *s = trd_plan_step(plan, r, i);
            if (s->kind == TRD_STEP_SEND) {
                plan->parent[r] = s->peer;
                plan->send_start[r] = s->start;
            }
        }
    }
}

/* One run of dynamic algorithm a for p, as a plan. */
static trd_status record_dynamic(trd_plan **out, const trd_algo *a, const trd_params *p)
{
    trd_sim sim;
    trd_costs model = trd_plan_constant_costs(p);
    trd_status st = trd_sim_init(&sim, a->name, p, &model, TRD_PORT_FULL);
    if (st != TRD_OK)
        return st;
    recorder w = {.slot_of = malloc(2 * (size_t)p->n * sizeof *w.slot_of)};
    double makespan = NAN;
    int32_t result = 0;
    st = w.slot_of ? record_run(p, sim.engine, &w, &makespan, &result)
                   : trd_fail(TRD_ENOMEM, "plan: out of memory for n = %lld", (long long)p->n);
    trd_sim_destroy(&sim);
    size_t *first = NULL;
    trd_step *steps = NULL;
    if (st == TRD_OK)
        st = write_programs(&w, (int32_t)p->n, &first, &steps);
    free(w.slot_of);
    free(w.steps);
    free(w.start);
    free(w.end);
    if (st != TRD_OK)
        return st;
    trd_params q = *p;
    q.root = result;
    q.segments = 1;
    if ((st = trd_plan_custom(out, a, &q, first, steps, makespan)) != TRD_OK)
        return st;
    trd_plan *plan = *out;
    plan->timed = true;
    plan->lower_bound = trd_lower_bound(&plan->params);
    plan->upper_bound = a->upper_bound && !p->costs ? a->upper_bound(&plan->params) : NAN;
    write_tree(plan);
    return TRD_OK;
}

trd_status trd_plan_record(trd_plan **out, const char *algo, const trd_params *params)
{
    size_t index;
    trd_status st;
    if (out)
        *out = NULL;
    if (!out || !params)
        return trd_fail(TRD_EINVAL, "treduce: NULL argument");
    if ((st = trd_algo_find(algo, &index)) != TRD_OK)
        return st;
    const trd_algo *a = trd_algo_entry(index);
    if (a->kind != TRD_KIND_DYNAMIC)
        return trd_plan_create(out, algo, params);
    if (params->root != 0)
        return trd_fail(TRD_EINVAL, "%s decides at run time which rank ends with the result: "
                        "root = %lld cannot be asked for (the runtime moves the result there "
                        "after the run)", a->name, (long long)params->root);
    if (params->segments > 1)
        return trd_fail(TRD_EINVAL, "%s sends whole buffers: segments = %lld does not apply",
                        a->name, (long long)params->segments);
    if ((st = trd_plan_check_params(a, params)) != TRD_OK)
        return st;
    return record_dynamic(out, a, params);
}
