/* test_steady_series.c: a solved Series of Reduces compiled into one plan
 * (src/steady/series.c, include/treduce/steady_series.h).
 *
 *   - replay: the plan run for real on threads (one per platform node)
 *     with the non-commutative checker operators: every operation's result
 *     at the target is exactly v_0 (+) ... (+) v_N in participant order,
 *     each contribution once (interval concatenation poisons anything
 *     else); on Fig. 6, a generated platform, a tree that sends two
 *     messages of one operation on one link and combines two received
 *     values, and a target that takes no part;
 *   - asymptotic optimality (Legrand, Marchal and Robert 2004, Prop. 1 and
 *     3), the simulator as oracle: results per time unit in the steady
 *     state within [0.95, 1] x TP, never above TP (the LP's bound), the
 *     makespan within the schedule's own bound (every period's work done by
 *     its end), R / makespan growing towards TP;
 *   - bad input: clear errors, here and in trd_plan_custom. */
#include "runtime_util.h"
#include "test_steady_util.h"
#include "plan/builders.h"
#include "treduce/steady_series.h"

#define TP_EPS 1e-9 /* rounding of the simulator's float shares and sums */

/* tests/data/platforms/name, found from this file's own path. */
static const char *platform_path(const char *name)
{
    static char path[1024];
    const char *slash = strrchr(__FILE__, '/');
    snprintf(path, sizeof path, "%.*s/data/platforms/%s", slash ? (int)(slash - __FILE__) : 1,
             slash ? __FILE__ : ".", name);
    return path;
}

static trd_platform *fig6(void)
{
    trd_platform *pf = NULL;
    TU_CHECK(trd_platform_load(platform_path("fig6-reduce.json"), &pf) == TRD_OK, "%s",
             trd_errmsg());
    return pf;
}

/* The generated platform of `seed` (3 LANs), reduced to its first host. */
static trd_platform *generated(uint64_t seed, int32_t *target)
{
    trd_platform *pf = NULL;
    assert_int_equal(trd_platform_generate(seed, 3, &pf), TRD_OK);
    *target = 0;
    while (trd_platform_node_is_router(pf, *target))
        (*target)++;
    return pf;
}

/* P2 -> P1 -> P0, slow P1 and P2: most operations send v1 and v2 on the
 * one link P1 -> P0 and combine both received values at P0. */
static trd_platform *chain3(void)
{
    trd_platform *pf = sd_new();
    int32_t p0 = sd_node(pf, "P0", "1"), p1 = sd_node(pf, "P1", "1/100"),
            p2 = sd_node(pf, "P2", "1/100");
    sd_link(pf, p2, p1, "1", true);
    sd_link(pf, p1, p0, "1", true);
    return pf;
}

static trd_steady *reduce_to(const trd_platform *pf, int32_t target, const int32_t *members,
                             int32_t n)
{
    trd_steady_spec spec = sd_spec(TRD_STEADY_REDUCE, target, members, n);
    return sd_solve(pf, &spec);
}

static trd_plan *series_plan(const trd_steady *st, const trd_platform *pf, int64_t ops)
{
    trd_plan *plan = NULL;
    trd_status s = trd_steady_series_plan(st, pf, ops, &plan);
    TU_CHECK(s == TRD_OK && plan, "%lld operations: %s", (long long)ops, trd_errmsg());
    return plan;
}

/* ---- replay on threads ---- */

typedef struct replay_ctx {
    const trd_plan *plan;
    const trd_op *op;
    unsigned char **buf; /* per node */
    int64_t count;
} replay_ctx;

/* The plan, then an allreduce on the same communicator (still usable). */
static trd_status replay_rank(trd_comm *comm, int32_t rank, void *ctx)
{
    replay_ctx *x = ctx;
    trd_op *sum = NULL;
    int32_t one = 1, ranks = 0;
    trd_status st = trd_comm_run_plan(comm, x->plan, x->buf[rank], x->count, x->op);
    if (st == TRD_OK)
        st = trd_op_builtin(&sum, TRD_OP_SUM, TRD_INT32);
    if (st == TRD_OK)
        st = trd_allreduce(comm, &one, &ranks, 1, sum, NULL);
    trd_op_free(sum);
    if (st == TRD_OK && ranks != trd_comm_size(comm))
        st = TRD_EIO; /* reported as this rank's failure */
    return st;
}

