/* cmd_testbed.c: `treduce testbed up|show|run|down`: an emulated cluster of
 * network namespaces built from a platform file, and MPI jobs across it
 * (docs/TESTBED.md).  This file reads the options, says what the testbed
 * module (src/testbed/testbed.h, which does the work) reports, and turns
 * its statuses into exit statuses. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "testbed.h"

static const char *const cmd = "testbed";

/* The module's diagnostics, as every command's: "treduce testbed: ...". */
static void say(void *ctx, tb_say_kind kind, const char *text)
{
    (void)ctx;
    fprintf(stderr, "treduce %s%s: %s\n", cmd, kind == TB_SAY_AGENT ? " agent" : "", text);
    if (kind == TB_SAY_USAGE)
        fprintf(stderr, "(see 'treduce %s --help')\n", cmd);
}

static const tb_report report = {say, NULL};

static int exit_status(tb_status st)
{
    return st == TB_OK ? CLI_OK : st == TB_REFUSED ? CLI_USAGE : CLI_FAILED;
}

static void help(void)
{
    printf("usage: treduce testbed up --platform FILE [--name NAME] [--unit-bytes B]\n"
           "                          [--time-unit S]\n"
           "       treduce testbed show [--name NAME] [--format text|json]\n"
           "       treduce testbed run [--name NAME] [--np N] [--placement P] [--all-nodes]\n"
           "                           [--mpirun PATH] -- COMMAND...\n"
           "       treduce testbed down [--name NAME]\n\n"
           "An emulated cluster on this machine (docs/TESTBED.md): one Linux network\n"
           "namespace per platform node (computing nodes are hosts, routers forward),\n"
           "one veth pair per platform link, each direction rate-limited (tc tbf) to\n"
           "the link's rate, addresses in 198.18.0.0/15, static routes along the\n"
           "fewest hops.  Link latency and node speeds are not emulated.  Needs root.\n\n"
           "  up     builds the testbed from FILE (JSON or SimGrid XML); a link of\n"
           "         cost c carries B / (c x S) bytes per second\n"
           "  show   prints its hosts, addresses, link rates and routes\n"
           "  run    runs COMMAND with Open MPI's mpirun across the hosts: N ranks\n"
           "         (default one per core of every host: a node's \"cores\", default 1),\n"
           "         the ranks of one host sharing memory as on a real node (their own\n"
           "         /dev/shm and host name); --all-nodes: one slot per node, routers\n"
           "         included (rank i on node i)\n"
           "  down   removes every namespace, link and process of the testbed\n\n"
           "  --platform FILE      the platform (up; -p FILE: the same, its older spelling)\n"
           "  --name NAME          the testbed: 1 to %d of a-z 0-9 - (default 'default')\n"
           "  --unit-bytes B       bytes per unit of message size (default 1e6, SimGrid's)\n"
           "  --time-unit S        seconds per time unit of the platform (default 1)\n"
           "  --np N               ranks (run)\n"
           "  --placement P        block (default: consecutive ranks on each host up to\n"
           "                       its cores, in the platform's order, as mpirun places\n"
           "                       them on a cluster) or round-robin (rank i on host\n"
           "                       i mod hosts) (run)\n"
           "  --mpirun PATH        Open MPI's mpirun (default: mpirun on the PATH)\n"
           "  --format F           text (default) or json (show)\n"
           "Exit status: 0 done (run: the job's), 1 failed, 2 bad usage or input.\n",
           TB_NAME_MAX);
}

typedef struct testbed_args {
    const char *verb, *platform, *format;
    tb_run_args run;
    double unit_bytes, time_unit;
} testbed_args;

static int positive(const char *opt, const char *text, double *out)
{
    if (!cli_real(cmd, opt, text, out))
        return CLI_USAGE;
    return *out > 0 ? CLI_OK : cli_usage_error(cmd, "invalid %s %s: must be > 0", opt, text);
}

static int take(int opt, testbed_args *a)
{
    switch (opt) {
    case 'p': a->platform = optarg; return CLI_OK;
    case 'n': a->run.name = optarg; return tb_name_ok(&report, optarg) ? CLI_OK : CLI_USAGE;
    case 'u': return positive("--unit-bytes", optarg, &a->unit_bytes);
    case 't': return positive("--time-unit", optarg, &a->time_unit);
    case 'N':
        if (!cli_int(cmd, "--np", optarg, &a->run.np))
            return CLI_USAGE;
        return a->run.np >= 1 && a->run.np <= 4096
                   ? CLI_OK : cli_usage_error(cmd, "invalid --np %s: 1 to 4096", optarg);
    case 'a': a->run.all_nodes = true; return CLI_OK;
    case 'P':
        a->run.round_robin = !strcmp(optarg, "round-robin");
        return a->run.round_robin || !strcmp(optarg, "block")
                   ? CLI_OK
                   : cli_usage_error(cmd, "invalid --placement '%s': block or round-robin",
                                     optarg);
    case 'm': a->run.mpirun = optarg; return CLI_OK;
    case 'f':
        a->format = optarg;
        return !strcmp(optarg, "text") || !strcmp(optarg, "json")
                   ? CLI_OK : cli_usage_error(cmd, "invalid --format '%s': text or json", optarg);
    default: return cli_usage_error(cmd, "unknown or incomplete option");
    }
}

