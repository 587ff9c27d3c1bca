/* test_reduce_scatter_plans.c: the reduce-scatter algorithms
 * (reduce-scatter-ring, reduce-scatter-halving, reduce-scatter-pairwise;
 * src/plan/reduce_scatter_*.c) against oracles written here.
 *
 * For p = 1..33 ranks, m = 1..3 segments, commutative and, for pairwise
 * (the one row without the commutative-only flag), non-commutative:
 *   - the replay of tests/ir_replay.h: well formed, SENDs and RECVs
 *     matched in MPI order, no race the deps leave open, no deadlock, and
 *     rank r's part (blocks [r m, (r+1) m) of slot 0) ending with each
 *     contribution exactly once (non-commutative: built by joining
 *     adjacent rank intervals in order); the scratch slots each file says;
 *   - the counts behind the cost formulas: B = p m, per rank the messages,
 *     blocks sent and blocks combined, and in all (p - 1) B blocks combined
 *     (each block's p contributions merged p - 1 times, nothing wasted);
 *   - the makespan (the simulator's) finite and at least the plan's lower
 *     bound; for ring and pairwise (m = 1) and halving (m = 1, p a power
 *     of two) equal to the alpha-beta-gamma formula, at several (d, c,
 *     latency), latency 0 among them.
 * Real runs on threads (trd_comm_run_plan): pairwise with the 2x2 matrix
 * product and interval concatenation (rank r's part must be the rank-order
 * fold computed here by a plain loop), all three with int64 and double
 * sums of integers (exact).  Refusals: a non-commutative operator for
 * ring and halving, any other collective for the three, a reduce-scatter
 * for the allreduce and tree algorithms. */
#include "ir_replay.h"
#include "runtime_util.h"

#define P_LAST 33
#define M_LAST 3

typedef enum algo { RING, HALVING, PAIRWISE } algo;
static const char *const names[] = {"reduce-scatter-ring", "reduce-scatter-halving",
                                    "reduce-scatter-pairwise"};
static const algo algos[] = {RING, HALVING, PAIRWISE};

static trd_params params_of(int32_t p, int32_t m, bool nc)
{
    trd_params prm = tu_params(p, 1.0, 0.5, 0);
    prm.latency = 0.25;
    prm.segments = m;
    prm.collective = TRD_COLL_REDUCE_SCATTER;
    prm.noncommutative = nc;
    return prm;
}

/* Messages, blocks sent and blocks combined by rank r (-1: not fixed per
 * rank, only in total): the files' cost formulas.  Halving: a rank that
 * takes part sends one message a round (one more to fold a neighbour
 * back), a folded-out one its whole buffer once; for p a power of two
 * (p-1)/p of the buffer, sent and combined. */
static void expect_counts(algo a, int32_t p, int32_t m, int32_t r, int64_t out[3])
{
    int64_t B = (int64_t)p * m;
    if (a != HALVING) {
        out[0] = out[1] = out[2] = (int64_t)(p - 1) * m;
        return;
    }
    ir_fold f = ir_fold_of(p);
    bool out_rank = r < 2 * f.rem && r % 2 == 0, folds = r < 2 * f.rem && r % 2 == 1;
    out[0] = out_rank ? 1 : f.rounds + folds;
    out[1] = out_rank ? B : f.rem == 0 ? (int64_t)(p - 1) * m : -1;
    out[2] = out_rank ? 0 : f.rem == 0 ? (int64_t)(p - 1) * m : -1;
}

/* Blocks all ranks send in all: the rounds move each window of newranks
 * once per pair of partners sharing it (p parts times p2 / 2^(k+1) in
 * round k, p (p2 - 1) in all), the fold adds a whole buffer and a part
 * for each of its rem pairs. */
static int64_t expect_total_sent(algo a, int32_t p, int32_t m)
{
    ir_fold f = ir_fold_of(p);
    if (a != HALVING)
        return (int64_t)p * (p - 1) * m;
    return ((int64_t)p * (f.p2 - 1) + (int64_t)f.rem * (p + 1)) * m;
}