static trd_status expected(rt_opid id, void *buf, int64_t count, int64_t last)
{
    return id == RT_MATRIX ? trd_matrix2x2_expected(buf, count, 0, last)
                           : trd_interval_expected(buf, count, 0, last);
}

/* Runs `ops` operations of `per_op` elements each with checker operator
 * id; every result at the target must be the fold in participant order. */
static void replay(const trd_platform *pf, const trd_steady *st, int64_t ops, int64_t per_op,
                   rt_opid id)
{
    int32_t n = trd_platform_node_count(pf), N = trd_steady_series_participants(st);
    int64_t count = ops * per_op;
    size_t bytes = (size_t)count * rt_elem(id);
    replay_ctx x = {.plan = series_plan(st, pf, ops), .op = rt_op_create(id), .count = count,
                    .buf = calloc((size_t)n, sizeof *x.buf)};
    assert_non_null(x.buf);
    for (int32_t i = 0; i < n; i++)
        assert_non_null(x.buf[i] = calloc(bytes, 1));
    for (int32_t k = 0; k < N; k++)
        assert_int_equal(rt_fill(id, x.buf[trd_steady_series_node(st, k)], count, k, 0), TRD_OK);
    trd_threads_opts o = rt_topts(20.0);
    rt_result res;
    rt_run(n, &o, replay_rank, &x, &res);
    for (int32_t r = 0; r < n; r++)
        TU_CHECK(res.status[r] == TRD_OK, "node %d: %s", (int)r, res.msg[r]);
    unsigned char *want = malloc(bytes), *got = x.buf[trd_plan_result_rank(x.plan)];
    assert_non_null(want);
    assert_int_equal(expected(id, want, count, N - 1), TRD_OK);
    for (int64_t b = 0; b < ops; b++) {
        size_t at = (size_t)(b * per_op) * rt_elem(id), len = (size_t)per_op * rt_elem(id);
        TU_CHECK(!memcmp(want + at, got + at, len), "%s: operation %lld of %lld is wrong",
                 rt_op_names[id], (long long)b, (long long)ops);
    }
    free(want);
    for (int32_t i = 0; i < n; i++)
        free(x.buf[i]);
    free(x.buf);
    trd_op_free((trd_op *)x.op);
    trd_plan_free((trd_plan *)x.plan);
}

static void fig6_plan(void **state)
{
    (void)state;
    trd_platform *pf = fig6();
    trd_steady *st = reduce_to(pf, 0, NULL, 0);
    trd_plan *plan = series_plan(st, pf, 50);
    size_t index;
    assert_string_equal(trd_plan_algo(plan), "steady-series");
    assert_int_equal(trd_algo_find("steady-series", &index), TRD_ENOALGO); /* not listed */
    assert_int_equal(trd_plan_params(plan)->n, 3);
    assert_int_equal(trd_plan_result_rank(plan), 0);
    assert_int_equal(trd_plan_blocks(plan), 50);
    /* the tree of Fig. 6: v1 P1 -> P2, T[1,1,2] on P2, v[1,2] P2 -> P0,
     * T[0,0,2] on P0: one operation per period of 1, 4 periods deep */
    TU_CHECK(tu_close(trd_plan_makespan(plan), 53.0), "predicted makespan %g",
             trd_plan_makespan(plan));
    assert_int_equal(trd_plan_step_count(plan, 1), 50);  /* SENDs */
    assert_int_equal(trd_plan_step_count(plan, 2), 150); /* RECV, COMBINE, SEND */
    for (size_t i = 0; i < 50; i++) {
        const trd_step *s = trd_plan_step(plan, 1, i);
        assert_int_equal(s->kind, TRD_STEP_SEND);
        TU_CHECK(tu_close(s->release, (double)i), "send %zu released at %g", i, s->release);
    }
    trd_plan_free(plan);
    trd_steady_free(st);
    trd_platform_free(pf);
}

static void fig6_replay(void **state)
{
    (void)state;
    trd_platform *pf = fig6();
    trd_steady *st = reduce_to(pf, 0, NULL, 0);
    replay(pf, st, 200, 3, RT_INTERVAL);
    replay(pf, st, 300, 1, RT_MATRIX);
    trd_steady_free(st);
    int32_t members[] = {1, 2}; /* the target P0 takes no part */
    st = reduce_to(pf, 0, members, 2);
    replay(pf, st, 100, 2, RT_INTERVAL);
    trd_steady_free(st);
    trd_platform_free(pf);
}

