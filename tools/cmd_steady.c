/* cmd_steady.c: `treduce steady`: the best throughput of a series of
 * scatters, gossips or reduces on a platform graph, solved exactly, with
 * its periodic schedule (Legrand, Marchal and Robert 2004).  The library
 * does the work (include/treduce/steady.h); this file reads the options,
 * the node names and the --sizes file.  Outputs: docs/STEADY.md. */
#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "steady_series.h"
#include "treduce/steady.h"

static const char *const cmd = "steady";

static void help(void)
{
    printf("usage: treduce steady --problem scatter|gossip|reduce --platform FILE\n"
           "         [--source NAME] [--targets A,B,...]         (scatter)\n"
           "         [--participants A,B,...]                   (gossip; or --targets)\n"
           "         [--target NAME] [--participants A,B,...]   (reduce)\n"
           "         [--sizes FILE] [--fixed-period T] [--format text|json|dot]\n"
           "         [--simulate OPS] [--run OPS [--wire threads|mpi]\n"
           "         [--unit-bytes B] [--time-unit S]]           (reduce)\n\n"
           "Solves the steady-state linear program of a series of collectives exactly\n"
           "(rational arithmetic) and prints the throughput (operations per time unit,\n"
           "an exact fraction), the period, the weighted trees of one period (Fig. 8)\n"
           "and the communication matchings of one period.\n\n"
           "  --problem P          scatter: SOURCE sends a message to every target;\n"
           "                       gossip: every participant sends a message to every\n"
           "                       other; reduce: TARGET gets v0 + v1 + ... + vN for a\n"
           "                       non-commutative +, in the order of --participants\n"
           "  --platform FILE      the platform (JSON or SimGrid XML, docs/PLATFORMS.md;\n"
           "                       its older spelling: -p FILE)\n"
           "  --source NAME        scatter: the source (required)\n"
           "  --targets LIST       scatter: the targets (default: every computing node\n"
           "                       but the source); gossip: same as --participants\n"
           "  --target NAME        reduce: the node that gets the result (required)\n"
           "  --participants LIST  gossip, reduce: default every computing node, in the\n"
           "                       platform's order\n"
           "  --sizes FILE         reduce: sizes of the partial results and of the\n"
           "                       tasks, JSON {\"default\": \"1\", \"task\": \"1\",\n"
           "                       \"sizes\": [{\"k\": 0, \"m\": 2, \"size\": \"10\"}]}\n"
           "  --fixed-period T     also the schedule of period T (Prop. 4)\n"
           "  --format F           text (default), json or dot (the platform with the\n"
           "                       busy time of every link)\n"
           "  --simulate OPS       reduce: run OPS operations of the periodic schedule\n"
           "                       in the simulator (platform costs, one-port full\n"
           "                       duplex) and compare the throughput reached with TP\n"
           "  --run OPS            reduce: run OPS reductions for real on threads (one\n"
           "                       thread per node) along the trees, check every result\n"
           "                       and print operations per second (OPS <= 65536)\n"
           "  --wire W             --run on threads (default) or mpi: one rank per node\n"
           "                       (--transport W: the same, its older spelling)\n"
           "                       (treduce testbed run --all-nodes), each operation's\n"
           "                       message B bytes, compared with TP / S per second\n"
           "  --unit-bytes B       bytes per unit of message size (mpi; default the\n"
           "                       testbed's, else one 16-byte matrix per operation)\n"
           "  --time-unit S        seconds per time unit (mpi; default the testbed's or 1)\n\n"
           "A member that cannot be reached gives throughput 0 (\"reachable\": false in\n"
           "JSON) and exit status 0.  Exit status: 0 solved, 1 cannot read a file or\n"
           "the solver failed, 2 bad usage or input (unknown node, router as member,\n"
           "duplicate, bad size).\n");
}

