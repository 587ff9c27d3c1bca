/* test_hetero.c: the planners for heterogeneous costs (hetero-greedy,
 * hetero-exact), their lower bound, and heterogeneous costs through the
 * plan, the simulator and the runtime.
 *
 *   - the evaluator's times of a tree and its receive orders equal an
 *     independent evaluation (tests/oracle/hetero_brute.c);
 *   - hetero-exact equals the oracle's exhaustive optimum over every tree
 *     and receive order, n <= 6, random costs of both models, presets, any
 *     root;
 *   - lower bound <= hetero-exact <= hetero-greedy on random instances up
 *     to n = 9 (each half of the bound too), and lower bound <=
 *     hetero-greedy beyond;
 *   - on homogeneous costs (no bases, or a uniform matrix) hetero-greedy's
 *     makespan is Alg. 1's optimum (greedy's);
 *   - every plan's makespan is what the simulator gives for its programs
 *     under the same constant costs, the heterogeneous planners' (the
 *     evaluator's) and the others' (simulated under params.costs), and
 *     hetero-greedy's own makespan is its evaluator's;
 *   - fixed receive orders chain their RECVs, and the simulator keeps an
 *     order that is not the ready order; a segmented plan replays race-free
 *     (tests/ir_replay.h);
 *   - (real runs: test_hetero_runtime.c);
 *   - bad input: no costs, n > 9 for hetero-exact, costs for other n, a
 *     latency with costs, a non-commutative plan, bad random models;
 *     cost files written and read back exactly. */
#include <unistd.h>

#define IR_SLOTS 16 /* a rank of these trees may have up to 15 inputs */
#include "ir_replay.h"
#include "model/hetero_bound.h"
#include "plan/hetero.h"
#include "plan/builders.h"
#include "sim/sim.h"

static const char *const models[] = {"links", "nodes"};

/* A constant model for n ranks with random bases (or the preset `preset`
 * with slow factor D when preset is set). */
static trd_costs *make_costs(int64_t n, const char *model, uint64_t seed)
{
    trd_costs *k = NULL;
    assert_int_equal(trd_costs_create(&k, n, TRD_DIST_CONST, 1.0, seed % 3 ? 1.0 : 0.3, 0.0),
                     TRD_OK);
    trd_status st = strchr(model, '-') ? trd_costs_preset(k, model, 1.0 + (double)(seed % 5))
                                       : trd_costs_random(k, model, 10.0, seed);
    TU_CHECK(st == TRD_OK, "costs %s seed %llu: %s", model, (unsigned long long)seed,
             trd_errmsg());
    return k;
}

static trd_params het_params(const trd_costs *k, int64_t root)
{
    trd_params p;
    trd_params_init(&p);
    p.n = trd_costs_n(k);
    p.root = root;
    p.costs = k;
    trd_costs_mean(k, &p.d, &p.c);
    return p;
}

/* The bases by rank, as the oracle takes them. */
static void bases(const trd_costs *k, double *d, double *c)
{
    int64_t n = trd_costs_n(k);
    for (int64_t i = 0; i < n; i++) {
        c[i] = trd_costs_combine(k, i);
        for (int64_t j = 0; j < n; j++)
            d[i * n + j] = trd_costs_transfer(k, i, j);
    }
}

/* The plan's tree and receive orders by rank, timed by the oracle. */
static double oracle_time(const trd_plan *plan, const double *d, const double *c)
{
    int32_t n = (int32_t)trd_plan_params(plan)->n, kids[6][6], count[6];
    const int32_t *order[6];
    for (int32_t r = 0; r < n; r++) {
        count[r] = 0;
        order[r] = kids[r];
        for (size_t i = 0; i < trd_plan_step_count(plan, r); i++)
            if (trd_plan_step(plan, r, i)->kind == TRD_STEP_RECV ||
                trd_plan_step(plan, r, i)->kind == TRD_STEP_RECV_COMBINE)
                kids[r][count[r]++] = trd_plan_step(plan, r, i)->peer;
    }
    return trd_oracle_hetero_makespan(n, trd_plan_result_rank(plan), order, count, d, c);
}

