/* test_steady_random.c: the steady-state problems on random platforms
 * (generated Tiers-like ones, and small random directed graphs with
 * routers, asymmetric links and cycles), against oracles that do not use
 * the LP:
 *   - every result passes every check of check.c (one-port, conservation,
 *     the paper's corrections, integer counts, trees replayed on tokens,
 *     matchings), and
 *     there are at most as many trees as nonzero entries (Theorem 1);
 *   - monotony: a cheaper link (cost halved) never lowers TP, for the
 *     three problems;
 *   - scatter and gossip, sound bounds computed here in doubles:
 *       TP <= 1 / (|T| * cheapest out-link of the source)   (its out-port)
 *       TP <= 1 / cheapest in-link of each target            (its in-port)
 *       TP <= maxflow(source -> target) and |T| TP <= maxflow(source ->
 *             all targets), capacities 1/c(e) (s(e) <= 1)
 *       TP >= 1 / (largest port load when every message follows a
 *             cheapest path), a feasible schedule;
 *   - reduce: N tasks per reduce, so N TP <= sum of the speeds; the target
 *     receives at least one message per reduce unless it holds every
 *     value;
 *   - solves in four threads at once, while this thread computes with GMP
 *     (lp.c keeps QSopt_ex's memory pool to the solving thread), give the
 *     answers of solves one at a time. */
#include <pthread.h>

#include "core/splitmix.h"
#include "test_steady_util.h"

#define BIG 1e300


/* A random directed graph of n nodes: node 0 computes, others are routers
 * one time in four; each ordered pair linked with probability 2/5, cost
 * k/2 for k in 1..6. */
static trd_platform *random_graph(uint64_t seed, int32_t n)
{
    static const char *const costs[] = {"1/2", "1", "3/2", "2", "5/2", "3"};
    static const char *const speeds[] = {"1/2", "1", "2", "3"};
    trd_platform *pf = sd_new();
    char name[16];
    for (int32_t i = 0; i < n; i++) {
        snprintf(name, sizeof name, "N%d", (int)i);
        bool router = i > 0 && trd_splitmix64(&seed) % 4 == 0;
        sd_node(pf, name, router ? NULL : speeds[trd_splitmix64(&seed) % 4]);
    }
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < n; j++)
            if (i != j && trd_splitmix64(&seed) % 5 < 2)
                sd_link(pf, i, j, costs[trd_splitmix64(&seed) % 6], false);
    return pf;
}

/* The computing nodes of pf (at most max), in order. */
static int32_t hosts(const trd_platform *pf, int32_t *ids, int32_t max)
{
    int32_t n = 0;
    for (int32_t i = 0; i < pf->n_nodes && n < max; i++)
        if (!pf->nodes[i].router)
            ids[n++] = i;
    return n;
}

/* The same platform with link `cheaper` at half its cost. */
static trd_platform *with_cheaper_link(const trd_platform *pf, int32_t cheaper)
{
    trd_platform *copy = sd_new();
    for (int32_t i = 0; i < pf->n_nodes; i++)
        assert_int_equal(trd_platform_add_node(copy, pf->nodes[i].name, pf->nodes[i].router,
                                               pf->nodes[i].speed, NULL), TRD_OK);
    mpq_t c;
    mpq_init(c);
    for (int32_t e = 0; e < pf->n_links; e++) {
        mpq_set(c, pf->links[e].cost);
        if (e == cheaper)
            mpq_div_2exp(c, c, 1);
        assert_int_equal(trd_platform_add_link(copy, pf->links[e].from, pf->links[e].to, c),
                         TRD_OK);
    }
    mpq_clear(c);
    return copy;
}

/* The three problems on pf: scatter from the first host to the others,
 * gossip among the first four hosts, reduce of every host to the last. */
static int32_t specs_for(const trd_platform *pf, int32_t *ids, trd_steady_spec *specs)
{
    int32_t n = hosts(pf, ids, 64), k = 0;
    if (n < 2)
        return 0;
    specs[k++] = sd_spec(TRD_STEADY_SCATTER, ids[0], ids + 1, n - 1);
    specs[k++] = sd_spec(TRD_STEADY_GOSSIP, -1, ids, n < 4 ? n : 4);
    specs[k++] = sd_spec(TRD_STEADY_REDUCE, ids[n - 1], ids, n);
    return k;
}

