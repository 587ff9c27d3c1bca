/* test_k_transfers.c: Algorithm 2 of canon-antoniu (greedy-k-transfers).
 *
 * Checks, for n = 1..300 (every n up to 120, then a stride), many K and
 * (d, c) pairs:
 *   - feasibility: replaying the plan's transfers (rank r != root occupies
 *     [trd_plan_send_start(r), + d)), a sweep line never sees more than K
 *     at once (touching endpoints do not overlap);
 *   - its makespan is never below greedy's (Algorithm 1 is optimal without
 *     the limit) and equals it once K >= floor(n/2) (one-port allows at most
 *     floor(n/2) concurrent transfers, so the limit is void);
 *   - its makespan equals that of the binary-heap Algorithm 2 of
 *     tests/oracle/greedy_heap.c (docs/MODEL.md's reading of lines 8 and 14).
 *     The trees are not required to be equal: the library's two-FIFO queue
 *     does not break ties of Algorithm 2 by smallest position (line 10 can
 *     re-insert machines out of position order at equal s, e.g. n = 13,
 *     K = 2, d = c = 1 gives rank 12 parent 2 where the (s, position) heap
 *     gives 0); ties do not change the makespan (docs/MODEL.md).  Where the
 *     trees coincide, every send start must equal the oracle's t_max - t_i.
 * The (d, c) values are dyadic so every time is exact in binary. */
#include "testutil.h"

static const double pairs[][2] = {{1, 1}, {1, 0}, {0, 1}, {2, 1},
                                  {1, 3}, {0.5, 1.25}, {1.5, 0.75}};
#define NPAIRS (sizeof pairs / sizeof pairs[0])
#define N_LAST 300

/* n = 1..120, then every 7th n, and the last one. */
static int next_n(int n)
{
    if (n < 120 || n == N_LAST)
        return n + 1;
    return n + 7 > N_LAST ? N_LAST : n + 7;
}

typedef struct event {
    double time;
    int delta; /* +1 start, -1 end */
} event;

static int by_time(const void *a, const void *b)
{
    const event *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->delta - y->delta; /* ends (-1) before starts: touching is fine */
}

/* Most transfers of the plan in progress at once (zero-length ones none). */
static int max_concurrent(const trd_plan *plan, double d)
{
    int32_t n = (int32_t)trd_plan_params(plan)->n;
    event *ev = tu_alloc(2 * (size_t)n, sizeof *ev);
    size_t m = 0;
    for (int32_t r = 0; r < n; r++) {
        if (trd_plan_parent(plan, r) < 0 || d == 0)
            continue;
        double s = trd_plan_send_start(plan, r);
        assert_true(isfinite(s) && s >= 0);
        ev[m++] = (event){s, +1};
        ev[m++] = (event){s + d, -1};
    }
    qsort(ev, m, sizeof *ev, by_time);
    int now = 0, most = 0;
    for (size_t i = 0; i < m; i++) {
        now += ev[i].delta;
        most = now > most ? now : most;
    }
    free(ev);
    return most;
}

/* K values for n: small ones, floor/ceil(n/2) and beyond. */
static int k_values(int n, int64_t *k)
{
    int m = 0;
    static const int small[] = {1, 2, 3, 4, 5, 7, 8, 13};
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++)
        if (small[i] < n / 2)
            k[m++] = small[i];
    k[m++] = n / 2 > 0 ? n / 2 : 1;
    k[m++] = (n + 1) / 2;
    k[m++] = n + 3;
    return m;
}

static void transfers_never_exceed_k(void **state)
{
    (void)state;
    for (size_t i = 0; i < NPAIRS; i++) {
        double d = pairs[i][0], c = pairs[i][1];
        for (int n = 1; n <= N_LAST; n = next_n(n)) {
            int64_t ks[16];
            int nk = k_values(n, ks);
            for (int j = 0; j < nk; j++) {
                trd_params p = tu_params(n, d, c, ks[j]);
                trd_plan *plan = tu_plan("greedy-k-transfers", &p);
                int most = max_concurrent(plan, d);
                TU_CHECK(most <= ks[j], "n=%d K=%lld d=%g c=%g: %d concurrent transfers",
                         n, (long long)ks[j], d, c, most);
                trd_plan_free(plan);
            }
        }
    }
}

