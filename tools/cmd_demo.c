/* cmd_demo.c: `treduce demo`, the main job shown by `make demo`: every
 * planner on 64 ranks for several combine/transfer ratios, next to the
 * Lemma 5 lower bound, and a Gantt chart of the optimal (greedy) plan. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

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
        printf("%-20s", trd_algo_name(i));
        for (size_t j = 0; j < NRATIOS; j++) {
            trd_params p;
            params_for(&p, ratios[j]);
            double m;
            trd_status st = trd_makespan(trd_algo_name(i), &p, &m);
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
           "Fibonacci ones when c = d, as Theorems 14 and 17 predict.\n");
    return CLI_OK;
}

static int draw_gantt(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/greedy-gantt.png", dir);
    trd_params p;
    params_for(&p, 1.0);
    trd_plan *plan;
    trd_status st = trd_plan_create(&plan, "greedy", &p);
    if (st == TRD_OK)
        st = trd_plan_write_gantt(plan, path);
    trd_plan_free(plan);
    if (st != TRD_OK)
        return cli_lib_error("demo", st);
    printf("Gantt chart of the greedy plan (c = d = 1): %s\n", path);
    return CLI_OK;
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
    return st == CLI_OK ? draw_gantt(dir) : st;
}
