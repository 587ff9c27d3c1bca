/* cmd_markov.c: `treduce markov`: the expected makespan and variance of
 * Tree-dyn from its Markov chain (benoit Sec. 5). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cmd_markov(int argc, char **argv)
{
    int64_t n = 0;
    double mean_d = 1.0;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: treduce markov -n N [--mean-d X] [--format text|json]\n\n"
                   "Expected makespan and variance of Tree-dyn with exponential transfers of\n"
                   "mean X (default 1) and no computation, by first-step analysis of its\n"
                   "Markov chain (Benoit et al. 2013, Sec. 5); any n >= 1.\n");
            return CLI_OK;
        } else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
            if (!cli_int("markov", "-n", argv[++i], &n))
                return CLI_USAGE;
        } else if (!strcmp(argv[i], "--mean-d") && i + 1 < argc) {
            if (!cli_real("markov", "--mean-d", argv[++i], &mean_d))
                return CLI_USAGE;
        } else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
            if (strcmp(argv[++i], "json") && strcmp(argv[i], "text"))
                return cli_usage_error("markov", "invalid --format '%s': text or json", argv[i]);
            json = !strcmp(argv[i], "json");
        } else {
            return cli_usage_error("markov", "unexpected or incomplete argument '%s'", argv[i]);
        }
    }
    double mean, var;
    trd_status ts = trd_markov_tree_dyn(n, mean_d, &mean, &var);
    if (ts != TRD_OK)
        return cli_lib_error("markov", ts);
    cli_finite f = {0};
    if (json) {
        json_t *o = json_pack("{s:I, s:f, s:o, s:o}", "n", (json_int_t)n, "mean_d", mean_d,
                              "mean", cli_json_real(&f, "mean", mean), "variance",
                              cli_json_real(&f, "variance", var));
        int st = cli_finite_end("markov", &f, o);
        json_dumpf(o, stdout, JSON_REAL_PRECISION(17));
        putchar('\n');
        json_decref(o);
        return st;
    }
    if (!cli_finite_check(&f, "mean", mean) || !cli_finite_check(&f, "variance", var))
        return cli_finite_end("markov", &f, NULL);
    printf("Tree-dyn, n = %lld, exponential transfers of mean %g, no computation:\n"
           "  expected makespan %.10g\n  variance          %.10g (std %.6g)\n",
           (long long)n, mean_d, mean, var, sqrt(var));
    return CLI_OK;
}
