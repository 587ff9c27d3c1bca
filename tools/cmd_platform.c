/* cmd_platform.c: `treduce platform generate` writes a random hierarchical
 * platform (Tiers-like, Legrand et al. Sec. 4.7) as JSON; `treduce
 * platform show` loads a platform file (JSON or SimGrid XML), which checks
 * it, and prints it as text, JSON (so it also converts SimGrid files) or
 * Graphviz dot.  Formats and units: docs/PLATFORMS.md. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "treduce/platform.h"

static void help(void)
{
    printf("usage: treduce platform generate [--seed S] [--lans N] [--out FILE]\n"
           "       treduce platform show --platform FILE [--format text|json|dot]\n\n"
           "Platform graphs for the steady-state problems of Legrand, Marchal and\n"
           "Robert: nodes that compute (speed in tasks per time unit) or route, and\n"
           "directed links (cost: time per unit of message).  'treduce platform\n"
           "generate --help' and 'treduce platform show --help' say more; file\n"
           "formats are in docs/PLATFORMS.md.\n");
}

static void help_generate(void)
{
    printf("usage: treduce platform generate [--seed S] [--lans N] [--out FILE]\n\n"
           "Writes a random hierarchical platform in the spirit of the Tiers generator\n"
           "(Legrand et al., Sec. 4.7) as JSON: a ring of WAN routers, one MAN router\n"
           "per LAN, and LANs of 2 or 3 hosts (the computing nodes, named P0, P1, ...).\n"
           "Links go both ways; costs and speeds are small fractions k/2.  The same\n"
           "seed gives the same platform on every machine.\n\n"
           "  --seed S    seed, >= 0 (default 1)\n"
           "  --lans N    number of LANs, 1 to 1000 (default 3: 12 to 15 nodes, as in\n"
           "              Figure 9 of the paper; 7 LANs give about 30 nodes)\n"
           "  --out FILE  where to write; - is the standard output (default)\n"
           "Exit status: 0 written, 1 cannot write, 2 bad usage.\n");
}

static void help_show(void)
{
    printf("usage: treduce platform show --platform FILE [--format text|json|dot]\n\n"
           "Loads FILE, a platform in JSON or a SimGrid XML platform (told apart by\n"
           "their content), checks it and prints its nodes and links with their exact\n"
           "speeds and costs:\n\n"
           "  --platform FILE      the platform file (-p FILE: the same, its older spelling)\n"
           "  --format F           text (default); json, the treduce format (this\n"
           "                       converts a SimGrid file); dot, for Graphviz\n"
           "                       (computing nodes grey boxes, routers ellipses)\n"
           "Exit status: 0 valid, 1 cannot read the file, 2 bad usage or an invalid\n"
           "platform (the message names the file, the element and the value).\n");
}

enum { FORMAT_TEXT, FORMAT_JSON, FORMAT_DOT };

typedef struct platform_args {
    int64_t seed, lans;
    const char *out, *platform;
    int format;
} platform_args;

static int take_generate(int opt, void *ctx)
{
    platform_args *a = ctx;
    const char *cmd = "platform generate";
    switch (opt) {
    case 's': return cli_int(cmd, "--seed", optarg, &a->seed) ? CLI_OK : CLI_USAGE;
    case 'l': return cli_int(cmd, "--lans", optarg, &a->lans) ? CLI_OK : CLI_USAGE;
    case 'o': a->out = optarg; return CLI_OK;
    default: return cli_usage_error(cmd, "-%c is not an option of generate", opt);
    }
}

static int take_show(int opt, void *ctx)
{
    static const char *const formats[] = {[FORMAT_TEXT] = "text", [FORMAT_JSON] = "json",
                                          [FORMAT_DOT] = "dot"};
    platform_args *a = ctx;
    switch (opt) {
    case 'p': a->platform = optarg; return CLI_OK;
    case 'f':
        for (a->format = 0; a->format < 3; a->format++)
            if (!strcmp(optarg, formats[a->format]))
                return CLI_OK;
        return cli_usage_error("platform show", "invalid --format '%s': text, json or dot",
                               optarg);
    default: return cli_usage_error("platform show", "-%c is not an option of show", opt);
    }
}

static int run_generate(int argc, char **argv)
{
    static const struct option opts[] = {{"seed", required_argument, 0, 's'},
                                          {"lans", required_argument, 0, 'l'},
                                          {"out", required_argument, 0, 'o'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    const char *cmd = "platform generate";
    platform_args a = {.seed = 1, .lans = 3, .out = "-"};
    int st = cli_parse_options(cmd, argc, argv, opts, help_generate, take_generate, &a);
    if (st != CLI_OK)
        return st < 0 ? CLI_OK : st;
    if (a.seed < 0)
        return cli_usage_error(cmd, "invalid --seed %lld: must be >= 0", (long long)a.seed);
    if (a.lans < 1 || a.lans > TRD_PLATFORM_LANS_MAX)
        return cli_usage_error(cmd, "invalid --lans %lld: need 1 to %d LANs",
                               (long long)a.lans, TRD_PLATFORM_LANS_MAX);
    trd_platform *pf = NULL;
    trd_status ts = trd_platform_generate((uint64_t)a.seed, (int32_t)a.lans, &pf);
    if (ts != TRD_OK)
        return cli_lib_error(cmd, ts);
    cli_out out;
    FILE *f = strcmp(a.out, "-") ? cli_out_open(cmd, &out, NULL, a.out) : stdout;
    if (f == NULL) {
        trd_platform_free(pf);
        return CLI_FAILED;
    }
    ts = trd_platform_write_json(pf, f);
    trd_platform_free(pf);
    if (ts != TRD_OK)
        fprintf(stderr, "treduce %s: cannot write %s\n", cmd, f == stdout ? "the standard "
                "output" : out.path);
    if (f != stdout && !cli_out_end(cmd, &out, ts == TRD_OK))
        ts = TRD_EIO;
    return ts == TRD_OK ? CLI_OK : CLI_FAILED;
}

typedef trd_status (*exact_fn)(const trd_platform *pf, int32_t index, char **text);

/* Prints the exact number get() gives for item index through fmt (one %s);
 * a computing node's speed 0 is one its file does not give. */
