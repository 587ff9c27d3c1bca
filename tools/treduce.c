/* treduce.c: the command-line tool; dispatches to one file per sub-command. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
    const char *name;
    int (*run)(int, char **);
    const char *summary;
} commands[] = {
    {"plan", cmd_plan, "build a reduction plan and print its schedule and makespan"},
    {"list", cmd_list, "list the planning algorithms"},
    {"ratios", cmd_ratios, "reproduce Figure 2 of canon-antoniu (strategy / optimum)"},
    {"simulate", cmd_simulate, "Monte-Carlo simulation under random or heterogeneous costs"},
    {"markov", cmd_markov, "expected makespan and variance of Tree-dyn (Markov chain)"},
    {"sweep", cmd_sweep, "reproduce Figures 4-6 of Benoit et al. (Monte-Carlo study)"},
    {"run", cmd_run, "run a real reduce or allreduce over threads or MPI and check it"},
    {"calibrate", cmd_calibrate, "measure this platform's cost profile (latency, bandwidth, combine)"},
    {"bench", cmd_bench, "benchmark every algorithm and auto against MPI or the memory bound"},
    {"star", cmd_star, "all-reduce on the n-star graph (Oh-Choi-Primeaux): verify, count, simulate"},
    {"demo", cmd_demo, "compare every planner on 64 ranks and draw a Gantt chart"},
    {"platform", cmd_platform, "generate, check and print platform graphs (JSON, SimGrid XML)"},
    {"steady", cmd_steady, "best steady-state throughput of series of scatters, gossips, reduces"},
    {"testbed", cmd_testbed, "an emulated cluster of network namespaces from a platform; MPI jobs on it"},
    {"costs", cmd_costs, "write heterogeneous cost files: random (links, nodes) or a preset"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: treduce <command> [options]\n\n"
                 "Plans, evaluates and draws reduction collectives.\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'treduce <command> --help' explains each one.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return CLI_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "treduce: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return CLI_USAGE;
}