/* Sum of the computing speeds, as a double. */
static double speed_sum(const trd_platform *pf)
{
    double s = 0;
    for (int32_t i = 0; i < pf->n_nodes; i++)
        s += mpq_get_d(pf->nodes[i].speed);
    return s;
}

static void check_result(const trd_steady *st, const trd_platform *pf)
{
    sd_check_all(st, pf);
    assert_true(st->n_trees <= st->n_sends + st->n_comps);
    if (st->problem != TRD_STEADY_REDUCE)
        return;
    double tp = mpq_get_d(st->throughput), cheapest_in = BIG;
    TU_CHECK(tp * (st->n_members - 1) <= speed_sum(pf) * (1 + 1e-12), "compute bound: %g", tp);
    for (int32_t e = 0; e < pf->n_links; e++)
        if (pf->links[e].to == st->root && mpq_get_d(pf->links[e].cost) < cheapest_in)
            cheapest_in = mpq_get_d(pf->links[e].cost);
    TU_CHECK(tp * cheapest_in <= 1 + 1e-12, "target in-port bound: %g", tp);
}

static void all_checks(void **state)
{
    (void)state;
    int32_t positive = 0;
    for (uint64_t seed = 1; seed <= 24; seed++) {
        trd_platform *pf = NULL;
        if (seed % 2)
            assert_int_equal(trd_platform_generate(seed, 2 + (int32_t)(seed % 3), &pf), TRD_OK);
        else
            pf = random_graph(seed, 4 + (int32_t)(seed % 5));
        int32_t ids[64];
        trd_steady_spec specs[3];
        int32_t k = specs_for(pf, ids, specs);
        for (int32_t i = 0; i < k; i++) {
            specs[i].fixed_period = 1 + (int64_t)(seed % 5);
            trd_steady *st = sd_solve(pf, &specs[i]);
            check_result(st, pf);
            positive += mpq_sgn(st->throughput) > 0;
            trd_steady_free(st);
        }
        trd_platform_free(pf);
    }
    TU_CHECK(positive >= 40, "only %d of the random problems have TP > 0", (int)positive);
}

static void monotone(void **state)
{
    (void)state;
    uint64_t pick = 99;
    mpq_t before, after;
    mpq_inits(before, after, NULL);
    for (uint64_t seed = 1; seed <= 12; seed++) {
        trd_platform *pf = NULL;
        if (seed % 2)
            assert_int_equal(trd_platform_generate(seed, 2, &pf), TRD_OK);
        else
            pf = random_graph(seed, 6);
        if (pf->n_links == 0) {
            trd_platform_free(pf);
            continue;
        }
        int32_t link = (int32_t)(trd_splitmix64(&pick) % (uint64_t)pf->n_links), ids[64];
        trd_platform *cheap = with_cheaper_link(pf, link);
        trd_steady_spec specs[3];
        int32_t k = specs_for(pf, ids, specs);
        for (int32_t i = 0; i < k; i++) {
            sd_throughput(pf, &specs[i], before);
            sd_throughput(cheap, &specs[i], after);
            TU_CHECK(mpq_cmp(after, before) >= 0, "seed %llu, %s: link %d cheaper, TP fell",
                     (unsigned long long)seed, trd_steady_problem_name(specs[i].problem),
                     (int)link);
        }
        trd_platform_free(cheap);
        trd_platform_free(pf);
    }
    mpq_clears(before, after, NULL);
}