/* The evaluator and the oracle agree on the plans of both planners, and
 * hetero-exact is the oracle's optimum. */
static void exact_is_brute_force_optimum(void **state)
{
    (void)state;
    static const char *const kinds[] = {"links", "nodes", "lower-to-higher",
                                        "higher-to-lower", "fib-root-slow"};
    double d[36], c[6];
    int cases = 0;
    for (int64_t n = 1; n <= 6; n++)
        for (size_t m = 0; m < 5; m++)
            for (uint64_t seed = 1; seed <= (n <= 4 ? 12u : 5u); seed++) {
                trd_costs *k = make_costs(n, kinds[m], seed);
                int64_t root = (int64_t)(seed % (uint64_t)n);
                trd_params p = het_params(k, root);
                bases(k, d, c);
                double best = trd_oracle_hetero_brute((int32_t)n, (int32_t)root, d, c);
                trd_plan *exact = tu_plan("hetero-exact", &p), *greedy = tu_plan("hetero-greedy",
                                                                                   &p);
                double me = trd_plan_makespan(exact), mg = trd_plan_makespan(greedy);
                TU_CHECK(tu_close(me, best), "n=%lld %s seed %llu root %lld: hetero-exact %.17g, "
                         "brute force %.17g", (long long)n, kinds[m], (unsigned long long)seed,
                         (long long)root, me, best);
                TU_CHECK(tu_close(me, oracle_time(exact, d, c)) &&
                             tu_close(mg, oracle_time(greedy, d, c)),
                         "n=%lld %s seed %llu: the evaluator's times (%.17g, %.17g) are not "
                         "the oracle's (%.17g, %.17g)", (long long)n, kinds[m],
                         (unsigned long long)seed, me, mg, oracle_time(exact, d, c),
                         oracle_time(greedy, d, c));
                trd_plan_free(exact);
                trd_plan_free(greedy);
                trd_costs_free(k);
                cases++;
            }
    print_message("hetero-exact = brute force on %d instances\n", cases);
}

/* lower bound <= hetero-exact <= hetero-greedy, and the bound below
 * hetero-greedy at larger n. */
static void bound_exact_greedy_in_order(void **state)
{
    (void)state;
    int gaps = 0, optimal = 0;
    for (int64_t n = 2; n <= 40; n += n < 9 ? 1 : 10)
        for (size_t m = 0; m < 2; m++)
            for (uint64_t seed = 1; seed <= (n <= 9 ? 8u : 3u); seed++) {
                trd_costs *k = make_costs(n, models[m], 100 * seed + (uint64_t)n);
                trd_params p = het_params(k, (int64_t)seed % n);
                double lb = trd_lower_bound(&p), g = tu_makespan("hetero-greedy", &p);
                trd_cost_view v = trd_plan_cost_view(&p);
                double relaxed = trd_bound_hetero_relaxed(&v, (int32_t)n),
                       paths = trd_bound_hetero_paths(&v, (int32_t)n);
                TU_CHECK(tu_close(lb, fmax(relaxed, paths)), "bound %.17g is not the larger "
                         "of %.17g and %.17g", lb, relaxed, paths);
                TU_CHECK(lb <= g * (1 + 1e-12), "n=%lld %s seed %llu: hetero-greedy %.17g below "
                         "the lower bound %.17g", (long long)n, models[m],
                         (unsigned long long)seed, g, lb);
                if (n <= 9) {
                    double e = tu_makespan("hetero-exact", &p);
                    TU_CHECK(lb <= e * (1 + 1e-12) && e <= g * (1 + 1e-12),
                             "n=%lld %s seed %llu: bound %.17g (relaxed %.17g, paths %.17g), "
                             "exact %.17g, greedy %.17g out of order", (long long)n, models[m],
                             (unsigned long long)seed, lb, relaxed, paths, e, g);
                    gaps++;
                    optimal += tu_close(e, g);
                }
                trd_costs_free(k);
            }
    print_message("hetero-greedy optimal on %d of %d instances (n <= 9)\n", optimal, gaps);
}