typedef struct steady_args {
    const char *problem, *platform, *source, *targets, *target, *participants, *sizes;
    int64_t fixed_period, simulate, run; /* simulate, run: operations, 0 = none */
    trd_steady_format format;
    int32_t *ids; /* the members' node ids (owned) */
    const trd_wire_info *wire; /* --wire; NULL: threads */
    bool mpi;     /* --run over a launched wire: every rank solves, rank 0 reports */
    trd_comm *comm; /* this process's rank then */
    int rank;
    steady_mpi_units units;
} steady_args;

static int take_option(int opt, void *ctx)
{
    steady_args *a = ctx;
    switch (opt) {
    case 'P': a->problem = optarg; return CLI_OK;
    case 'p': a->platform = optarg; return CLI_OK;
    case 's': a->source = optarg; return CLI_OK;
    case 'T': a->targets = optarg; return CLI_OK;
    case 't': a->target = optarg; return CLI_OK;
    case 'm': a->participants = optarg; return CLI_OK;
    case 'z': a->sizes = optarg; return CLI_OK;
    case 'F':
        if (!cli_int(cmd, "--fixed-period", optarg, &a->fixed_period))
            return CLI_USAGE;
        return a->fixed_period >= 1 ? CLI_OK
                                    : cli_usage_error(cmd, "invalid --fixed-period %s: must be "
                                                      ">= 1", optarg);
    case 'S':
    case 'R': {
        const char *name = opt == 'S' ? "--simulate" : "--run";
        int64_t *ops = opt == 'S' ? &a->simulate : &a->run;
        if (!cli_int(cmd, name, optarg, ops))
            return CLI_USAGE;
        return *ops >= 1 ? CLI_OK
                         : cli_usage_error(cmd, "invalid %s %s: must be >= 1", name, optarg);
    }
    case 'X':
    {
        int st = cli_wire(cmd, optarg, &a->wire);
        a->mpi = st == CLI_OK && a->wire->launched; /* one rank per node: a process each */
        return st;
    }
    case 'u':
    case 'U': {
        double *v = opt == 'u' ? &a->units.unit_bytes : &a->units.time_unit;
        if (!cli_real(cmd, opt == 'u' ? "--unit-bytes" : "--time-unit", optarg, v))
            return CLI_USAGE;
        a->units.known = opt == 'u' ? true : a->units.known;
        return *v > 0 ? CLI_OK : cli_usage_error(cmd, "invalid %s %s: must be > 0",
                                                 opt == 'u' ? "--unit-bytes" : "--time-unit",
                                                 optarg);
    }
    case 'f':
        if (!strcmp(optarg, "text") || !strcmp(optarg, "json") || !strcmp(optarg, "dot")) {
            a->format = !strcmp(optarg, "text")   ? TRD_STEADY_TEXT
                        : !strcmp(optarg, "json") ? TRD_STEADY_JSON
                                                  : TRD_STEADY_DOT;
            return CLI_OK;
        }
        return cli_usage_error(cmd, "invalid --format '%s': text, json or dot", optarg);
    default:
        return cli_usage_error(cmd, "unknown option");
    }
}

/* Refuses an option that the problem does not use. */
static int unused(const char *value, const char *option, const char *problem)
{
    return value ? cli_usage_error(cmd, "%s does not apply to a %s", option, problem) : CLI_OK;
}

