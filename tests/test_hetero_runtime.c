/* test_hetero_runtime.c: the planners for heterogeneous costs run for
 * real (threads):
 *   - reduces with random costs of both models, p = 1 to 9, hetero-greedy
 *     and hetero-exact, checked against the sum of every rank's input (a
 *     wrapping 64-bit sum of hashed values: a lost or doubled contribution
 *     shows); the 2x2 matrix product (non-commutative) is refused on every
 *     rank with a message that says why, and nothing moves;
 *   - the same arguments with the cost model loaded again (other bases, the
 *     same object): the communicator's cached plan follows the costs, on
 *     the call whose arguments are otherwise the last call's (memo) too. */
#include "runtime/comm.h"
#include "runtime_util.h"

static const char *const models[] = {"links", "nodes"};

static trd_costs *make_costs(int64_t n, const char *model, uint64_t seed)
{
    trd_costs *k = NULL;
    assert_int_equal(trd_costs_create(&k, n, TRD_DIST_CONST, 1.0, 1.0, 0.0), TRD_OK);
    TU_CHECK(trd_costs_random(k, model, 10.0, seed) == TRD_OK, "%s", trd_errmsg());
    return k;
}

typedef struct run_ctx {
    const trd_costs *costs;
    const char *algo;
    int32_t root;
    bool nc;
    int64_t count;
    atomic_int wrong;
} run_ctx;

static uint64_t input(int32_t r, int64_t i) { return rt_mix((uint64_t)r * 1000003u + (uint64_t)i); }

static trd_status reduce_rank(trd_comm *comm, int32_t rank, void *arg)
{
    run_ctx *x = arg;
    trd_op *op = NULL;
    trd_status st = x->nc ? trd_op_matrix2x2(&op) : trd_op_builtin(&op, TRD_OP_SUM, TRD_UINT64);
    if (st != TRD_OK)
        return st;
    size_t elem = trd_op_elem_size(op);
    unsigned char *in = tu_alloc((size_t)x->count, elem), *out = tu_alloc((size_t)x->count, elem);
    for (int64_t i = 0; !x->nc && i < x->count; i++)
        ((uint64_t *)in)[i] = input(rank, i);
    if (x->nc)
        trd_matrix2x2_fill((trd_matrix2x2 *)in, x->count, rank);
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = x->algo;
    o.costs = x->costs;
    st = trd_reduce(comm, in, out, x->count, op, x->root, &o);
    for (int64_t i = 0; st == TRD_OK && rank == x->root && i < x->count; i++) {
        uint64_t want = 0; /* the sum of every rank's input, wrapping */
        for (int32_t r = 0; r < trd_comm_size(comm); r++)
            want += input(r, i);
        if (((uint64_t *)out)[i] != want)
            atomic_fetch_add(&x->wrong, 1);
    }
    free(in);
    free(out);
    trd_op_free(op);
    return st;
}

static void runs_on_threads(void **state)
{
    (void)state;
    trd_threads_opts topts = rt_topts(20);
    for (int32_t p = 1; p <= 9; p += 2)
        for (int a = 0; a < 2; a++)
            for (int64_t count = 1; count <= 40000; count *= 200) {
                trd_costs *k = make_costs(p, models[a], (uint64_t)(p * 31 + a));
                run_ctx x = {.costs = k, .algo = a ? "hetero-exact" : "hetero-greedy",
                             .root = p / 2, .count = count};
                rt_result res;
                rt_run(p, &topts, reduce_rank, &x, &res);
                for (int32_t r = 0; r < p; r++)
                    TU_CHECK(res.status[r] == TRD_OK, "%s p=%d count=%lld rank %d: %s",
                             x.algo, p, (long long)count, r, res.msg[r]);
                TU_CHECK(atomic_load(&x.wrong) == 0, "%s p=%d count=%lld: %d wrong elements",
                         x.algo, p, (long long)count, atomic_load(&x.wrong));
                x.nc = true; /* the 2x2 matrix product: refused, nothing moves */
                rt_run(p, &topts, reduce_rank, &x, &res);
                for (int32_t r = 0; r < p; r++)
                    TU_CHECK(res.status[r] == TRD_EUNSUPPORTED &&
                                 strstr(res.msg[r], "commutative operators only"),
                             "%s p=%d non-commutative, rank %d: status %d: %s", x.algo, p, r,
                             res.status[r], res.msg[r]);
                trd_costs_free(k);
            }
}

/* Same arguments, the cost model loaded again with other bases: the
 * communicator's cached plan follows the costs. */
typedef struct reload_ctx {
    trd_costs *costs;
    pthread_barrier_t *bar;
    int32_t parent[2][7]; /* rank 0's cached plan after each call */
} reload_ctx;

static trd_status reload_rank(trd_comm *comm, int32_t rank, void *arg)
{
    reload_ctx *x = arg;
    trd_op *op = NULL;
    trd_op_builtin(&op, TRD_OP_SUM, TRD_UINT64);
    uint64_t in = (uint64_t)rank, out = 0;
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = "hetero-greedy";
    o.costs = x->costs;
    trd_status st = TRD_OK;
    for (int call = 0; call < 2 && st == TRD_OK; call++) {
        st = trd_reduce(comm, &in, &out, 1, op, 0, &o);
        for (int32_t r = 0; st == TRD_OK && rank == 0 && r < 7; r++)
            x->parent[call][r] = trd_plan_parent(comm->cache.plan, r);
        pthread_barrier_wait(x->bar);
        if (rank == 0 && call == 0) /* the same object, other bases */
            st = trd_costs_random(x->costs, "links", 10.0, 99);
        pthread_barrier_wait(x->bar);
    }
    trd_op_free(op);
    return st;
}

static void reloaded_costs_replan(void **state)
{
    (void)state;
    trd_costs *k = make_costs(7, "links", 3);
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, 7);
    reload_ctx x = {.costs = k, .bar = &bar};
    trd_threads_opts topts = rt_topts(20);
    rt_result res;
    trd_params p;
    trd_params_init(&p);
    p.n = 7;
    p.costs = k;
    trd_plan *before = tu_plan("hetero-greedy", &p);
    rt_run(7, &topts, reload_rank, &x, &res);
    trd_plan *after = tu_plan("hetero-greedy", &p); /* k holds the new bases now */
    bool differ = false;
    for (int32_t r = 0; r < 7; r++) {
        TU_CHECK(res.status[r] == TRD_OK, "rank %d: %s", r, res.msg[r]);
        TU_CHECK(x.parent[0][r] == trd_plan_parent(before, r) &&
                     x.parent[1][r] == trd_plan_parent(after, r),
                 "rank %d: cached parents %d then %d, plans for the costs %d then %d", r,
                 x.parent[0][r], x.parent[1][r], trd_plan_parent(before, r),
                 trd_plan_parent(after, r));
        differ |= trd_plan_parent(before, r) != trd_plan_parent(after, r);
    }
    TU_CHECK(differ, "seeds 3 and 99 give the same tree: the test shows nothing");
    trd_plan_free(before);
    trd_plan_free(after);
    pthread_barrier_destroy(&bar);
    trd_costs_free(k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(runs_on_threads),
        cmocka_unit_test(reloaded_costs_replan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
