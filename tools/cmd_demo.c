/* cmd_demo.c: `treduce demo`, the main job shown by `make demo`: every
 * planner on 64 ranks for several combine/transfer ratios, next to the
 * Lemma 5 lower bound, and a Gantt chart of the optimal (greedy) plan. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

#define DEMO_N 64
#define DEMO_K 8

static const double ratios[] = {0.0, 0.5, 1.0, 2.0}; /* c / d with d = 1 */
#define NRATIOS (sizeof ratios / sizeof ratios[0])

static void params_for(trd_params *p, double c)
{
    trd_params_init(p);
    p->n = DEMO_N;
    p->d = 1.0;
    p->c = c;
    p->K = DEMO_K;
}

/* Planners are evaluated in closed form; dynamic algorithms (which have no
 * plan) are simulated with constant costs, which is the same model. */
static trd_status deterministic_makespan(size_t algo, const trd_params *p, double *m)
{
    if (!trd_algo_is_dynamic(algo))
        return trd_makespan(trd_algo_name(algo), p, m);
    trd_costs *costs;
    trd_status st = trd_costs_create(&costs, p->n, TRD_DIST_CONST, p->d, p->c, 0.0);
    if (st == TRD_OK)
        st = trd_simulate(trd_algo_name(algo), p, costs, TRD_PORT_HALF, 1, 0, m);
    trd_costs_free(costs);
    return st;
}

static int print_table(void)
{
    printf("Reduction of n = %d ranks, transfer d = 1, one-port, transfers overlap combines\n"
           "(Canon & Antoniu 2012).  Makespan of each planner (model time units); "
           "K = %d for the K-limited ones.\n\n%-20s", DEMO_N, DEMO_K, "planner");
    for (size_t j = 0; j < NRATIOS; j++) {
        char label[32];
        snprintf(label, sizeof label, "c = %g", ratios[j]);
        printf("%10s", label);
    }
    printf("\n");
    for (size_t i = 0; i < trd_algo_count(); i++) {
        trd_algo_kind kind = trd_algo_kind_of(i);
        if (kind == TRD_KIND_PIPELINED || kind == TRD_KIND_EXCHANGE || trd_algo_uses_costs(i))
            continue; /* segmented, allreduce (the real runs below), heterogeneous */
        printf("%-20s", trd_algo_name(i));
        for (size_t j = 0; j < NRATIOS; j++) {
            trd_params p;
            params_for(&p, ratios[j]);
            double m;
            trd_status st = deterministic_makespan(i, &p, &m);
            if (st != TRD_OK)
                return cli_lib_error("demo", st);
            printf("%10g", m);
        }
        printf("\n");
    }
    printf("%-20s", "lower bound (L. 5)");
    for (size_t j = 0; j < NRATIOS; j++) {
        trd_params p;
        params_for(&p, ratios[j]);
        printf("%10g", trd_lower_bound(&p));
    }
    printf("\n\ngreedy is optimal (Theorem 4); binomial layouts win only when c = 0,\n"
           "Fibonacci ones when c = d, as Theorems 14 and 17 predict.  hetero-greedy and\n"
           "hetero-exact plan for heterogeneous costs (treduce plan --costs FILE,\n"
           "docs/HETEROGENEOUS.md).\n");
    return CLI_OK;
}

/* Benoit et al. 2013 in small: the four non-clairvoyant methods under gamma
 * costs, same seed for all (common random numbers). */
static int print_monte_carlo(void)
{
    static const char *const methods[] = {"binomial", "fibonacci", "tree-dyn", "nc-tree-dyn"};
    static const double cvs[] = {0.1, 1.0};
    static const double mean_c[] = {0.0, 1.0};
    printf("\nMonte Carlo, n = %d, gamma costs of mean d = 1 (2000 runs per cell, seed 1):\n"
           "mean makespan [10%% - 90%% quantiles]\n%-12s", DEMO_N, "method");
    for (size_t k = 0; k < 4; k++) {
        char label[64];
        snprintf(label, sizeof label, "c = %g, CV = %g", mean_c[k / 2], cvs[k % 2]);
        printf("  %-22s", label);
    }
    printf("\n");
    for (size_t m = 0; m < 4; m++) {
        printf("%-12s", methods[m]);
        for (size_t k = 0; k < 4; k++) {
            trd_params p;
            params_for(&p, mean_c[k / 2]);
            trd_costs *costs;
            trd_mc_stats s;
            trd_status st = trd_costs_create(&costs, DEMO_N, TRD_DIST_GAMMA, 1.0,
                                             mean_c[k / 2], cvs[k % 2]);
            if (st == TRD_OK)
                st = trd_monte_carlo(methods[m], &p, costs, TRD_PORT_HALF, 1, 2000, 0, NULL,
                                     NULL, &s, NULL);
            trd_costs_free(costs);
            if (st != TRD_OK)
                return cli_lib_error("demo", st);
            printf("  %6.2f [%5.2f-%5.2f]   ", s.mean, s.q10, s.q90);
        }
        printf("\n");
    }
    printf("Tree-dyn adapts to the draws; Fibonacci-stat gains when c ~ d and costs vary\n"
           "little (Benoit et al. Sec. 6).\n");
    return CLI_OK;
}

