/* bench/hetero.c: the planners for heterogeneous costs against the
 * non-clairvoyant baselines, in simulation (docs/HETEROGENEOUS.md).
 *
 * Instances: the worst cases of benoit-canon-marchal Sec. 4 (the cost
 * presets lower-to-higher and fib-root-slow - higher-to-lower equals
 * lower-to-higher off the diagonal -: fast transfers 1, slow ones D,
 * combines c), and random cost files of both models of trd_costs_random
 * (links, nodes; spread 10 and 2: transfers and combines in [1, 10] or
 * [1, 2]).  Every
 * makespan is the model's under those constant costs, root rank 0:
 * hetero-exact (n <= 9), hetero-greedy, and the baselines built from the
 * mean costs - greedy (Alg. 1 on the means), binomial, fibonacci - each
 * plan timed under the heterogeneous costs (the evaluator, which the
 * simulator reproduces, tests/test_hetero.c), and tree-dyn simulated once
 * with the same costs, plus the transfer of its result to the root (what
 * the runtime does; the "anywhere" column leaves it out, as Benoit's model
 * does).
 *
 * Prints two markdown tables: the presets' makespans; per random family,
 * each algorithm's mean and worst ratio to the best value (hetero-exact's
 * up to n = 9, else the least of the rooted ones) and on how many
 * instances it is that best, the lower bound's mean ratio, and on how many
 * instances a rooted baseline beats hetero-greedy.
 *
 * usage: bench_hetero [seeds (default 10)] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/sim.h"
#include "treduce/treduce.h"

enum { EXACT, HGREEDY, GREEDY, BINOMIAL, FIBONACCI, TREEDYN, TREEDYN_ANY, NALGO };
static const char *const names[NALGO] = {"hetero-exact", "hetero-greedy", "greedy", "binomial",
                                         "fibonacci", "tree-dyn", "tree-dyn"};
static const char *const heads[NALGO] = {"hetero-exact", "hetero-greedy", "greedy (means)",
                                         "binomial", "fibonacci", "tree-dyn",
                                         "tree-dyn, result anywhere"};

static void die(const char *what)
{
    fprintf(stderr, "bench_hetero: %s: %s\n", what, trd_errmsg());
    exit(1);
}

/* tree-dyn once with the constant costs: its makespan, with (to_root) the
 * transfer of the result to the root that the runtime then makes (the
 * model of Benoit Sec. 3.1 leaves the result anywhere; a reduce has a
 * root). */
static double tree_dyn(const trd_params *p, const trd_costs *k, bool to_root)
{
    trd_params q = *p;
    q.costs = NULL;
    trd_sim sim;
    double m;
    int32_t holder;
    if (trd_sim_init(&sim, "tree-dyn", &q, k, TRD_PORT_HALF) != TRD_OK ||
        trd_sim_run(&sim, 1, 0, &m, &holder) != TRD_OK)
        die("tree-dyn");
    trd_sim_destroy(&sim);
    return to_root && holder != p->root ? m + trd_costs_transfer(k, holder, p->root) : m;
}

/* Every algorithm's makespan on costs k (NaN: hetero-exact beyond n = 9). */
static void makespans(const trd_costs *k, double *m, double *lb)
{
    trd_params p;
    trd_params_init(&p);
    p.n = trd_costs_n(k);
    p.costs = k;
    trd_costs_mean(k, &p.d, &p.c); /* what the baselines plan with */
    for (int a = 0; a < NALGO; a++)
        if (a == EXACT && p.n > 9)
            m[a] = NAN;
        else if (a >= TREEDYN)
            m[a] = tree_dyn(&p, k, a == TREEDYN);
        else if (trd_makespan(names[a], &p, &m[a]) != TRD_OK)
            die(names[a]);
    *lb = trd_lower_bound(&p);
}

static void print_head(const char *first, const char *last)
{
    printf("| %s |", first);
    for (int a = 0; a < NALGO; a++)
        printf(" %s |", heads[a]);
    printf(" lower bound |%s\n|---|", last);
    for (int a = 0; a <= NALGO; a++)
        printf("---:|");
    printf("%s\n", *last ? "---:|" : "");
}