static bool print_exact(exact_fn get, const trd_platform *pf, int32_t index, const char *fmt)
{
    char *text = NULL;
    if (get(pf, index, &text) != TRD_OK)
        return false;
    printf(fmt, strcmp(text, "0") ? text : "not given (scatters and gossips only)");
    free(text);
    return true;
}

static bool show_text(const char *path, const trd_platform *pf)
{
    int32_t n = trd_platform_node_count(pf), m = trd_platform_link_count(pf), routers = 0;
    int width = 4;
    for (int32_t i = 0; i < n; i++) {
        routers += trd_platform_node_is_router(pf, i);
        int len = (int)strlen(trd_platform_node_name(pf, i));
        width = len > width && len <= 24 ? len : width;
    }
    printf("%s: %d nodes (%d computing, %d routers), %d links\nnodes:\n", path, (int)n,
           (int)(n - routers), (int)routers, (int)m);
    bool ok = true;
    for (int32_t i = 0; i < n; i++) {
        printf("  %-*s ", width, trd_platform_node_name(pf, i));
        if (trd_platform_node_is_router(pf, i))
            printf("router\n");
        else
            ok &= print_exact(trd_platform_node_speed, pf, i, "speed %s\n");
    }
    printf("links:\n");
    for (int32_t l = 0; l < m; l++) {
        printf("  %-*s -> %-*s ", width, trd_platform_node_name(pf, trd_platform_link_from(pf, l)),
               width, trd_platform_node_name(pf, trd_platform_link_to(pf, l)));
        ok &= print_exact(trd_platform_link_cost, pf, l, "cost %s\n");
    }
    return ok;
}

/* Text inside a dot string: names may hold quotes and backslashes. */
static void print_escaped(const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            putchar('\\');
        putchar(*s);
    }
}

static void print_quoted(const char *s)
{
    putchar('"');
    print_escaped(s);
    putchar('"');
}

static bool show_dot(const trd_platform *pf)
{
    bool ok = true;
    printf("digraph platform {\n  node [fontname=\"Helvetica\"];\n");
    for (int32_t i = 0; i < trd_platform_node_count(pf); i++) {
        const char *name = trd_platform_node_name(pf, i);
        printf("  ");
        print_quoted(name);
        if (trd_platform_node_is_router(pf, i)) {
            printf(" [shape=ellipse];\n");
            continue;
        }
        printf(" [shape=box, style=filled, fillcolor=gray80, label=\"");
        print_escaped(name);
        ok &= print_exact(trd_platform_node_speed, pf, i, "\\nspeed %s\"];\n");
    }
    for (int32_t l = 0; l < trd_platform_link_count(pf); l++) {
        printf("  ");
        print_quoted(trd_platform_node_name(pf, trd_platform_link_from(pf, l)));
        printf(" -> ");
        print_quoted(trd_platform_node_name(pf, trd_platform_link_to(pf, l)));
        ok &= print_exact(trd_platform_link_cost, pf, l, " [label=\"%s\"];\n");
    }
    printf("}\n");
    return ok;
}

static int run_show(int argc, char **argv)
{
    static const struct option opts[] = {{"platform", required_argument, 0, 'p'},
                                          {"format", required_argument, 0, 'f'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    const char *cmd = "platform show";
    platform_args a = {.format = FORMAT_TEXT};
    int st = cli_parse_options(cmd, argc, argv, opts, help_show, take_show, &a);
    if (st != CLI_OK)
        return st < 0 ? CLI_OK : st;
    if (a.platform == NULL)
        return cli_usage_error(cmd, "--platform FILE is required");
    trd_platform *pf = NULL;
    trd_status ts = trd_platform_load(a.platform, &pf);
    if (ts != TRD_OK)
        return cli_lib_error(cmd, ts);
    bool ok = a.format == FORMAT_JSON ? trd_platform_write_json(pf, stdout) == TRD_OK
              : a.format == FORMAT_DOT ? show_dot(pf)
                                       : show_text(a.platform, pf);
    trd_platform_free(pf);
    if (!ok || fflush(stdout) != 0) {
        fprintf(stderr, "treduce %s: cannot print the platform\n", cmd);
        return CLI_FAILED;
    }
    return CLI_OK;
}

int cmd_platform(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage_error("platform", "missing sub-command: generate or show");
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        help();
        return CLI_OK;
    }
    if (!strcmp(argv[1], "generate"))
        return run_generate(argc - 1, argv + 1);
    if (!strcmp(argv[1], "show"))
        return run_show(argc - 1, argv + 1);
    return cli_usage_error("platform", "unknown sub-command '%s': generate or show", argv[1]);
}
