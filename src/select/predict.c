/* predict.c: the model's time for a call, and the `auto` algorithm.
 *
 * A prediction is the plan's makespan (the closed-form evaluator for an
 * unsegmented tree reduce, else the simulator running the same plan) or,
 * for a dynamic algorithm, one simulation with constant costs; then, when
 * the options give the platform's parallelism k, the share of the plan's
 * work that k cannot run at once is added (with_parallelism): the
 * simulator gives every rank a core and a memory path of its own, so on 8
 * ranks over 2 cores it would have a pipeline's 7 stages run at once,
 * which they cannot (docs/RUNTIME.md, "Calibration and prediction");
 * and, when the options give the node's bandwidth curve, the time its
 * memory streams lose sharing one bus (contention.c).
 *
 * `auto`: like SimGrid's automatic selector, it
 * predicts the time of every candidate for this very call - by the same
 * evaluator and simulator that predict a single run (trd_comm_predict) -
 * and keeps the fastest.  The candidates are the registered algorithms
 * that can run the call: the right kind (exchange algorithms only
 * coll, dynamic ones only reduce), the operator's commutativity, and
 * for a reproducible call no dynamic algorithm.  The choice is a pure
 * function of the arguments and the cost model, so every rank makes the
 * same one without talking to the others. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "plan/builders.h"
#include "plan/registry.h"
#include "ir/costs.h"
#include "select/contention.h"
#include "select/select.h"

/* A dynamic algorithm: one simulation with constant costs, the
 * heterogeneous ones when the call has them. */
static trd_status simulate_policy(const trd_comm_key *key, double *seconds)
{
    trd_costs *costs;
    const trd_costs *het = key->params.costs;
    trd_status st = trd_costs_create(&costs, key->params.n, TRD_DIST_CONST, key->params.d,
                                     key->params.c, 0.0);
    if (st == TRD_OK && het)
        st = trd_costs_copy_bases(costs, het);
    if (st == TRD_OK)
        st = trd_simulate(trd_algo_name(key->algo), &key->params, costs, TRD_PORT_FULL, 1, 0,
                          seconds);
    trd_costs_free(costs);
    return st;
}

/* The makespan t (every rank on a core of its own) on a platform that runs
 * only k of the n ranks' work at once.  Brent's bound T_k <= T_inf +
 * (W - T_inf) / k (a greedy schedule of work W and critical path T_inf
 * on k processors), scaled so that k = n gives back t and k = 1 the whole
 * work in sequence: the off-path work W - t is serialised in the share
 * (n/k - 1) / (n - 1).  k = 0: not modelled. */
static double with_parallelism(double t, double work, int64_t n, double k)
{
    if (!(k > 0) || k >= (double)n || !(work > t)) /* NaN t stays NaN */
        return t;
    return t + (work - t) * ((double)n / k - 1.0) / (double)(n - 1);
}

trd_status trd_comm_plan_call(trd_comm *c, int64_t count, const trd_op *op, int32_t root,
                              trd_collective coll, const trd_coll_opts *opts, trd_comm_key *key,
                              trd_plan **plan)
{
    void *acc;
    static unsigned char none[1];
    *plan = NULL;
    /* the checks of the call itself, with one stand-in buffer (in place) */
    trd_status st = trd_comm_check(c, none, none, count, op, root, coll, opts, key, &acc);
    if (st == TRD_OK && !trd_algo_is_dynamic(key->algo))
        st = trd_comm_plan(key, plan);
    return st;
}

trd_status trd_comm_predict(trd_comm *c, int64_t count, const trd_op *op, int32_t root,
                            trd_collective coll, const trd_coll_opts *opts, double *seconds)
{
    trd_comm_key key;
    trd_plan *plan;
    if (!seconds)
        return trd_fail(TRD_EINVAL, "predict: NULL argument (seconds)");
    trd_status st = trd_comm_plan_call(c, count, op, root, coll, opts, &key, &plan);
    if (st != TRD_OK)
        return st;
    const trd_params *p = &key.params;
    trd_coll_opts none;
    trd_coll_opts_init(&none);
    const trd_coll_opts *o = opts ? opts : &none;
    double work, late = 0.0, bytes = (double)count * (double)key.elem;
    if (!plan) {
        st = simulate_policy(&key, seconds);
        /* any tree: n - 1 transfers and combines of the whole buffer */
        work = (double)(p->n - 1) * (trd_transfer_work(p, 1.0) + trd_combine_work(p, 1.0));
        if (st == TRD_OK)
            late = trd_contention_tree(p, *seconds, bytes, o);
    } else {
        *seconds = trd_plan_makespan(plan);
        work = trd_plan_work(plan);
        late = trd_contention_plan(plan, *seconds, bytes, o);
        trd_plan_free(plan);
    }
    if (st == TRD_OK)
        *seconds = with_parallelism(*seconds, work, p->n, o->parallelism) + late;
    return st;
}

