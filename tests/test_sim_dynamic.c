/* test_sim_dynamic.c: the dynamic policies (tree-dyn, nc-tree-dyn) run by
 * the engine over the virtual-time transport, against
 *   - an independent bookkeeping of the reduction: a wrapper transport
 *     around src/sim/virtual.c sees every completed RECV (rank r got rank
 *     `from`'s value) and keeps, per rank, the set of contributions
 *     (bitmask) and the rank interval it holds.  Checked on n = 2..40,
 *     100 runs of gamma (CV 1) costs each, half- and multi-port: every
 *     contribution is merged exactly once (disjoint sets, one full set at
 *     the end, on the rank the engine reports, after n - 1 merges); for
 *     nc-tree-dyn every merge joins ADJACENT intervals (benoit Sec. 3.1
 *     "neighbor value") and the engine's COMBINE side is LEFT exactly when
 *     the received interval lies left; tree-dyn must be seen merging
 *     non-adjacent intervals (so the adjacency check can fail).  The
 *     wrapped run's makespan equals trd_simulate's for the same seed/run;
 *   - Figure 3 of benoit Sec. 4 (a cost file written here, c = 0): the
 *     first round pairs 1->0, 3->2, 5->4, 7->6; 3->2 and 5->4 (cost 1)
 *     end before 1->0 and 7->6 (cost 1.1), so nc-tree-dyn pairs [2,3] with
 *     [4,5] and needs 4 steps (makespan 4, derived in the test), while
 *     tree-dyn and Binomial-stat finish at 1.1 + 1 + 1 = 3.1;
 *   - the worst cases of Table 1 (presets, c = 0, n = 2^k): with
 *     "lower-to-higher" (d_ij = 1 if i < j, else D) Binomial-stat and
 *     Tree-dyn take exactly D ceil(log2 n) (Theorem 1), D = 3, n = 8, 16,
 *     64; with "fib-root-slow" Fibonacci-stat on 8 ranks takes 4D (its root
 *     receives four slow messages). */
#include "testutil.h"

#include <unistd.h>

#include "sim/sim.h"

#define N_MAX 40
#define RUNS 100

typedef struct tracker {
    trd_transport inner;
    int32_t n;
    bool check_adjacent;
    uint64_t mask[N_MAX];
    int32_t lo[N_MAX], hi[N_MAX];
    int expect_side[N_MAX]; /* side the next COMBINE of rank r must have; -1 none */
    int64_t merges, nonadjacent;
    char error[256]; /* first inconsistency seen; empty when none */
} tracker;

#define TR_FAIL(t, ...) \
    ((t)->error[0] ? (void)0 : (void)snprintf((t)->error, sizeof (t)->error, __VA_ARGS__))

static void merge(tracker *t, int32_t from, int32_t r)
{
    if (from < 0 || from >= t->n || r < 0 || r >= t->n || from == r) {
        TR_FAIL(t, "bad transfer %d -> %d", from, r);
        return;
    }
    if (t->mask[from] == 0 || t->mask[r] == 0)
        TR_FAIL(t, "%d -> %d: a rank that already sent takes part again", from, r);
    if (t->mask[from] & t->mask[r])
        TR_FAIL(t, "%d -> %d: contributions %#llx merged twice", from, r,
                (unsigned long long)(t->mask[from] & t->mask[r]));
    bool left = t->hi[from] + 1 == t->lo[r], right = t->hi[r] + 1 == t->lo[from];
    if (!left && !right) {
        t->nonadjacent++;
        if (t->check_adjacent)
            TR_FAIL(t, "%d [%d,%d] -> %d [%d,%d]: intervals are not adjacent", from,
                    t->lo[from], t->hi[from], r, t->lo[r], t->hi[r]);
    }
    t->expect_side[r] = left ? TRD_SIDE_LEFT : right ? TRD_SIDE_RIGHT : -1;
    t->mask[r] |= t->mask[from];
    t->mask[from] = 0;
    t->lo[r] = t->lo[r] < t->lo[from] ? t->lo[r] : t->lo[from];
    t->hi[r] = t->hi[r] > t->hi[from] ? t->hi[r] : t->hi[from];
    t->merges++;
}

static trd_status tr_post(void *ctx, int32_t rank, int32_t step, const trd_step *s)
{
    tracker *t = ctx;
    if (s->kind == TRD_STEP_COMBINE) {
        if (t->expect_side[rank] >= 0 && s->side != t->expect_side[rank])
            TR_FAIL(t, "rank %d combines on side %d, its input lies on side %d", rank,
                    s->side, t->expect_side[rank]);
        t->expect_side[rank] = -1;
    }
    return t->inner.post(t->inner.ctx, rank, step, s);
}

static trd_status tr_wait_any(void *ctx, int32_t *rank, int32_t *step, int32_t *from)
{
    tracker *t = ctx;
    trd_status st = t->inner.wait_any(t->inner.ctx, rank, step, from);
    if (st == TRD_OK && *from >= 0)
        merge(t, *from, *rank);
    return st;
}