/* Homogeneous costs, as a model without bases and as a uniform matrix:
 * hetero-greedy is Alg. 1's optimum. */
static void homogeneous_is_alg1(void **state)
{
    (void)state;
    for (size_t i = 0; i < TU_NPAIRS; i++)
        for (int64_t n = 1; n <= 130; n += n < 20 ? 1 : 37) {
            double d = tu_pairs[i][0], c = tu_pairs[i][1];
            trd_params p = tu_params(n, d, c, 0);
            double opt = tu_makespan("greedy", &p);
            trd_costs *uniform = NULL;
            assert_int_equal(trd_costs_create(&uniform, n, TRD_DIST_CONST, d, c, 0.0), TRD_OK);
            p.costs = tu_costs(n, d, c, 0);
            double plain = tu_makespan("hetero-greedy", &p);
            assert_int_equal(trd_costs_preset(uniform, "fib-root-slow", 1.0), TRD_OK);
            p.costs = uniform;
            p.root = n / 2;
            double matrix = tu_makespan("hetero-greedy", &p);
            TU_CHECK(tu_close(plain, opt) && tu_close(matrix, opt),
                     "n=%lld d=%g c=%g: hetero-greedy %.17g (no bases), %.17g (uniform "
                     "matrix, root %lld), Alg. 1 %.17g", (long long)n, d, c, plain, matrix,
                     (long long)p.root, opt);
            TU_CHECK(tu_close(trd_lower_bound(&p), opt), "n=%lld d=%g c=%g: the relaxed bound "
                     "%.17g is not the optimum %.17g", (long long)n, d, c,
                     trd_lower_bound(&p), opt);
            trd_costs_free(uniform);
        }
}

/* The plan's makespan is the simulator's for its own programs under the
 * same constant costs (the evaluator against the engine over the virtual
 * transport), for the planners for heterogeneous costs and for the
 * homogeneous ones timed under the costs; trd_simulate (half and full
 * duplex) gives the heterogeneous planners' too; and hetero-greedy's own
 * value is its tree's. */
static void plan_is_simulation(void **state)
{
    (void)state;
    static const char *const algos[] = {"hetero-greedy", "hetero-exact", "binomial",
                                        "fibonacci", "greedy", "flat", "chain"};
    for (int64_t n = 1; n <= 40; n += n < 10 ? 1 : 13)
        for (size_t m = 0; m < 2; m++) {
            trd_costs *k = make_costs(n, models[m], 7 * (uint64_t)n + m);
            trd_params p = het_params(k, n / 3);
            for (size_t a = 0; a < sizeof algos / sizeof *algos; a++) {
                if (a == 1 && n > 9)
                    continue; /* hetero-exact's limit */
                trd_plan *plan = tu_plan(algos[a], &p);
                double want = trd_plan_makespan(plan), got = NAN;
                assert_int_equal(trd_plan_simulate_makespan(plan, &got), TRD_OK);
                TU_CHECK(tu_close(got, want), "%s n=%lld %s: plan %.17g, its programs "
                         "simulated %.17g", algos[a], (long long)n, models[m], want, got);
                for (int port = 0; port < 2 && a < 2; port++) {
                    trd_params q = p;
                    q.costs = NULL; /* the simulator hands the planner its own costs */
                    TU_CHECK(trd_simulate(algos[a], &q, k, (trd_port)port, 1, 0, &got) ==
                                     TRD_OK && tu_close(got, want),
                             "%s n=%lld %s port %d: plan %.17g, trd_simulate %.17g (%s)",
                             algos[a], (long long)n, models[m], port, want, got, trd_errmsg());
                }
                trd_plan_free(plan);
            }
            trd_cost_view v = trd_plan_cost_view(&p);
            int32_t *parent = tu_alloc((size_t)n, sizeof *parent);
            int32_t *seq = tu_alloc((size_t)n, sizeof *seq);
            trd_hetero_tree t = {.parent = parent, .seq = seq};
            assert_int_equal(trd_hetero_greedy_tree(&v, (int32_t)n, &t), TRD_OK);
            trd_tree tree = {.n = (int32_t)n, .parent = parent, .seq = seq};
            trd_timing timing;
            assert_int_equal(trd_evaluate_costs(&tree, &v, &timing), TRD_OK);
            TU_CHECK(tu_close(t.makespan, timing.makespan), "n=%lld %s: hetero-greedy says "
                     "%.17g, its tree and orders take %.17g", (long long)n, models[m],
                     t.makespan, timing.makespan);
            trd_timing_free(&timing);
            free(parent);
            free(seq);
            trd_costs_free(k);
        }
}