/* Largest s -> t flow with capacities cap[i * n + j] (Edmonds-Karp). */
static double max_flow(int32_t n, const double *cap_in, int32_t s, int32_t t)
{
    double *cap = tu_alloc((size_t)(n * n), sizeof *cap), flow = 0;
    int32_t *prev = tu_alloc((size_t)n, sizeof *prev), *queue = tu_alloc((size_t)n, sizeof *queue);
    memcpy(cap, cap_in, (size_t)(n * n) * sizeof *cap);
    for (;;) {
        for (int32_t i = 0; i < n; i++)
            prev[i] = -1;
        int32_t head = 0, tail = 0;
        queue[tail++] = s;
        prev[s] = s;
        while (head < tail && prev[t] < 0)
            for (int32_t u = queue[head++], v = 0; v < n; v++)
                if (prev[v] < 0 && cap[u * n + v] > 1e-12) {
                    prev[v] = u;
                    queue[tail++] = v;
                }
        if (prev[t] < 0)
            break;
        double push = BIG;
        for (int32_t v = t; v != s; v = prev[v])
            push = fmin(push, cap[prev[v] * n + v]);
        for (int32_t v = t; v != s; v = prev[v]) {
            cap[prev[v] * n + v] -= push;
            cap[v * n + prev[v]] += push;
        }
        flow += push;
    }
    free(cap);
    free(prev);
    free(queue);
    return flow;
}

/* TP <= each upper bound of the header (n + 1 nodes: n is a super-sink). */
static void scatter_upper_bounds(const trd_platform *pf, int32_t src, const int32_t *targets,
                                 int32_t nt, double tp)
{
    int32_t n = pf->n_nodes, m = n + 1;
    double *cap = tu_alloc((size_t)(m * m), sizeof *cap), cheapest_out = BIG;
    for (int32_t e = 0; e < pf->n_links; e++) {
        double c = mpq_get_d(pf->links[e].cost);
        cap[pf->links[e].from * m + pf->links[e].to] = 1 / c;
        if (pf->links[e].from == src)
            cheapest_out = fmin(cheapest_out, c);
    }
    TU_CHECK(tp * nt * cheapest_out <= 1 + 1e-9, "source port bound: TP %g", tp);
    for (int32_t i = 0; i < nt; i++) {
        double cheapest_in = BIG;
        for (int32_t e = 0; e < pf->n_links; e++)
            if (pf->links[e].to == targets[i])
                cheapest_in = fmin(cheapest_in, mpq_get_d(pf->links[e].cost));
        TU_CHECK(tp * cheapest_in <= 1 + 1e-9, "in-port bound of target %d", (int)targets[i]);
        TU_CHECK(tp <= max_flow(m, cap, src, targets[i]) + 1e-9, "max-flow bound, target %d",
                 (int)targets[i]);
        cap[targets[i] * m + n] = BIG;
    }
    TU_CHECK(tp * nt <= max_flow(m, cap, src, n) + 1e-9, "max-flow bound to all targets");
    free(cap);
}

/* A feasible schedule: each message on a cheapest path (Floyd-Warshall);
 * returns the TP it reaches (0 when some target cannot be reached). */
static double shortest_path_tp(const trd_platform *pf, const int32_t *from, const int32_t *to,
                               int32_t pairs)
{
    int32_t n = pf->n_nodes;
    double *d = tu_alloc((size_t)(n * n), sizeof *d), *load = tu_alloc(2 * (size_t)n, sizeof *load);
    int32_t *next = tu_alloc((size_t)(n * n), sizeof *next);
    for (int32_t i = 0; i < n * n; i++) {
        d[i] = i / n == i % n ? 0 : BIG;
        next[i] = i % n;
    }
    for (int32_t e = 0; e < pf->n_links; e++)
        d[pf->links[e].from * n + pf->links[e].to] = mpq_get_d(pf->links[e].cost);
    for (int32_t k = 0; k < n; k++)
        for (int32_t i = 0; i < n; i++)
            for (int32_t j = 0; j < n; j++)
                if (d[i * n + k] + d[k * n + j] < d[i * n + j] - 1e-12) {
                    d[i * n + j] = d[i * n + k] + d[k * n + j];
                    next[i * n + j] = next[i * n + k];
                }
    double worst = 0;
    for (int32_t p = 0; p < pairs && worst < BIG; p++) {
        if (d[from[p] * n + to[p]] >= BIG)
            worst = BIG;
        for (int32_t u = from[p]; worst < BIG && u != to[p]; u = next[u * n + to[p]]) {
            int32_t v = next[u * n + to[p]];
            double c = d[u * n + v] < BIG ? mpq_get_d(pf->links[trd_platform_link(pf, u, v)].cost)
                                          : BIG;
            load[u] += c;
            load[n + v] += c;
            worst = fmax(worst, fmax(load[u], load[n + v]));
        }
    }
    free(d);
    free(load);
    free(next);
    return worst >= BIG ? 0 : 1 / worst;
}

