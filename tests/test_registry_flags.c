/* test_registry_flags.c: every registry row's flags (src/plan/registry.def)
 * are what the planner and the runtime do, row by row, checked against an
 * independent oracle rather than the flags themselves:
 *   - commutative-only: a plan for a non-commutative operator and a real
 *     call with one (2x2 matrix products, 6 threads) are refused; a row
 *     without the flag gives the rank-order product (trd_matrix2x2_expected);
 *   - uses-K: K = 0 is refused (a K >= 1 is needed), else ignored;
 *   - needs costs: a plan without heterogeneous costs is refused;
 *   - needs p = n!: p = 5 is refused, p = 6 = 3! planned;
 *   - reads nodes: a node map changes the programs of a row with the flag
 *     and of no other;
 *   - the collectives: a row refuses those it does not run (exchange rows a
 *     reduce, dynamic rows an allreduce, reduce-scatter and scan rows both).
 * Order-determinism (reproducible) is test_reproducible's: every row with
 * the flag bitwise equal over runs with random delays, every other refused. */
#include "testutil.h"
#include "ir/plan_layout.h" /* trd_plan_same_programs */

#define P 6
#define COUNT 33

/* The first collective row i runs (trd_collective order): a reduce for
 * the trees and the dynamic rows, an allreduce for the exchanges, else
 * the row's own (reduce-scatter, scan). */
static trd_collective collective_for(size_t i)
{
    trd_collective c = TRD_COLL_REDUCE;
    while (c < TRD_COLL_EXSCAN && !trd_algo_runs(i, c))
        c = (trd_collective)(c + 1);
    return c;
}

static trd_params params_for(size_t i, int64_t n)
{
    trd_params prm;
    trd_params_init(&prm);
    prm.n = n;
    prm.collective = collective_for(i);
    prm.K = trd_algo_uses_k(i) ? 2 : 0;
    prm.costs = trd_algo_uses_costs(i) ? tu_costs(n, 1.0, 1.0, 1) : NULL;
    return prm;
}

static trd_status plan_status(size_t i, const trd_params *prm)
{
    trd_plan *plan = NULL;
    trd_status st = trd_plan_create(&plan, trd_algo_name(i), prm);
    trd_plan_free(plan);
    return st;
}

/* reads-nodes: a node map of 2 nodes of P/2 ranks changes the programs
 * of a row with the flag and no other (their programs ignore it). */
static void check_nodes_flag(size_t i)
{
    int32_t node_of[P];
    for (int32_t r = 0; r < P; r++)
        node_of[r] = r / (P / 2);
    trd_params prm = params_for(i, P);
    trd_plan *flat = NULL, *nodes = NULL;
    trd_status a = trd_plan_create(&flat, trd_algo_name(i), &prm);
    prm.node_of = node_of;
    trd_status b = trd_plan_create(&nodes, trd_algo_name(i), &prm);
    TU_CHECK(a == TRD_OK && b == TRD_OK, "%s, with and without nodes: %s, %s",
             trd_algo_name(i), trd_strerror(a), trd_strerror(b));
    if (a == TRD_OK && b == TRD_OK)
        TU_CHECK(trd_plan_same_programs(flat, nodes) == !trd_algo_uses_nodes(i),
                 "%s: a node map %s its programs", trd_algo_name(i),
                 trd_algo_uses_nodes(i) ? "does not change" : "changes");
    trd_plan_free(flat);
    trd_plan_free(nodes);
}