static void check_counts(const ir_replay *rp, algo a, int32_t m)
{
    int32_t p = rp->p;
    TU_CHECK(rp->B == p * m, "%s: B = %d, expected p m = %d", ir_where, rp->B, p * m);
    int64_t sent = 0, combined = 0;
    for (int32_t r = 0; r < p; r++) {
        int64_t got[3], want[3];
        ir_rank_counts(rp, r, got);
        expect_counts(a, p, m, r, want);
        for (int i = 0; i < 3; i++)
            TU_CHECK(want[i] < 0 || got[i] == want[i], "%s rank %d: %lld messages, %lld blocks "
                     "sent, %lld combined; expected %lld, %lld, %lld (-1: any)", ir_where, r,
                     (long long)got[0], (long long)got[1], (long long)got[2],
                     (long long)want[0], (long long)want[1], (long long)want[2]);
        sent += got[1];
        combined += got[2];
    }
    TU_CHECK(combined == (int64_t)(p - 1) * rp->B && sent == expect_total_sent(a, p, m),
             "%s: %lld blocks combined, %lld sent in all; expected (p-1) B = %lld, %lld",
             ir_where, (long long)combined, (long long)sent, (long long)(p - 1) * rp->B,
             (long long)expect_total_sent(a, p, m));
}

static void check_case(int a, int32_t p, int32_t m, bool nc)
{
    snprintf(ir_where, sizeof ir_where, "%s p=%d m=%d%s", names[a], p, m, nc ? " nc" : "");
    trd_params prm = params_of(p, m, nc);
    trd_plan *plan = tu_plan(names[a], &prm);
    ir_replay rp;
    ir_replay_plan(&rp, plan, nc, a == PAIRWISE ? 2 : 1, TRD_COLL_REDUCE_SCATTER);
    check_counts(&rp, a, m);
    double t = trd_plan_makespan(plan), lb = trd_plan_lower_bound(plan);
    TU_CHECK(isfinite(t) && t >= 0 && t >= lb - 1e-9, "%s: makespan %g, lower bound %g",
             ir_where, t, lb);
    ir_unload(&rp);
    trd_plan_free(plan);
}

/* One algorithm (*state) over the whole matrix. */
static void test_algo(void **state)
{
    algo a = *(const algo *)*state;
    /* the others are commutative-only (their rows) */
    ir_each_case(check_case, a, P_LAST, M_LAST, a == PAIRWISE);
}

/* The unsegmented makespan by hand, alpha = latency, n beta = d - latency,
 * n gamma = c.  The simulator charges a message of one block of B
 * latency + (d - latency)/B and its combine c/B (combine_fixed 0); a
 * RECV_COMBINE (fusion) is charged the same, a transfer then a combine,
 * as recv_combine_saving is 0.  Ring (B = p): step s + 1's SEND waits for
 * step s's COMBINE, and every rank runs the same steps at once, so each of
 * the p - 1 steps costs a one-block transfer and combine.  Halving, p a
 * power of two (B = p): round k sends and combines p / 2^(k+1) blocks
 * after round k - 1's COMBINE, partners in step; the rounds sum to
 * (p-1)/p of the buffer.  Pairwise (B = p): the ring's, each of its p - 1
 * receives waiting for the step before it (a COMBINE but for the prefix's
 * first input, whose combine is the final one instead). */
static double formula(algo a, int32_t p, double d, double c, double lat)
{
    ir_fold f = ir_fold_of(p);
    double share = (p - 1.0) / p;
    if (a != HALVING)
        return (p - 1) * (lat + (d - lat) / p + c / p);
    return f.rounds * lat + share * (d - lat) + share * c;
}

static void test_makespan_formula(void **state)
{
    (void)state;
    const double costs[][3] = {{1, 1, 0}, {1, 0, 0}, {0, 1, 0}, {2, 1, 0}, {1, 3, 0},
                               {1, 0.5, 0.25}, {3, 2, 1}};
    for (size_t i = 0; i < sizeof costs / sizeof costs[0]; i++)
        for (int32_t p = 1; p <= 17; p++)
            for (algo a = RING; a <= PAIRWISE; a++) {
                if (a == HALVING && ir_fold_of(p).rem)
                    continue;
                trd_params prm = params_of(p, 1, false);
                prm.d = costs[i][0];
                prm.c = costs[i][1];
                prm.latency = costs[i][2];
                trd_plan *plan = tu_plan(names[a], &prm);
                double t = trd_plan_makespan(plan), want = formula(a, p, prm.d, prm.c,
                                                                   prm.latency);
                /* the engine keeps a block's share of the buffer as a float */
                TU_CHECK(fabs(t - want) <= 1e-6 * fmax(1.0, want), "%s p=%d d=%g c=%g "
                         "latency=%g: makespan %.12g, formula %.12g", names[a], p, prm.d,
                         prm.c, prm.latency, t, want);
                trd_plan_free(plan);
            }
}

/* ---- Real runs on threads. ---- */

