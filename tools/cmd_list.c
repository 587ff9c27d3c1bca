/* cmd_list.c: `treduce list`, the registry as a table (or JSON). */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* The collectives algorithm i runs, by name (trd_algo_runs). */
static json_t *collectives_json(size_t i)
{
    json_t *all = json_array();
    for (int c = TRD_COLL_REDUCE; c <= TRD_COLL_EXSCAN; c++)
        if (trd_algo_runs(i, (trd_collective)c))
            json_array_append_new(all, json_string(trd_collective_name((trd_collective)c)));
    return all;
}

/* The same joined by commas ("reduce,allreduce") into buf. */
static const char *collectives_text(size_t i, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int c = TRD_COLL_REDUCE; c <= TRD_COLL_EXSCAN && len < size; c++)
        if (trd_algo_runs(i, (trd_collective)c))
            len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? "," : "",
                                    trd_collective_name((trd_collective)c));
    return buf;
}

static json_t *algo_json(size_t i)
{
    static const char *const kinds[] = {"tree", "pipelined", "exchange", "dynamic"};
    json_t *o = json_pack("{s:s, s:s, s:s, s:b, s:b, s:b, s:b, s:b, s:b}", "name",
                          trd_algo_name(i), "kind", kinds[trd_algo_kind_of(i)], "description",
                          trd_algo_describe(i), "uses_K", trd_algo_uses_k(i), "uses_costs",
                          trd_algo_uses_costs(i), "commutative_only",
                          trd_algo_commutative_only(i), "reproducible", trd_algo_reproducible(i),
                          "needs_factorial_p", trd_algo_needs_factorial_p(i), "uses_nodes",
                          trd_algo_uses_nodes(i));
    json_object_set_new(o, "collectives", collectives_json(i));
    return o;
}

static void print_algo(size_t i)
{
    static const char *const kinds[] = {"tree", "pipelined", "exchange", "dynamic"};
    char runs[96];
    printf("%-23s %-9s %-16s %s%s%s\n", trd_algo_name(i), kinds[trd_algo_kind_of(i)],
           collectives_text(i, runs, sizeof runs), trd_algo_describe(i),
           trd_algo_uses_k(i) ? " (K)" : "", trd_algo_uses_costs(i) ? " (--costs)" : "");
}

int cmd_list(int argc, char **argv)
{
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: treduce list [--format text|json]\n\n"
                   "Lists every planning algorithm: its name, what it is (tree, pipelined,\n"
                   "exchange, dynamic), the collectives it runs (the values of --kind:\n"
                   "reduce, allreduce, reduce-scatter, scan, exscan) and a one-line\n"
                   "description; (K) marks those that need --K.\n");
            return CLI_OK;
        } else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
            if (strcmp(argv[++i], "json") && strcmp(argv[i], "text"))
                return cli_usage_error("list", "invalid --format '%s': text or json", argv[i]);
            json = !strcmp(argv[i], "json");
        } else {
            return cli_usage_error("list", "unexpected argument '%s'", argv[i]);
        }
    }
    json_t *all = json_array();
    for (size_t i = 0; i < trd_algo_count(); i++) {
        if (json)
            json_array_append_new(all, algo_json(i));
        else
            print_algo(i);
    }
    if (json) {
        json_dumpf(all, stdout, JSON_INDENT(2));
        putchar('\n');
    }
    json_decref(all);
    return CLI_OK;
}