static int check_args(steady_args *a, trd_steady_problem *problem)
{
    if (!a->problem)
        return cli_usage_error(cmd, "--problem is required (scatter, gossip or reduce)");
    if (trd_steady_problem_parse(a->problem, problem) != TRD_OK)
        return cli_usage_error(cmd, "%s", trd_errmsg());
    if (!a->platform)
        return cli_usage_error(cmd, "--platform is required");
    int st = CLI_OK;
    if (*problem != TRD_STEADY_REDUCE && (a->simulate || a->run))
        return cli_usage_error(cmd, "--simulate and --run follow reduction trees: they apply "
                               "to --problem reduce only");
    if (a->mpi && !a->run)
        return cli_usage_error(cmd, "--wire applies to --run");
    switch (*problem) {
    case TRD_STEADY_SCATTER:
        if (!a->source)
            return cli_usage_error(cmd, "a scatter needs --source");
        if ((st = unused(a->target, "--target", a->problem)) == CLI_OK &&
            (st = unused(a->participants, "--participants", a->problem)) == CLI_OK)
            st = unused(a->sizes, "--sizes", a->problem);
        return st;
    case TRD_STEADY_GOSSIP:
        if (a->targets && a->participants)
            return cli_usage_error(cmd, "give --participants or --targets, not both");
        if (!a->participants)
            a->participants = a->targets;
        if ((st = unused(a->source, "--source", a->problem)) == CLI_OK &&
            (st = unused(a->target, "--target", a->problem)) == CLI_OK)
            st = unused(a->sizes, "--sizes", a->problem);
        return st;
    default:
        if (!a->target)
            return cli_usage_error(cmd, "a reduce needs --target");
        if ((st = unused(a->source, "--source", a->problem)) == CLI_OK)
            st = unused(a->targets, "--targets (did you mean --participants?)", a->problem);
        return st;
    }
}

/* The node called name, or a usage error naming option. */
static int node_named(const trd_platform *pf, const char *name, const char *option,
                      int32_t *id)
{
    *id = trd_platform_find(pf, name);
    if (*id < 0)
        return cli_usage_error(cmd, "unknown node '%s' in %s", name, option);
    return CLI_OK;
}

/* A comma-separated list of node names into ids (*ids malloc'ed). */
static int node_list(const trd_platform *pf, const char *list, const char *option,
                     int32_t **ids, int32_t *n)
{
    char *copy = strdup(list), *save = NULL;
    *ids = malloc((strlen(list) / 2 + 2) * sizeof **ids);
    *n = 0;
    int st = copy && *ids ? CLI_OK : cli_usage_error(cmd, "out of memory");
    if (st == CLI_OK && (list[0] == '\0' || list[0] == ',' || list[strlen(list) - 1] == ','))
        st = cli_usage_error(cmd, "empty name in %s '%s'", option, list);
    for (char *name = copy ? strtok_r(copy, ",", &save) : NULL; st == CLI_OK && name;
         name = strtok_r(NULL, ",", &save))
        st = node_named(pf, name, option, &(*ids)[(*n)++]);
    if (st == CLI_OK && strstr(list, ",,"))
        st = cli_usage_error(cmd, "empty name in %s '%s'", option, list);
    free(copy);
    return st;
}

/* A size: a JSON string ("2/3", kept in the document) or an integer
 * (printed into num), as text in *text. */
static int size_text(json_t *v, const char *path, const char *what, char num[24],
                     const char **text)
{
    if (json_is_string(v)) {
        *text = json_string_value(v);
        return CLI_OK;
    }
    if (json_is_integer(v)) {
        snprintf(num, 24, "%lld", (long long)json_integer_value(v));
        *text = num;
        return CLI_OK;
    }
    return cli_usage_error(cmd, "%s: %s must be a string (\"2/3\") or an integer", path, what);
}

typedef struct sizes_file {
    json_t *root;     /* the document: it holds the sizes given as strings */
    const char *def, *task;
    char (*num)[24];  /* sizes given as integers, as text: default, task, each entry */
    trd_steady_size *list;
    int32_t n;
} sizes_file;

static int size_entry(json_t *e, const char *path, size_t i, sizes_file *z)
{
    char what[64];
    json_t *k = json_object_get(e, "k"), *m = json_object_get(e, "m");
    snprintf(what, sizeof what, "sizes[%zu]", i);
    if (!json_is_object(e) || !json_is_integer(k) || !json_is_integer(m) ||
        !json_object_get(e, "size") || json_object_size(e) != 3)
        return cli_usage_error(cmd, "%s: %s must be {\"k\": K, \"m\": M, \"size\": S}", path,
                               what);
    if (json_integer_value(k) < 0 || json_integer_value(k) > INT32_MAX ||
        json_integer_value(m) < 0 || json_integer_value(m) > INT32_MAX)
        return cli_usage_error(cmd, "%s: %s: k and m are participant positions (>= 0)", path,
                               what);
    z->list[i] = (trd_steady_size){(int32_t)json_integer_value(k),
                                   (int32_t)json_integer_value(m), NULL};
    z->n++;
    return size_text(json_object_get(e, "size"), path, what, z->num[i + 2], &z->list[i].size);
}

