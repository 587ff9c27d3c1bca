/* cmd_simulate.c: `treduce simulate`: Monte-Carlo simulation of one
 * algorithm (a plan or a dynamic policy) under random or heterogeneous
 * costs. */
#include <getopt.h>
#include <math.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void help(void)
{
    printf("usage: treduce simulate --algo NAME -n N [--dist const|exp|gamma] [--mean-d X]\n"
           "         [--mean-c Y] [--cv Z] [--costs FILE | --preset NAME [--slow X]]\n"
           "         [--port half|full|multi] [--runs R] [--seed S] [--threads T]\n"
           "         [--K K] [--kind K] [--root R] [--noncommutative] [--format text|json]\n\n"
           "Simulates R reductions of N ranks in virtual time: the schedule interpreter\n"
           "runs over a transport with a virtual clock.  Each transfer costs its base\n"
           "(X, or d[i][j] from FILE)\n"
           "times a factor of mean 1 drawn from the distribution, each combine likewise\n"
           "(Y or c[i]); the k-th started transfer has the same cost for every algorithm\n"
           "with the same seed (common random numbers, Benoit et al. 2013 Sec. 6).\n"
           "Static planners are built with d = X, c = Y; tree-dyn and nc-tree-dyn pair\n"
           "ranks at run time.\n\n"
           "  --dist D       const (default), exp (CV 1) or gamma\n"
           "  --mean-d X     mean transfer time (default 1)\n"
           "  --mean-c Y     mean combine time (default 0)\n"
           "  --cv Z         coefficient of variation for gamma (default 1)\n"
           "  --costs FILE   heterogeneous bases: 'n N', N rows of d[i][*], a row of c[*]\n"
           "  --preset NAME  lower-to-higher, higher-to-lower or fib-root-slow, with slow\n"
           "                 links X times the mean (--slow X, default 2; --D X: the\n"
           "                 same, its older spelling)\n"
           "  --port P       half (one transfer per rank, default), full, multi\n"
           "  --runs R       number of runs (default 10000)\n"
           "  --seed S       seed (default 1); --threads T: 0 = all cores (default)\n"
           "  --kind K       the collective simulated: reduce (default), allreduce,\n"
           "                 reduce-scatter, scan or exscan ('treduce list' names the\n"
           "                 kinds each algorithm runs)\n"
           "  --root R       rank that gets a reduce's result (default 0; or the root of\n"
           "                 an allreduce's tree)\n"
           "Prints the mean, standard deviation and the 10/50/90 %% quantiles of the\n"
           "makespan; a progress bar shows on a terminal.\n");
}

typedef struct sim_args {
    const char *algo, *costs_file, *preset;
    trd_params params;
    cli_kind kind;
    trd_dist dist;
    double mean_d, mean_c, cv, slow;
    bool cv_set, json;
    trd_port port;
    int64_t runs, seed, threads;
} sim_args;

static int parse_enum(const char *what, const char *text, const char *const *names, int count,
                      int *out)
{
    for (int i = 0; i < count; i++)
        if (!strcmp(text, names[i])) {
            *out = i;
            return CLI_OK;
        }
    return cli_usage_error("simulate", "invalid %s '%s'", what, text);
}

