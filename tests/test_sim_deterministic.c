/* test_sim_deterministic.c: the simulator under constant costs against the
 * closed forms of the model (docs/SIMULATION.md: "with constant costs the
 * simulated makespan of every planner equals the closed-form evaluation").
 *
 * Oracles:
 *   - trd_makespan() (the planners' own evaluator): equal EXACTLY (==), for
 *     every static planner of the registry, n = 1..80, (d, c) in
 *     {(1,1), (1,0), (0,1), (2,1), (1,3), (1,0.5)}, K = 3, commutative with
 *     root 0 and non-commutative with root n-1; the run must also leave the
 *     result on the root;
 *   - tests/oracle Prop. 3 closed form on the plan's parent array (1e-9),
 *     except for greedy-k-transfers, which delays transfers on purpose;
 *   - closed forms of the papers, computed here: with d = 1, c = 0,
 *     Binomial-stat and Tree-dyn take ceil(log2 n) (n = 1..200); with
 *     d = c = 1, Fibonacci-stat on F(k+2) ranks takes k + 1 (k = 1..12);
 *   - port models on the flat tree (c = 0, d = 1): half- and full-port take
 *     n - 1 (the root receives one at a time), multi-port takes 1 (all
 *     transfers at once); with c = 1 multi-port takes d + (n-1) c (combines
 *     stay sequential on the root);
 *   - a flight time (LogP's L inside the latency): the flat tree's root
 *     takes its next message while the last is in flight (closed form),
 *     the binomial tree on 2^k ranks still takes k;
 *   - the two ways of running a static plan in virtual time, trd_sim_run
 *     (the engine's loop with the transport inlined, run_static.h) and
 *     trd_engine_run over the transport's vtable: the same makespan and
 *     result rank, bitwise, for every registered algorithm, every port
 *     model, constant and gamma costs. */
#include "testutil.h"

#include "sim/sim.h"

#define N_MAX 80

static const double pairs[][2] = {{1, 1}, {1, 0}, {0, 1}, {2, 1}, {1, 3}, {1, 0.5}};
#define NPAIRS (sizeof pairs / sizeof pairs[0])

static int ceil_log2(int64_t n)
{
    int k = 0;
    while (((int64_t)1 << k) < n)
        k++;
    return k;
}

static trd_costs *const_costs(int64_t n, double d, double c)
{
    trd_costs *costs = NULL;
    trd_status st = trd_costs_create(&costs, n, TRD_DIST_CONST, d, c, 0.0);
    TU_CHECK(st == TRD_OK, "costs n=%lld d=%g c=%g: %s", (long long)n, d, c, trd_errmsg());
    return costs;
}

/* Makespan of one simulated run with constant costs d, c. */
static double sim_const(const char *algo, const trd_params *p, trd_port port)
{
    trd_costs *costs = const_costs(p->n, p->d, p->c);
    double m = NAN;
    trd_status st = trd_simulate(algo, p, costs, port, 1, 0, &m);
    TU_CHECK(st == TRD_OK, "simulate %s n=%lld port %d: %s", algo, (long long)p->n,
             (int)port, trd_errmsg());
    trd_costs_free(costs);
    return m;
}

/* Rank holding the result after one simulated run (internal API). */
static int32_t sim_result_rank(const char *algo, const trd_params *p)
{
    trd_costs *costs = const_costs(p->n, p->d, p->c);
    trd_sim sim;
    double m = NAN;
    int32_t rank = -1;
    assert_int_equal(trd_sim_init(&sim, algo, p, costs, TRD_PORT_HALF), TRD_OK);
    assert_int_equal(trd_sim_run(&sim, 3, 0, &m, &rank), TRD_OK);
    trd_sim_destroy(&sim);
    trd_costs_free(costs);
    return rank;
}