/* Reads the --sizes file into z (see help): a file that cannot be read is
 * a failure (1), one that is not a sizes file bad input (2). */
static int read_sizes(const char *path, sizes_file *z)
{
    json_error_t err;
    json_t *v, *list, *root = z->root = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
    if (root == NULL) {
        if (json_error_code(&err) == json_error_cannot_open_file) {
            fprintf(stderr, "treduce %s: cannot read %s: %s\n", cmd, path, err.text);
            return CLI_FAILED;
        }
        return cli_usage_error(cmd, "%s:%d:%d: malformed JSON: %s", path, err.line, err.column,
                               err.text);
    }
    int st = json_is_object(root) ? CLI_OK : cli_usage_error(cmd, "%s: not a JSON object", path);
    const char *key;
    json_object_foreach(root, key, v) {
        if (st == CLI_OK && strcmp(key, "default") && strcmp(key, "task") && strcmp(key, "sizes"))
            st = cli_usage_error(cmd, "%s: unknown key \"%s\" (default, task, sizes)", path,
                                 key);
    }
    list = json_object_get(root, "sizes");
    if (st == CLI_OK && list && !json_is_array(list))
        st = cli_usage_error(cmd, "%s: sizes must be a list", path);
    size_t count = list ? json_array_size(list) : 0;
    z->list = calloc(count + 1, sizeof *z->list);
    z->num = calloc(count + 2, sizeof *z->num);
    if (st == CLI_OK && (!z->list || !z->num))
        st = cli_usage_error(cmd, "out of memory");
    if (st == CLI_OK && (v = json_object_get(root, "default")))
        st = size_text(v, path, "default", z->num[0], &z->def);
    if (st == CLI_OK && (v = json_object_get(root, "task")))
        st = size_text(v, path, "task", z->num[1], &z->task);
    for (size_t i = 0; st == CLI_OK && i < count; i++)
        st = size_entry(json_array_get(list, i), path, i, z);
    return st;
}

/* Fills spec from the arguments (names looked up in pf). */
static int make_spec(steady_args *a, const trd_platform *pf, trd_steady_spec *spec,
                     sizes_file *z)
{
    const char *root = a->source ? a->source : a->target;
    const char *list = a->source ? a->targets : a->participants;
    int st = root ? node_named(pf, root, a->source ? "--source" : "--target", &spec->root)
                  : CLI_OK;
    if (st == CLI_OK && list)
        st = node_list(pf, list, a->source ? "--targets" : "--participants", &a->ids,
                       &spec->n_members);
    spec->members = a->ids;
    if (st == CLI_OK && a->sizes && (st = read_sizes(a->sizes, z)) == CLI_OK) {
        spec->message_size = z->def;
        spec->task_size = z->task;
        spec->sizes = z->list;
        spec->n_sizes = z->n;
    }
    spec->fixed_period = a->fixed_period;
    return st;
}

/* The solution, then the simulated and real series when asked for (JSON:
 * as keys "simulated" and "run" of the one object). */
static int run_series(const steady_args *a, const trd_platform *pf, const trd_steady *result,
                      json_t *json)
{
    if (!a->mpi)
        return steady_series_run(pf, result, a->run, json);
    steady_mpi_mute(a->rank, false); /* the run's own failures are every rank's to say */
    return steady_series_run_mpi(a->comm, pf, result, a->run, &a->units, json);
}

