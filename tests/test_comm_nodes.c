/* test_comm_nodes.c: a communicator's node map (treduce.h,
 * trd_comm_set_nodes, trd_comm_learn_nodes, trd_comm_node) on the threads
 * wire:
 *   - bad maps refused with the bad value named, a map renumbered by each
 *     node's lowest rank, the same map again a no-op, another one refused,
 *     and a first one after a collective call refused;
 *   - learnt from the threads wire: one node;
 *   - node-ring run by trd_allreduce over maps of 2 and 3 nodes (and the
 *     ring, which ignores them), for several counts, with random delays
 *     before every send: every element the
 *     sum of distinct powers of two (a lost or doubled contribution shows);
 *   - ranks given different maps: the calls of node-ring are mismatched
 *     on every rank (the map is part of the call's signature), while the
 *     ring, which does not read it, runs;
 *   - the profile measures the link between two nodes where the map has
 *     two, and nothing of it where there is none. */
#include "runtime_util.h"
#include "core/error.h" /* trd_fail */

#define P 6

static void test_set(void **state)
{
    (void)state;
    trd_comm *comm[P];
    rt_comms_create(comm, P, NULL);
    int32_t bad[P] = {0, 0, 1, 1, 6, 2};
    assert_int_equal(trd_comm_set_nodes(comm[0], NULL), TRD_EINVAL);
    assert_int_equal(trd_comm_set_nodes(comm[0], bad), TRD_EINVAL);
    TU_CHECK(strstr(trd_errmsg(), "node_of[4] = 6"), "%s", trd_errmsg());
    bad[4] = -1;
    assert_int_equal(trd_comm_set_nodes(comm[0], bad), TRD_EINVAL);
    assert_int_equal(trd_comm_node(comm[0], 0), -1); /* nothing set */
    int32_t map[P] = {5, 5, 3, 3, 5, 0}, want[P] = {0, 0, 2, 2, 0, 5};
    assert_int_equal(trd_comm_set_nodes(comm[0], map), TRD_OK);
    for (int32_t r = 0; r < P; r++)
        TU_CHECK(trd_comm_node(comm[0], r) == want[r], "rank %d: node %d, want %d", (int)r,
                 (int)trd_comm_node(comm[0], r), (int)want[r]);
    assert_int_equal(trd_comm_node(comm[0], P), -1);
    int32_t same[P] = {1, 1, 2, 2, 1, 4}; /* the same grouping, other names */
    assert_int_equal(trd_comm_set_nodes(comm[0], same), TRD_OK);
    int32_t other[P] = {0, 0, 0, 1, 1, 1};
    assert_int_equal(trd_comm_set_nodes(comm[0], other), TRD_EINVAL);
    TU_CHECK(strstr(trd_errmsg(), "another node map"), "%s", trd_errmsg());
    rt_comms_free(comm, P);
}

static trd_status one_call(trd_comm *comm, int32_t rank, void *ctx)
{
    (void)rank;
    (void)ctx;
    int64_t in = 1, out = 0;
    trd_op *sum;
    trd_status st = trd_op_builtin(&sum, TRD_OP_SUM, TRD_INT64);
    if (st == TRD_OK)
        st = trd_allreduce(comm, &in, &out, 1, sum, NULL);
    trd_op_free(sum);
    if (st != TRD_OK)
        return st;
    int32_t map[P] = {0, 0, 0, 1, 1, 1};
    st = trd_comm_set_nodes(comm, map);
    if (st != TRD_EINVAL || !strstr(trd_errmsg(), "before the first"))
        return trd_fail(TRD_EINVAL, "a map after a call: %d (%s)", (int)st, trd_errmsg());
    st = trd_comm_learn_nodes(comm);
    if (st != TRD_EINVAL)
        return trd_fail(TRD_EINVAL, "learnt after a call: %d (%s)", (int)st, trd_errmsg());
    return TRD_OK;
}

static trd_status learn(trd_comm *comm, int32_t rank, void *ctx)
{
    (void)rank;
    (void)ctx;
    trd_status st = trd_comm_learn_nodes(comm);
    for (int32_t r = 0; st == TRD_OK && r < P; r++)
        if (trd_comm_node(comm, r) != 0)
            return trd_fail(TRD_EINVAL, "rank %d is on node %d, not on the one node", (int)r,
                            (int)trd_comm_node(comm, r));
    return st;
}

static void test_after_call_and_learn(void **state)
{
    (void)state;
    trd_threads_opts o = rt_topts(10.0);
    rt_run_all_ok(P, one_call, NULL, "a map after a call", 0);
    rt_result res;
    rt_run(P, &o, learn, NULL, &res);
    for (int32_t r = 0; r < P; r++)
        TU_CHECK(res.status[r] == TRD_OK, "learn, rank %d: %s", (int)r, res.msg[r]);
}

typedef struct calls {
    const char *algo;
    const int32_t *map[P]; /* each rank's */
} calls;

