/* test_scan_plans.c: the scan and exscan algorithms (scan-chain,
 * scan-recursive-doubling, scan-binomial; src/plan/scan_*.c) against
 * oracles written here:
 *
 *   - for p = 1..33 ranks, m = 1..3 segments, scan and exscan, commutative
 *     and non-commutative, of the plan as it runs (fused, plan/fuse.c) and
 *     as its builder wrote it: the replay of tests/ir_replay.h (well formed,
 *     matched in MPI order, no race, no deadlock, and rank r's slot 0
 *     ending with x_0 .. x_r, exscan x_0 .. x_{r-1} for r > 0, each once, as
 *     the interval built by joining adjacent rank intervals in order when
 *     non-commutative) and the scratch slots each file's head states;
 *   - the counts behind the cost formulas of the files' heads: B = m, and
 *     per rank the messages sent and the blocks combined;
 *   - the makespan (the simulator's) is finite and >= 0, and the value by
 *     hand (scan-chain, every m) or at most the bound by hand (the others,
 *     m = 1; recursive doubling's is exact for p a power of two) of the
 *     files' heads, latency 0 (makespan_ok);
 *   - run for real on threads with the non-commutative 2x2 matrix product:
 *     rank r's buffer is the rank-order product of ranks 0..r (exscan:
 *     0..r-1, r > 0), computed by a plain loop here;
 *   - refusals: these algorithms for a reduce, an allreduce or a
 *     reduce-scatter, an allreduce algorithm for a scan or an exscan. */
#include "ir_replay.h"
#include "runtime_util.h"
#include "plan/builders.h" /* trd_plan_create_unfused */

#define P_LAST 33
#define M_LAST 3
#define COUNT 7 /* matrices per rank in the real runs (>= 3 blocks) */

typedef enum algo { CHAIN, RD, BINOMIAL } algo;
static const char *const names[] = {"scan-chain", "scan-recursive-doubling", "scan-binomial"};
static const algo algos[] = {CHAIN, RD, BINOMIAL};
static const int32_t scratch[] = {1, 2, 1}; /* the files' heads */

/* Lowest set bit of x > 0 as its exponent. */
static int32_t low_bit(int64_t x)
{
    int32_t j = 0;
    while (!(x >> j & 1))
        j++;
    return j;
}

/* scan_binomial.c's head: at v of q ranks, with 2^j the lowest set bit of
 * v + 1, one up-sweep message if v + 2^j < q and one down-sweep message
 * per k < j with v + 2^k < q; j up-sweep combines, and one in the
 * down-sweep unless v + 1 is a power of two. */
static void binomial_counts(int32_t v, int32_t q, int64_t *msgs, int64_t *comb)
{
    int32_t j = low_bit((int64_t)v + 1);
    *msgs = (int64_t)v + ((int64_t)1 << j) < q;
    for (int32_t k = 0; k < j; k++)
        *msgs += (int64_t)v + ((int64_t)1 << k) < q;
    *comb = j + ((int64_t)v + 1 != (int64_t)1 << j);
}

/* scan_recursive_doubling.c's head: one message and one combine per round
 * k with a partner r XOR 2^k < p, and a second combine in a round with a
 * lower partner after the first round with a higher one (scan) or with a
 * lower one (exscan). */
static void rd_counts(int32_t r, int32_t p, bool exscan, int64_t *msgs, int64_t *comb)
{
    bool seen = false; /* the partial result and the result differ */
    *msgs = *comb = 0;
    for (int64_t mask = 1; mask < p; mask *= 2) {
        int64_t dst = r ^ mask;
        if (dst >= p)
            continue;
        ++*msgs;
        *comb += 1 + (dst < r && seen);
        seen |= exscan ? dst < r : dst > r;
    }
}