/* The worst cases of Sec. 4: makespans, fast transfers 1. */
static void presets(void)
{
    static const char *const names_p[] = {"lower-to-higher", "fib-root-slow"};
    static const double Ds[] = {2, 5, 10}, cs[] = {0, 1};
    static const int64_t ns[] = {9, 64};
    print_head("preset, D, c, n", "");
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 3; j++)
            for (size_t l = 0; l < 2; l++)
                for (size_t t = 0; t < 2; t++) {
                    trd_costs *k;
                    double m[NALGO], lb;
                    if (trd_costs_create(&k, ns[t], TRD_DIST_CONST, 1.0, cs[l], 0.0) != TRD_OK ||
                        trd_costs_preset(k, names_p[i], Ds[j]) != TRD_OK)
                        die("preset");
                    makespans(k, m, &lb);
                    printf("| %s, %g, %g, %lld |", names_p[i], Ds[j], cs[l], (long long)ns[t]);
                    for (int a = 0; a < NALGO; a++)
                        printf(isnan(m[a]) ? " - |" : " %g |", m[a]);
                    printf(" %g |\n", lb);
                    trd_costs_free(k);
                }
}

/* One random family: each algorithm's mean and worst ratio to the best
 * value (hetero-exact's up to n = 9, else the least of the rooted
 * schedules) and on how many instances it is that best. */
static void random_family(const char *model, double spread, int64_t n, int seeds)
{
    double sum[NALGO] = {0}, worst[NALGO] = {0}, lb_sum = 0;
    int best_count[NALGO] = {0}, beaten = 0;
    for (int s = 1; s <= seeds; s++) {
        trd_costs *k;
        double m[NALGO], lb;
        if (trd_costs_create(&k, n, TRD_DIST_CONST, 1.0, 1.0, 0.0) != TRD_OK ||
            trd_costs_random(k, model, spread, (uint64_t)s) != TRD_OK)
            die("random costs");
        makespans(k, m, &lb);
        double best = m[EXACT]; /* NaN beyond n = 9: fmin skips it */
        for (int a = 1; n > 9 && a < TREEDYN_ANY; a++)
            best = fmin(best, m[a]);
        for (int a = 0; a < NALGO; a++) {
            double r = m[a] / best;
            sum[a] += r;
            worst[a] = fmax(worst[a], r);
            best_count[a] += r <= 1.0 + 1e-9;
        }
        lb_sum += lb / best;
        for (int a = GREEDY; a < TREEDYN_ANY; a++) /* a rooted baseline below it */
            if (m[a] < m[HGREEDY] * (1 - 1e-9)) {
                beaten++;
                break;
            }
        trd_costs_free(k);
    }
    printf("| %s, %g, %lld (%d) |", model, spread, (long long)n, seeds);
    for (int a = 0; a < NALGO; a++)
        printf(isnan(sum[a]) ? " - |" : " %.3f / %.3f (%d) |", sum[a] / seeds, worst[a],
               best_count[a]);
    printf(" %.3f | %d |\n", lb_sum / seeds, beaten);
}

int main(int argc, char **argv)
{
    int seeds = argc > 1 ? atoi(argv[1]) : 10;
    if (seeds < 1 || seeds > 1000) {
        fprintf(stderr, "usage: bench_hetero [seeds 1..1000]\n");
        return 2;
    }
    static const char *const models[] = {"links", "nodes"};
    static const int64_t ns[] = {8, 9, 32, 128};
    static const double spreads[] = {10, 2};
    presets();
    printf("\n");
    print_head("model, spread, n (instances)", " a baseline below hetero-greedy |");
    for (size_t g = 0; g < 2; g++)
        for (size_t i = 0; i < 2; i++)
            for (size_t t = 0; t < 4; t++)
                random_family(models[i], spreads[g], ns[t], seeds);
    return 0;
}