static void check_one(const char *algo, const trd_params *p)
{
    const char *what = p->noncommutative ? "noncommutative" : "commutative";
    double model = tu_makespan(algo, p);
    double sim = sim_const(algo, p, TRD_PORT_HALF);
    TU_CHECK(sim == model, "%s %s n=%lld root=%lld d=%g c=%g: simulated %.17g, model %.17g",
             algo, what, (long long)p->n, (long long)p->root, p->d, p->c, sim, model);
    int32_t rank = sim_result_rank(algo, p);
    TU_CHECK(rank == p->root, "%s %s n=%lld: result on rank %d, root is %lld", algo, what,
             (long long)p->n, rank, (long long)p->root);
    if (strcmp(algo, "greedy-k-transfers") == 0)
        return;
    trd_plan *plan = tu_plan(algo, p);
    int32_t *parent = tu_parents(plan);
    double want = trd_oracle_prop3_makespan((int32_t)p->n, parent, p->d, p->c);
    TU_CHECK(tu_close(sim, want), "%s %s n=%lld d=%g c=%g: simulated %.17g, Prop. 3 of the "
             "plan's tree %.17g", algo, what, (long long)p->n, p->d, p->c, sim, want);
    free(parent);
    trd_plan_free(plan);
}

/* One static planner over the whole grid; state holds its index. */
static void planner_sim_equals_model(void **state)
{
    size_t index = *(size_t *)*state;
    const char *algo = trd_algo_name(index);
    for (int64_t n = 1; n <= N_MAX; n++)
        for (size_t i = 0; i < NPAIRS; i++)
            for (int nc = 0; nc < 2; nc++) {
                trd_params p = tu_params(n, pairs[i][0], pairs[i][1],
                                         trd_algo_uses_k(index) ? 3 : 0);
                p.noncommutative = nc;
                p.root = nc ? n - 1 : 0;
                check_one(algo, &p);
            }
}

/* benoit Sec. 3.2 / canon-antoniu: with c = 0 the binomial tree and
 * Tree-dyn need ceil(log2 n) transfer rounds. */
static void binomial_and_tree_dyn_take_ceil_log2(void **state)
{
    (void)state;
    static const char *algos[] = {"binomial", "tree-dyn"};
    for (int64_t n = 1; n <= 200; n++)
        for (size_t a = 0; a < 2; a++) {
            trd_params p = tu_params(n, 1, 0, 0);
            double m = sim_const(algos[a], &p, TRD_PORT_HALF);
            TU_CHECK(m == ceil_log2(n), "%s n=%lld: %.17g, want %d", algos[a], (long long)n,
                     m, ceil_log2(n));
        }
}

/* Fibonacci-stat of order k covers F(k+2) ranks in d + (k-1) max(d,c) + c,
 * i.e. k + 1 when d = c = 1 (benoit Sec. 4). */
static void fibonacci_takes_k_plus_1(void **state)
{
    (void)state;
    int64_t fib[16] = {0, 1};
    for (int i = 2; i < 16; i++)
        fib[i] = fib[i - 1] + fib[i - 2];
    for (int k = 1; k <= 12; k++) {
        trd_params p = tu_params(fib[k + 2], 1, 1, 0);
        double m = sim_const("fibonacci", &p, TRD_PORT_HALF);
        TU_CHECK(m == k + 1, "fibonacci on F(%d) = %lld ranks: %.17g, want %d", k + 2,
                 (long long)fib[k + 2], m, k + 1);
    }
}

static void flat_tree_port_models(void **state)
{
    (void)state;
    for (int64_t n = 1; n <= 40; n++) {
        trd_params p = tu_params(n, 1, 0, 0);
        double half = sim_const("flat", &p, TRD_PORT_HALF);
        double full = sim_const("flat", &p, TRD_PORT_FULL);
        double multi = sim_const("flat", &p, TRD_PORT_MULTI);
        TU_CHECK(half == n - 1, "flat n=%lld half-port: %.17g, want %lld", (long long)n, half,
                 (long long)(n - 1));
        TU_CHECK(full == n - 1, "flat n=%lld full-port: %.17g, want %lld", (long long)n, full,
                 (long long)(n - 1));
        TU_CHECK(multi == (n > 1 ? 1 : 0), "flat n=%lld multi-port: %.17g, want %d",
                 (long long)n, multi, n > 1);
        p.c = 1;
        multi = sim_const("flat", &p, TRD_PORT_MULTI);
        TU_CHECK(multi == (n > 1 ? 1 + (double)(n - 1) : 0), "flat n=%lld c=1 multi-port: "
                 "%.17g, want d + (n-1) c", (long long)n, multi);
    }
}