/* Messages and blocks combined by rank r per segment. */
static void expect_counts(algo a, int32_t p, int32_t r, bool exscan, int64_t *msgs,
                          int64_t *comb)
{
    if (a == CHAIN) { /* scan_chain.c's head */
        *msgs = r < p - 1;
        *comb = r > 0 && (!exscan || r < p - 1);
    } else if (a == RD) {
        rd_counts(r, p, exscan, msgs, comb);
    } else if (!exscan) {
        binomial_counts(r, p, msgs, comb);
    } else if (r == 0) { /* the shift, then the scan of ranks 1 .. p-1 */
        *msgs = p > 1;
        *comb = 0;
    } else {
        binomial_counts(r - 1, p - 1, msgs, comb);
        *msgs += r < p - 1;
    }
}

static void check_counts(const ir_replay *rp, algo a, int32_t m, bool exscan)
{
    TU_CHECK(rp->B == m, "%s: B = %d, expected %d", ir_where, rp->B, m);
    for (int32_t r = 0; r < rp->p; r++) {
        int64_t got[3], want_msgs, want_comb;
        ir_rank_counts(rp, r, got);
        expect_counts(a, rp->p, r, exscan, &want_msgs, &want_comb);
        TU_CHECK(got[0] == want_msgs * m && got[2] == want_comb * m,
                 "%s rank %d: %lld messages, %lld blocks combined; expected %lld, %lld",
                 ir_where, r, (long long)got[0], (long long)got[2], (long long)(want_msgs * m),
                 (long long)(want_comb * m));
    }
}

/* Floor of log2 x, x >= 1. */
static int32_t log2_floor(int64_t x)
{
    int32_t k = 0;
    while (x >> (k + 1))
        k++;
    return k;
}

/* The makespans by hand (latency 0, d >= c, recv_combine_saving 0: the
 * simulator charges a message of a 1/m segment d/m, its combine c/m, and a
 * message combined on arrival, RECV_COMBINE, the same d/m then c/m; COPY
 * is free), from the files' heads:
 *   - scan-chain: segment m - 1 leaves rank 0 after the m transfers before
 *     it on the link to rank 1 (m d/m = d: the links are the bottleneck,
 *     d >= c) and crosses p - 2 more links, each a transfer and a combine
 *     at the rank it leaves, then the last rank combines it (scan only):
 *     d + (p - 2)(d + c)/m + c/m, exscan d + (p - 2)(d + c)/m.  For m = 1,
 *     (p - 1)(d + c) and (p - 1) d + (p - 2) c;
 *   - scan-recursive-doubling, m = 1: at most L d + (2L - 1) c, L =
 *     ceil(log2 p), equal for p a power of two;
 *   - scan-binomial, m = 1: at most 2 floor(log2 q)(d + c) over q = p
 *     ranks, exscan q = p - 1 after the shift's d.
 * Whether t is right; *want the value (or bound). */
static bool makespan_ok(algo a, const trd_params *prm, bool exscan, double t, double *want)
{
    double p = (double)prm->n, m = (double)prm->segments, d = prm->d, c = prm->c;
    double tol = 1e-6 * fmax(1.0, t); /* the engine keeps block shares as floats */
    *want = 0.0;
    if (p < 2)
        return fabs(t) <= tol;
    if (a == CHAIN) {
        *want = d + (p - 2) * (d + c) / m + (exscan ? 0.0 : c / m);
        return fabs(t - *want) <= tol;
    }
    if (m > 1)
        return true;
    if (a == RD) {
        double L = log2_floor(prm->n - 1) + 1.0;
        bool power = (prm->n & (prm->n - 1)) == 0;
        *want = L * d + (2 * L - 1) * c;
        return power ? fabs(t - *want) <= tol : t <= *want + tol;
    }
    int64_t q = exscan ? prm->n - 1 : prm->n;
    *want = (exscan ? d : 0.0) + 2.0 * log2_floor(q) * (d + c);
    return t <= *want + tol;
}