static void generated_replay(void **state)
{
    (void)state;
    int32_t target;
    trd_platform *pf = generated(5, &target);
    trd_steady *st = reduce_to(pf, target, NULL, 0);
    replay(pf, st, 500, 2, RT_INTERVAL);
    trd_steady_free(st);
    trd_platform_free(pf);
}

static void shared_link_replay(void **state)
{
    (void)state;
    trd_platform *pf = chain3();
    trd_steady *st = reduce_to(pf, 0, NULL, 0);
    bool shared = false;
    for (int32_t i = 0; i < st->n_trees; i++)
        for (int32_t h = 0; h < st->trees[i].n_hops; h++)
            for (int32_t g = 0; g < h; g++)
                shared |= st->trees[i].hops[g].link == st->trees[i].hops[h].link;
    TU_CHECK(shared, "no tree sends two messages on one link: the case is not covered");
    replay(pf, st, 400, 2, RT_INTERVAL);
    replay(pf, st, 250, 1, RT_MATRIX);
    trd_steady_free(st);
    trd_platform_free(pf);
}

/* ---- asymptotic optimality in the simulator ---- */

static trd_steady_series_stats simulate(const trd_steady *st, const trd_platform *pf,
                                        int64_t ops)
{
    trd_steady_series_stats s;
    trd_status r = trd_steady_series_simulate(st, pf, ops, &s);
    TU_CHECK(r == TRD_OK, "%lld operations: %s", (long long)ops, trd_errmsg());
    return s;
}

/* The oracle on one simulation of R operations. */
static void check_rates(const trd_steady_series_stats *s, const char *where)
{
    double tp = s->tp, periods = (double)((s->ops + s->period_ops - 1) / s->period_ops);
    printf("%s: R = %lld: makespan %g, R/makespan = %.4f TP, steady %.6f TP\n", where,
           (long long)s->ops, s->makespan, s->throughput / tp, s->ratio_to_tp);
    TU_CHECK(s->throughput <= tp * (1 + TP_EPS), "%s: %g results per time unit above TP = %g",
             where, s->throughput, tp);
    TU_CHECK(s->steady_throughput <= tp * (1 + TP_EPS), "%s: steady %g above TP = %g", where,
             s->steady_throughput, tp);
    TU_CHECK(s->steady_throughput >= 0.95 * tp, "%s: steady %g below 0.95 TP = %g", where,
             s->steady_throughput, 0.95 * tp);
    TU_CHECK(s->makespan <= (periods + s->depth - 1) * s->period * (1 + TP_EPS),
             "%s: makespan %g beyond the schedule's %g periods of %g", where, s->makespan,
             periods + s->depth - 1, s->period);
}

/* R/makespan grows towards TP while the steady state stays at TP (from
 * the least R whose middle half is in the steady state). */
static void converges(const trd_steady *st, const trd_platform *pf, const char *where)
{
    trd_steady_series_stats probe = simulate(st, pf, 1);
    int64_t base = 4 * probe.period_ops * (probe.depth + 2), R[3] = {base, 4 * base, 16 * base};
    double last = 0;
    for (int k = 0; k < 3; k++) {
        trd_steady_series_stats s = simulate(st, pf, R[k]);
        check_rates(&s, where);
        TU_CHECK(s.throughput > last, "%s: R/makespan %g did not grow", where, s.throughput);
        last = s.throughput;
    }
    double bound = (double)R[2] / (R[2] + probe.period_ops * (probe.depth - 1));
    TU_CHECK(last >= probe.tp * bound * (1 - TP_EPS), "%s: R/makespan %g below %g TP",
             where, last, bound);
}

static void fig6_rate(void **state)
{
    (void)state;
    trd_platform *pf = fig6();
    trd_steady *st = reduce_to(pf, 0, NULL, 0);
    trd_steady_series_stats s = simulate(st, pf, 1000);
    check_rates(&s, "Fig. 6");
    TU_CHECK(tu_close(s.steady_throughput, 1.0) && tu_close(s.makespan, 1002.5),
             "Fig. 6: one result per time unit after 3.5: steady %g, makespan %g",
             s.steady_throughput, s.makespan);
    converges(st, pf, "Fig. 6");
    trd_steady_free(st);
    trd_platform_free(pf);
}

