/* test_trace.c: the simulator and the runtime run one schedule (the
 * simulator runs exactly what runs: docs/ARCHITECTURE.md).
 *
 * For every static algorithm of the registry, p = 2..5 (and 6 for star's
 * p = n!), unsegmented and in 3 segments, reduce and allreduce, a call
 * runs on the threads wire with every rank's executor logging each step
 * it reports done (runtime/exec.h trd_exec_log): its index in the rank's
 * program and the work the executor observed for it by then (the wire
 * finished its bytes, a combine ran, a copy ran).  The same plan (the one
 * the call cached) then runs in the virtual transport, under a wrapper
 * that logs each rank's completions in the order the simulator hands them
 * out.  Per rank, the test asserts:
 *   - both logs hold every step of the program exactly once;
 *   - each executed step did exactly the work the simulator charges its
 *     kind (src/sim/virtual.c post_step: SEND and RECV a transfer,
 *     COMBINE a combine, COPY nothing but the copy, RECV_COMBINE a
 *     transfer then a combine): a step the executor rewrote - a combine
 *     done inside another step, a send reported done before its bytes
 *     left - shows as other work;
 *   - in both logs every step comes after the steps it depends on.
 * The order itself is compared as the multiset plus the dependency order,
 * not as one sequence: steps of a rank that do not depend on each other
 * (a SEND and a RECV posted together) complete in the order the threads
 * happen to finish them, which no simulator can predict; what both must
 * agree on is which steps exist, what each does, and what waits for what.
 * The same is checked for a call through trd_comm_run_plan, in place
 * (the executor then has no separate input to read: other landing paths). */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "plan/builders.h"
#include "runtime/comm.h"
#include "runtime_util.h"
#include "sim/virtual.h"

#define COUNT 3000 /* elements: every block of every plan below has some */

/* The work the simulator charges a step of kind k (virtual.c post_step). */
static unsigned charged(int k)
{
    switch (k) {
    case TRD_STEP_SEND:
    case TRD_STEP_SEND_INPUT:
    case TRD_STEP_RECV:
        return TRD_WORK_MOVED;
    case TRD_STEP_COMBINE:
        return TRD_WORK_COMBINED;
    case TRD_STEP_COPY:
        return TRD_WORK_COPIED;
    default:
        return TRD_WORK_MOVED | TRD_WORK_COMBINED;
    }
}

/* The virtual transport under a wrapper that logs completions per rank. */
typedef struct sim_log {
    trd_transport inner;
    const trd_engine *engine;
    trd_exec_log *rank; /* one per rank */
} sim_log;

static trd_status sim_post(void *ctx, int32_t rank, int32_t id, const trd_step *s)
{
    sim_log *w = ctx;
    return w->inner.post(w->inner.ctx, rank, id, s);
}

static trd_status sim_wait(void *ctx, int32_t *rank, int32_t *id, int32_t *from)
{
    sim_log *w = ctx;
    trd_status st = w->inner.wait_any(w->inner.ctx, rank, id, from);
    if (st != TRD_OK)
        return st;
    trd_exec_log *g = &w->rank[*rank];
    if (g->len == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 64;
        g->step = realloc(g->step, (size_t)g->cap * sizeof *g->step);
        g->work = realloc(g->work, (size_t)g->cap);
        if (!g->step || !g->work)
            return trd_fail(TRD_ENOMEM, "test: out of memory");
    }
    g->step[g->len] = *id - trd_engine_first_id(w->engine, *rank);
    g->work[g->len++] = 0; /* filled from the kind by compare() */
    return TRD_OK;
}

/* Runs plan in the simulator under its own d, c; logs[r] per rank. */
static void simulate(const trd_plan *plan, trd_exec_log *logs)
{
    const trd_params *p = trd_plan_params(plan);
    trd_costs costs = {.n = p->n, .dist = TRD_DIST_CONST, .mean_d = p->d, .mean_c = p->c,
                       .draw = TRD_DRAW_ONE};
    trd_engine *engine = NULL;
    trd_virtual virt = {0};
    assert_int_equal(trd_engine_create(&engine, plan, (int32_t)p->n, NULL), TRD_OK);
    assert_int_equal(trd_virtual_init(&virt, (int32_t)p->n, TRD_PORT_FULL, &costs), TRD_OK);
    trd_virtual_reset(&virt, 0, 0);
    sim_log w = {.inner = trd_virtual_transport(&virt), .engine = engine, .rank = logs};
    trd_transport t = {.ctx = &w, .post = sim_post, .wait_any = sim_wait,
                       .now = trd_transport_inner_now,
                       .attach = trd_transport_inner_attach};
    TU_CHECK(trd_engine_run(engine, &t, NULL) == TRD_OK, "simulation: %s", trd_errmsg());
    trd_virtual_destroy(&virt);
    trd_engine_free(engine);
}

/* Each step of rank r's program once in g, after its deps. */
static void check_order(const trd_plan *plan, int32_t r, const trd_exec_log *g,
                        const char *what, const char *side)
{
    size_t n = trd_plan_step_count(plan, r);
    int32_t *pos = malloc((n + 1) * sizeof *pos);
    assert_non_null(pos);
    for (size_t i = 0; i < n; i++)
        pos[i] = -1;
    TU_CHECK((size_t)g->len == n, "%s rank %d: the %s completed %d steps of %zu", what, r,
             side, g->len, n);
    for (int32_t k = 0; k < g->len; k++) {
        int32_t i = g->step[k];
        TU_CHECK(i >= 0 && (size_t)i < n && pos[i] < 0, "%s rank %d: the %s completed step "
                 "%d twice or out of the program", what, r, side, i);
        pos[i] = k;
    }
    for (size_t i = 0; i < n; i++)
        for (int d = 0; d < 2; d++) {
            int32_t dep = trd_plan_step(plan, r, i)->dep[d];
            TU_CHECK(dep < 0 || pos[dep] < pos[i], "%s rank %d: the %s completed step %zu "
                     "before its dependency %d", what, r, side, i, dep);
        }
    free(pos);
}