/* A flight time f (trd_params.flight): a transfer of d = latency = 1
 * holds its ports for 1 - f and arrives f later.  The flat tree's root
 * then takes message k at k (1 - f) and has it at k (1 - f) + f; with c
 * its combines follow in arrival order, one at a time (computed here as
 * the recurrence t = max(t, arrival) + c).  The binomial tree on n = 2^k
 * ranks sends on only what has arrived: k whatever f. */
static void flight_lets_a_rank_take_its_next_message(void **state)
{
    (void)state;
    static const double flights[] = {0.0, 0.25, 0.5, 0.9, 1.0};
    for (int64_t n = 1; n <= 24; n++)
        for (size_t i = 0; i < sizeof flights / sizeof flights[0]; i++)
            for (int withc = 0; withc < 2; withc++) {
                double f = flights[i], c = withc ? 0.5 : 0.0, t = 0.0, m = NAN;
                trd_params p = tu_params(n, 1, c, 0);
                p.latency = 1;
                p.flight = f;
                for (int64_t k = 1; k < n; k++)
                    t = fmax(t, (double)k * (1 - f) + f) + c;
                assert_int_equal(trd_makespan("flat", &p, &m), TRD_OK);
                TU_CHECK(tu_close(m, t), "flat n=%lld f=%g c=%g: %.17g, want %.17g",
                         (long long)n, f, c, m, t);
                if (withc || (n & (n - 1)))
                    continue;
                assert_int_equal(trd_makespan("binomial", &p, &m), TRD_OK);
                TU_CHECK(m == ceil_log2(n), "binomial n=%lld f=%g: %.17g, want %d",
                         (long long)n, f, m, ceil_log2(n));
            }
}

/* trd_params.recv_combine_saving s: a message folded into the
 * accumulator as it arrives (a RECV_COMBINE, plan/fuse.c) pays the
 * latency and (1 - s) of the rest of d; any other message pays d.  With
 * d = 10 of which latency 2, c = 1: on 2 ranks the one message is fused,
 * 2 + 8 (1 - s) + 1, and an allreduce's broadcast then adds a plain d; on
 * 4 ranks the binomial tree fuses only the first level (the second folds
 * into an accumulator the first wrote), 2 + 8 (1 - s) + 1 + 10 + 1. */
static void a_fused_receive_pays_what_the_saving_leaves(void **state)
{
    (void)state;
    static const double savings[] = {0.0, 0.25, 0.5, 1.0};
    for (size_t i = 0; i < sizeof savings / sizeof savings[0]; i++) {
        double s = savings[i], m = NAN, fused = 2 + 8 * (1 - s) + 1;
        trd_params p = tu_params(2, 10, 1, 0);
        p.latency = 2;
        p.recv_combine_saving = s;
        assert_int_equal(trd_makespan("binomial", &p, &m), TRD_OK);
        TU_CHECK(tu_close(m, fused), "binomial n=2 s=%g: %.17g, want %.17g", s, m, fused);
        p.allreduce = true;
        assert_int_equal(trd_makespan("binomial", &p, &m), TRD_OK);
        TU_CHECK(tu_close(m, fused + 10), "binomial allreduce n=2 s=%g: %.17g, want %.17g", s,
                 m, fused + 10);
        p = tu_params(4, 10, 1, 0);
        p.latency = 2;
        p.recv_combine_saving = s;
        assert_int_equal(trd_makespan("binomial", &p, &m), TRD_OK);
        TU_CHECK(tu_close(m, fused + 11), "binomial n=4 s=%g: %.17g, want %.17g", s, m,
                 fused + 11);
    }
}