static trd_params params_of(int32_t p, int32_t m, trd_collective coll, bool nc)
{
    trd_params prm = tu_params(p, 1.0, 0.5, 0);
    prm.segments = m;
    prm.collective = coll;
    prm.noncommutative = nc;
    return prm;
}

static void check_case(algo a, int32_t p, int32_t m, trd_collective coll, bool nc)
{
    snprintf(ir_where, sizeof ir_where, "%s %s p=%d m=%d%s", names[a],
             trd_collective_name(coll), p, m, nc ? " nc" : "");
    trd_params prm = params_of(p, m, coll, nc);
    trd_plan *raw = NULL, *plan = tu_plan(names[a], &prm);
    TU_CHECK(trd_plan_create_unfused(&raw, names[a], &prm) == TRD_OK, "%s: %s", ir_where,
             trd_errmsg());
    ir_replay rp;
    ir_replay_plan(&rp, raw, nc, scratch[a], coll); /* the program as the builder wrote it */
    ir_unload(&rp);
    trd_plan_free(raw);
    ir_replay_plan(&rp, plan, nc, scratch[a], coll); /* and as it runs */
    check_counts(&rp, a, m, coll == TRD_COLL_EXSCAN);
    double t = trd_plan_makespan(plan);
    TU_CHECK(isfinite(t) && t >= 0, "%s: makespan %g", ir_where, t);
    double want;
    TU_CHECK(makespan_ok(a, &prm, coll == TRD_COLL_EXSCAN, t, &want),
             "%s: makespan %.12g, by hand %.12g", ir_where, t, want);
    ir_unload(&rp);
    trd_plan_free(plan);
}

/* One algorithm (*state) over the whole matrix. */
static void test_algo(void **state)
{
    algo a = *(const algo *)*state;
    for (int32_t p = 1; p <= P_LAST; p++)
        for (int32_t m = 1; m <= M_LAST; m++)
            for (int nc = 0; nc < 2; nc++) {
                check_case(a, p, m, TRD_COLL_SCAN, nc);
                check_case(a, p, m, TRD_COLL_EXSCAN, nc);
            }
}

/* out = a x b over the integers mod TRD_MATRIX_P. */
static trd_matrix2x2 mat_mul(trd_matrix2x2 a, trd_matrix2x2 b)
{
    const uint64_t P = TRD_MATRIX_P;
    return (trd_matrix2x2){
        .a = (uint32_t)(((uint64_t)a.a * b.a + (uint64_t)a.b * b.c) % P),
        .b = (uint32_t)(((uint64_t)a.a * b.b + (uint64_t)a.b * b.d) % P),
        .c = (uint32_t)(((uint64_t)a.c * b.a + (uint64_t)a.d * b.c) % P),
        .d = (uint32_t)(((uint64_t)a.c * b.b + (uint64_t)a.d * b.d) % P)};
}

/* Rank r's buffer after the run: element i of x_0 x ... x x_hi (hi = r,
 * exscan r - 1), or nothing to check (exscan, rank 0). */
static void check_rank(const trd_matrix2x2 (*in)[COUNT], const trd_matrix2x2 *got,
                       int32_t hi, const char *what, int32_t r)
{
    for (int64_t i = 0; i < COUNT && hi >= 0; i++) {
        trd_matrix2x2 want = in[0][i];
        for (int32_t q = 1; q <= hi; q++)
            want = mat_mul(want, in[q][i]);
        TU_CHECK(!memcmp(&want, &got[i], sizeof want), "%s rank %d element %lld: not the "
                 "product of ranks 0..%d in rank order", what, r, (long long)i, hi);
    }
}

