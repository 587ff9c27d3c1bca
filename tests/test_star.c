/* test_star.c: all-reduce on the n-star graph (treduce/star.h,
 * docs/STAR.md; Oh, Choi and Primeaux 2005).
 *   - the graph: ranks <-> permutations in lexicographic order, links, the
 *     recursive structure (n copies of S_{n-1} joined by link n, each pair
 *     by (n-2)! links);
 *   - the verifier's replay of both schedules for n = 1..7 (S_7: 5040
 *     nodes) with several seeds of random integers: every node ends with
 *     the sequential sum and all n! contributions, none twice, single-port
 *     along the round's link, n(n-1)/2 steps (Theorem 3) for "star";
 *   - the verifier catches broken schedules: the other reading of Fig. 2
 *     step 4 (docs/STAR.md), a missing round, a transfer along a wrong link,
 *     two messages to one node in a round;
 *   - Theorem 3 and Table 2 for n = 3..10 (the generators' counts, the
 *     closed forms and the table as printed, its n = 8 typo included);
 *   - the IR plans of both algorithms for n = 1..5 and 1..2 segments
 *     replayed by tests/ir_replay.h, each rank's message count, and the
 *     simulated makespan under unit costs equal to the step count;
 *   - real allreduces on threads for S_3, S_4 and S_5 (6, 24, 120 ranks)
 *     against the sequential fold;
 *   - refusals: p no factorial, a non-commutative operator, a reduce, bad
 *     n, unknown names. */
#include "ir_replay.h"
#include "plan/star.h"
#include "runtime_util.h"

static const char *const algos[] = {"star", "star-reduce-bcast"};

/* ---- The graph ---- */

static void test_graph(void **state)
{
    (void)state;
    for (int32_t n = 1; n <= 7; n++) {
        int64_t nodes = trd_star_factorial(n);
        assert_int_equal(trd_star_dimension(nodes), n == 1 ? 1 : n);
        uint8_t prev[TRD_STAR_N_MAX] = {0}, perm[TRD_STAR_N_MAX];
        for (int64_t r = 0; r < nodes; r++) {
            trd_star_label(n, r, perm);
            TU_CHECK(trd_star_rank(n, perm) == r, "S_%d: rank %lld", n, (long long)r);
            TU_CHECK(r == 0 || memcmp(prev, perm, (size_t)n) < 0, "S_%d: rank %lld is not "
                     "after rank %lld in lexicographic order", n, (long long)r, (long long)r - 1);
            memcpy(prev, perm, (size_t)n);
        }
        trd_star_label(n, nodes - 1, perm); /* n ... 2 1 */
        TU_CHECK(perm[0] == n && perm[n - 1] == 1, "S_%d: last rank", n);
        trd_star_graph g;
        assert_int_equal(trd_star_graph_make(&g, n), TRD_OK);
        int64_t between[TRD_STAR_N_MAX + 1][TRD_STAR_N_MAX + 1] = {{0}};
        for (int32_t r = 0; n > 1 && r < g.nodes; r++)
            for (int32_t k = 2; k <= n; k++) {
                int32_t v = trd_star_neighbor(&g, r, k);
                uint8_t a[TRD_STAR_N_MAX], b[TRD_STAR_N_MAX];
                trd_star_label(n, r, a);
                trd_star_label(n, v, b);
                TU_CHECK(a[0] == b[k - 1] && b[0] == a[k - 1] && trd_star_neighbor(&g, v, k) == r,
                         "S_%d: link %d of rank %d", n, k, r);
                /* links 2..n-1 stay in the copy S_{n-1}^i (last symbol i), link n leaves it */
                TU_CHECK((a[n - 1] == b[n - 1]) == (k < n), "S_%d: link %d of rank %d", n, k, r);
                between[a[n - 1]][b[n - 1]] += k == n;
            }
        for (int32_t i = 1; n > 1 && i <= n; i++) /* copies i != j joined by (n-2)! links */
            for (int32_t j = 1; j <= n; j++)
                TU_CHECK(between[i][j] == (i == j ? 0 : trd_star_factorial(n - 2)),
                         "S_%d: %lld links between copies %d and %d", n,
                         (long long)between[i][j], i, j);
        trd_star_graph_free(&g);
    }
    const int64_t others[] = {0, 3, 4, 5, 7, 23, 25, 119, 121, 5041};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        TU_CHECK(trd_star_dimension(others[i]) == 0, "%lld is no factorial",
                 (long long)others[i]);
    TU_CHECK(trd_star_factorial(4) == 24 && trd_star_factorial(10) == 3628800, "factorial");
}