static int parse_option(int opt, sim_args *a)
{
    static const char *const dists[] = {"const", "exp", "gamma"};
    static const char *const ports[] = {"half", "full", "multi"};
    static const char *const formats[] = {"text", "json"};
    int v = 0, st = CLI_OK;
    switch (opt) {
    case 'a': a->algo = optarg; break;
    case 'n': return cli_int("simulate", "-n", optarg, &a->params.n) ? CLI_OK : CLI_USAGE;
    case 'D': if ((st = parse_enum("--dist", optarg, dists, 3, &v)) == CLI_OK) a->dist = (trd_dist)v; break;
    case 'x': return cli_real("simulate", "--mean-d", optarg, &a->mean_d) ? CLI_OK : CLI_USAGE;
    case 'y': return cli_real("simulate", "--mean-c", optarg, &a->mean_c) ? CLI_OK : CLI_USAGE;
    case 'v': a->cv_set = true; return cli_real("simulate", "--cv", optarg, &a->cv) ? CLI_OK : CLI_USAGE;
    case 'f': a->costs_file = optarg; break;
    case 'p': a->preset = optarg; break;
    case 'S': return cli_real("simulate", "--slow", optarg, &a->slow) ? CLI_OK : CLI_USAGE;
    case 'P': if ((st = parse_enum("--port", optarg, ports, 3, &v)) == CLI_OK) a->port = (trd_port)v; break;
    case 'r': return cli_int("simulate", "--runs", optarg, &a->runs) ? CLI_OK : CLI_USAGE;
    case 's': return cli_int("simulate", "--seed", optarg, &a->seed) ? CLI_OK : CLI_USAGE;
    case 't': return cli_int("simulate", "--threads", optarg, &a->threads) ? CLI_OK : CLI_USAGE;
    case 'K': return cli_int("simulate", "--K", optarg, &a->params.K) ? CLI_OK : CLI_USAGE;
    case 'R': a->kind.root_set = true;
              return cli_int("simulate", "--root", optarg, &a->params.root) ? CLI_OK : CLI_USAGE;
    case 'k': return cli_take_kind("simulate", optarg, &a->kind);
    case 'N': a->params.noncommutative = true; break;
    case 'F': if ((st = parse_enum("--format", optarg, formats, 2, &v)) == CLI_OK) a->json = v; break;
    default: return CLI_USAGE;
    }
    return st;
}

/* Returns -1 to go on, or the exit status. */
static int parse_args(int argc, char **argv, sim_args *a)
{
    static const struct option opts[] = {
        {"algo", 1, 0, 'a'}, {"dist", 1, 0, 'D'}, {"mean-d", 1, 0, 'x'}, {"mean-c", 1, 0, 'y'},
        {"cv", 1, 0, 'v'}, {"costs", 1, 0, 'f'}, {"preset", 1, 0, 'p'}, {"slow", 1, 0, 'S'},
        {"D", 1, 0, 'S'},
        {"port", 1, 0, 'P'}, {"runs", 1, 0, 'r'}, {"seed", 1, 0, 's'}, {"threads", 1, 0, 't'},
        {"K", 1, 0, 'K'}, {"root", 1, 0, 'R'}, {"noncommutative", 0, 0, 'N'},
        {"kind", 1, 0, 'k'},
        {"format", 1, 0, 'F'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":n:h", opts, NULL)) != -1) {
        if (opt == 'h') {
            help();
            return CLI_OK;
        }
        if (opt == ':')
            return cli_usage_error("simulate", "option '%s' needs a value", argv[optind - 1]);
        if (opt == '?')
            return cli_usage_error("simulate", "unknown option '%s'", argv[optind - 1]);
        int st = parse_option(opt, a);
        if (st != CLI_OK)
            return st;
    }
    if (optind < argc)
        return cli_usage_error("simulate", "unexpected argument '%s'", argv[optind]);
    if (!a->algo)
        return cli_usage_error("simulate", "missing --algo NAME ('treduce list' shows them)");
    if (a->costs_file && a->preset)
        return cli_usage_error("simulate", "--costs and --preset exclude each other");
    if (a->runs < 1)
        return cli_usage_error("simulate", "--runs %lld is invalid: need at least 1",
                               (long long)a->runs);
    if (a->threads < 0 || a->threads > 256)
        return cli_usage_error("simulate", "--threads %lld is invalid: need 0..256",
                               (long long)a->threads);
    if (a->seed < 0)
        return cli_usage_error("simulate", "--seed %lld is invalid: need >= 0", (long long)a->seed);
    if (!a->cv_set) /* the natural CV of each distribution */
        a->cv = a->dist == TRD_DIST_CONST ? 0.0 : 1.0;
    int st = cli_kind_root("simulate", &a->kind, true);
    a->params.collective = a->kind.coll;
    return st == CLI_OK ? -1 : st;
}

static void progress(void *ctx, int64_t done, int64_t total)
{
    cli_progress((const char *)ctx, "runs", done, total);
}

/* The costs simulated, in words: the homogeneous means, or the file or
 * preset and the means of its bases (md, mc). */
