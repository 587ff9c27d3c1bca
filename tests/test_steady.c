/* test_steady.c: the steady-state problems of Legrand, Marchal and Robert
 * (2004) on platforms whose answers are known without the LP:
 *   - Fig. 2 (series of scatters, reconstructed from Figs. 2-3): TP = 1/2,
 *     period 4, the matchings fit in the period;
 *   - Fig. 6 (series of reduces, 3 processors, node 0 twice as fast):
 *     TP = 1; and with P0 as a target that is not a participant (v0 on P1,
 *     v1 on P2): still 1, as P0 receives one message per reduce;
 *   - the paper read literally (S -> A cost 1, A <-> B cost 1/10): 1/2, not 5
 *     (docs/STEADY.md, "Corrections, applied");
 *   - closed forms: a star scatter gives 1 / sum of the costs; a gossip on
 *     a complete graph of cost 1 among p nodes gives 1/(p-1); a reduce on
 *     two nodes gives min(1/c, s0 + min(s1, 1/c)); scaling every size by 2
 *     halves TP; a per-result size changes the answer as computed by hand;
 *   - Prop. 4: r(T) = floor(w(T) T_fixed / T), loss <= card(Trees)/T_fixed,
 *     and T_fixed = T loses nothing;
 *   - the checker of check.c rejects broken solutions, trees and matchings
 *     (so its passing means something);
 *   - bad input: every refusal of trd_steady_solve names the bad value and
 *     leaves *out NULL; an unreachable member gives TP 0, not an error;
 *   - a problem too large is refused in time linear in the platform (8x
 *     the nodes well under 64x the time: the size is checked before the
 *     members are, and duplicates are found with a flag per node). */
#include <time.h>

#include "test_steady_util.h"

static void fig2_scatter(void **state)
{
    (void)state;
    trd_platform *pf = sd_load("fig2-scatter.json");
    int32_t targets[] = {trd_platform_find(pf, "P0"), trd_platform_find(pf, "P1")};
    trd_steady_spec spec = sd_spec(TRD_STEADY_SCATTER, trd_platform_find(pf, "Ps"), targets, 2);
    trd_steady *st = sd_solve(pf, &spec);
    assert_string_equal(trd_steady_throughput(st), "1/2");
    assert_true(trd_steady_throughput_double(st) == 0.5);
    assert_true(trd_steady_reachable(st));
    int64_t period = 0;
    assert_int_equal(trd_steady_period_int64(st, &period), TRD_OK);
    assert_true(period % 2 == 0); /* TP * period messages per target are whole */
    sd_expect_q(st->matchings.total, trd_steady_period(st), "matchings' length");
    assert_true(trd_steady_tree_count(st) >= 1 && trd_steady_matching_count(st) >= 1);
    sd_check_all(st, pf);
    trd_steady_free(st);
    trd_platform_free(pf);
}

static void fig6_reduce(void **state)
{
    (void)state;
    trd_platform *pf = sd_load("fig6-reduce.json");
    trd_steady_spec spec = sd_spec(TRD_STEADY_REDUCE, trd_platform_find(pf, "P0"), NULL, 0);
    trd_steady *st = sd_solve(pf, &spec);
    assert_string_equal(trd_steady_throughput(st), "1");
    assert_int_equal(st->n_members, 3); /* default: every computing node, in order */
    for (int32_t i = 0; i < st->n_trees; i++) /* v[0,2] = T_{0,l,2} at the target, or sent */
        assert_true(st->trees[i].n_tasks == 2);
    sd_check_all(st, pf);
    trd_steady_free(st);
    trd_platform_free(pf);
}

/* P0 holds no value: it must receive v[0,1] (or both values), at least one
 * message per reduce through its in-port, and P2 can build v[0,1] from v0
 * sent by P1 once per time unit: TP = 1. */
static void target_not_participant(void **state)
{
    (void)state;
    trd_platform *pf = sd_load("fig6-reduce.json");
    int32_t parts[] = {1, 2};
    trd_steady_spec spec = sd_spec(TRD_STEADY_REDUCE, 0, parts, 2);
    trd_steady *st = sd_solve(pf, &spec);
    assert_string_equal(trd_steady_throughput(st), "1");
    for (int32_t c = 0; c < st->n_comps; c++) /* v[0,1] = v[0,0] + v[1,1] only */
        assert_true(st->comps[c].k == 0 && st->comps[c].l == 0 && st->comps[c].m == 1);
    sd_check_all(st, pf);
    trd_steady_free(st);
    trd_platform_free(pf);
}

