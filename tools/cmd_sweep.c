/* cmd_sweep.c: `treduce sweep fig4|fig5|fig6` reproduces the Monte-Carlo
 * study of benoit-canon-marchal Sec. 6 (n = 64, mean transfer 1, gamma
 * costs, the same seed for every method: common random numbers):
 *   fig4: mu_c = 0, mean makespan with 10-90 % ribbons against the CV, for
 *         Binomial-stat, Fibonacci-stat, Tree-dyn, Non-Commut-Tree-dyn;
 *   fig5: Fibonacci-stat mean / Tree-dyn mean over CV x mu_c/mu_d;
 *   fig6: the best method among those that keep rank order (Binomial-stat,
 *         Fibonacci-stat, Non-Commut-Tree-dyn) over the same grid.
 * Writes DIR/figN.csv and DIR/figN.png. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define SWEEP_N 64
#define NCV 13   /* CV = 10^(-2 + k/4): 0.01 .. 10 */
#define NRATIO 17 /* mu_c/mu_d = 10^(-1 + k/8): 0.1 .. 10 */

typedef struct sweep {
    const char *dir;
    int64_t runs, seed, threads;
    int64_t done, total; /* runs, for the progress bar */
} sweep;

static double cv_at(int k) { return pow(10.0, -2.0 + k / 4.0); }
static double ratio_at(int k) { return pow(10.0, -1.0 + k / 8.0); }

static void progress(void *ctx, int64_t done, int64_t total)
{
    sweep *s = ctx;
    (void)total;
    cli_progress("sweep", "runs", s->done + done, s->total);
}

/* Monte Carlo of one method at one grid point. */
static trd_status point(sweep *s, const char *algo, double mean_c, double cv, trd_mc_stats *out)
{
    trd_params p;
    trd_params_init(&p);
    p.n = SWEEP_N;
    trd_costs *costs;
    trd_status st = trd_costs_create(&costs, SWEEP_N, TRD_DIST_GAMMA, 1.0, mean_c, cv);
    if (st == TRD_OK)
        st = trd_monte_carlo(algo, &p, costs, TRD_PORT_HALF, (uint64_t)s->seed, s->runs,
                             (int)s->threads, progress, s, out, NULL);
    trd_costs_free(costs);
    s->done += s->runs;
    return st;
}

/* Draws a figure into dir/name through write(figure, path). */
static int draw(const sweep *s, const char *name, const void *figure,
                trd_status (*write)(const void *figure, const char *path))
{
    cli_out out;
    if (!cli_out_begin("sweep", &out, s->dir, name))
        return CLI_FAILED;
    int st = cli_out_finish("sweep", &out, write(figure, out.tmp));
    if (st == CLI_OK)
        printf("wrote %s\n", out.path);
    return st;
}

static trd_status write_lineplot(const void *plot, const char *path)
{
    return trd_lineplot_write(plot, path);
}

static trd_status write_heatmap(const void *map, const char *path)
{
    return trd_heatmap_write(map, path);
}

/* Ends a CSV: renamed into place once complete (cli_out_end). */
static int close_csv(cli_out *out, trd_status st)
{
    if (!cli_out_end("sweep", out, st == TRD_OK))
        return st != TRD_OK ? cli_lib_error("sweep", st) : CLI_FAILED;
    printf("wrote %s\n", out->path);
    return CLI_OK;
}

static const char *const fig4_methods[] = {"binomial", "fibonacci", "tree-dyn", "nc-tree-dyn"};
static const char *const fig4_labels[] = {"Binomial-stat", "Fibonacci-stat", "Tree-dyn",
                                          "Non-Commut-Tree-dyn"};