/* Allreduces of several counts with ctx's algorithm and this rank's map. */
static trd_status reduce_all(trd_comm *comm, int32_t rank, void *ctx)
{
    const calls *x = ctx;
    trd_status st = trd_comm_set_nodes(comm, x->map[rank]);
    trd_op *sum = NULL;
    if (st == TRD_OK)
        st = trd_op_builtin(&sum, TRD_OP_SUM, TRD_INT64);
    static const int64_t counts[] = {1, 5, 1000, 77777};
    for (size_t k = 0; st == TRD_OK && k < sizeof counts / sizeof counts[0]; k++) {
        int64_t n = counts[k];
        int64_t *in = malloc((size_t)n * sizeof *in), *out = malloc((size_t)n * sizeof *out);
        for (int64_t i = 0; in && i < n; i++)
            in[i] = ((int64_t)1 << rank) * (i % 7 + 1);
        trd_coll_opts o;
        trd_coll_opts_init(&o);
        o.algo = x->algo;
        st = in && out ? trd_allreduce(comm, in, out, n, sum, &o) : TRD_ENOMEM;
        for (int64_t i = 0; st == TRD_OK && i < n; i++)
            if (out[i] != (((int64_t)1 << P) - 1) * (i % 7 + 1))
                st = trd_fail(TRD_EINVAL, "count %lld element %lld: %lld, not every rank once",
                              (long long)n, (long long)i, (long long)out[i]);
        free(in);
        free(out);
    }
    trd_op_free(sum);
    return st;
}

static void test_node_ring_runs(void **state)
{
    (void)state;
    static const int32_t two[P] = {0, 0, 0, 1, 1, 1}, three[P] = {0, 1, 2, 0, 1, 2};
    const int32_t *maps[] = {two, three};
    const char *algos[] = {"node-ring", "ring"};
    for (int m = 0; m < 2; m++)
        for (int a = 0; a < 2; a++) {
            calls x = {.algo = algos[a]};
            for (int32_t r = 0; r < P; r++)
                x.map[r] = maps[m];
            char what[64];
            snprintf(what, sizeof what, "%s, map %d", algos[a], m);
            rt_run_all_ok(P, reduce_all, &x, what, 300); /* ranks skewed before every send */
        }
}

static void test_other_maps(void **state)
{
    (void)state;
    static const int32_t two[P] = {0, 0, 0, 1, 1, 1}, three[P] = {0, 0, 1, 1, 2, 2};
    for (int a = 0; a < 2; a++) {
        calls x = {.algo = a ? "ring" : "node-ring"};
        for (int32_t r = 0; r < P; r++)
            x.map[r] = r == 2 ? three : two;
        trd_threads_opts o = rt_topts(5.0);
        rt_result res;
        rt_run(P, &o, reduce_all, &x, &res);
        for (int32_t r = 0; r < P; r++)
            if (a)
                TU_CHECK(res.status[r] == TRD_OK, "ring ignores the maps: rank %d: %s", (int)r,
                         res.msg[r]);
            else
                TU_CHECK(res.status[r] != TRD_OK && strstr(res.msg[r], "mismatched"),
                         "node-ring, rank 2's map another: rank %d: %d %s", (int)r,
                         (int)res.status[r], res.msg[r]);
    }
}

typedef struct profiled {
    bool nodes;
    trd_profile got[4];
} profiled;

/* A profile of 4 ranks, on 2 nodes {0, 1}, {2, 3} or with no map. */
static trd_status profile_rank(trd_comm *comm, int32_t rank, void *ctx)
{
    profiled *x = ctx;
    static const int32_t two[4] = {0, 0, 1, 1};
    trd_status st = x->nodes ? trd_comm_set_nodes(comm, two) : TRD_OK;
    trd_op *sum = NULL;
    if (st == TRD_OK)
        st = trd_op_builtin(&sum, TRD_OP_SUM, TRD_DOUBLE);
    if (st == TRD_OK)
        st = trd_comm_profile(comm, sum, &x->got[rank]);
    trd_op_free(sum);
    return st;
}

/* Between two nodes the profile measures the link too (rank 0 and rank
 * 2, the lowest on the other node); with one node, or none known, not;
 * profile_apply turns it into the call's far_d, far_latency. */
static void test_profile_far(void **state)
{
    (void)state;
    for (int nodes = 0; nodes < 2; nodes++) {
        profiled x = {.nodes = nodes};
        trd_threads_opts o = rt_topts(30.0);
        rt_result res;
        rt_run(4, &o, profile_rank, &x, &res);
        for (int32_t r = 0; r < 4; r++) {
            TU_CHECK(res.status[r] == TRD_OK, "profile, rank %d: %s", (int)r, res.msg[r]);
            const trd_profile *pr = &x.got[r];
            bool far = pr->far_latency > 0 && isfinite(pr->far_per_byte);
            TU_CHECK(far == (nodes == 1) && (nodes || pr->far_per_byte == 0),
                     "%s: rank %d far latency %g, per byte %g", nodes ? "2 nodes" : "no map",
                     (int)r, pr->far_latency, pr->far_per_byte);
            TU_CHECK(pr->far_latency == x.got[0].far_latency &&
                         pr->far_per_byte == x.got[0].far_per_byte,
                     "rank %d's far values are not rank 0's", (int)r);
        }
        trd_coll_opts co;
        trd_coll_opts_init(&co);
        assert_int_equal(trd_profile_apply(&x.got[0], 1000, 8, &co), TRD_OK);
        double want = nodes ? x.got[0].far_latency + 8000 * x.got[0].far_per_byte : 0.0;
        TU_CHECK(co.far_d == want && co.far_latency == (nodes ? x.got[0].far_latency : 0.0),
                 "applied: far_d %g (want %g), far_latency %g", co.far_d, want, co.far_latency);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set),
        cmocka_unit_test(test_after_call_and_learn),
        cmocka_unit_test(test_node_ring_runs),
        cmocka_unit_test(test_other_maps),
        cmocka_unit_test(test_profile_far),
    };
    return cmocka_run_group_tests_name("comm_nodes", tests, NULL, NULL);
}