static double tr_now(void *ctx)
{
    tracker *t = ctx;
    return t->inner.now(t->inner.ctx);
}

static void tracker_reset(tracker *t, trd_transport inner, int32_t n, bool adjacent)
{
    memset(t, 0, sizeof *t);
    t->inner = inner;
    t->n = n;
    t->check_adjacent = adjacent;
    for (int32_t r = 0; r < n; r++) {
        t->mask[r] = (uint64_t)1 << r;
        t->lo[r] = t->hi[r] = r;
        t->expect_side[r] = -1;
    }
}

/* The final state: one rank holds all n contributions, [0, n-1]. */
static void check_final(const tracker *t, int32_t result, const char *algo, int32_t n)
{
    uint64_t full = n == 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1;
    TU_CHECK(t->error[0] == 0, "%s n=%d: %s", algo, n, t->error);
    TU_CHECK(t->merges == n - 1, "%s n=%d: %lld merges", algo, n, (long long)t->merges);
    TU_CHECK(result >= 0 && result < n && t->mask[result] == full, "%s n=%d: result rank %d "
             "holds %#llx", algo, n, result,
             (unsigned long long)(result >= 0 && result < n ? t->mask[result] : 0));
    TU_CHECK(t->lo[result] == 0 && t->hi[result] == n - 1, "%s n=%d: result interval [%d,%d]",
             algo, n, t->lo[result], t->hi[result]);
}

/* Runs `algo` on n ranks for RUNS runs per port; returns the number of
 * non-adjacent merges seen. */
static int64_t replay(const char *algo, bool adjacent, int32_t n, const trd_costs *costs)
{
    static const trd_port ports[] = {TRD_PORT_HALF, TRD_PORT_MULTI};
    trd_params p = tu_params(n, 1, 0.5, 0);
    int64_t nonadjacent = 0;
    for (size_t k = 0; k < 2; k++) {
        trd_sim sim; /* owns the policy, the engine and the virtual transport */
        assert_int_equal(trd_sim_init(&sim, algo, &p, costs, ports[k]), TRD_OK);
        assert_non_null(sim.engine);
        assert_null(sim.plan);
        for (int64_t run = 0; run < RUNS; run++) {
            tracker t;
            trd_virtual_reset(&sim.virt, 11, run);
            tracker_reset(&t, trd_virtual_transport(&sim.virt), n, adjacent);
            trd_transport wrapped = {.ctx = &t, .post = tr_post, .wait_any = tr_wait_any,
                                     .now = tr_now};
            int32_t result = -1;
            assert_int_equal(trd_engine_run(sim.engine, &wrapped, &result), TRD_OK);
            check_final(&t, result, algo, n);
            nonadjacent += t.nonadjacent;
            double direct = NAN;
            assert_int_equal(trd_simulate(algo, &p, costs, ports[k], 11, run, &direct), TRD_OK);
            TU_CHECK(direct == sim.virt.now, "%s n=%d run %lld: wrapped %.17g, trd_simulate "
                     "%.17g", algo, n, (long long)run, sim.virt.now, direct);
        }
        trd_sim_destroy(&sim);
    }
    return nonadjacent;
}

static void dynamic_policies_merge_each_value_once(void **state)
{
    (void)state;
    int64_t td_nonadjacent = 0, nc_nonadjacent = 0;
    for (int32_t n = 2; n <= N_MAX; n++) {
        trd_costs *costs = NULL;
        assert_int_equal(trd_costs_create(&costs, n, TRD_DIST_GAMMA, 1.0, 0.5, 1.0), TRD_OK);
        nc_nonadjacent += replay("nc-tree-dyn", true, n, costs);
        td_nonadjacent += replay("tree-dyn", false, n, costs);
        trd_costs_free(costs);
    }
    assert_int_equal(nc_nonadjacent, 0);
    TU_CHECK(td_nonadjacent > 0, "tree-dyn never merged non-adjacent intervals in %d runs",
             2 * RUNS * (N_MAX - 1));
}

/* Writes the Figure 3 costs (d[i][j] = 1 but d[1][0] = d[7][6] = 1.1,
 * zero diagonal, c = 0) to a temporary file; returns its path in buf. */
static void write_figure3(char *buf, size_t size)
{
    snprintf(buf, size, "/tmp/trd_fig3_XXXXXX");
    int fd = mkstemp(buf);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fprintf(f, "# Figure 3 of benoit-canon-marchal: 3->2 and 5->4 end first\nn 8\n");
    for (int i = 0; i < 8; i++) {
        for (int j = 0; j < 8; j++) {
            double d = i == j ? 0.0 : 1.0;
            if ((i == 1 && j == 0) || (i == 7 && j == 6))
                d = 1.1;
            fprintf(f, "%s%.17g", j ? " " : "", d);
        }
        fprintf(f, "\n");
    }
    fprintf(f, "0 0 0 0 0 0 0 0\n");
    assert_int_equal(fclose(f), 0);
}