static void describe_costs(const sim_args *a, double md, double mc, char *out, size_t size)
{
    static const char *const dists[] = {"const", "exp", "gamma"};
    if (a->costs_file)
        snprintf(out, size, "heterogeneous costs from %s: mean d %g, mean c %g; %s factors, CV %g",
                 a->costs_file, md, mc, dists[a->dist], a->cv);
    else if (a->preset)
        snprintf(out, size, "heterogeneous costs of preset %s, slow %g: mean d %g, mean c %g; "
                 "%s factors, CV %g", a->preset, a->slow, md, mc, dists[a->dist], a->cv);
    else
        snprintf(out, size, "%s costs, mean d %g, mean c %g, CV %g", dists[a->dist], md, mc,
                 a->cv);
}

static int print_stats(const sim_args *a, const trd_mc_stats *s, double md, double mc)
{
    static const char *const dists[] = {"const", "exp", "gamma"};
    static const char *const ports[] = {"half", "full", "multi"};
    static const char *const names[] = {"mean", "std", "q10", "q50", "q90", "min", "max"};
    const double v[] = {s->mean, s->std, s->q10, s->q50, s->q90, s->min, s->max};
    cli_finite f = {0};
    if (a->json) {
        json_t *o = json_pack("{s:s, s:I, s:I, s:s, s:f, s:f, s:f, s:s, s:I}", "algo", a->algo,
                              "n", (json_int_t)a->params.n, "runs", (json_int_t)s->runs,
                              "dist", dists[a->dist], "mean_d", md, "mean_c", mc,
                              "cv", a->cv, "port", ports[a->port], "seed", (json_int_t)a->seed);
        bool hetero = a->costs_file || a->preset;
        json_object_set_new(o, "heterogeneous", json_boolean(hetero));
        json_object_set_new(o, "kind", json_string(trd_collective_name(a->kind.coll)));
        json_object_set_new(o, "costs", a->costs_file ? json_string(a->costs_file) : json_null());
        json_object_set_new(o, "preset", a->preset ? json_string(a->preset) : json_null());
        json_object_set_new(o, "slow", a->preset ? json_real(a->slow) : json_null());
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
            json_object_set_new(o, names[i], cli_json_real(&f, names[i], v[i]));
        int st = cli_finite_end("simulate", &f, o);
        json_dumpf(o, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(15));
        putchar('\n');
        json_decref(o);
        return st;
    }
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        cli_finite_check(&f, names[i], v[i]);
    if (f.name)
        return cli_finite_end("simulate", &f, NULL);
    char costs[4200];
    describe_costs(a, md, mc, costs, sizeof costs);
    printf("%s on n = %lld ranks (%s), %lld runs (%s, %s port)\n"
           "  mean %.6g   std %.6g\n  q10 %.6g   median %.6g   q90 %.6g   (min %.6g, max %.6g)\n",
           a->algo, (long long)a->params.n, trd_collective_name(a->kind.coll),
           (long long)s->runs, costs, ports[a->port], s->mean,
           s->std, s->q10, s->q50, s->q90, s->min, s->max);
    return CLI_OK;
}

int cmd_simulate(int argc, char **argv)
{
    sim_args a = {.mean_d = 1.0, .mean_c = 0.0, .slow = 2.0, .runs = 10000, .seed = 1};
    trd_params_init(&a.params);
    a.params.n = 0;
    int st = parse_args(argc, argv, &a);
    if (st >= 0)
        return st;
    trd_costs *costs = NULL;
    trd_mc_stats stats;
    trd_status ts = trd_costs_create(&costs, a.params.n, a.dist, a.mean_d, a.mean_c, a.cv);
    if (ts == TRD_OK && a.costs_file)
        ts = trd_costs_load(costs, a.costs_file);
    if (ts == TRD_OK && a.preset)
        ts = trd_costs_preset(costs, a.preset, a.slow);
    if (ts == TRD_OK)
        ts = trd_monte_carlo(a.algo, &a.params, costs, a.port, (uint64_t)a.seed, a.runs,
                             (int)a.threads, progress, "simulate", &stats, NULL);
    double md = a.mean_d, mc = a.mean_c; /* the bases' means: the file's or the preset's */
    if (ts == TRD_OK)
        trd_costs_mean(costs, &md, &mc);
    trd_costs_free(costs);
    if (ts != TRD_OK)
        return cli_lib_error("simulate", ts);
    return print_stats(&a, &stats, md, mc);
}
