/* test_node_model.c: the node's memory in the cost model (src/model/node.c,
 * src/select/calibrate_streams.c, src/select/contention.c).  Oracles:
 *   - the curve's contract (treduce.h, trd_profile.stream_bw): made
 *     non-decreasing and at most k times one stream from noisy values
 *     written by hand; interpolated linearly, held beyond its end;
 *   - trd_comm_profile on threads: min(p, cores) streams, every value
 *     finite and > 0, non-decreasing, bounded, the same on every rank;
 *   - predictions against closed forms: at p = 2 a binomial reduce moves
 *     and combines one stream at a time (no charge), while recursive
 *     doubling's two ranks stream at once and are charged exactly
 *     (2 B(1) / B(2) - 1) of their memory time; more ranks than runnable
 *     at once (oversubscription) is slower than a core each. */
#include <unistd.h>

#include "model/node.h"
#include "runtime_util.h"

#define TIMEOUT_S 60

static void curve_cleaned(void **state)
{
    (void)state;
    double bw[5] = {10, 9, 25, 24, 80}; /* a dip, a dip, above 5 x 10 */
    assert_true(trd_node_clean_curve(bw, 5));
    const double want[5] = {10, 10, 25, 25, 50};
    for (int k = 0; k < 5; k++)
        TU_CHECK(bw[k] == want[k], "B(%d) = %g, want %g", k + 1, bw[k], want[k]);
    assert_true(trd_node_curve_valid(bw, 5));
    double bad[2] = {10, NAN};
    assert_false(trd_node_clean_curve(bad, 2));
    bad[1] = 0;
    assert_false(trd_node_clean_curve(bad, 2));
    const double dip[2] = {10, 9}, fast[2] = {10, 21};
    assert_false(trd_node_curve_valid(dip, 2));
    assert_false(trd_node_curve_valid(fast, 2));
    assert_true(trd_node_curve_valid(NULL, 0));
    /* interpolation: k B(1) below 1, linear between, B(n) beyond */
    TU_CHECK(trd_node_bandwidth(want, 5, 0.5) == 5 && trd_node_bandwidth(want, 5, 2.5) == 17.5 &&
                 trd_node_bandwidth(want, 5, 9) == 50, "B(0.5) %g, B(2.5) %g, B(9) %g",
             trd_node_bandwidth(want, 5, 0.5), trd_node_bandwidth(want, 5, 2.5),
             trd_node_bandwidth(want, 5, 9));
    /* slowdown k B(1) / B(k), capped at the runnable ranks */
    TU_CHECK(trd_node_slowdown(want, 5, 3, 0) == 3 * 10 / 25.0 &&
                 trd_node_slowdown(want, 5, 3, 2) == 2 * 10 / 10.0 &&
                 trd_node_slowdown(want, 5, 0.7, 0) == 1,
             "slowdowns %g %g %g", trd_node_slowdown(want, 5, 3, 0),
             trd_node_slowdown(want, 5, 3, 2), trd_node_slowdown(want, 5, 0.7, 0));
}

typedef struct curve_ctx {
    const trd_op *op;
    trd_profile got[RT_MAX_P];
} curve_ctx;

static trd_status profile_rank(trd_comm *comm, int32_t rank, void *arg)
{
    curve_ctx *x = arg;
    return trd_comm_profile(comm, x->op, &x->got[rank]);
}