/* Makespan and result rank of one run of algo under `costs`. */
static double run_once(const char *algo, const trd_costs *costs, int32_t n, int32_t *rank)
{
    trd_params p = tu_params(n, 1, 0, 0);
    trd_sim sim;
    double m = NAN;
    trd_status st = trd_sim_init(&sim, algo, &p, costs, TRD_PORT_HALF);
    TU_CHECK(st == TRD_OK, "%s n=%d: %s", algo, n, trd_errmsg());
    assert_int_equal(trd_sim_run(&sim, 1, 0, &m, rank), TRD_OK);
    trd_sim_destroy(&sim);
    double direct = NAN;
    assert_int_equal(trd_simulate(algo, &p, costs, TRD_PORT_HALF, 1, 0, &direct), TRD_OK);
    TU_CHECK(direct == m, "%s n=%d: trd_simulate %.17g, trd_sim_run %.17g", algo, n, direct, m);
    return m;
}

/* nc-tree-dyn: at t = 1, [2,3] and [4,5] are idle and adjacent: 4 -> 2
 * (ends at 2); at 1.1 ranks 0 [0,1] and 6 [6,7] find no idle neighbour
 * and wait; at 2, [2,5] -> 0 (ends at 3); at 3, [0,5] -> 6 (ends at 4):
 * four steps, result on rank 6.  tree-dyn: 2 waits in the slot at 1, 4
 * sends to it (ends 2); at 1.1, 0 takes the slot and 6 sends to it (ends
 * 2.1); 2 takes the slot at 2 and 0 sends to it at 2.1: 3.1 on rank 2.
 * Binomial-stat: 2 -> 0 and 6 -> 4 start at 1.1, 4 -> 0 at 2.1: 3.1 on 0. */
static void figure3_nc_tree_dyn_needs_a_fourth_step(void **state)
{
    (void)state;
    char path[64];
    write_figure3(path, sizeof path);
    trd_costs *costs = NULL;
    assert_int_equal(trd_costs_create(&costs, 8, TRD_DIST_CONST, 1.0, 0.0, 0.0), TRD_OK);
    trd_status st = trd_costs_load(costs, path);
    TU_CHECK(st == TRD_OK, "load %s: %s", path, trd_errmsg());
    unlink(path);
    int32_t rank = -1;
    double three = (1.1 + 1.0) + 1.0;
    double nc = run_once("nc-tree-dyn", costs, 8, &rank);
    TU_CHECK(nc > 3.5 && nc == 4.0, "nc-tree-dyn: %.17g, want 4", nc);
    assert_int_equal(rank, 6);
    double td = run_once("tree-dyn", costs, 8, &rank);
    TU_CHECK(tu_close(td, three), "tree-dyn: %.17g, want 3.1", td);
    assert_int_equal(rank, 2);
    double bin = run_once("binomial", costs, 8, &rank);
    TU_CHECK(tu_close(bin, three), "binomial: %.17g, want 3.1", bin);
    assert_int_equal(rank, 0);
    trd_costs_free(costs);
}

static double preset_makespan(const char *algo, const char *preset, double D, int32_t n)
{
    trd_costs *costs = NULL;
    assert_int_equal(trd_costs_create(&costs, n, TRD_DIST_CONST, 1.0, 0.0, 0.0), TRD_OK);
    trd_status st = trd_costs_preset(costs, preset, D);
    TU_CHECK(st == TRD_OK, "preset %s: %s", preset, trd_errmsg());
    int32_t rank;
    double m = run_once(algo, costs, n, &rank);
    trd_costs_free(costs);
    return m;
}

static void table1_worst_cases(void **state)
{
    (void)state;
    static const int32_t ns[] = {8, 16, 64};
    const double D = 3.0;
    for (size_t i = 0; i < 3; i++) {
        int k = 0;
        while ((1 << k) < ns[i])
            k++;
        double bin = preset_makespan("binomial", "lower-to-higher", D, ns[i]);
        double td = preset_makespan("tree-dyn", "lower-to-higher", D, ns[i]);
        TU_CHECK(bin == D * k, "binomial n=%d lower-to-higher: %.17g, want D log2 n = %g",
                 ns[i], bin, D * k);
        TU_CHECK(td == D * k, "tree-dyn n=%d lower-to-higher: %.17g, want D log2 n = %g",
                 ns[i], td, D * k);
        /* the same instance without slow links takes log2 n */
        double fast = preset_makespan("binomial", "lower-to-higher", 1.0, ns[i]);
        TU_CHECK(fast == k, "binomial n=%d D=1: %.17g, want %d", ns[i], fast, k);
    }
    double fib = preset_makespan("fibonacci", "fib-root-slow", D, 8);
    TU_CHECK(fib == 4 * D, "fibonacci n=8 fib-root-slow: %.17g, want 4D = %g", fib, 4 * D);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dynamic_policies_merge_each_value_once),
        cmocka_unit_test(figure3_nc_tree_dyn_needs_a_fourth_step),
        cmocka_unit_test(table1_worst_cases),
    };
    return cmocka_run_group_tests_name("sim_dynamic", tests, NULL, NULL);
}