/* Real reductions on this machine (threads wire): the model's
 * prediction, calibrated on the spot, next to the measured median. */
static int print_real_runs(void)
{
    static const char *const algos[] = {"binomial", "fibonacci", "greedy", "chain",
                                        "pipeline", "tree-dyn", "ring", "rabenseifner"};
    printf("\nReal runs on this machine: 4 ranks (threads), 2^20 doubles (8 MiB) each, sum,\n"
           "result checked against the rank-order fold; model calibrated now (latency,\n"
           "bandwidth, combine time).  Exchange algorithms run an allreduce, the others\n"
           "a reduce.  Times in ms (median of 5).\n%-14s %10s %10s %9s\n", "algorithm",
           "predicted", "measured", "verified");
    for (size_t i = 0; i < sizeof algos / sizeof algos[0]; i++) {
        cli_run_args a;
        cli_run_args_init(&a);
        a.algo = algos[i];
        a.p = 4;
        a.count = 1 << 20;
        a.iters = 5;
        size_t index;
        trd_algo_find(a.algo, &index);
        a.kind.coll = cli_algo_first_kind(index); /* exchange algorithms: allreduce */
        double times[5];
        cli_run_result res = {.times = times};
        trd_status st = cli_run_threads_collect(&a, &res);
        if (st == TRD_OK && res.status != TRD_OK)
            st = res.status;
        if (st != TRD_OK) {
            printf("%-14s failed: %s\n", a.algo, res.error[0] ? res.error : trd_errmsg());
            return CLI_FAILED;
        }
        cli_sort(times, 5);
        printf("%-14s %10.2f %10.2f %9s\n", a.algo, 1e3 * res.predicted, 1e3 * times[2],
               res.verified ? "yes" : "NO");
        if (!res.verified)
            return CLI_FAILED;
    }
    printf("The model counts one core per rank: with more ranks than cores the measured\n"
           "times include the wait for a core.\n");
    return CLI_OK;
}

static int draw_gantt(const char *dir)
{
    trd_params p;
    params_for(&p, 1.0);
    trd_plan *plan;
    cli_out out;
    trd_status st = trd_plan_create(&plan, "greedy", &p);
    if (st != TRD_OK)
        return cli_lib_error("demo", st);
    int rc = cli_out_begin("demo", &out, dir, "greedy-gantt.png")
                 ? cli_out_finish("demo", &out, trd_plan_write_gantt(plan, out.tmp))
                 : CLI_FAILED;
    trd_plan_free(plan);
    if (rc == CLI_OK)
        printf("Gantt chart of the greedy plan (c = d = 1): %s\n", out.path);
    return rc;
}

int cmd_demo(int argc, char **argv)
{
    const char *dir = "demo-out";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: treduce demo [--out DIR]\n\n"
                   "Compares every planner on %d ranks for c/d in {0, 0.5, 1, 2} and draws\n"
                   "the greedy plan's Gantt chart into DIR (default demo-out).\n", DEMO_N);
            return CLI_OK;
        } else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
            dir = argv[++i];
        } else {
            return cli_usage_error("demo", "unexpected or incomplete argument '%s'", argv[i]);
        }
    }
    if (!cli_make_dir("demo", dir))
        return CLI_FAILED;
    int st = print_table();
    if (st == CLI_OK)
        st = print_monte_carlo();
    if (st == CLI_OK)
        st = print_real_runs();
    return st == CLI_OK ? draw_gantt(dir) : st;
}