static void scatter_gossip_bounds(void **state)
{
    (void)state;
    int32_t positive = 0;
    for (uint64_t seed = 100; seed < 140; seed++) {
        trd_platform *pf = random_graph(seed, 5 + (int32_t)(seed % 4));
        int32_t ids[64], n = hosts(pf, ids, 64), from[64 * 64], to[64 * 64], pairs = 0;
        if (n < 3) {
            trd_platform_free(pf);
            continue;
        }
        trd_steady_spec spec = sd_spec(TRD_STEADY_SCATTER, ids[0], ids + 1, n - 1);
        trd_steady *st = sd_solve(pf, &spec);
        double tp = mpq_get_d(st->throughput);
        positive += tp > 0;
        scatter_upper_bounds(pf, ids[0], ids + 1, n - 1, tp);
        for (int32_t t = 1; t < n; t++, pairs++) {
            from[pairs] = ids[0];
            to[pairs] = ids[t];
        }
        TU_CHECK(tp >= shortest_path_tp(pf, from, to, pairs) * (1 - 1e-9),
                 "seed %llu: scatter TP %g below a cheapest-path schedule",
                 (unsigned long long)seed, tp);
        trd_steady_free(st);
        spec = sd_spec(TRD_STEADY_GOSSIP, -1, ids, n);
        st = sd_solve(pf, &spec);
        for (int32_t k = pairs = 0; k < n; k++)
            for (int32_t l = 0; l < n; l++)
                if (k != l) {
                    from[pairs] = ids[k];
                    to[pairs++] = ids[l];
                }
        TU_CHECK(mpq_get_d(st->throughput) >= shortest_path_tp(pf, from, to, pairs) * (1 - 1e-9),
                 "seed %llu: gossip TP below a cheapest-path schedule", (unsigned long long)seed);
        trd_steady_free(st);
        trd_platform_free(pf);
    }
    TU_CHECK(positive >= 10, "only %d random scatters have TP > 0", (int)positive);
}

typedef struct solve_job {
    uint64_t seed;
    char tp[64]; /* the answer, or "" after a failure */
} solve_job;

static void *solve_thread(void *arg)
{
    solve_job *job = arg;
    trd_platform *pf = NULL;
    trd_steady *st = NULL;
    int32_t ids[64];
    trd_steady_spec specs[3];
    job->tp[0] = '\0';
    if (trd_platform_generate(job->seed, 3, &pf) != TRD_OK)
        return NULL;
    int32_t k = specs_for(pf, ids, specs);
    if (k == 3 && trd_steady_solve(pf, &specs[2], &st) == TRD_OK)
        snprintf(job->tp, sizeof job->tp, "%s", trd_steady_throughput(st));
    trd_steady_free(st);
    trd_platform_free(pf);
    return NULL;
}

static void concurrent_solves(void **state)
{
    (void)state;
    solve_job alone[4], together[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        alone[i].seed = together[i].seed = 40 + (uint64_t)i;
        solve_thread(&alone[i]);
        assert_true(alone[i].tp[0] != '\0');
    }
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, solve_thread, &together[i]), 0);
    mpq_t x;
    mpq_init(x);
    for (unsigned long i = 1; i < 20000; i++) { /* GMP allocations meanwhile */
        mpq_set_ui(x, i * i + 1, i + 7);
        mpq_canonicalize(x);
        mpq_mul(x, x, x);
    }
    mpq_clear(x);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_string_equal(together[i].tp, alone[i].tp);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(concurrent_solves),
        cmocka_unit_test(all_checks),
        cmocka_unit_test(monotone),
        cmocka_unit_test(scatter_gossip_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