/* Sanity of the sweep itself: the flat tree of n ranks has transfers one
 * after the other (never 2 at once) and the binomial tree on 2^k ranks runs
 * 2^(k-1) transfers at once in its first round. */
static void sweep_counts_known_schedules(void **state)
{
    (void)state;
    trd_params p = tu_params(9, 1, 1, 0);
    trd_plan *plan = tu_plan("flat", &p);
    assert_int_equal(max_concurrent(plan, 1), 1);
    trd_plan_free(plan);
    p.n = 64;
    plan = tu_plan("binomial", &p);
    assert_int_equal(max_concurrent(plan, 1), 32);
    trd_plan_free(plan);
}

static void makespan_vs_greedy(void **state)
{
    (void)state;
    for (size_t i = 0; i < NPAIRS; i++) {
        double d = pairs[i][0], c = pairs[i][1];
        for (int n = 1; n <= N_LAST; n = next_n(n)) {
            trd_params p = tu_params(n, d, c, 0);
            double opt = tu_makespan("greedy", &p);
            int64_t ks[16];
            int nk = k_values(n, ks);
            for (int j = 0; j < nk; j++) {
                p.K = ks[j];
                double got = tu_makespan("greedy-k-transfers", &p);
                TU_CHECK(got >= opt || tu_close(got, opt),
                         "n=%d K=%lld d=%g c=%g: %.17g below greedy %.17g", n,
                         (long long)p.K, d, c, got, opt);
                if (p.K >= n / 2) /* integer n/2: floor(n/2) already suffices */
                    TU_CHECK(tu_close(got, opt),
                             "n=%d K=%lld d=%g c=%g: %.17g != greedy %.17g", n,
                             (long long)p.K, d, c, got, opt);
            }
        }
    }
}

/* Returns whether the trees coincide (then the starts were compared too). */
static int compare_with_heap_oracle(int n, double d, double c, int64_t K,
                                     int32_t *parent, double *start)
{
    double want = trd_oracle_greedy_k_transfers_heap(n, d, c, K, parent, start);
    assert_true(want >= 0);
    trd_params p = tu_params(n, d, c, K);
    trd_plan *plan = tu_plan("greedy-k-transfers", &p);
    double got = trd_plan_makespan(plan);
    TU_CHECK(tu_close(got, want), "n=%d K=%lld d=%g c=%g: %.17g, oracle %.17g", n,
             (long long)K, d, c, got, want);
    int same_tree = 1;
    for (int32_t r = 0; r < n; r++)
        same_tree &= trd_plan_parent(plan, r) == parent[r];
    /* Same tree: the transfers start at the oracle's t_max - t_i. */
    for (int32_t r = 1; same_tree && r < n; r++)
        TU_CHECK(tu_close(trd_plan_send_start(plan, r), start[r]),
                 "n=%d K=%lld d=%g c=%g: rank %d starts at %.17g, oracle %.17g", n,
                 (long long)K, d, c, r, trd_plan_send_start(plan, r), start[r]);
    trd_plan_free(plan);
    return same_tree;
}

static void matches_heap_oracle(void **state)
{
    (void)state;
    int32_t *parent = tu_alloc(N_LAST, sizeof *parent);
    double *start = tu_alloc(N_LAST, sizeof *start);
    int cases = 0, same_trees = 0;
    for (size_t i = 0; i < NPAIRS; i++) {
        double d = pairs[i][0], c = pairs[i][1];
        for (int n = 1; n <= N_LAST; n = next_n(n)) {
            int64_t ks[16];
            int nk = k_values(n, ks);
            for (int j = 0; j < nk; j++, cases++)
                same_trees += compare_with_heap_oracle(n, d, c, ks[j], parent, start);
        }
    }
    /* The start comparison must not be vacuous. */
    TU_CHECK(same_trees > cases / 4, "only %d of %d trees coincide", same_trees, cases);
    free(parent);
    free(start);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sweep_counts_known_schedules),
        cmocka_unit_test(transfers_never_exceed_k),
        cmocka_unit_test(makespan_vs_greedy),
        cmocka_unit_test(matches_heap_oracle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