/* Rank 0 combines slowly (100); rank 1 sends to it in 10 from time 0,
 * rank 2 in 1 from 0.5 (it first takes rank 3's value: 0.25 + 0.25);
 * every other transfer costs 1000.  Taking the later sender first ends at
 * 0.5 + 1 + 100 + 100 = 201.5; in the order they are ready, 210. */
static const char later_first[] = "n 4\n"
                                  "0 1000 1000 1000\n10 0 1000 1000\n1 1000 0 1000\n"
                                  "1000 1000 0.25 0\n"
                                  "100 1 0.25 1\n";

/* Receive orders fixed by the planner: each RECV after the one before,
 * so the simulator keeps an order that is not the ready order. */
static void fixed_orders_chain_receives(void **state)
{
    (void)state;
    char path[] = "/tmp/trd_test_hetero_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0 && write(fd, later_first, sizeof later_first - 1) ==
                               (ssize_t)(sizeof later_first - 1));
    close(fd);
    trd_costs *later = NULL;
    TU_CHECK(trd_costs_read(&later, path) == TRD_OK, "%s", trd_errmsg());
    remove(path);
    for (int a = 0; a < 2; a++) {
        const char *algo = a ? "hetero-exact" : "hetero-greedy";
        trd_params q = het_params(later, 0);
        trd_plan *plan = tu_plan(algo, &q);
        double got = NAN;
        assert_int_equal(trd_plan_simulate_makespan(plan, &got), TRD_OK);
        const trd_step *first = trd_plan_step(plan, 0, 0);
        TU_CHECK(tu_close(trd_plan_makespan(plan), 201.5) && tu_close(got, 201.5) &&
                     (first->kind == TRD_STEP_RECV || first->kind == TRD_STEP_RECV_COMBINE) &&
                     first->peer == 2,
                 "%s: makespan %.17g, simulated %.17g (want 201.5), the root first receives "
                 "from %d (want 2)", algo, trd_plan_makespan(plan), got, first->peer);
        trd_plan_free(plan);
    }
    trd_costs_free(later);
    trd_costs *k = make_costs(12, "links", 5);
    trd_params p = het_params(k, 4);
    trd_plan *plan = tu_plan("hetero-greedy", &p);
    int chained = 0;
    for (int32_t r = 0; r < 12; r++) {
        int32_t last = -1;
        for (size_t i = 0; i < trd_plan_step_count(plan, r); i++) {
            const trd_step *s = trd_plan_step(plan, r, i);
            if (s->kind != TRD_STEP_RECV && s->kind != TRD_STEP_RECV_COMBINE)
                continue;
            TU_CHECK(s->dep[0] == last && s->dep[1] == -1, "rank %d step %zu: RECV deps %d %d, "
                     "the previous RECV is %d", r, i, s->dep[0], s->dep[1], last);
            chained += last >= 0;
            last = (int32_t)i;
        }
    }
    TU_CHECK(chained > 0, "no rank of the plan receives twice");
    trd_plan_free(plan);
    /* a segmented allreduce (no model times) replays race-free, every
     * rank ending with every block whole */
    p.segments = 3;
    p.allreduce = true;
    plan = tu_plan("hetero-greedy", &p);
    ir_replay rp;
    snprintf(ir_where, sizeof ir_where, "hetero-greedy n=12 B=3 allreduce");
    ir_replay_plan(&rp, plan, false, -1, TRD_COLL_ALLREDUCE);
    ir_unload(&rp);
    trd_plan_free(plan);
    trd_costs_free(k);
}

/* ---- Bad input ---- */