typedef enum value { V_INT64, V_DOUBLE, V_MATRIX, V_INTERVAL } value;
static const size_t value_size[] = {sizeof(int64_t), sizeof(double), sizeof(trd_matrix2x2),
                                    sizeof(trd_interval)};

static trd_matrix2x2 mat_mul(trd_matrix2x2 x, trd_matrix2x2 y)
{
    uint64_t q = TRD_MATRIX_P;
    return (trd_matrix2x2){
        .a = (uint32_t)(((uint64_t)x.a * y.a + (uint64_t)x.b * y.c) % q),
        .b = (uint32_t)(((uint64_t)x.a * y.b + (uint64_t)x.b * y.d) % q),
        .c = (uint32_t)(((uint64_t)x.c * y.a + (uint64_t)x.d * y.c) % q),
        .d = (uint32_t)(((uint64_t)x.c * y.b + (uint64_t)x.d * y.d) % q)};
}

/* Rank r's input of count elements. */
static void fill(value v, void *buf, int64_t count, int32_t r)
{
    for (int64_t i = 0; i < count; i++) {
        int64_t w = (int64_t)(rt_word(11, r, i) % 2001) - 1000;
        if (v == V_INT64)
            ((int64_t *)buf)[i] = w;
        else if (v == V_DOUBLE)
            ((double *)buf)[i] = (double)w;
    }
    if (v == V_MATRIX)
        assert_int_equal(trd_matrix2x2_fill(buf, count, r), TRD_OK);
    if (v == V_INTERVAL)
        assert_int_equal(trd_interval_fill(buf, count, r), TRD_OK);
}

/* Element i of the fold x_0 (+) ... (+) x_{p-1} in rank order, in plain C
 * (the matrix operator is inout = in x inout: left times right). */
static void fold_at(value v, void **in, int64_t i, int32_t p, void *at)
{
    if (v == V_MATRIX) {
        trd_matrix2x2 mat = ((trd_matrix2x2 *)in[0])[i];
        for (int32_t r = 1; r < p; r++)
            mat = mat_mul(mat, ((trd_matrix2x2 *)in[r])[i]);
        *(trd_matrix2x2 *)at = mat;
    } else if (v == V_INTERVAL) {
        *(trd_interval *)at = (trd_interval){((trd_interval *)in[0])[i].lo,
                                             ((trd_interval *)in[p - 1])[i].hi};
    } else if (v == V_INT64) {
        int64_t sum = 0;
        for (int32_t r = 0; r < p; r++)
            sum += ((int64_t *)in[r])[i];
        *(int64_t *)at = sum;
    } else {
        double sum = 0.0;
        for (int32_t r = 0; r < p; r++)
            sum += ((double *)in[r])[i];
        *(double *)at = sum;
    }
}

static void *expected(value v, void **in, int64_t count, int32_t p)
{
    unsigned char *out = tu_alloc((size_t)count, value_size[v]);
    for (int64_t i = 0; i < count; i++)
        fold_at(v, in, i, p, out + (size_t)i * value_size[v]);
    return out;
}

static trd_op *op_of(value v)
{
    trd_op *op = NULL;
    trd_status st = v == V_INT64    ? trd_op_builtin(&op, TRD_OP_SUM, TRD_INT64)
                    : v == V_DOUBLE ? trd_op_builtin(&op, TRD_OP_SUM, TRD_DOUBLE)
                    : v == V_MATRIX ? trd_op_matrix2x2(&op)
                                    : trd_op_interval(&op);
    assert_int_equal(st, TRD_OK);
    return op;
}

/* Runs algorithm a's plan on p threads with values v; rank r's part
 * (elements [r count/p, (r+1) count/p), the blocks of part r) must be the
 * rank-order fold. */