static void generated_rate(void **state)
{
    (void)state;
    int32_t target;
    for (uint64_t seed = 4; seed <= 5; seed++) {
        trd_platform *pf = generated(seed, &target);
        trd_steady *st = reduce_to(pf, target, NULL, 0);
        converges(st, pf, seed == 4 ? "generated 4" : "generated 5");
        trd_steady_free(st);
        trd_platform_free(pf);
    }
    trd_platform *pf = chain3();
    trd_steady *st = reduce_to(pf, 0, NULL, 0);
    converges(st, pf, "two messages on one link");
    trd_steady_free(st);
    trd_platform_free(pf);
}

/* ---- bad input ---- */

static void expect(trd_status got, trd_status want, const char *needle)
{
    TU_CHECK(got == want && strstr(trd_errmsg(), needle), "got %s (%s), want %s with '%s'",
             trd_strerror(got), trd_errmsg(), trd_strerror(want), needle);
}

static void bad_series(void **state)
{
    (void)state;
    trd_platform *pf = fig6(), *other = chain3();
    trd_steady *st = reduce_to(pf, 0, NULL, 0);
    trd_plan *plan = (trd_plan *)1;
    trd_steady_series_stats s;
    expect(trd_steady_series_plan(st, pf, 0, &plan), TRD_EINVAL, "0 operations");
    assert_null(plan);
    expect(trd_steady_series_plan(st, pf, -3, &plan), TRD_EINVAL, "need 1 to");
    expect(trd_steady_series_simulate(st, pf, TRD_SERIES_OPS_MAX + 1, &s), TRD_EINVAL,
           "need 1 to");
    expect(trd_steady_series_plan(NULL, pf, 10, &plan), TRD_EINVAL, "NULL");
    expect(trd_steady_series_plan(st, pf, 10, NULL), TRD_EINVAL, "NULL");
    expect(trd_steady_series_simulate(st, pf, 10, NULL), TRD_EINVAL, "NULL");
    expect(trd_steady_series_plan(st, other, 10, &plan), TRD_EINVAL, "not the platform");
    trd_steady_free(st);
    trd_steady_spec spec = sd_spec(TRD_STEADY_SCATTER, 0, NULL, 0);
    st = sd_solve(pf, &spec);
    expect(trd_steady_series_plan(st, pf, 10, &plan), TRD_EUNSUPPORTED, "scatter");
    expect(trd_steady_series_simulate(st, pf, 10, &s), TRD_EUNSUPPORTED, "scatter");
    trd_steady_free(st);
    /* v2 twice the size of the rest: on chain3 it leaves P2 in every tree
     * whose other messages are of size 1 */
    trd_steady_size big = {.k = 2, .m = 2, .size = "2"};
    spec = sd_spec(TRD_STEADY_REDUCE, 0, NULL, 0);
    spec.sizes = &big;
    spec.n_sizes = 1;
    st = sd_solve(other, &spec);
    expect(trd_steady_series_simulate(st, other, 10, &s), TRD_EUNSUPPORTED, "different sizes");
    trd_plan_free(series_plan(st, other, 10)); /* the plan itself is fine */
    trd_steady_free(st);
    trd_platform_free(pf);
    trd_platform_free(other);
}

static void unreachable(void **state)
{
    (void)state;
    trd_platform *pf = sd_new();
    int32_t p0 = sd_node(pf, "P0", "1"), p1 = sd_node(pf, "P1", "1");
    sd_link(pf, p0, p1, "1", false); /* P1 cannot send to P0 */
    trd_steady *st = reduce_to(pf, p0, NULL, 0);
    trd_plan *plan;
    expect(trd_steady_series_plan(st, pf, 10, &plan), TRD_EUNSUPPORTED, "throughput is 0");
    trd_steady_free(st);
    trd_platform_free(pf);
}

