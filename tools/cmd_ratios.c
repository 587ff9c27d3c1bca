/* cmd_ratios.c: `treduce ratios` reproduces Figure 2 of canon-antoniu:
 * binomial strategy / optimum at d = c, and Fibonacci strategy / optimum at
 * min(d, c) = 0 (taken as d = 1, c = 0), for 2 <= n <= N.  The optimum is
 * Algorithm 1 (greedy).  Writes ratios.csv and ratios.png into --out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define N_MAX_LIMIT 100000 /* O(N^2 log N) work: over 100 times N = 10^4's (docs/BENCHMARKS.md) */

static void help(void)
{
    printf("usage: treduce ratios --n-max N [--out DIR]\n\n"
           "Reproduces Figure 2 of Canon & Antoniu (2012): for every 2 <= n <= N, the\n"
           "makespan of the binomial strategy over the optimum (greedy) when d = c = 1,\n"
           "and of the Fibonacci strategy over the optimum when d = 1, c = 0.\n"
           "Writes DIR/ratios.csv (n,binomial_over_opt,fibonacci_over_opt) and\n"
           "DIR/ratios.png, and prints the worst ratio of each strategy.\n\n"
           "  --n-max N   largest n (2 <= N <= %d)\n"
           "  --out DIR   output folder, created if missing (default .)\n",
           N_MAX_LIMIT);
}

static trd_status ratio(const char *algo, int64_t n, double d, double c, double *out)
{
    trd_params p;
    trd_params_init(&p);
    p.n = n;
    p.d = d;
    p.c = c;
    double strategy = 0.0, opt = 1.0;
    trd_status st = trd_makespan(algo, &p, &strategy);
    if (st == TRD_OK)
        st = trd_makespan("greedy", &p, &opt);
    *out = strategy / opt;
    return st;
}

/* x[k] = n, y[k] = binomial ratio, y[npoints + k] = Fibonacci ratio. */
static trd_status compute(int64_t nmax, double *x, double *y)
{
    size_t npoints = (size_t)(nmax - 1);
    trd_status st = TRD_OK;
    for (int64_t n = 2; n <= nmax && st == TRD_OK; n++) {
        size_t k = (size_t)(n - 2);
        x[k] = (double)n;
        st = ratio("binomial-strategy", n, 1.0, 1.0, &y[k]);
        if (st == TRD_OK)
            st = ratio("fibonacci-strategy", n, 1.0, 0.0, &y[npoints + k]);
        cli_progress("ratios", "values of n", n - 1, nmax - 1);
    }
    return st;
}

static int write_outputs(const char *dir, int64_t nmax, const double *x, const double *y)
{
    size_t npoints = (size_t)(nmax - 1);
    cli_out out;
    FILE *f = cli_out_open("ratios", &out, dir, "ratios.csv");
    if (!f)
        return CLI_FAILED;
    fprintf(f, "n,binomial_over_opt,fibonacci_over_opt\n");
    for (size_t k = 0; k < npoints; k++)
        fprintf(f, "%.0f,%.17g,%.17g\n", x[k], y[k], y[npoints + k]);
    if (!cli_out_end("ratios", &out, true))
        return CLI_FAILED;
    printf("wrote %s\n", out.path);
    static const char *const labels[] = {"binomial strategy / optimal (d = c)",
                                         "Fibonacci strategy / optimal (min(d,c) = 0)"};
    trd_lineplot plot = {.title = "Figure 2 (Canon & Antoniu 2012): strategy length / optimal length",
                         .xlabel = "number of elements n", .ylabel = "ratio",
                         .nseries = 2, .npoints = npoints, .x = x, .y = y,
                         .series_labels = labels, .logx = true};
    if (!cli_out_begin("ratios", &out, dir, "ratios.png"))
        return CLI_FAILED;
    int st = cli_out_finish("ratios", &out, trd_lineplot_write(&plot, out.tmp));
    if (st == CLI_OK)
        printf("wrote %s\n", out.path);
    return st;
}

static void print_worst(int64_t nmax, const double *x, const double *y)
{
    size_t npoints = (size_t)(nmax - 1), wb = 0, wf = 0;
    for (size_t k = 0; k < npoints; k++) {
        wb = y[k] > y[wb] ? k : wb;
        wf = y[npoints + k] > y[npoints + wf] ? k : wf;
    }
    printf("worst binomial strategy / optimal (d = c):       %.4f at n = %.0f\n", y[wb], x[wb]);
    printf("worst Fibonacci strategy / optimal (min(d,c)=0): %.4f at n = %.0f\n",
           y[npoints + wf], x[wf]);
}

int cmd_ratios(int argc, char **argv)
{
    int64_t nmax = 0;
    const char *dir = ".";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            help();
            return CLI_OK;
        } else if (!strcmp(argv[i], "--n-max") && i + 1 < argc) {
            if (!cli_int("ratios", "--n-max", argv[++i], &nmax))
                return CLI_USAGE;
        } else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
            dir = argv[++i];
        } else {
            return cli_usage_error("ratios", "unexpected or incomplete argument '%s'", argv[i]);
        }
    }
    if (nmax < 2 || nmax > N_MAX_LIMIT)
        return cli_usage_error("ratios", "--n-max %lld is out of range: need 2 <= N <= %d",
                               (long long)nmax, N_MAX_LIMIT);
    if (!cli_make_dir("ratios", dir))
        return CLI_FAILED;
    double *x = malloc((size_t)nmax * sizeof *x), *y = malloc(2 * (size_t)nmax * sizeof *y);
    int st = CLI_FAILED;
    trd_status ts;
    if (!x || !y)
        fprintf(stderr, "treduce ratios: out of memory\n");
    else if ((ts = compute(nmax, x, y)) != TRD_OK)
        st = cli_lib_error("ratios", ts);
    else if ((st = write_outputs(dir, nmax, x, y)) == CLI_OK)
        print_worst(nmax, x, y);
    free(x);
    free(y);
    return st;
}