static int fig4(sweep *s)
{
    double x[NCV], mean[4 * NCV], lo[4 * NCV], hi[4 * NCV];
    cli_out out;
    FILE *f = cli_out_open("sweep", &out, s->dir, "fig4.csv");
    if (!f)
        return CLI_FAILED;
    fprintf(f, "cv,method,mean,std,q10,q50,q90\n");
    s->total = 4 * NCV * s->runs;
    trd_status st = TRD_OK;
    for (int k = 0; k < NCV && st == TRD_OK; k++) {
        x[k] = cv_at(k);
        for (int m = 0; m < 4 && st == TRD_OK; m++) {
            trd_mc_stats r;
            if ((st = point(s, fig4_methods[m], 0.0, x[k], &r)) != TRD_OK)
                break;
            mean[m * NCV + k] = r.mean;
            lo[m * NCV + k] = r.q10;
            hi[m * NCV + k] = r.q90;
            fprintf(f, "%.6g,%s,%.9g,%.9g,%.9g,%.9g,%.9g\n", x[k], fig4_methods[m], r.mean,
                    r.std, r.q10, r.q50, r.q90);
        }
    }
    int rc = close_csv(&out, st);
    if (rc != CLI_OK)
        return rc;
    char note[128];
    snprintf(note, sizeof note, "treduce sweep fig4 --runs %lld --seed %lld", (long long)s->runs,
             (long long)s->seed);
    trd_lineplot plot = {.title = "Figure 4: n = 64, mu_d = 1, mu_c = 0 (ribbons: 10-90% quantiles)",
                         .xlabel = "coefficient of variation of the transfer times",
                         .ylabel = "makespan", .nseries = 4, .npoints = NCV, .x = x, .y = mean,
                         .series_labels = fig4_labels, .logx = true, .logy = true, .note = note,
                         .ylo = lo, .yhi = hi};
    return draw(s, "fig4.png", &plot, write_lineplot);
}

/* Means of `nm` methods over the CV x mu_c/mu_d grid:
 * mean[(m * NRATIO + j) * NCV + i] at cv_at(i), ratio_at(j). */
static trd_status grid(sweep *s, const char *const *methods, int nm, double *mean)
{
    s->total = (int64_t)nm * NRATIO * NCV * s->runs;
    for (int j = 0; j < NRATIO; j++)
        for (int i = 0; i < NCV; i++)
            for (int m = 0; m < nm; m++) {
                trd_mc_stats r;
                trd_status st = point(s, methods[m], ratio_at(j), cv_at(i), &r);
                if (st != TRD_OK)
                    return st;
                mean[(m * NRATIO + j) * NCV + i] = r.mean;
            }
    return TRD_OK;
}

static void axes(double *x, double *y)
{
    for (int i = 0; i < NCV; i++)
        x[i] = cv_at(i);
    for (int j = 0; j < NRATIO; j++)
        y[j] = ratio_at(j);
}

static int draw_map(const sweep *s, const char *fig, trd_heatmap *map)
{
    char name[32], note[128];
    snprintf(note, sizeof note, "treduce sweep %s --runs %lld --seed %lld", fig,
             (long long)s->runs, (long long)s->seed);
    map->note = note;
    map->xlabel = "coefficient of variation (transfers and combines)";
    map->ylabel = "mu_c / mu_d";
    map->nx = NCV;
    map->ny = NRATIO;
    map->logx = map->logy = true;
    snprintf(name, sizeof name, "%s.png", fig);
    return draw(s, name, map, write_heatmap);
}

/* Opens DIR/<fig>.csv with its header and runs the grid of `methods`;
 * NULL (with *status set and the error reported) on failure. */
static FILE *grid_csv(sweep *s, const char *fig, const char *const *methods, int nm,
                      const char *header, double *mean, double *x, double *y, cli_out *out,
                      int *status)
{
    char name[32];
    snprintf(name, sizeof name, "%s.csv", fig);
    FILE *f = cli_out_open("sweep", out, s->dir, name);
    *status = CLI_FAILED;
    if (!f)
        return NULL;
    fprintf(f, "%s\n", header);
    trd_status st = grid(s, methods, nm, mean);
    if (st != TRD_OK) {
        *status = close_csv(out, st);
        return NULL;
    }
    axes(x, y);
    *status = CLI_OK;
    return f;
}

static int fig5(sweep *s)
{
    static const char *const methods[] = {"fibonacci", "tree-dyn"};
    double mean[2 * NRATIO * NCV], ratio[NRATIO * NCV], x[NCV], y[NRATIO];
    cli_out out;
    int status;
    FILE *f = grid_csv(s, "fig5", methods, 2, "cv,c_over_d,fibonacci_mean,treedyn_mean,ratio",
                       mean, x, y, &out, &status);
    if (!f)
        return status;
    for (int c = 0; c < NRATIO * NCV; c++) {
        ratio[c] = mean[c] / mean[NRATIO * NCV + c];
        fprintf(f, "%.6g,%.6g,%.9g,%.9g,%.9g\n", x[c % NCV], y[c / NCV], mean[c],
                mean[NRATIO * NCV + c], ratio[c]);
    }
    if ((status = close_csv(&out, TRD_OK)) != CLI_OK)
        return status;
    trd_heatmap map = {.title = "Figure 5: mean Fibonacci-stat / mean Tree-dyn (n = 64, mu_d = 1)",
                       .zlabel = "ratio", .x = x, .y = y, .z = ratio, .contour = 1.0};
    return draw_map(s, "fig5", &map);
}