static void run_for_real(algo a, trd_collective coll, int32_t p, int32_t m)
{
    char what[96];
    snprintf(what, sizeof what, "%s %s p=%d m=%d", names[a], trd_collective_name(coll), p, m);
    trd_params prm = params_of(p, m, coll, true);
    trd_plan *plan = tu_plan(names[a], &prm);
    rt_plan_run x = {.plan = plan, .count = COUNT, .buf = tu_alloc((size_t)p, sizeof *x.buf)};
    assert_int_equal(trd_op_matrix2x2(&x.op), TRD_OK);
    trd_matrix2x2 (*in)[COUNT] = tu_alloc((size_t)p, sizeof *in);
    for (int32_t r = 0; r < p; r++) {
        assert_int_equal(trd_matrix2x2_fill(in[r], COUNT, r), TRD_OK);
        x.buf[r] = tu_alloc(COUNT, sizeof in[r]);
        memcpy(x.buf[r], in[r], sizeof in[r]);
    }
    rt_run_plan_ok(&x, p, what);
    for (int32_t r = 0; r < p; r++)
        check_rank((const trd_matrix2x2(*)[COUNT])in, x.buf[r],
                   coll == TRD_COLL_EXSCAN ? r - 1 : r, what, r);
    free(in);
    rt_plan_run_free(&x, p);
    trd_plan_free(plan);
}

static void test_runs(void **state)
{
    (void)state;
    /* The plain loop agrees with the checker's contract (docs/OPERATORS.md). */
    trd_matrix2x2 in[3][COUNT], want[COUNT];
    for (int32_t r = 0; r < 3; r++)
        assert_int_equal(trd_matrix2x2_fill(in[r], COUNT, r), TRD_OK);
    assert_int_equal(trd_matrix2x2_expected(want, COUNT, 0, 2), TRD_OK);
    check_rank((const trd_matrix2x2(*)[COUNT])in, want, 2, "the plain loop", 2);
    const int32_t ps[] = {1, 2, 3, 5, 8}, ms[] = {1, 3};
    for (algo a = CHAIN; a <= BINOMIAL; a++)
        for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
            for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++) {
                run_for_real(a, TRD_COLL_SCAN, ps[i], ms[k]);
                run_for_real(a, TRD_COLL_EXSCAN, ps[i], ms[k]);
            }
}

static void expect_refused(const char *name, trd_collective coll)
{
    trd_params prm = params_of(5, 1, coll, false);
    tu_expect_refused(name, &prm, TRD_EUNSUPPORTED, "");
}

/* A reduce, an allreduce (either way of asking) or a reduce-scatter from a
 * scan algorithm, a scan or an exscan from an allreduce one: refused. */
static void test_refusals(void **state)
{
    (void)state;
    for (algo a = CHAIN; a <= BINOMIAL; a++) {
        size_t index = tu_exchange_algo(names[a]);
        TU_CHECK(trd_algo_runs(index, TRD_COLL_SCAN) && trd_algo_runs(index, TRD_COLL_EXSCAN) &&
                     trd_algo_reproducible(index) && !trd_algo_commutative_only(index),
                 "%s: its registry row", names[a]);
        expect_refused(names[a], TRD_COLL_REDUCE);
        expect_refused(names[a], TRD_COLL_ALLREDUCE);
        expect_refused(names[a], TRD_COLL_REDUCE_SCATTER);
        trd_params prm = params_of(5, 1, TRD_COLL_REDUCE, false);
        prm.allreduce = true;
        tu_expect_refused(names[a], &prm, TRD_EUNSUPPORTED, "");
    }
    expect_refused("ring", TRD_COLL_SCAN);
    expect_refused("ring", TRD_COLL_EXSCAN);
    expect_refused("recursive-doubling", TRD_COLL_SCAN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refusals),
        {"scan-chain", test_algo, NULL, NULL, (void *)&algos[CHAIN]},
        {"scan-recursive-doubling", test_algo, NULL, NULL, (void *)&algos[RD]},
        {"scan-binomial", test_algo, NULL, NULL, (void *)&algos[BINOMIAL]},
        cmocka_unit_test(test_runs),
    };
    return cmocka_run_group_tests_name("scan_plans", tests, NULL, NULL);
}