/* ---- The verifier's replay (random integer values) ---- */

static void test_replay(void **state)
{
    (void)state;
    for (int32_t n = 1; n <= 7; n++)
        for (int a = 0; a < 2; a++)
            for (uint64_t seed = 1; seed <= (n < 7 ? 3u : 1u); seed++) {
                trd_star_report r;
                assert_int_equal(trd_star_verify(algos[a], n, seed, &r), TRD_OK);
                int64_t want = a == 0 ? (int64_t)n * (n - 1) / 2 : trd_star_steps_sheu(n);
                TU_CHECK(r.verified && r.steps == want && r.expected_steps == want &&
                             r.duplicates == 0 && r.port_violations == 0 &&
                             r.incomplete == 0 && r.wrong_sums == 0 &&
                             r.nodes == trd_star_factorial(n),
                         "%s S_%d seed %llu: steps %lld (want %lld) duplicates %lld port %lld "
                         "incomplete %lld wrong sums %lld", algos[a], n,
                         (unsigned long long)seed, (long long)r.steps, (long long)want,
                         (long long)r.duplicates, (long long)r.port_violations,
                         (long long)r.incomplete, (long long)r.wrong_sums);
                /* star: every node sends in every round; the baseline's tree: 2 (n! - 1) */
                int64_t xfers = a == 0 ? want * r.nodes : 2 * (r.nodes - 1);
                TU_CHECK(r.transfers == xfers, "%s S_%d: %lld transfers, want %lld", algos[a],
                         n, (long long)r.transfers, (long long)xfers);
            }
}

/* Every round of the paper's schedule is one link dimension, every node
 * in it once as a sender; the link sequence is 2 | 3 2 | 4 3 2 | ... */
static void test_round_structure(void **state)
{
    (void)state;
    for (int32_t n = 2; n <= 6; n++) {
        trd_star_sched s;
        trd_star_sched_init(&s, n, true);
        assert_int_equal(trd_star_generate(&s), TRD_OK);
        size_t i = 0;
        for (int32_t k = 2; k <= n; k++)
            for (int32_t d = k; d >= 2; d--, i++) {
                const trd_star_round *rd = &s.round[i];
                TU_CHECK(rd->link == d && rd->count == (size_t)s.nodes &&
                             rd->send == (d == k ? TRD_STAR_SEND_RESULT : TRD_STAR_SEND_OUTGOING) &&
                             rd->recv == (d == k ? TRD_STAR_RECV_KEEP : TRD_STAR_RECV_ADD),
                         "S_%d round %zu: link %d (want %d), %zu transfers", n, i, rd->link, d,
                         rd->count);
            }
        TU_CHECK(i == s.rounds, "S_%d: %zu rounds", n, s.rounds);
        trd_star_sched_free(&s);
    }
}

/* ---- The verifier catches broken schedules ---- */

static trd_star_report replay_of(const trd_star_sched *s)
{
    trd_star_report r;
    assert_int_equal(trd_star_replay(s, 7, &r), TRD_OK);
    return r;
}

static void test_verifier_catches(void **state)
{
    (void)state;
    for (int32_t n = 3; n <= 5; n++) {
        trd_star_sched s;
        trd_star_sched_init(&s, n, true);
        assert_int_equal(trd_star_generate(&s), TRD_OK);
        trd_star_report r = replay_of(&s);
        TU_CHECK(!r.duplicates && !r.port_violations && !r.incomplete && !r.wrong_sums,
                 "S_%d: the schedule itself fails", n);
        /* Fig. 2 step 4 read as "send the accumulated sum" (docs/STAR.md) */
        for (size_t i = 0; i < s.rounds; i++)
            if (s.round[i].send == TRD_STAR_SEND_OUTGOING)
                s.round[i].send = TRD_STAR_SEND_RESULT;
        r = replay_of(&s);
        TU_CHECK(r.duplicates > 0 && r.wrong_sums > 0, "S_%d: accumulated sums forwarded: "
                 "%lld duplicates, %lld wrong sums", n, (long long)r.duplicates,
                 (long long)r.wrong_sums);
        trd_star_sched_free(&s);

        trd_star_sched_init(&s, n, true);
        assert_int_equal(trd_star_generate(&s), TRD_OK);
        s.rounds--; /* the last round (link 2) lost */
        r = replay_of(&s);
        TU_CHECK(r.incomplete == r.nodes && r.wrong_sums > 0, "S_%d: a round lost: %lld "
                 "incomplete", n, (long long)r.incomplete);
        s.rounds++;
        s.round[0].link = 3; /* transfers along link 2 in a round of link 3 */
        trd_star_xfer *x = &s.xfer[s.round[1].first];
        x[1].to = x[0].to; /* two messages into one node in round 1 */
        r = replay_of(&s);
        TU_CHECK(r.port_violations == r.nodes + 1, "S_%d: %lld port violations, want %lld", n,
                 (long long)r.port_violations, (long long)r.nodes + 1);
        trd_star_sched_free(&s);
    }
}