static void expect_refusal(const char *algo, const trd_params *p, trd_status want,
                           const char *key1, const char *key2)
{
    trd_plan *plan = (trd_plan *)1;
    trd_status st = trd_plan_create(&plan, algo, p);
    TU_CHECK(st == want && plan == NULL && strstr(trd_errmsg(), key1) &&
                 (!key2 || strstr(trd_errmsg(), key2)),
             "%s: status %d, want %d, message '%s' (want '%s' and '%s')", algo, st, want,
             trd_errmsg(), key1, key2 ? key2 : "");
}

static void bad_input(void **state)
{
    (void)state;
    trd_params p = tu_params(5, 1, 1, 0);
    expect_refusal("hetero-greedy", &p, TRD_EUNSUPPORTED, "hetero-greedy", "--costs");
    expect_refusal("hetero-exact", &p, TRD_EUNSUPPORTED, "hetero-exact", "costs");
    trd_costs *k10 = make_costs(10, "links", 1), *k5 = make_costs(5, "nodes", 2);
    p = het_params(k10, 0);
    expect_refusal("hetero-exact", &p, TRD_EUNSUPPORTED, "n = 10", "9");
    p.n = 11;
    expect_refusal("hetero-greedy", &p, TRD_EINVAL, "n = 10", "n = 11");
    expect_refusal("greedy", &p, TRD_EINVAL, "n = 10", "n = 11");
    p = het_params(k5, 0);
    p.latency = 0.5;
    expect_refusal("hetero-greedy", &p, TRD_EINVAL, "latency = 0.5", "must be 0");
    p.latency = 0;
    p.noncommutative = true;
    expect_refusal("hetero-greedy", &p, TRD_EUNSUPPORTED, "commutative operators only", NULL);
    expect_refusal("hetero-exact", &p, TRD_EUNSUPPORTED, "commutative operators only", NULL);
    TU_CHECK(trd_costs_random(k5, "ring", 2.0, 1) == TRD_EINVAL && strstr(trd_errmsg(), "ring"),
             "model ring: %s", trd_errmsg());
    TU_CHECK(trd_costs_random(k5, "links", 0.5, 1) == TRD_EINVAL &&
                 strstr(trd_errmsg(), "spread = 0.5"), "spread 0.5: %s", trd_errmsg());
    TU_CHECK(trd_costs_random(k5, "links", NAN, 1) == TRD_EINVAL, "spread NaN accepted");
    /* written and read back exactly; then a file that is not one */
    char path[] = "/tmp/trd_test_hetero_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(trd_costs_random(k5, "nodes", 7.5, 42), TRD_OK);
    assert_int_equal(trd_costs_save(k5, path), TRD_OK);
    trd_costs *back = NULL;
    TU_CHECK(trd_costs_read(&back, path) == TRD_OK && trd_costs_n(back) == 5, "read back: %s",
             trd_errmsg());
    for (int64_t i = 0; i < 5; i++) {
        TU_CHECK(trd_costs_combine(back, i) == trd_costs_combine(k5, i), "c[%lld]", (long long)i);
        for (int64_t j = 0; j < 5; j++)
            TU_CHECK(trd_costs_transfer(back, i, j) == trd_costs_transfer(k5, i, j),
                     "d[%lld][%lld] %.17g != %.17g", (long long)i, (long long)j,
                     trd_costs_transfer(back, i, j), trd_costs_transfer(k5, i, j));
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("n 2.5\n", f);
    fclose(f);
    trd_costs *bad = (trd_costs *)1;
    TU_CHECK(trd_costs_read(&bad, path) == TRD_EINVAL && bad == NULL &&
                 strstr(trd_errmsg(), "2.5"), "n 2.5: %s", trd_errmsg());
    remove(path);
    trd_costs_free(back);
    trd_costs_free(k10);
    trd_costs_free(k5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_is_brute_force_optimum),
        cmocka_unit_test(bound_exact_greedy_in_order),
        cmocka_unit_test(homogeneous_is_alg1),
        cmocka_unit_test(plan_is_simulation),
        cmocka_unit_test(fixed_orders_chain_receives),
        cmocka_unit_test(bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