static int fig6(sweep *s)
{
    static const char *const methods[] = {"binomial", "fibonacci", "nc-tree-dyn"};
    static const char *const labels[] = {"Binomial-stat", "Fibonacci-stat",
                                         "Non-Commut-Tree-dyn"};
    double mean[3 * NRATIO * NCV], best[NRATIO * NCV], x[NCV], y[NRATIO];
    cli_out out;
    int status;
    FILE *f = grid_csv(s, "fig6", methods, 3,
                       "cv,c_over_d,binomial_mean,fibonacci_mean,nc_tree_dyn_mean,best", mean,
                       x, y, &out, &status);
    if (!f)
        return status;
    for (int c = 0; c < NRATIO * NCV; c++) {
        int b = 0;
        for (int m = 1; m < 3; m++)
            if (mean[m * NRATIO * NCV + c] < mean[b * NRATIO * NCV + c])
                b = m;
        best[c] = b;
        fprintf(f, "%.6g,%.6g,%.9g,%.9g,%.9g,%s\n", x[c % NCV], y[c / NCV], mean[c],
                mean[NRATIO * NCV + c], mean[2 * NRATIO * NCV + c], methods[b]);
    }
    if ((status = close_csv(&out, TRD_OK)) != CLI_OK)
        return status;
    trd_heatmap map = {.title = "Figure 6: best method keeping rank order (n = 64, mu_d = 1)",
                       .zlabel = "", .x = x, .y = y, .z = best, .contour = NAN,
                       .categories = labels, .ncategories = 3};
    return draw_map(s, "fig6", &map);
}

static void help(void)
{
    printf("usage: treduce sweep fig4|fig5|fig6 [--runs R] [--seed S] [--threads T] [--out DIR]\n\n"
           "Reproduces the Monte-Carlo study of Benoit, Canon & Marchal (2013), Sec. 6, on\n"
           "n = 64 ranks with gamma-distributed costs of mean mu_d = 1 (transfers) and mu_c\n"
           "(combines); every method uses the same seed (common random numbers).\n"
           "  fig4  mu_c = 0: mean makespan and 10-90%% quantiles against the CV\n"
           "        (%d CVs from 0.01 to 10) for the four methods\n"
           "  fig5  mean Fibonacci-stat / mean Tree-dyn over CV x mu_c/mu_d (0.1 .. 10)\n"
           "  fig6  the best of Binomial-stat, Fibonacci-stat, Non-Commut-Tree-dyn\n"
           "Writes DIR/figN.csv and DIR/figN.png (DIR default: .).\n\n"
           "  --runs R     runs per point (default 10000 for fig4, 1000 for fig5/fig6,\n"
           "               as in the paper's Figures 5-6; the paper's Figure 4 used 10^6)\n"
           "  --seed S     seed (default 1); --threads T: 0 = all cores (default)\n", NCV);
}

int cmd_sweep(int argc, char **argv)
{
    sweep s = {.dir = ".", .runs = 0, .seed = 1, .threads = 0};
    const char *fig = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has = i + 1 < argc, ok = true;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help();
            return CLI_OK;
        } else if (!strcmp(a, "--runs") && has) {
            ok = cli_int("sweep", "--runs", argv[++i], &s.runs) && s.runs >= 1;
        } else if (!strcmp(a, "--seed") && has) {
            ok = cli_int("sweep", "--seed", argv[++i], &s.seed) && s.seed >= 0;
        } else if (!strcmp(a, "--threads") && has) {
            ok = cli_int("sweep", "--threads", argv[++i], &s.threads) && s.threads >= 0 &&
                 s.threads <= 256;
        } else if (!strcmp(a, "--out") && has) {
            s.dir = argv[++i];
        } else if (!fig && (!strcmp(a, "fig4") || !strcmp(a, "fig5") || !strcmp(a, "fig6"))) {
            fig = a;
        } else {
            return cli_usage_error("sweep", "unexpected or incomplete argument '%s'", a);
        }
        if (!ok)
            return cli_usage_error("sweep", "invalid value for %s: '%s'", a, argv[i]);
    }
    if (!fig)
        return cli_usage_error("sweep", "which figure? give fig4, fig5 or fig6");
    if (s.runs == 0)
        s.runs = !strcmp(fig, "fig4") ? 10000 : 1000;
    if (!cli_make_dir("sweep", s.dir))
        return CLI_FAILED;
    return !strcmp(fig, "fig4") ? fig4(&s) : !strcmp(fig, "fig5") ? fig5(&s) : fig6(&s);
}