/* The static rows' flags, at plan time. */
static void test_plan_flags(void **state)
{
    (void)state;
    for (size_t i = 0; i < trd_algo_count(); i++) {
        const char *name = trd_algo_name(i);
        if (trd_algo_is_dynamic(i))
            continue; /* no static plan: test_call_flags */
        trd_params prm = params_for(i, P);
        TU_CHECK(plan_status(i, &prm) == TRD_OK, "%s p = %d: %s", name, P, trd_errmsg());
        prm.noncommutative = true;
        trd_status st = plan_status(i, &prm);
        TU_CHECK(st == (trd_algo_commutative_only(i) ? TRD_EUNSUPPORTED : TRD_OK),
                 "%s, non-commutative: %s (%s)", name, trd_strerror(st), trd_errmsg());
        prm = params_for(i, P);
        prm.K = 0;
        st = plan_status(i, &prm);
        TU_CHECK(st == (trd_algo_uses_k(i) ? TRD_EINVAL : TRD_OK), "%s, K = 0: %s", name,
                 trd_strerror(st));
        prm = params_for(i, P);
        prm.costs = NULL;
        st = plan_status(i, &prm);
        TU_CHECK(st == (trd_algo_uses_costs(i) ? TRD_EUNSUPPORTED : TRD_OK),
                 "%s, no costs: %s", name, trd_strerror(st));
        prm = params_for(i, 5);
        st = plan_status(i, &prm);
        TU_CHECK(st == (trd_algo_needs_factorial_p(i) ? TRD_EUNSUPPORTED : TRD_OK),
                 "%s, p = 5: %s (%s)", name, trd_strerror(st), trd_errmsg());
        check_nodes_flag(i);
        prm = params_for(i, P);
        prm.collective = TRD_COLL_REDUCE;
        st = plan_status(i, &prm);
        TU_CHECK(st == (trd_algo_runs(i, TRD_COLL_REDUCE) ? TRD_OK : TRD_EUNSUPPORTED),
                 "%s, reduce: %s", name, trd_strerror(st));
    }
}

typedef struct call_ctx {
    size_t algo;
    bool allreduce;
    const trd_costs *costs;
    trd_status st[P];
    trd_matrix2x2 out[P][COUNT];
} call_ctx;

/* One call of algorithm x->algo with the matrix product (root P - 1). */
static trd_status call_rank(trd_comm *comm, void *arg)
{
    call_ctx *x = arg;
    int r = trd_comm_rank(comm);
    trd_matrix2x2 in[COUNT];
    trd_matrix2x2_fill(in, COUNT, r);
    trd_op *mat;
    trd_op_matrix2x2(&mat);
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = trd_algo_name(x->algo);
    o.costs = x->costs;
    o.K = 2;
    x->st[r] = x->allreduce ? trd_allreduce(comm, in, x->out[r], COUNT, mat, &o)
                            : trd_reduce(comm, in, x->out[r], COUNT, mat, P - 1, &o);
    trd_op_free(mat);
    return TRD_OK; /* x->st: refusals are expected */
}

static void check_call(size_t i, bool allreduce, trd_status want)
{
    static call_ctx x;
    memset(&x, 0, sizeof x);
    x = (call_ctx){.algo = i, .allreduce = allreduce,
                   .costs = trd_algo_uses_costs(i) ? tu_costs(P, 1.0, 1.0, 1) : NULL};
    trd_threads_opts topts;
    trd_threads_opts_init(&topts);
    topts.timeout_s = 20;
    assert_int_equal(trd_comm_threads_run(P, &topts, call_rank, &x), TRD_OK);
    trd_matrix2x2 want_out[COUNT];
    trd_matrix2x2_expected(want_out, COUNT, 0, P - 1);
    for (int r = 0; r < P; r++) {
        TU_CHECK(x.st[r] == want, "%s %s rank %d: %s, want %s", trd_algo_name(i),
                 allreduce ? "allreduce" : "reduce", r, trd_strerror(x.st[r]),
                 trd_strerror(want));
        if (want == TRD_OK && (allreduce || r == P - 1))
            TU_CHECK(!memcmp(x.out[r], want_out, sizeof want_out),
                     "%s rank %d: not the rank-order product", trd_algo_name(i), r);
    }
}

/* Every row, a real call: the commutative-only flag and the kind. */
static void test_call_flags(void **state)
{
    (void)state;
    for (size_t i = 0; i < trd_algo_count(); i++) {
        trd_status nc = trd_algo_commutative_only(i) ? TRD_EUNSUPPORTED : TRD_OK;
        check_call(i, false, trd_algo_runs(i, TRD_COLL_REDUCE) ? nc : TRD_EUNSUPPORTED);
        check_call(i, true, trd_algo_runs(i, TRD_COLL_ALLREDUCE) ? nc : TRD_EUNSUPPORTED);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_flags),
        cmocka_unit_test(test_call_flags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
