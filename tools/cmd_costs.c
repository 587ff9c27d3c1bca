/* cmd_costs.c: `treduce costs generate`: random heterogeneous cost files
 * (trd_costs_random), the instances of docs/HETEROGENEOUS.md, and
 * `treduce costs preset`: a named worst case of Benoit et al. Sec. 4 as a
 * file. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void help(void)
{
    printf("usage: treduce costs generate -n N [--seed S] [--spread X] [--model links|nodes]\n"
           "                              [--mean-d D] [--mean-c C] [--out FILE]\n"
           "       treduce costs preset NAME -n N [--slow X] [--mean-d D] [--mean-c C]\n"
           "                              [--out FILE]\n\n"
           "Writes a heterogeneous cost file ('n N', N rows of d[i][*], a row of c[*];\n"
           "docs/SIMULATION.md) that treduce plan, simulate and run read with --costs.\n"
           "generate: random costs reproducible from the seed; every factor f below is\n"
           "log-uniform in [1, X]:\n"
           "  links   d[i][j] = D f_ij, one factor per ordered pair (default);\n"
           "  nodes   d[i][j] = D max(f_i, f_j), one factor per rank (uneven hosts);\n"
           "and c[i] = C g_i.  d[i][i] = 0.\n"
           "preset: lower-to-higher, higher-to-lower or fib-root-slow with slow transfers\n"
           "X times D (--slow X, default 2; --D X: the same, its older spelling),\n"
           "combines C.\n\n"
           "  -n N           number of ranks (required)\n"
           "  --seed S       seed (default 1)\n"
           "  --spread X     slowest-to-fastest factor, >= 1 (default 10)\n"
           "  --mean-d D     fastest transfer (default 1); --mean-c C fastest combine (1)\n"
           "  --out FILE     write there (default: standard output)\n"
           "Exit status: 0 ok, 1 failure, 2 bad usage or input.\n");
}

typedef struct costs_args {
    int64_t n, seed;
    double spread, slow, mean_d, mean_c;
    const char *model, *out, *preset;
    bool have_n;
} costs_args;

static int take(int opt, void *ctx)
{
    costs_args *a = ctx;
    const char *cmd = "costs";
    switch (opt) {
    case 'n': a->have_n = true; return cli_int(cmd, "-n", optarg, &a->n) ? CLI_OK : CLI_USAGE;
    case 's': return cli_int(cmd, "--seed", optarg, &a->seed) ? CLI_OK : CLI_USAGE;
    case 'x': return cli_real(cmd, "--spread", optarg, &a->spread) ? CLI_OK : CLI_USAGE;
    case 'D': return cli_real(cmd, "--slow", optarg, &a->slow) ? CLI_OK : CLI_USAGE;
    case 'd': return cli_real(cmd, "--mean-d", optarg, &a->mean_d) ? CLI_OK : CLI_USAGE;
    case 'c': return cli_real(cmd, "--mean-c", optarg, &a->mean_c) ? CLI_OK : CLI_USAGE;
    case 'm': a->model = optarg; return CLI_OK;
    case 'o': a->out = optarg; return CLI_OK;
    default: return cli_usage_error(cmd, "unknown option");
    }
}

int cmd_costs(int argc, char **argv)
{
    static const struct option opts[] = {
        {"seed", 1, 0, 's'},   {"spread", 1, 0, 'x'}, {"model", 1, 0, 'm'},
        {"mean-d", 1, 0, 'd'}, {"mean-c", 1, 0, 'c'}, {"out", 1, 0, 'o'},
        {"slow", 1, 0, 'D'},   {"D", 1, 0, 'D'},      {"help", 0, 0, 'h'},
        {0, 0, 0, 0}};
    costs_args a = {.seed = 1, .spread = 10.0, .slow = 2.0, .mean_d = 1.0, .mean_c = 1.0,
                    .model = "links"};
    bool generate = argc > 1 && !strcmp(argv[1], "generate");
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        help();
        return CLI_OK;
    }
    if (!generate && !(argc > 2 && !strcmp(argv[1], "preset")))
        return cli_usage_error("costs", "expected 'generate' or 'preset NAME'");
    if (!generate)
        a.preset = argv[2];
    int shift = generate ? 1 : 2;
    int st = cli_parse_options_short("costs", "n:h", argc - shift, argv + shift, opts, help,
                                     take, &a);
    if (st != CLI_OK)
        return st < 0 ? CLI_OK : st;
    if (!a.have_n)
        return cli_usage_error("costs", "missing -n N (the number of ranks)");
    if (a.seed < 0)
        return cli_usage_error("costs", "--seed %lld is invalid: need >= 0", (long long)a.seed);
    trd_costs *k;
    trd_status ts = trd_costs_create(&k, a.n, TRD_DIST_CONST, a.mean_d, a.mean_c, 0.0);
    if (ts == TRD_OK)
        ts = a.preset ? trd_costs_preset(k, a.preset, a.slow)
                      : trd_costs_random(k, a.model, a.spread, (uint64_t)a.seed);
    cli_out out;
    if (ts != TRD_OK || !a.out) {
        if (ts == TRD_OK)
            ts = trd_costs_save(k, NULL); /* the standard output */
        trd_costs_free(k);
        return ts == TRD_OK ? CLI_OK : cli_lib_error("costs", ts);
    }
    st = cli_out_begin("costs", &out, NULL, a.out)
             ? cli_out_finish("costs", &out, trd_costs_save(k, out.tmp))
             : CLI_FAILED;
    trd_costs_free(k);
    return st;
}