/* Read literally, target A sends m_A to B and gets it back (docs/STEADY.md,
 * "Corrections, applied"). */
static void literal_round_trip(void **state)
{
    (void)state;
    trd_platform *pf = sd_new();
    int32_t s = sd_node(pf, "S", "1"), a = sd_node(pf, "A", "1"), b = sd_node(pf, "B", "1");
    sd_link(pf, s, a, "1", false);
    sd_link(pf, a, b, "1/10", true);
    int32_t targets[] = {a, b};
    trd_steady_spec spec = sd_spec(TRD_STEADY_SCATTER, s, targets, 2);
    mpq_t tp;
    mpq_init(tp);
    sd_throughput(pf, &spec, tp);
    sd_expect_q(tp, "1/2", "TP of S -> A <-> B");
    mpq_clear(tp);
    trd_platform_free(pf);
}

/* Source linked straight to each target, cost c_t: the source's port is
 * the bottleneck, TP = 1 / sum c_t. */
static void star_scatter(void **state)
{
    (void)state;
    static const char *const cost[] = {"1/2", "3", "2/3", "5/4"};
    trd_platform *pf = sd_new();
    int32_t src = sd_node(pf, "S", "1"), targets[4];
    char name[8];
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "T%d", i);
        targets[i] = sd_node(pf, name, "1");
        sd_link(pf, src, targets[i], cost[i], true);
    }
    trd_steady_spec spec = sd_spec(TRD_STEADY_SCATTER, src, targets, 4);
    mpq_t tp;
    mpq_init(tp);
    sd_throughput(pf, &spec, tp);
    sd_expect_q(tp, "12/65", "star"); /* 1 / (1/2 + 3 + 2/3 + 5/4) */
    mpq_clear(tp);
    trd_platform_free(pf);
}

/* p nodes, every link of cost 1: each node sends its p-1 messages over
 * one port, so TP = 1/(p-1), reached by direct sends. */
static void complete_gossip(void **state)
{
    (void)state;
    for (int p = 2; p <= 5; p++) {
        trd_platform *pf = sd_new();
        char name[8], want[16];
        for (int i = 0; i < p; i++) {
            snprintf(name, sizeof name, "N%d", i);
            sd_node(pf, name, "1");
        }
        for (int i = 0; i < p; i++)
            for (int j = i + 1; j < p; j++)
                sd_link(pf, i, j, "1", true);
        trd_steady_spec spec = sd_spec(TRD_STEADY_GOSSIP, -1, NULL, 0);
        trd_steady *st = sd_solve(pf, &spec);
        snprintf(want, sizeof want, "1/%d", p - 1);
        sd_expect_q(st->throughput, want, "complete gossip");
        sd_check_all(st, pf);
        trd_steady_free(st);
        trd_platform_free(pf);
    }
}

/* Two nodes P0 (target) and P1, links of cost c both ways: v[1,1] to P0
 * (a task there, at most s0 per unit) or v[0,0] to P1 and v[0,1] back
 * (at most min(s1, 1/c)); both share P0's in-port: TP = min(1/c,
 * s0 + min(s1, 1/c)). */