/* ---- Theorem 3 and Table 2, n = 3..10 ---- */

static void test_table2(void **state)
{
    (void)state;
    /* as printed in the paper */
    const int64_t tseng[] = {12, 27, 48, 75, 108, 127, 192, 243};
    const int64_t sheu[] = {6, 12, 18, 26, 34, 42, 50, 60};
    const int64_t ours[] = {3, 6, 10, 15, 21, 28, 36, 45};
    for (int32_t n = 3; n <= 10; n++) {
        int i = n - 3;
        int64_t star, rb;
        assert_int_equal(trd_star_steps("star", n, &star), TRD_OK);
        assert_int_equal(trd_star_steps("star-reduce-bcast", n, &rb), TRD_OK);
        TU_CHECK(star == ours[i] && star == trd_star_steps_theorem3(n) &&
                     star == (int64_t)n * (n - 1) / 2,
                 "n = %d: star %lld steps, Table 2 'Ours' %lld", n, (long long)star,
                 (long long)ours[i]);
        TU_CHECK(rb == sheu[i] && rb == trd_star_steps_sheu(n), "n = %d: reduce+broadcast %lld "
                 "steps, Table 2 'Sheu' %lld", n, (long long)rb, (long long)sheu[i]);
        int64_t t = trd_star_steps_tseng(n);
        TU_CHECK(t == 3 * (int64_t)(n - 1) * (n - 1) && (t == tseng[i]) == (n != 8),
                 "n = %d: Tseng 3(n-1)^2 = %lld, printed %lld", n, (long long)t,
                 (long long)tseng[i]);
    }
    TU_CHECK(trd_star_steps_tseng(8) == 147, "the n = 8 typo: 147, printed 127");
}

/* ---- The IR plans ---- */

static void check_plan(const char *algo, int32_t n, int32_t m)
{
    snprintf(ir_where, sizeof ir_where, "%s S_%d m=%d", algo, n, m);
    trd_params prm = tu_params(trd_star_factorial(n), 1.0, 0.0, 0);
    prm.allreduce = true;
    prm.segments = m;
    trd_plan *plan = tu_plan(algo, &prm);
    ir_replay rp;
    ir_replay_plan(&rp, plan, false, -1, TRD_COLL_ALLREDUCE);
    int64_t steps;
    assert_int_equal(trd_star_steps(algo, n, &steps), TRD_OK);
    for (int32_t r = 0; strcmp(algo, "star") == 0 && r < rp.p; r++) {
        int64_t sends = 0; /* one message a round */
        for (size_t g = rp.first[r]; g < rp.first[r + 1]; g++)
            sends += rp.step[g]->kind == TRD_STEP_SEND || rp.step[g]->kind == TRD_STEP_SEND_INPUT;
        TU_CHECK(sends == steps * m, "%s rank %d: %lld messages", ir_where, r, (long long)sends);
    }
    double t = trd_plan_makespan(plan); /* one-port full duplex, d = 1, c = 0 */
    TU_CHECK(m > 1 || t == (double)steps, "%s: simulated makespan %g, %lld steps", ir_where, t,
             (long long)steps);
    ir_unload(&rp);
    trd_plan_free(plan);
}

static void test_ir(void **state)
{
    (void)state;
    for (int a = 0; a < 2; a++)
        for (int32_t n = 1; n <= 5; n++)
            for (int32_t m = 1; m <= 2; m++)
                check_plan(algos[a], n, m);
}

/* ---- Real allreduces on threads ---- */

typedef struct real_ctx {
    const char *algo;
    rt_opid op;
    int64_t count;
    rt_log log;
} real_ctx;