static trd_status write_result(const steady_args *a, const trd_platform *pf,
                               const trd_steady *result, int *st)
{
    if (a->mpi && a->rank != 0) { /* rank 0 prints */
        *st = run_series(a, pf, result, NULL);
        return TRD_OK;
    }
    if (a->format != TRD_STEADY_JSON) {
        trd_status s = trd_steady_write(result, pf, a->format, stdout);
        if (s == TRD_OK && a->simulate)
            *st = steady_series_simulate(pf, result, a->simulate, NULL);
        if (s == TRD_OK && *st == CLI_OK && a->run)
            *st = run_series(a, pf, result, NULL);
        return s;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    trd_status s = mem ? trd_steady_write(result, pf, TRD_STEADY_JSON, mem) : TRD_ENOMEM;
    if (mem)
        fclose(mem);
    json_t *obj = s == TRD_OK ? json_loads(text, 0, NULL) : NULL;
    free(text);
    if (s != TRD_OK || !obj)
        return s != TRD_OK ? s : TRD_ENOMEM;
    if (a->simulate)
        *st = steady_series_simulate(pf, result, a->simulate, obj);
    if (*st == CLI_OK && a->run)
        *st = run_series(a, pf, result, obj);
    if (*st == CLI_OK || json_object_get(obj, "error")) { /* a null and its reason */
        json_dumpf(obj, stdout, JSON_INDENT(2));
        putchar('\n');
    }
    json_decref(obj);
    return TRD_OK;
}

/* Everything after the options (on every rank under MPI). */
static int steady_main(steady_args *a, trd_steady_spec *spec)
{
    int st = check_args(a, &spec->problem);
    if (st != CLI_OK)
        return st;
    trd_platform *pf = NULL;
    trd_steady *result = NULL;
    sizes_file z = {.n = 0};
    trd_status s = trd_platform_load(a->platform, &pf);
    if (s != TRD_OK)
        return cli_lib_error(cmd, s);
    if ((st = make_spec(a, pf, spec, &z)) == CLI_OK) {
        if ((s = trd_steady_solve(pf, spec, &result)) == TRD_OK)
            s = write_result(a, pf, result, &st);
        if (s != TRD_OK)
            st = cli_lib_error(cmd, s);
    }
    trd_steady_free(result);
    trd_platform_free(pf);
    free(a->ids);
    free(z.list);
    free(z.num);
    json_decref(z.root);
    return st;
}

int cmd_steady(int argc, char **argv)
{
    static const struct option opts[] = {
        {"problem", required_argument, 0, 'P'},      {"platform", required_argument, 0, 'p'},
        {"source", required_argument, 0, 's'},       {"targets", required_argument, 0, 'T'},
        {"target", required_argument, 0, 't'},       {"participants", required_argument, 0, 'm'},
        {"sizes", required_argument, 0, 'z'},        {"fixed-period", required_argument, 0, 'F'},
        {"format", required_argument, 0, 'f'},       {"simulate", required_argument, 0, 'S'},
        {"run", required_argument, 0, 'R'},          {"help", no_argument, 0, 'h'},
        {"transport", required_argument, 0, 'X'},    {"wire", required_argument, 0, 'X'},
        {"unit-bytes", required_argument, 0, 'u'},   {"time-unit", required_argument, 0, 'U'},
        {0, 0, 0, 0}};
    steady_args a = {.format = TRD_STEADY_TEXT};
    steady_mpi_units_init(&a.units);
    trd_steady_spec spec;
    trd_steady_spec_init(&spec);
    int st = cli_parse_options(cmd, argc, argv, opts, help, take_option, &a);
    if (st != CLI_OK)
        return st < 0 ? CLI_OK : st;
    if (a.mpi && a.run) {
        if (!(a.comm = steady_mpi_begin(a.wire)))
            return CLI_FAILED;
        a.rank = trd_comm_rank(a.comm);
        steady_mpi_mute(a.rank, true); /* every rank solves; rank 0 speaks */
        st = steady_main(&a, &spec);
        steady_mpi_end(a.comm);
        return st;
    }
    return steady_main(&a, &spec);
}
