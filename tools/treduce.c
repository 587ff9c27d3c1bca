/* treduce.c: the command-line tool; dispatches to one file per sub-command. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
    const char *name;
    int (*run)(int, char **);
    const char *summary;
} commands[] = {
#define CLI_COMMAND(name, summary) {#name, cmd_##name, summary},
#include "commands.def"
#undef CLI_COMMAND
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