static void bad_run_plan(void **state)
{
    (void)state;
    trd_platform *pf = fig6();
    trd_steady *st = reduce_to(pf, 0, NULL, 0);
    trd_plan *plan = series_plan(st, pf, 8);
    trd_op *op = rt_op_create(RT_INTERVAL);
    trd_comm *comm[3];
    trd_interval buf[16];
    rt_comms_create(comm, 2, NULL);
    expect(trd_comm_run_plan(comm[0], plan, buf, 16, op), TRD_EINVAL, "for 3 ranks");
    rt_comms_free(comm, 2);
    rt_comms_create(comm, 3, NULL);
    expect(trd_comm_run_plan(comm[0], plan, buf, 7, op), TRD_EINVAL, "below the plan's 8");
    expect(trd_comm_run_plan(comm[0], plan, NULL, 16, op), TRD_EINVAL, "NULL buffer");
    expect(trd_comm_run_plan(comm[0], NULL, buf, 16, op), TRD_EINVAL, "NULL plan");
    expect(trd_comm_run_plan(comm[0], plan, buf, 16, NULL), TRD_EINVAL, "NULL operator");
    expect(trd_comm_run_plan(NULL, plan, buf, 16, op), TRD_EINVAL, "NULL communicator");
    rt_comms_free(comm, 3);
    trd_op_free(op);
    trd_plan_free(plan);
    trd_steady_free(st);
    trd_platform_free(pf);
}

/* trd_plan_custom (src/plan/custom.c) refuses malformed programs. */
static void custom_plan(void **state)
{
    (void)state;
    static const trd_algo algo = {.name = "test-custom", .bound_source = "none"};
    trd_params p;
    trd_params_init(&p);
    p.n = 2;
    p.segments = 2;
    const trd_step good[3] = {
        {.kind = TRD_STEP_RECV, .peer = 1, .buf = 1, .src = -1, .block = 1, .dep = {-1, -1}},
        {.kind = TRD_STEP_COMBINE, .peer = -1, .buf = 0, .src = 1, .block = 1, .dep = {0, -1}},
        {.kind = TRD_STEP_SEND, .peer = 0, .buf = 0, .src = -1, .block = 1, .dep = {-1, -1},
         .release = 2.0}};
    struct { int step; trd_step bad; const char *why; } cases[] = {
        {0, {.kind = TRD_STEP_RECV, .peer = 0, .buf = 1, .src = -1, .dep = {-1, -1}}, "peer"},
        {1, {.kind = TRD_STEP_COMBINE, .peer = -1, .buf = 0, .src = 1, .dep = {1, -1}},
         "dependency"},
        {1, {.kind = TRD_STEP_COPY, .peer = -1, .buf = 1, .src = 1, .dep = {-1, -1}}, "slot"},
        {2, {.kind = TRD_STEP_SEND, .peer = 0, .buf = 0, .src = -1, .block = 2, .dep = {-1, -1}},
         "blocks"},
        {0, {.kind = TRD_STEP_RECV, .peer = 1, .buf = 1, .src = -1, .dep = {-1, -1},
             .release = 1.0}, "release"},
        {-1, {0}, NULL}};
    for (int c = 0; c < (int)(sizeof cases / sizeof cases[0]); c++) {
        size_t *first = malloc(3 * sizeof *first);
        trd_step *steps = malloc(sizeof good);
        assert_true(first && steps);
        memcpy(first, (size_t[3]){0, 2, 3}, 3 * sizeof *first);
        memcpy(steps, good, sizeof good);
        if (cases[c].why)
            steps[cases[c].step] = cases[c].bad;
        trd_plan *plan = NULL;
        trd_status st = trd_plan_custom(&plan, &algo, &p, first, steps, 5.0);
        if (cases[c].why) {
            expect(st, TRD_EINVAL, cases[c].why);
            assert_null(plan);
            continue;
        }
        TU_CHECK(st == TRD_OK, "%s", trd_errmsg());
        assert_string_equal(trd_plan_algo(plan), "test-custom");
        assert_int_equal(trd_plan_step_count(plan, 0), 2);
        assert_int_equal(trd_plan_parent(plan, 1), -1);
        assert_true(trd_plan_makespan(plan) == 5.0 && isnan(trd_plan_lower_bound(plan)));
        trd_plan_free(plan);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fig6_plan),          cmocka_unit_test(fig6_replay),
        cmocka_unit_test(generated_replay),   cmocka_unit_test(shared_link_replay),
        cmocka_unit_test(fig6_rate),          cmocka_unit_test(generated_rate),
        cmocka_unit_test(bad_series),         cmocka_unit_test(unreachable),
        cmocka_unit_test(bad_run_plan),       cmocka_unit_test(custom_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