/* A candidate's predicted time to the picosecond: the same trees reached
 * by different sums differ in the last bits, and those are ties. */
static double rounded(const trd_candidate *c)
{
    return isfinite(c->predicted) ? nearbyint(c->predicted * 1e12) : c->predicted;
}

static bool dynamic(const trd_candidate *c)
{
    size_t i;
    return trd_algo_find(c->algo, &i) == TRD_OK && trd_algo_is_dynamic(i);
}

/* Fastest first; ties go to a static plan before a dynamic algorithm (the
 * model leaves out the latter's decisions: over MPI each is a round trip
 * to the coordinator), then to the first name: a fixed order on every
 * rank. */
static int by_time(const void *x, const void *y)
{
    const trd_candidate *a = x, *b = y;
    double ta = rounded(a), tb = rounded(b);
    if (ta != tb)
        return ta < tb ? -1 : 1;
    if (dynamic(a) != dynamic(b))
        return dynamic(a) ? 1 : -1;
    return strcmp(a->algo, b->algo);
}

/* TRD_EUNSUPPORTED when algorithm a's registry flags refuse this call
 * (the collective, the operator, reproducible mode, p ranks). */
static trd_status eligible(const trd_algo *a, trd_collective coll, const trd_op *op, int32_t p,
                           const trd_coll_opts *o)
{
    return trd_algo_fits(a, coll, !trd_op_is_commutative(op), o->reproducible, p)
               ? TRD_OK
               : TRD_EUNSUPPORTED;
}

/* opts->measure_model: the arguments checked first (a bad call measures
 * nothing), then the communicator's profile applied (trd_comm_measured_model). */
static trd_status measured_model(trd_comm *c, int64_t count, const trd_op *op, int32_t root,
                                 trd_collective coll, trd_coll_opts *o)
{
    if (!o->measure_model || o->reproducible || o->costs)
        return TRD_OK;
    static unsigned char none[1]; /* a stand-in buffer, as trd_comm_plan_call's */
    trd_status st = trd_comm_check_args(c, none, none, count, op, root, coll, o);
    return st == TRD_OK ? trd_comm_measured_model(c, op, count, o) : st;
}

trd_status trd_comm_explain(trd_comm *c, int64_t count, const trd_op *op, int32_t root,
                            trd_collective coll, const trd_coll_opts *opts, trd_candidate *out,
                            size_t *n)
{
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    if (opts)
        o = *opts;
    if (!c || !op || !out || !n)
        return trd_fail(TRD_EINVAL, "explain: NULL argument");
    trd_call_args key = trd_call_args_of(op, count, root, coll, &o); /* as called */
    trd_status st = measured_model(c, count, op, root, coll, &o);
    if (st != TRD_OK)
        return st;
    *n = trd_algo_count();
    for (size_t i = 0; i < *n; i++) {
        const trd_algo *a = trd_algo_entry(i);
        o.algo = a->name;
        out[i] = (trd_candidate){.algo = a->name, .predicted = INFINITY, .measured = NAN};
        out[i].status = eligible(a, coll, op, c->wire.size, &o);
        if (out[i].status == TRD_OK)
            out[i].status = trd_comm_predict(c, count, op, root, coll, &o,
                                             &out[i].predicted);
        if (out[i].status == TRD_OK && isnan(out[i].predicted))
            out[i].predicted = INFINITY; /* the simulation failed: considered last */
        if (out[i].status != TRD_OK) {
            if (out[i].status == TRD_EINVAL) /* bad arguments: not the algorithm's fault */
                return out[i].status;
            out[i].predicted = INFINITY;
        }
    }
    qsort(out, *n, sizeof *out, by_time);
    if (out[0].status != TRD_OK)
        return trd_fail(TRD_EUNSUPPORTED, "auto: no algorithm can run this call");
    if (o.tune > 0 && !o.reproducible) {
        const trd_tune_entry *e =
            c->select ? trd_tune_find(&trd_select_state_of(c)->tune, &key) : NULL;
        if (e)
            trd_tune_explain(e, out, *n);
    }
    trd_clear_error();
    return TRD_OK;
}