static void run_for_real(algo a, int32_t p, int32_t m, value v, int64_t count)
{
    bool nc = v == V_MATRIX || v == V_INTERVAL;
    trd_params prm = params_of(p, m, nc);
    trd_plan *plan = tu_plan(names[a], &prm);
    rt_plan_run x = {.plan = plan, .count = count, .op = op_of(v),
                     .buf = tu_alloc((size_t)p, sizeof *x.buf)};
    void **in = tu_alloc((size_t)p, sizeof *in);
    for (int32_t r = 0; r < p; r++) {
        in[r] = tu_alloc((size_t)count, value_size[v]);
        x.buf[r] = tu_alloc((size_t)count, value_size[v]);
        fill(v, in[r], count, r);
        memcpy(x.buf[r], in[r], (size_t)count * value_size[v]);
    }
    unsigned char *want = expected(v, in, count, p);
    if (v == V_MATRIX) { /* the loop's orientation is the operator's */
        trd_matrix2x2 *lib = tu_alloc((size_t)count, sizeof *lib);
        assert_int_equal(trd_matrix2x2_expected(lib, count, 0, p - 1), TRD_OK);
        TU_CHECK(!memcmp(lib, want, (size_t)count * sizeof *lib), "the plain matrix loop is "
                 "not trd_matrix2x2_expected");
        free(lib);
    }
    char what[96];
    snprintf(what, sizeof what, "%s p=%d m=%d values %d", names[a], p, m, (int)v);
    rt_run_plan_ok(&x, p, what);
    for (int32_t r = 0; r < p; r++) {
        int64_t lo = r * count / p, hi = (r + 1) * count / p;
        size_t e = value_size[v];
        int64_t bad = rt_first_diff((unsigned char *)x.buf[r] + (size_t)lo * e,
                                    want + (size_t)lo * e, hi - lo, e);
        TU_CHECK(bad < 0, "%s rank %d: element %lld of its part [%lld, %lld) is not the "
                 "rank-order fold", what, r, (long long)(lo + bad), (long long)lo,
                 (long long)hi);
        free(in[r]);
    }
    free(want);
    free(in);
    rt_plan_run_free(&x, p);
    trd_plan_free(plan);
}

static void test_runs(void **state)
{
    (void)state;
    const int32_t ps[] = {1, 2, 3, 5, 6, 8, 13};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        for (int32_t m = 1; m <= M_LAST; m++) {
            int64_t count = 7 * ps[i] * m + 3; /* parts of uneven sizes */
            for (algo a = RING; a <= PAIRWISE; a++) {
                run_for_real(a, ps[i], m, V_INT64, count);
                run_for_real(a, ps[i], m, V_DOUBLE, count);
            }
            run_for_real(PAIRWISE, ps[i], m, V_MATRIX, count);
            run_for_real(PAIRWISE, ps[i], m, V_INTERVAL, count);
        }
}

/* ---- Refusals. ---- */

static void test_refusals(void **state)
{
    (void)state;
    for (algo a = RING; a <= PAIRWISE; a++) {
        size_t index = tu_exchange_algo(names[a]);
        TU_CHECK(trd_algo_runs(index, TRD_COLL_REDUCE_SCATTER) &&
                     !trd_algo_runs(index, TRD_COLL_ALLREDUCE) &&
                     !trd_algo_runs(index, TRD_COLL_REDUCE) &&
                     trd_algo_commutative_only(index) == (a != PAIRWISE) &&
                     trd_algo_reproducible(index),
                 "%s: its row's flags", names[a]);
        trd_params prm = params_of(6, 1, a != PAIRWISE);
        if (a != PAIRWISE)
            tu_expect_refused(names[a], &prm, TRD_EUNSUPPORTED, "commutative");
        prm = params_of(6, 1, false);
        prm.collective = TRD_COLL_REDUCE;
        tu_expect_refused(names[a], &prm, TRD_EUNSUPPORTED, "reduce-scatter");
        prm.allreduce = true; /* reduce with allreduce set: an allreduce */
        tu_expect_refused(names[a], &prm, TRD_EUNSUPPORTED, "allreduce");
        prm.collective = TRD_COLL_REDUCE_SCATTER; /* both set: contradictory */
        tu_expect_refused(names[a], &prm, TRD_EINVAL, "allreduce is set");
        prm = params_of(6, 1, false);
        prm.collective = TRD_COLL_SCAN;
        tu_expect_refused(names[a], &prm, TRD_EUNSUPPORTED, "scan");
    }
    const char *others[] = {"ring", "rabenseifner", "recursive-doubling", "binomial"};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        trd_params prm = params_of(6, 1, false);
        tu_expect_refused(others[i], &prm, TRD_EUNSUPPORTED, "not a reduce-scatter");
    }
}

/* usage: test_reduce_scatter_plans [PATTERN [SKIP]] (rt_filters). */
int main(int argc, char **argv)
{
    rt_filters(argc, argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refusals),
        {"ring", test_algo, NULL, NULL, (void *)&algos[RING]},
        {"halving", test_algo, NULL, NULL, (void *)&algos[HALVING]},
        {"pairwise", test_algo, NULL, NULL, (void *)&algos[PAIRWISE]},
        cmocka_unit_test(test_makespan_formula),
        cmocka_unit_test(test_runs),
    };
    return cmocka_run_group_tests_name("reduce_scatter_plans", tests, NULL, NULL);
}