/* A rank combines one thing at a time.  Binomial on 2 ranks cut into m
 * blocks, c > d: the blocks arrive every d/m (one port) and their
 * combines queue, so the makespan is d/m + c, whether the combines are
 * folded in on arrival (costly ones too) or not; combines that
 * overlapped would end it at d + c/m. */
static void a_rank_combines_one_block_at_a_time(void **state)
{
    (void)state;
    static const int64_t blocks[] = {2, 8, 64};
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++)
        for (int saving = 0; saving < 2; saving++) {
            double m = (double)blocks[i], got = NAN;
            trd_params p = tu_params(2, 1, 4, 0);
            p.segments = blocks[i];
            p.recv_combine_saving = saving ? 0.5 : 0.0;
            double want = (saving ? 0.5 : 1.0) / m + 4;
            assert_int_equal(trd_makespan("binomial", &p, &got), TRD_OK);
            TU_CHECK(tu_close(got, want), "binomial n=2 m=%g d=1 c=4 s=%g: %.17g, want %.17g", m,
                     p.recv_combine_saving, got, want);
        }
}

/* One run of sim both ways (the same seed and run: the same draws). */
static void check_both_ways(trd_sim *sim, const char *algo, int64_t n, int port, int64_t run)
{
    double inlined = NAN;
    int32_t rank_inlined = -1, rank_vtable = -1;
    assert_int_equal(trd_sim_run(sim, 5, run, &inlined, &rank_inlined), TRD_OK);
    trd_virtual_reset(&sim->virt, 5, run);
    trd_transport t = trd_virtual_transport(&sim->virt);
    assert_int_equal(trd_engine_run(sim->engine, &t, &rank_vtable), TRD_OK);
    TU_CHECK(inlined == sim->virt.now && rank_inlined == rank_vtable,
             "%s n=%lld port %d run %lld: inlined %.17g on rank %d, vtable %.17g on rank %d",
             algo, (long long)n, port, (long long)run, inlined, rank_inlined,
             sim->virt.now, rank_vtable);
}

static void inlined_loop_equals_vtable(void **state)
{
    (void)state;
    static const trd_port ports[] = {TRD_PORT_HALF, TRD_PORT_FULL, TRD_PORT_MULTI};
    for (size_t a = 0; a < trd_algo_count(); a++)
        for (int64_t n = 1; n <= 20; n++)
            for (int gamma = 0; gamma < 2; gamma++)
                for (size_t k = 0; k < 3; k++) {
                    const char *algo = trd_algo_name(a);
                    trd_params p = tu_params(n, 1, 0.3, trd_algo_uses_k(a) ? 3 : 0);
                    trd_costs *costs = NULL;
                    trd_sim sim;
                    assert_int_equal(trd_costs_create(&costs, n, gamma ? TRD_DIST_GAMMA
                                                                       : TRD_DIST_CONST,
                                                      1, 0.3, gamma ? 1.0 : 0.0),
                                     TRD_OK);
                    if (trd_sim_init(&sim, algo, &p, costs, ports[k]) == TRD_OK) {
                        for (int64_t run = 0; run < (gamma ? 3 : 1); run++)
                            check_both_ways(&sim, algo, n, (int)k, run);
                        trd_sim_destroy(&sim);
                    }
                    trd_costs_free(costs);
                }
}

int main(void)
{
    static const struct CMUnitTest after[] = {
        cmocka_unit_test(binomial_and_tree_dyn_take_ceil_log2),
        cmocka_unit_test(fibonacci_takes_k_plus_1),
        cmocka_unit_test(flat_tree_port_models),
        cmocka_unit_test(flight_lets_a_rank_take_its_next_message),
        cmocka_unit_test(a_fused_receive_pays_what_the_saving_leaves),
        cmocka_unit_test(a_rank_combines_one_block_at_a_time),
        cmocka_unit_test(inlined_loop_equals_vtable),
    };
    return tu_run_per_planner(&(struct tu_per_planner){
        .group = "sim_deterministic",
        .fn = planner_sim_equals_model,
        .after = after,
        .nafter = sizeof after / sizeof after[0],
        .min_planners = 9, /* the nine planners of test_planner_matrix at least */
    });
}