/* Options of the verb: those that do not apply to it are refused. */
static int parse(int argc, char **argv, testbed_args *a)
{
    static const struct option opts[] = {
        {"platform", required_argument, 0, 'p'}, {"name", required_argument, 0, 'n'},
        {"unit-bytes", required_argument, 0, 'u'}, {"time-unit", required_argument, 0, 't'},
        {"np", required_argument, 0, 'N'},       {"all-nodes", no_argument, 0, 'a'},
        {"mpirun", required_argument, 0, 'm'},   {"format", required_argument, 0, 'f'},
        {"placement", required_argument, 0, 'P'}, {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    static const struct { const char *verb, *allowed; } verbs[] = {
        {"up", "pnut"}, {"show", "nf"}, {"run", "nNamP"}, {"down", "n"}};
    const char *allowed = NULL;
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        if (!strcmp(a->verb, verbs[i].verb))
            allowed = verbs[i].allowed;
    if (!allowed)
        return cli_usage_error(cmd, "unknown verb '%s': up, show, run or down", a->verb);
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "+p:h", opts, NULL)) != -1) {
        if (opt == 'h') {
            help();
            return -1;
        }
        if (opt == '?' || opt == ':')
            return cli_usage_error(cmd, "unknown or incomplete option '%s'", argv[optind - 1]);
        if (!strchr(allowed, opt))
            return cli_usage_error(cmd, "%s does not apply to 'testbed %s'", argv[optind - 1],
                                   a->verb);
        int st = take(opt, a);
        if (st != CLI_OK)
            return st;
    }
    a->run.command = argv + optind;
    if (strcmp(a->verb, "run") && optind < argc)
        return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    return CLI_OK;
}

static int up(const testbed_args *a)
{
    if (!a->platform)
        return cli_usage_error(cmd, "up needs --platform FILE");
    tb_layout t;
    tb_status st = tb_up(&report, a->platform, a->run.name, a->unit_bytes, a->time_unit, &t);
    if (st == TB_OK)
        printf("testbed %s up: %d hosts (%lld cores), %d routers, %d links ('treduce testbed "
               "show --name %s')\n", t.name, (int)t.n_hosts, (long long)t.n_cores,
               (int)(t.n_nodes - t.n_hosts), (int)t.n_links, t.name);
    tb_layout_free(&t);
    return exit_status(st);
}

static int show(const testbed_args *a)
{
    tb_layout t;
    tb_status st = tb_load(&report, a->run.name, &t);
    if (st == TB_OK)
        tb_write(&t, a->format && !strcmp(a->format, "json"), stdout);
    tb_layout_free(&t);
    return exit_status(st);
}

/* `agent NAME JOBDIR HOST COMMAND...`: what tb_run gives mpirun as its rsh
 * agent. */
static int agent(int argc, char **argv)
{
    if (argc < 5)
        return cli_usage_error(cmd, "agent NAME JOBDIR HOST COMMAND...: Open MPI's rsh "
                               "agent (docs/TESTBED.md), not for direct use");
    return exit_status(tb_agent(&report, argv[1], argv[2], argv[3], argv + 4));
}

int cmd_testbed(int argc, char **argv)
{
    if (argc < 2) {
        help();
        return CLI_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        help();
        return CLI_OK;
    }
    if (!strcmp(argv[1], "agent"))
        return agent(argc - 1, argv + 1);
    testbed_args a = {.verb = argv[1], .unit_bytes = 1e6, .time_unit = 1.0};
    a.run.name = "default";
    int rc = parse(argc - 1, argv + 1, &a);
    if (rc != CLI_OK)
        return rc < 0 ? CLI_OK : rc;
    if (!strcmp(a.verb, "up"))
        return up(&a);
    if (!strcmp(a.verb, "show"))
        return show(&a);
    if (!strcmp(a.verb, "run"))
        return exit_status(tb_run(&report, &a.run));
    return exit_status(tb_down(&report, a.run.name, false));
}