static void curve_calibrated(void **state)
{
    (void)state;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    trd_op *op = rt_op_create(RT_F64_SUM);
    for (int32_t p = 1; p <= 3; p++) {
        curve_ctx x = {.op = op};
        rt_result res;
        trd_threads_opts topts = rt_topts(TIMEOUT_S);
        double t0 = rt_now();
        rt_run(p, &topts, profile_rank, &x, &res);
        for (int32_t r = 0; r < p; r++)
            TU_CHECK(res.status[r] == TRD_OK, "p=%d rank %d: %s", (int)p, (int)r, res.msg[r]);
        const trd_profile *pr = &x.got[0];
        int32_t want = cores < p ? (int32_t)cores : p;
        TU_CHECK(pr->streams == want, "p=%d: %d streams, want min(p, %ld cores)", (int)p,
                 (int)pr->streams, cores);
        for (int32_t k = 0; k < pr->streams; k++) {
            TU_CHECK(isfinite(pr->stream_bw[k]) && pr->stream_bw[k] > 0,
                     "p=%d: B(%d) = %g", (int)p, (int)k + 1, pr->stream_bw[k]);
            TU_CHECK(k == 0 || (pr->stream_bw[k] >= pr->stream_bw[k - 1] &&
                                pr->stream_bw[k] <= (k + 1) * pr->stream_bw[0]),
                     "p=%d: B(%d) = %g after B(%d) = %g, B(1) = %g: not monotone and bounded",
                     (int)p, (int)k + 1, pr->stream_bw[k], (int)k, pr->stream_bw[k - 1],
                     pr->stream_bw[0]);
        }
        for (int32_t r = 1; r < p; r++)
            TU_CHECK(!memcmp(x.got[r].stream_bw, pr->stream_bw, sizeof pr->stream_bw),
                     "p=%d: rank %d holds another curve", (int)p, (int)r);
        printf("p=%d: profile in %.2f s, B(k) GB/s:", (int)p, rt_now() - t0);
        for (int32_t k = 0; k < pr->streams; k++)
            printf(" %.1f", 1e-9 * pr->stream_bw[k]);
        printf("\n");
    }
    trd_op_free(op);
}

static trd_op *sum_op; /* contention_charged's */

static double predict(trd_comm *comm, const char *algo, int64_t count, bool allreduce,
                      const trd_coll_opts *base, const double *bw, int32_t streams, double k)
{
    trd_coll_opts o = *base;
    o.algo = algo;
    o.stream_bw = bw;
    o.streams = streams;
    o.parallelism = k;
    double t = NAN;
    TU_CHECK(trd_comm_predict(comm, count, sum_op, 0, allreduce, &o, &t) == TRD_OK,
             "predict %s: %s", algo, trd_errmsg());
    return t;
}

static void contention_charged(void **state)
{
    (void)state;
    trd_comm *comm[RT_MAX_P];
    trd_threads_opts topts = rt_topts(TIMEOUT_S);
    rt_comms_create(comm, 2, &topts);
    sum_op = rt_op_create(RT_F64_SUM);
    const int64_t count = 1 << 17; /* 1 MiB of doubles: one segment */
    const double bytes = 8.0 * count, b1 = 1e10, shared[2] = {b1, 1.25 * b1};
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.measure_model = false;
    o.latency = 0; /* all memory: the streams fill the makespan */
    o.d = bytes / 5e9;      /* a transfer: 2 bytes per byte at B(1) */
    o.c = 3 * bytes / b1;   /* a combine: 3 bytes per byte at B(1) */
    double tb = predict(comm[0], "binomial", count, false, &o, NULL, 0, 0);
    double cb = predict(comm[0], "binomial", count, false, &o, shared, 2, 0);
    TU_CHECK(cb == tb, "binomial reduce p=2: %g charged against %g: one stream at a time", cb,
             tb);
    double tr = predict(comm[0], "recursive-doubling", count, true, &o, NULL, 0, 0);
    double cr = predict(comm[0], "recursive-doubling", count, true, &o, shared, 2, 0);
    /* each rank: a transfer's 2 bytes and a combine's 3 bytes per byte at
     * B(1), both slowed by 2 B(1) / B(2) = 1.6 */
    double memory = 2 * bytes / b1 + 3 * bytes / b1;
    TU_CHECK(fabs(cr - (tr + 0.6 * memory)) < 1e-6 * cr,
             "recursive doubling p=2: %.9g, want %.9g + 0.6 x %.9g", cr, tr, memory);
    /* oversubscribed: 2 ranks on one core are slower than on two */
    double one = predict(comm[0], "recursive-doubling", count, true, &o, shared, 2, 1.0);
    TU_CHECK(one > tr, "one core for two ranks: %g, not slower than %g", one, tr);
    rt_comms_free(comm, 2);
    rt_comms_create(comm, 8, &topts);
    double own = predict(comm[0], "binomial", count, false, &o, shared, 2, 0);
    double over = predict(comm[0], "binomial", count, false, &o, shared, 2, 2.0);
    TU_CHECK(over > own, "8 ranks on 2 cores: %g, not slower than a core each: %g", over, own);
    rt_comms_free(comm, 8);
    trd_op_free(sum_op);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(curve_cleaned),
        cmocka_unit_test(curve_calibrated),
        cmocka_unit_test(contention_charged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
