/* cmd_list.c: `treduce list`, the registry as a table (or JSON). */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cmd_list(int argc, char **argv)
{
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: treduce list [--format text|json]\n\n"
                   "Lists every planning algorithm with a one-line description;\n"
                   "(K) marks those that need --K.\n");
            return CLI_OK;
        } else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
            if (strcmp(argv[++i], "json") && strcmp(argv[i], "text"))
                return cli_usage_error("list", "invalid --format '%s': text or json", argv[i]);
            json = !strcmp(argv[i], "json");
        } else {
            return cli_usage_error("list", "unexpected argument '%s'", argv[i]);
        }
    }
    static const char *const kinds[] = {"tree", "pipelined", "exchange", "dynamic"};
    json_t *all = json_array();
    for (size_t i = 0; i < trd_algo_count(); i++) {
        if (json)
            json_array_append_new(
                all, json_pack("{s:s, s:s, s:s, s:b, s:b, s:b, s:b, s:b, s:b}", "name",
                               trd_algo_name(i), "kind", kinds[trd_algo_kind_of(i)],
                               "description", trd_algo_describe(i), "uses_K", trd_algo_uses_k(i),
                               "uses_costs", trd_algo_uses_costs(i), "commutative_only",
                               trd_algo_commutative_only(i), "reproducible",
                               trd_algo_reproducible(i), "needs_factorial_p",
                               trd_algo_needs_factorial_p(i), "uses_nodes",
                               trd_algo_uses_nodes(i)));
        else
            printf("%-20s %-9s %s%s%s\n", trd_algo_name(i), kinds[trd_algo_kind_of(i)],
                   trd_algo_describe(i), trd_algo_uses_k(i) ? " (K)" : "",
                   trd_algo_uses_costs(i) ? " (--costs)" : "");
    }
    if (json) {
        json_dumpf(all, stdout, JSON_INDENT(2));
        putchar('\n');
    }
    json_decref(all);
    return CLI_OK;
}
