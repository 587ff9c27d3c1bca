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

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *out)
{
    fprintf(out, "usage: treduce <command> [options]\n"
                 "       treduce help <command> | --help | --version\n\n"
                 "Plans, evaluates and draws reduction collectives.\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'treduce help <command>' (or 'treduce <command> --help') explains each"
                 " one;\n'treduce --version' (-V) prints the version.\n");
}

static int find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(name, commands[i].name))
            return (int)i;
    return -1;
}

static int unknown_command(const char *name)
{
    fprintf(stderr, "treduce: unknown command '%s'\n", name);
    usage(stderr);
    return CLI_USAGE;
}

/* `treduce help [CMD]`: the usage, or CMD's own --help. */
static int help(int argc, char **argv)
{
    if (argc == 2) {
        usage(stdout);
        return CLI_OK;
    }
    if (argc > 3) {
        fprintf(stderr, "treduce: help takes one command, got %d: '%s' ...\n", argc - 2,
                argv[2]);
        return CLI_USAGE;
    }
    int i = find_command(argv[2]);
    if (i < 0)
        return unknown_command(argv[2]);
    char *args[] = {argv[2], "--help", NULL};
    return commands[i].run(2, args);
}

int main(int argc, char **argv)
{
    if (cli_progress_init() != CLI_OK)
        return CLI_USAGE;
    /* the wires of this build, found by name (--wire) from here on */
    if (trd_wire_register(trd_wire_mpi()) != TRD_OK) {
        fprintf(stderr, "treduce: %s\n", trd_errmsg());
        return CLI_USAGE;
    }
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf("treduce %s\n", trd_version());
        return CLI_OK;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(stdout);
        return CLI_OK;
    }
    if (!strcmp(argv[1], "help"))
        return help(argc, argv);
    int i = find_command(argv[1]);
    return i < 0 ? unknown_command(argv[1]) : commands[i].run(argc - 1, argv + 1);
}