static trd_status real_rank(trd_comm *comm, int32_t rank, void *arg)
{
    real_ctx *x = arg;
    int32_t p = trd_comm_size(comm);
    size_t bytes = (size_t)x->count * rt_elem(x->op);
    unsigned char *in = malloc(bytes + 1), *out = malloc(bytes + 1), *want = malloc(bytes + 1);
    trd_op *op = rt_op_create(x->op);
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = x->algo;
    trd_status st = in && out && want ? rt_fill(x->op, in, x->count, rank, 99) : TRD_ENOMEM;
    if (st == TRD_OK)
        st = trd_allreduce(comm, in, out, x->count, op, &o);
    if (st == TRD_OK && (rt_expected(x->op, want, x->count, p, 99) != TRD_OK ||
                         memcmp(out, want, bytes) != 0))
        rt_failf(&x->log, "%s p=%d %s rank %d: wrong result", x->algo, (int)p,
                 rt_op_names[x->op], (int)rank);
    trd_op_free(op);
    free(in);
    free(out);
    free(want);
    return st;
}

static void test_real_threads(void **state)
{
    (void)state;
    const rt_opid ops[] = {RT_I32_SUM, RT_F64_SUM, RT_U64_BXOR, RT_I64_PROD};
    for (int32_t n = 3; n <= 5; n++)
        for (int a = 0; a < 2; a++)
            for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
                real_ctx x = {.algo = algos[a], .op = ops[k], .count = k == 1 ? 20000 : 1001};
                rt_log_init(&x.log);
                int32_t p = (int32_t)trd_star_factorial(n);
                trd_threads_opts topts = rt_topts(30.0);
                rt_result res;
                rt_run(p, &topts, real_rank, &x, &res);
                for (int32_t r = 0; r < p; r++)
                    TU_CHECK(res.status[r] == TRD_OK, "%s p=%d rank %d: %s", x.algo, (int)p,
                             (int)r, res.msg[r]);
                rt_log_check(&x.log, x.algo);
                rt_log_destroy(&x.log);
            }
}

/* ---- Refusals ---- */

static void expect_refusal(const char *algo, const trd_params *prm, trd_status want,
                           const char *words)
{
    trd_plan *plan = NULL;
    trd_status st = trd_plan_create(&plan, algo, prm);
    TU_CHECK(st == want && plan == NULL && strstr(trd_errmsg(), words), "%s p=%lld: status %d "
             "(want %d): %s", algo, (long long)prm->n, (int)st, (int)want, trd_errmsg());
}

static void test_refusals(void **state)
{
    (void)state;
    for (int a = 0; a < 2; a++) {
        const int64_t bad_p[] = {3, 4, 5, 7, 25, 119};
        for (size_t i = 0; i < sizeof bad_p / sizeof bad_p[0]; i++) {
            trd_params prm = tu_params(bad_p[i], 1, 1, 0);
            prm.allreduce = true;
            expect_refusal(algos[a], &prm, TRD_EUNSUPPORTED, "n! ranks");
        }
        trd_params prm = tu_params(24, 1, 1, 0);
        prm.allreduce = true;
        prm.noncommutative = true;
        expect_refusal(algos[a], &prm, TRD_EUNSUPPORTED, "commutative");
        prm.noncommutative = prm.allreduce = false;
        expect_refusal(algos[a], &prm, TRD_EUNSUPPORTED, "allreduce");
        trd_star_report r;
        const int32_t bad_n[] = {0, -1, TRD_STAR_REPLAY_MAX + 1, 1000};
        for (size_t i = 0; i < sizeof bad_n / sizeof bad_n[0]; i++)
            TU_CHECK(trd_star_verify(algos[a], bad_n[i], 1, &r) == TRD_EINVAL &&
                         strstr(trd_errmsg(), "n = "),
                     "verify n = %d: %s", bad_n[i], trd_errmsg());
        int64_t steps;
        TU_CHECK(trd_star_steps(algos[a], TRD_STAR_N_MAX + 1, &steps) == TRD_EINVAL &&
                     trd_star_steps(algos[a], 0, &steps) == TRD_EINVAL,
                 "steps: %s", trd_errmsg());
    }
    trd_star_report r;
    int64_t steps;
    assert_int_equal(trd_star_verify("ring", 3, 1, &r), TRD_ENOALGO);
    assert_int_equal(trd_star_steps(NULL, 3, &steps), TRD_ENOALGO);
    assert_int_equal(trd_star_verify("star", 3, 1, NULL), TRD_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph),
        cmocka_unit_test(test_replay),
        cmocka_unit_test(test_round_structure),
        cmocka_unit_test(test_verifier_catches),
        cmocka_unit_test(test_table2),
        cmocka_unit_test(test_ir),
        cmocka_unit_test(test_real_threads),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests_name("star", tests, NULL, NULL);
}