static void two_node_reduce(void **state)
{
    (void)state;
    static const char *const cases[][4] = {{"1", "1", "1", "1"},   {"1/2", "1", "1", "2"},
                                           {"1/4", "1", "1", "2"}, {"1/4", "1/2", "3", "7/2"},
                                           {"2", "5", "5", "1/2"}, {"1/3", "1", "1/2", "3/2"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        trd_platform *pf = sd_new();
        int32_t p0 = sd_node(pf, "P0", cases[i][1]), p1 = sd_node(pf, "P1", cases[i][2]);
        sd_link(pf, p0, p1, cases[i][0], true);
        trd_steady_spec spec = sd_spec(TRD_STEADY_REDUCE, p0, NULL, 0);
        mpq_t tp;
        mpq_init(tp);
        sd_throughput(pf, &spec, tp);
        sd_expect_q(tp, cases[i][3], "two-node reduce");
        mpq_clear(tp);
        trd_platform_free(pf);
    }
}

/* Every message and task size times 2 halves TP (all constraints scale). */
static void sizes_scale(void **state)
{
    (void)state;
    trd_platform *pf = NULL;
    assert_int_equal(trd_platform_generate(5, 3, &pf), TRD_OK);
    trd_steady_spec spec = sd_spec(TRD_STEADY_REDUCE, trd_platform_find(pf, "P0"), NULL, 0);
    mpq_t one, two;
    mpq_inits(one, two, NULL);
    sd_throughput(pf, &spec, one);
    spec.message_size = "2";
    spec.task_size = "2";
    sd_throughput(pf, &spec, two);
    mpq_mul_2exp(two, two, 1);
    TU_CHECK(mpq_equal(one, two), "doubling every size does not halve TP");
    mpq_clears(one, two, NULL);
    trd_platform_free(pf);
}

/* Two nodes, c = 1, P0 (target) of speed 1/2, P1 of speed 10, and
 * size(v[0,1]) = 3: a results computed on P0 (a <= 1/2) and b on P1 share
 * P0's in-port, a + 3b <= 1, so TP = max a + b = 1/2 + 1/6 = 2/3 (it is 1
 * with size 1). */
static void per_result_size(void **state)
{
    (void)state;
    trd_platform *pf = sd_new();
    int32_t p0 = sd_node(pf, "P0", "1/2"), p1 = sd_node(pf, "P1", "10");
    sd_link(pf, p0, p1, "1", true);
    trd_steady_size sizes[] = {{0, 1, "3"}};
    trd_steady_spec spec = sd_spec(TRD_STEADY_REDUCE, p0, NULL, 0);
    mpq_t tp;
    mpq_init(tp);
    sd_throughput(pf, &spec, tp);
    sd_expect_q(tp, "1", "size 1");
    spec.sizes = sizes;
    spec.n_sizes = 1;
    trd_steady *st = sd_solve(pf, &spec);
    sd_expect_q(st->throughput, "2/3", "size(v[0,1]) = 3");
    sd_expect_q(st->types[st->type_of[0 * 2 + 1]].size, "3", "size of v[0,1]");
    sd_check_all(st, pf);
    trd_steady_free(st);
    mpq_clear(tp);
    trd_platform_free(pf);
}

/* Prop. 4 on a generated 14-node platform, several T_fixed. */
static void fixed_period(void **state)
{
    (void)state;
    trd_platform *pf = NULL;
    assert_int_equal(trd_platform_generate(7, 3, &pf), TRD_OK);
    trd_steady_spec spec = sd_spec(TRD_STEADY_REDUCE, trd_platform_find(pf, "P2"), NULL, 0);
    trd_steady *base = sd_solve(pf, &spec);
    int64_t period = 0, tfs[] = {1, 2, 3, 7, 0};
    assert_int_equal(trd_steady_period_int64(base, &period), TRD_OK);
    tfs[4] = period;
    for (size_t i = 0; i < 5; i++) {
        spec.fixed_period = tfs[i];
        trd_steady *st = sd_solve(pf, &spec);
        mpz_t r;
        mpz_init(r);
        for (int32_t t = 0; t < st->n_trees; t++) {
            mpz_mul_si(r, st->trees[t].weight, (long)tfs[i]);
            mpz_fdiv_q(r, r, st->period);
            assert_true(mpz_cmp(r, st->trees[t].fixed) == 0);
        }
        assert_true(mpq_cmp(st->fixed_loss, st->fixed_bound) <= 0);
        assert_true(mpq_sgn(st->fixed_loss) >= 0);
        if (tfs[i] == period)
            sd_expect_q(st->fixed_loss, "0", "loss at T_fixed = T");
        assert_non_null(trd_steady_fixed_throughput(st));
        sd_check_all(st, pf);
        trd_steady_free(st);
        mpz_clear(r);
    }
    trd_steady_free(base);
    trd_platform_free(pf);
}

/* Each check of check.c fails once the result is tampered with. */
static void checker_rejects(void **state)
{
    (void)state;
    trd_platform *pf = sd_load("fig2-scatter.json");
    int32_t targets[] = {3, 4};
    trd_steady_spec spec = sd_spec(TRD_STEADY_SCATTER, 0, targets, 2);
    trd_steady *st = sd_solve(pf, &spec);
    trd_sd_send *s = &st->sends[0];
    mpq_t keep;
    mpq_init(keep);
    mpq_set(keep, s->rate); /* conservation (and count) broken */
    mpq_add(s->rate, s->rate, s->rate);
    assert_int_equal(trd_sd_check_solution(st, pf), TRD_EBACKEND);
    mpq_set(s->rate, keep);
    mpq_set(keep, st->throughput); /* TP no longer what arrives */
    mpq_set_ui(st->throughput, 1, 1);
    assert_int_equal(trd_sd_check_solution(st, pf), TRD_EBACKEND);
    mpq_set(st->throughput, keep);
    assert_int_equal(trd_sd_check_solution(st, pf), TRD_OK);
    mpz_add_ui(st->trees[0].weight, st->trees[0].weight, 1); /* weights off */
    assert_int_equal(trd_sd_check_trees(st, pf), TRD_EBACKEND);
    mpz_sub_ui(st->trees[0].weight, st->trees[0].weight, 1);
    trd_sd_hop hop = st->trees[0].hops[0]; /* a transfer from elsewhere */
    st->trees[0].hops[0].from = st->trees[0].hops[0].to;
    assert_int_equal(trd_sd_check_trees(st, pf), TRD_EBACKEND);
    st->trees[0].hops[0] = hop;
    assert_int_equal(trd_sd_check_trees(st, pf), TRD_OK);
    trd_xfer *x = &st->matchings.list[0].xfers[0]; /* a matching too long */
    mpq_add(x->duration, x->duration, st->matchings.list[0].duration);
    assert_int_equal(trd_sd_check_matchings(st, pf, false), TRD_EBACKEND);
    mpq_clear(keep);
    trd_steady_free(st);
    trd_platform_free(pf);
}

/* trd_steady_solve refuses spec with `needle` in the message. */
static void refused(const trd_platform *pf, const trd_steady_spec *spec, const char *needle)
{
    static int dummy;
    trd_steady *st = (trd_steady *)(void *)&dummy;
    trd_status s = trd_steady_solve(pf, spec, &st);
    TU_CHECK(s == TRD_EINVAL, "status %d (%s), want TRD_EINVAL", s, trd_errmsg());
    TU_CHECK(st == NULL, "*out not NULL after a failure");
    TU_CHECK(strstr(trd_errmsg(), needle) != NULL, "message '%s' lacks '%s'", trd_errmsg(),
             needle);
}

static void bad_input(void **state)
{
    (void)state;
    trd_platform *pf = sd_new();
    int32_t a = sd_node(pf, "A", "1"), b = sd_node(pf, "B", "1"), r = sd_node(pf, "R", NULL);
    sd_link(pf, a, r, "1", true);
    sd_link(pf, r, b, "1", true);
    int32_t dup[] = {a, b, a}, with_router[] = {a, r}, ab[] = {a, b}, out_of_range[] = {a, 7};
    trd_steady_spec s = sd_spec(TRD_STEADY_REDUCE, 9, NULL, 0);
    refused(pf, &s, "node 9 does not exist");
    s = sd_spec(TRD_STEADY_REDUCE, r, NULL, 0);
    refused(pf, &s, "target 'R' is a router");
    s = sd_spec(TRD_STEADY_REDUCE, a, dup, 3);
    refused(pf, &s, "participant 'A' is listed twice");
    s = sd_spec(TRD_STEADY_GOSSIP, -1, with_router, 2);
    refused(pf, &s, "participant 'R' is a router");
    s = sd_spec(TRD_STEADY_SCATTER, a, ab, 2);
    refused(pf, &s, "source 'A' cannot be a target");
    s = sd_spec(TRD_STEADY_SCATTER, -1, NULL, 0);
    refused(pf, &s, "source: node -1");
    s = sd_spec(TRD_STEADY_GOSSIP, -1, out_of_range, 2);
    refused(pf, &s, "node 7 does not exist");
    s = sd_spec(TRD_STEADY_REDUCE, a, ab, 1);
    refused(pf, &s, "at least 2 participants");
    s = sd_spec(TRD_STEADY_SCATTER, a, ab, 2);
    s.members = ab + 1;
    s.n_members = 1;
    s.message_size = "2";
    refused(pf, &s, "reduces only");
    trd_steady_size bad_k[] = {{1, 0, "1"}}, twice[] = {{0, 1, "2"}, {0, 1, "3"}},
                    zero[] = {{0, 0, "0"}}, junk[] = {{0, 1, "abc"}};
    const trd_steady_size *lists[] = {bad_k, twice, zero, junk};
    const char *needles[] = {"v[1,0]: need 0 <= k <= m < 2", "v[0,1] given twice",
                             "v[0,0] = 0: must be > 0", "abc"};
    for (int i = 0; i < 4; i++) {
        s = sd_spec(TRD_STEADY_REDUCE, a, ab, 2);
        s.sizes = lists[i];
        s.n_sizes = i == 1 ? 2 : 1;
        refused(pf, &s, needles[i]);
    }
    s = sd_spec(TRD_STEADY_REDUCE, a, ab, 2);
    s.task_size = "-1";
    refused(pf, &s, "task size");
    s.task_size = NULL;
    s.fixed_period = -3;
    refused(pf, &s, "fixed period -3");
    trd_steady_problem p;
    assert_int_equal(trd_steady_problem_parse("broadcast", &p), TRD_EINVAL);
    assert_non_null(strstr(trd_errmsg(), "'broadcast'"));
    assert_int_equal(trd_steady_solve(NULL, &s, NULL), TRD_EINVAL);
    trd_platform_free(pf);
}

/* A target nobody can reach: TP 0, reachable false, a message naming it. */
static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The best of 3 refusals of a gossip among every node of a platform of n
 * nodes (TRD_ENOMEM, "too large"), in seconds. */
static double refusal_time(int32_t n)
{
    trd_platform *pf = sd_new();
    char name[32];
    for (int32_t i = 0; i < n; i++) {
        snprintf(name, sizeof name, "n%d", (int)i);
        sd_node(pf, name, "1");
    }
    trd_steady_spec spec = sd_spec(TRD_STEADY_GOSSIP, -1, NULL, 0);
    double best = 1e30;
    for (int k = 0; k < 3; k++) {
        trd_steady *st = NULL;
        double t0 = seconds_now();
        trd_status s = trd_steady_solve(pf, &spec, &st);
        double t = seconds_now() - t0;
        best = t < best ? t : best;
        TU_CHECK(s == TRD_ENOMEM && st == NULL && strstr(trd_errmsg(), "too large"),
                 "a gossip of %d nodes: status %d (%s)", (int)n, s, trd_errmsg());
    }
    trd_platform_free(pf);
    return best;
}

static void too_large_in_linear_time(void **state)
{
    (void)state;
    double small = refusal_time(10000), large = refusal_time(80000);
    TU_CHECK(large < 16 * small + 0.005, "refusing a gossip of 80 000 nodes took %.4f s, of "
             "10 000 %.4f s: more than linear", large, small);
}

static void unreachable(void **state)
{
    (void)state;
    trd_platform *pf = sd_new();
    int32_t a = sd_node(pf, "A", "1"), b = sd_node(pf, "B", "1"), c = sd_node(pf, "C", "1");
    sd_link(pf, a, b, "1", true);
    sd_link(pf, c, a, "1", false); /* C sends, nobody sends to C */
    int32_t parts[] = {a, b, c};
    trd_steady_spec specs[] = {sd_spec(TRD_STEADY_REDUCE, c, parts, 3),
                               sd_spec(TRD_STEADY_GOSSIP, -1, parts, 3),
                               sd_spec(TRD_STEADY_SCATTER, a, parts + 1, 2)};
    for (int i = 0; i < 3; i++) {
        trd_steady *st = sd_solve(pf, &specs[i]);
        assert_false(trd_steady_reachable(st));
        assert_string_equal(trd_steady_throughput(st), "0");
        TU_CHECK(strstr(trd_steady_unreachable(st), "cannot reach 'C'"), "message: %s",
                 trd_steady_unreachable(st));
        assert_int_equal(trd_steady_tree_count(st), 0);
        assert_int_equal(trd_steady_matching_count(st), 0);
        FILE *sink = tmpfile();
        assert_non_null(sink);
        assert_int_equal(trd_steady_write(st, pf, TRD_STEADY_JSON, sink), TRD_OK);
        fclose(sink);
        trd_steady_free(st);
    }
    trd_platform_free(pf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fig2_scatter),      cmocka_unit_test(fig6_reduce),
        cmocka_unit_test(target_not_participant),
        cmocka_unit_test(literal_round_trip), cmocka_unit_test(star_scatter),
        cmocka_unit_test(complete_gossip),   cmocka_unit_test(two_node_reduce),
        cmocka_unit_test(sizes_scale),       cmocka_unit_test(per_result_size),
        cmocka_unit_test(fixed_period),      cmocka_unit_test(checker_rejects),
        cmocka_unit_test(bad_input),         cmocka_unit_test(unreachable),
        cmocka_unit_test(too_large_in_linear_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