/* The runtime's logs against the simulator's, rank by rank. */
static void compare(const trd_plan *plan, trd_exec_log *run, const char *what)
{
    int32_t p = (int32_t)trd_plan_params(plan)->n;
    trd_exec_log *sim = calloc((size_t)p, sizeof *sim);
    assert_non_null(sim);
    simulate(plan, sim);
    for (int32_t r = 0; r < p; r++) {
        check_order(plan, r, &sim[r], what, "simulator");
        check_order(plan, r, &run[r], what, "runtime");
        for (int32_t k = 0; k < run[r].len; k++) {
            int kind = trd_plan_step(plan, r, (size_t)run[r].step[k])->kind;
            TU_CHECK(run[r].work[k] == charged(kind), "%s rank %d step %d (kind %d): the "
                     "executor did work %u, the simulator charges %u", what, r,
                     run[r].step[k], kind, run[r].work[k], charged(kind));
        }
        free(sim[r].step);
        free(sim[r].work);
    }
    free(sim);
}

typedef struct call {
    const char *algo;
    int32_t m;         /* segments asked for */
    bool allreduce;
    bool in_place;     /* through trd_comm_run_plan */
    const trd_plan *plan; /* in_place: the plan to run */
    trd_op *op;
    rt_log log;
} call;

static trd_status rank_call(trd_comm *c, int32_t rank, void *ctx)
{
    call *k = ctx;
    double *in = malloc(COUNT * sizeof *in), *out = malloc(COUNT * sizeof *out);
    if (!in || !out)
        return trd_fail(TRD_ENOMEM, "test: out of memory");
    for (int64_t e = 0; e < COUNT; e++)
        in[e] = (double)(rank * COUNT + e);
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = k->algo;
    o.segment_bytes = COUNT * (int64_t)sizeof(double) / k->m;
    trd_status st = k->in_place ? trd_comm_run_plan(c, k->plan, in, COUNT, k->op)
                    : k->allreduce ? trd_allreduce(c, in, out, COUNT, k->op, &o)
                                   : trd_reduce(c, in, out, COUNT, k->op, 0, &o);
    free(in);
    free(out);
    return st;
}

static void clear_logs(trd_exec_log *logs, int32_t p)
{
    for (int32_t r = 0; r < p; r++)
        logs[r].len = 0;
}

/* One call on comm[0..p-1]; false when the algorithm refuses it. */
static bool run_call(trd_comm **comm, int32_t p, call *k, trd_exec_log *logs)
{
    rt_result res;
    clear_logs(logs, p);
    rt_run_on(comm, p, rank_call, k, &res);
    if (res.status[0] == TRD_EUNSUPPORTED || res.status[0] == TRD_EINVAL)
        return false; /* exchange reduce, star's p, ... */
    for (int32_t r = 0; r < p; r++)
        TU_CHECK(res.status[r] == TRD_OK, "%s p=%d rank %d: %s", k->algo, p, r, res.msg[r]);
    return true;
}

static void trace_algorithm(trd_comm **comm, int32_t p, trd_exec_log *logs, size_t a,
                            trd_op *op, int64_t *cases)
{
    for (int32_t m = 1; m <= 3; m += 2)
        for (int all = 0; all < 2; all++) {
            call k = {.algo = trd_algo_name(a), .m = m, .allreduce = all, .op = op};
            char what[96];
            snprintf(what, sizeof what, "%s p=%d m=%d %s", k.algo, p, m,
                     all ? "allreduce" : "reduce");
            if (!run_call(comm, p, &k, logs))
                continue;
            const trd_plan *plan = comm[0]->cache.plan; /* every rank's key is the same */
            TU_CHECK(plan != NULL, "%s: no cached plan", what);
            compare(plan, logs, what);
            trd_plan *own = NULL; /* the cache goes with the next call: a copy */
            assert_int_equal(trd_plan_create(&own, k.algo, trd_plan_params(plan)), TRD_OK);
            k.in_place = true;
            k.plan = own;
            strncat(what, " in place", sizeof what - strlen(what) - 1);
            TU_CHECK(run_call(comm, p, &k, logs), "%s: refused", what);
            compare(own, logs, what);
            trd_plan_free(own);
            ++*cases;
        }
}

static void test_simulated_is_executed(void **state)
{
    (void)state;
    trd_op *op = NULL;
    assert_int_equal(trd_op_builtin(&op, TRD_OP_SUM, TRD_DOUBLE), TRD_OK);
    int64_t cases = 0;
    for (int32_t p = 2; p <= 6; p++) {
        trd_comm *comm[RT_MAX_P];
        trd_exec_log logs[RT_MAX_P] = {{0}};
        trd_threads_opts o = rt_topts(20.0);
        rt_comms_create(comm, p, &o);
        for (int32_t r = 0; r < p; r++)
            assert_int_equal(trd_test_log_steps(comm[r], &logs[r]), TRD_OK);
        for (size_t a = 0; a < trd_algo_count(); a++)
            if (trd_algo_kind_of(a) != TRD_KIND_DYNAMIC &&
                (p < 6 || !strncmp(trd_algo_name(a), "star", 4)))
                trace_algorithm(comm, p, logs, a, op, &cases);
        rt_comms_free(comm, p);
        for (int32_t r = 0; r < p; r++) {
            free(logs[r].step);
            free(logs[r].work);
        }
    }
    trd_op_free(op);
    TU_CHECK(cases > 100, "only %lld cases ran", (long long)cases);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_simulated_is_executed)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
