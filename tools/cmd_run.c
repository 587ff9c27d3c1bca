/* cmd_run.c: `treduce run`: a real collective (reduce, allreduce,
 * reduce-scatter, scan, exscan: --kind) on real data over
 * the threads wire (ranks are threads of this process) or MPI
 * (`mpirun -np P treduce run --wire mpi ...`).  Each rank fills its
 * buffer with values that make the result exact in any combine order
 * (docs/RUNTIME.md), the call runs `iters` times, and the result is
 * checked against a sequential rank-order fold of the same inputs.  The
 * time of an iteration is the slowest rank's; rank 0 prints the median and
 * the minimum next to the model's prediction (the plan's makespan under a
 * cost model calibrated on the spot, or given with --d/--c/--latency). */
#include "costly_op.h"
#include "run.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void help(void)
{
    printf("usage: treduce run --algo NAME [--wire threads|mpi] -p P --count M\n"
           "         [--type T] [--op OP] [--kind K] [--root R] [--segment BYTES]\n"
           "         [--iters I] [--warmup W]\n"
           "         [--d D --c C [--latency L [--flight F]] [--parallelism K]\n"
           "          | --profile FILE | --costs FILE]\n"
           "         [--K K] [--explain] [--tune N] [--reproducible]\n"
           "         [--timeout S] [--format text|json]\n\n"
           "Runs a real collective of M elements per rank over P ranks and checks each\n"
           "rank's result against a sequential rank-order fold of the same inputs.\n"
           "Under MPI: mpirun -np P treduce run --wire mpi ... (-p is then the\n"
           "MPI size).\n\n"
           "  --algo NAME       any algorithm of 'treduce list' (default binomial), or\n"
           "                    auto: the one the model predicts fastest for this call\n"
           "  --explain         with auto: print every candidate's predicted time\n"
           "  --tune N          with auto: time the model's N best candidates (0 to 8;\n"
           "                    default 0: the model's first), 6 untimed warm-up calls\n"
           "                    each before the timed iterations, and run the fastest\n"
           "                    (the slowest rank's median); --explain adds their times\n"
           "  --reproducible    bitwise the same result on every run and rank (static\n"
           "                    algorithms only: dynamic ones are refused, auto skips them)\n"
           "  --wire W          threads (default: P threads, no launcher) or mpi\n"
           "                    (--transport W: the same, its older spelling)\n"
           "  -p P              number of ranks (threads wire)\n"
           "  --count M         elements per rank (>= 0; a reduce-scatter's part: each\n"
           "                    rank's input is P parts of M)\n"
           "  --parts N0,N1,... a reduce-scatter of uneven parts: rank r gets N_r\n"
           "                    elements (>= 0, one per rank; instead of --count)\n"
           "  --type T          int32, int64, uint64, float, double (default double)\n"
           "  --op OP           sum (default), prod, min, max, land, lor, band, bor, bxor,\n"
           "                    or a non-commutative checker: matrix (2x2 products mod\n"
           "                    2^31-1) or interval (concatenation); these ignore --type;\n"
           "                    or a costly user operator on doubles: sleep-sum (sleeps\n"
           "                    --op-cost US per call: a combine offloaded elsewhere) or\n"
           "                    spin-sum (spins US per call: compute-bound)\n"
           "  --kind K          the collective: reduce (default: the root gets the\n"
           "                    fold), allreduce (every rank gets it), reduce-scatter\n"
           "                    (rank r gets part r of it), scan (rank r gets the fold of\n"
           "                    ranks 0..r) or exscan (of ranks 0..r-1; rank 0's buffer\n"
           "                    must stay untouched)\n"
           "  --allreduce       the same as --kind allreduce (its older spelling)\n"
           "  --root R          rank that gets a reduce's result (default 0; refused with\n"
           "                    another --kind)\n"
           "  --segment BYTES   cut the buffer into segments of about BYTES (default:\n"
           "                    the algorithm's choice)\n"
           "  --iters I         timed iterations (default 10); --warmup W untimed (1)\n"
           "  --profile FILE    the cost model from treduce calibrate --out FILE\n"
           "  --costs FILE      heterogeneous costs of these ranks for this call (seconds:\n"
           "                    d[i][j] sends the whole buffer, c[i] combines it; a file\n"
           "                    of treduce costs or calibrate --matrix): hetero-greedy and\n"
           "                    hetero-exact plan for them, every prediction uses them\n"
           "  --d D --c C       the planners' cost model in seconds (default: measured\n"
           "                    now: latency and bandwidth by ping-pong, the combine by\n"
           "                    timing the operator); --latency L its per-message part,\n"
           "                    --flight F the part of L a message spends in flight\n"
           "                    (a rank may take its next message meanwhile),\n"
           "                    --parallelism K how many ranks run at once (fewer\n"
           "                    cores than ranks): each prediction then adds the part\n"
           "                    of the plan's work that K ranks cannot run at once\n"
           "                    (docs/RUNTIME.md; default 0: not modelled; measured\n"
           "                    with the rest)\n"
           "  --timeout S       timeout of every wait in seconds (default 30)\n"
           "  --inject-delay US tests: a random delay below US microseconds before each\n"
           "                    send (threads)\n"
           "  --dead-rank R     tests: rank R dies (threads: takes no part in the calls;\n"
           "                    mpi: the process kills itself at the first timed call)\n"
           "  --format F        text (default) or json (one object, from rank 0)\n\n"
           "JSON keys: algo (auto's choice when auto), wire (and transport, its older\n"
           "name), p, kind, count, type, op, bytes (count's), allreduce (whether the kind\n"
           "is allreduce), iters, median_us, min_us,\n"
           "predicted_us, verified, model {latency_us, flight_us, d_us, c_us,\n"
           "recv_combine_saving, parallelism, given}, with auto: chosen_by ('auto')\n"
           "and with --explain: candidates [{algo, predicted_us}, with --tune and\n"
           "when timed: measured_us].\n"
           "Exit status: 0 verified, 1 failure or wrong result, 2 bad usage or input.\n");
}

/* --parts N0,N1,...: each a whole number >= 0; count becomes the largest. */
static int take_parts(const char *cmd, const char *list, cli_run_args *a)
{
    size_t n = 1;
    for (const char *c = list; *c; c++)
        n += *c == ',';
    free(a->parts);
    if (!(a->parts = malloc(n * sizeof *a->parts)))
        return cli_usage_error(cmd, "out of memory for --parts");
    a->nparts = 0;
    a->count = 0;
    for (const char *at = list;; at++) {
        char item[32];
        size_t len = strcspn(at, ",");
        snprintf(item, sizeof item, "%.*s", (int)(len < sizeof item ? len : sizeof item - 1),
                 at);
        if (!cli_int(cmd, "--parts", item, &a->parts[a->nparts]))
            return CLI_USAGE;
        if (a->parts[a->nparts] < 0)
            return cli_usage_error(cmd, "invalid --parts %s: part %lld is %lld, must be >= 0",
                                   list, (long long)a->nparts, (long long)a->parts[a->nparts]);
        if (a->parts[a->nparts] > a->count)
            a->count = a->parts[a->nparts];
        a->nparts++;
        at += len;
        if (!*at)
            break;
    }
    return CLI_OK;
}

/* One option (cli_parse_options' take). */
static int take_option(int opt, void *ctx)
{
    cli_run_args *a = ctx;
    const char *cmd = "run";
    switch (opt) {
    case 'a': a->algo = optarg; return CLI_OK;
    case 'T': a->wire = optarg; return CLI_OK;
    case 'p': return cli_int(cmd, "-p", optarg, &a->p) ? CLI_OK : CLI_USAGE;
    case 'm': a->count_set = true;
              return cli_int(cmd, "--count", optarg, &a->count) ? CLI_OK : CLI_USAGE;
    case 't': a->type = optarg; return CLI_OK;
    case 'o': a->op = optarg; return CLI_OK;
    case 'r': a->kind.root_set = true;
              return cli_int(cmd, "--root", optarg, &a->root) ? CLI_OK : CLI_USAGE;
    case 'A': return cli_take_kind(cmd, "allreduce", &a->kind);
    case 'Q': return cli_take_kind(cmd, optarg, &a->kind);
    case 's': return cli_int(cmd, "--segment", optarg, &a->segment) ? CLI_OK : CLI_USAGE;
    case 'i': return cli_int(cmd, "--iters", optarg, &a->iters) ? CLI_OK : CLI_USAGE;
    case 'w': return cli_int(cmd, "--warmup", optarg, &a->warmup) ? CLI_OK : CLI_USAGE;
    case 'd': a->model_set = true; return cli_real(cmd, "--d", optarg, &a->d) ? CLI_OK : CLI_USAGE;
    case 'c': a->model_set = true; return cli_real(cmd, "--c", optarg, &a->c) ? CLI_OK : CLI_USAGE;
    case 'l': return cli_real(cmd, "--latency", optarg, &a->latency) ? CLI_OK : CLI_USAGE;
    case 'L': return cli_real(cmd, "--flight", optarg, &a->flight) ? CLI_OK : CLI_USAGE;
    case 'k': return cli_real(cmd, "--parallelism", optarg, &a->parallelism) ? CLI_OK : CLI_USAGE;
    case 'K': return cli_int(cmd, "--K", optarg, &a->K) ? CLI_OK : CLI_USAGE;
    case 'x': return cli_real(cmd, "--timeout", optarg, &a->timeout) ? CLI_OK : CLI_USAGE;
    case 'y': return cli_real(cmd, "--inject-delay", optarg, &a->delay_us) ? CLI_OK : CLI_USAGE;
    case 'z': return cli_int(cmd, "--dead-rank", optarg, &a->dead_rank) ? CLI_OK : CLI_USAGE;
    case 'P': {
        trd_status st = trd_profile_load(optarg, &a->profile, &a->profile_meta);
        a->profile_path = optarg;
        return st == TRD_OK ? CLI_OK : cli_lib_error(cmd, st);
    }
    case 'H': a->costs_path = optarg; return CLI_OK;
    case 'E': a->explain = true; return CLI_OK;
    case 'u': return cli_int(cmd, "--tune", optarg, &a->tune) ? CLI_OK : CLI_USAGE;
    case 'C': return cli_real("run", "--op-cost", optarg, &a->op_cost_us) ? CLI_OK : CLI_USAGE;
    case 'R': a->reproducible = true; return CLI_OK;
    case 'Z': return take_parts(cmd, optarg, a);
    case 'f':
        if (strcmp(optarg, "text") && strcmp(optarg, "json"))
            return cli_usage_error(cmd, "invalid --format '%s': text or json", optarg);
        a->json = !strcmp(optarg, "json");
        return CLI_OK;
    default:
        return cli_usage_error(cmd, "unknown option");
    }
}

/* A profile describes one wire and one operator on one type: applied
 * to another it predicts another machine.  (Another rank count only
 * warns, cli_run_report: latency and bandwidth are still this machine's.) */
static int check_profile(const cli_run_args *a)
{
    const trd_profile_meta *m = &a->profile_meta;
    bool typed = strcmp(a->op, "matrix") && strcmp(a->op, "interval") &&
                 !cli_costly_name(a->op); /* these ignore --type */
    if (!a->profile_path)
        return CLI_OK;
    if (a->model_set)
        return cli_usage_error("run", "give --profile or --d/--c, not both");
    if (strcmp(m->wire, a->wire))
        return cli_usage_error("run", "profile %s was measured over %s, this run is over %s "
                               "(measure one: treduce calibrate --wire %s --out FILE)",
                               a->profile_path, m->wire, a->wire, a->wire);
    if (strcmp(m->op, a->op) || (typed && strcmp(m->type, a->type)))
        return cli_usage_error("run", "profile %s was measured with --op %s --type %s, this "
                               "run reduces --op %s --type %s (measure one: treduce calibrate "
                               "--op %s --type %s --out FILE)", a->profile_path, m->op,
                               m->type, a->op, a->type, a->op, a->type);
    return CLI_OK;
}

/* Bytes per element of the run's operator; 0 when it cannot be made
 * (the run says why: under MPI on rank 0 only). */
static size_t elem_size(const cli_run_args *a)
{
    trd_op *op = NULL;
    if (cli_run_make_op(a, &op) != TRD_OK)
        return 0;
    size_t elem = trd_op_elem_size(op);
    trd_op_free(op);
    return elem;
}

/* A rank's input of a run of p ranks (count elements, p times that for a
 * reduce-scatter), in bytes; false when it, or the buffers of `ranks`
 * ranks, overflow. */
static bool buffer_bytes(const cli_run_args *a, size_t elem, int64_t ranks, int64_t p,
                         size_t *bytes)
{
    uint64_t count = (uint64_t)a->count;
    if (a->kind.coll == TRD_COLL_REDUCE_SCATTER &&
        __builtin_mul_overflow(count, (uint64_t)p, &count))
        return false;
    return !__builtin_mul_overflow(count, (uint64_t)elem, bytes) &&
           *bytes <= SIZE_MAX / 4 / (size_t)(ranks + 1);
}

int cli_run_check_memory(const cli_run_args *a, int64_t ranks, int64_t p, bool threads,
                         char *why, size_t size)
{
    size_t bytes = 0, elem = elem_size(a);
    char text[512];
    if (elem == 0)
        return CLI_OK;
    if (!buffer_bytes(a, elem, ranks, p, &bytes)) { /* threads: check_memory said so */
        snprintf(text, sizeof text, "--count %lld is too large for a buffer (%lld ranks)",
                 (long long)a->count, (long long)p);
    } else {
        /* an input and an output buffer per rank, two more on rank 0 for
         * the check; over threads, each rank's thread and communicator */
        double buffers = (double)bytes * 2.0 * (double)(ranks + 1);
        double need = buffers + (threads ? RUN_RANK_BYTES * (double)ranks : 0.0);
        double have = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
        if (have <= 0 || need <= 0.8 * have)
            return CLI_OK;
        snprintf(text, sizeof text, "--count %lld is too large: %lld ranks on this machine "
                 "need %.1f GiB (%lld buffers of %zu bytes%s), more than 80%% of its %.1f GiB",
                 (long long)a->count, (long long)ranks, need / 1073741824.0,
                 (long long)(2 * (ranks + 1)), bytes,
                 threads ? ", a thread and a communicator each" : "", have / 1073741824.0);
    }
    if (why)
        snprintf(why, size, "%s", text);
    else
        fprintf(stderr, "treduce run: %s\n", text);
    return CLI_FAILED;
}

/* A size that overflows is bad input; one that does not fit in this
 * machine's memory is refused before any allocation (Linux overcommits:
 * malloc alone would not fail, the OOM killer would end the run).  Over
 * MPI this process alone here: run_mpi.c counts the ranks of its node
 * once the communicator knows them.  The library then checks what a call
 * allocates itself (scratch, plans) before allocating it. */
static int check_memory(const cli_run_args *a)
{
    size_t bytes = 0, elem = elem_size(a);
    if (elem == 0)
        return CLI_OK; /* the run says why (under MPI on rank 0 only) */
    const trd_wire_info *wire;
    trd_wire_find(a->wire, &wire); /* checked by check_args */
    int64_t ranks = wire->launched ? 1 : a->p; /* MPI: the size is not known yet */
    if (!buffer_bytes(a, elem, ranks, ranks, &bytes))
        return cli_usage_error("run", "invalid --count %lld: %lld elements of %zu bytes%s are "
                               "too large for a buffer", (long long)a->count,
                               (long long)a->count, elem,
                               a->kind.coll == TRD_COLL_REDUCE_SCATTER ? " times -p" : "");
    return cli_run_check_memory(a, ranks, ranks, !wire->launched, NULL, 0);
}

static int check_args(const cli_run_args *a)
{
    const char *cmd = "run";
    const trd_wire_info *wire;
    int st = cli_wire(cmd, a->wire, &wire);
    if (st != CLI_OK)
        return st;
    if ((st = cli_run_check_op(cmd, a->op)) != CLI_OK)
        return st;
    if (a->parts && (a->count_set || a->kind.coll != TRD_COLL_REDUCE_SCATTER))
        return cli_usage_error(cmd, "--parts gives a reduce-scatter's parts: it needs --kind "
                               "reduce-scatter and excludes --count");
    if (a->parts && !wire->launched && a->nparts != a->p)
        return cli_usage_error(cmd, "--parts gives %lld parts for -p %lld ranks: one per rank",
                               (long long)a->nparts, (long long)a->p);
    if (!a->count_set && !a->parts)
        return cli_usage_error(cmd, "--count is required");
    if (a->count < 0)
        return cli_usage_error(cmd, "invalid --count %lld: must be >= 0", (long long)a->count);
    if ((st = cli_wire_ranks(cmd, wire, a->p)) != CLI_OK ||
        (st = cli_kind_root(cmd, &a->kind, false)) != CLI_OK)
        return st;
    if (a->iters < 1 || a->iters > RUN_ITERS_MAX || a->warmup < 0 || a->warmup > RUN_ITERS_MAX)
        return cli_usage_error(cmd, "invalid --iters %lld or --warmup %lld: need 1 <= iters "
                               "<= %d and 0 <= warmup <= %d", (long long)a->iters,
                               (long long)a->warmup, RUN_ITERS_MAX, RUN_ITERS_MAX);
    if (a->tune < 0 || a->tune > TRD_TUNE_MAX)
        return cli_usage_error(cmd, "invalid --tune %lld: need 0 to %d candidates",
                               (long long)a->tune, TRD_TUNE_MAX);
    if (a->tune > 0 && strcmp(a->algo, "auto"))
        return cli_usage_error(cmd, "--tune chooses among auto's candidates: it needs "
                               "--algo auto");
    if (a->segment < 0)
        return cli_usage_error(cmd, "invalid --segment %lld: must be >= 0",
                               (long long)a->segment);
    if (!(a->op_cost_us >= 0) || a->op_cost_us > 1e7)
        return cli_usage_error(cmd, "invalid --op-cost %g: need 0 to 1e7 microseconds",
                               a->op_cost_us);
    if (!(a->timeout > 0))
        return cli_usage_error(cmd, "invalid --timeout %g: must be > 0", a->timeout);
    if (a->dead_rank < -1 || (!wire->launched && a->dead_rank >= a->p))
        return cli_usage_error(cmd, "invalid --dead-rank %lld: not a rank of -p %lld (0 to "
                               "%lld)", (long long)a->dead_rank, (long long)a->p,
                               (long long)a->p - 1);
    if (a->costs_path && (a->model_set || a->profile_path))
        return cli_usage_error(cmd, "--costs is the cost model: it excludes --d, --c and "
                               "--profile");
    st = check_profile(a);
    return st == CLI_OK ? check_memory(a) : st;
}

void cli_run_args_init(cli_run_args *a)
{
    *a = (cli_run_args){.algo = "binomial", .wire = "threads", .type = "double",
                        .op = "sum", .iters = 10, .warmup = 1, .d = 1, .c = 1, .K = 2,
                        .timeout = 30, .dead_rank = -1};
}

static int parse_args(int argc, char **argv, cli_run_args *a)
{
    static const struct option opts[] = {
        {"algo", required_argument, 0, 'a'},      {"transport", required_argument, 0, 'T'},
        {"wire", required_argument, 0, 'T'},
        {"count", required_argument, 0, 'm'},     {"type", required_argument, 0, 't'},
        {"op", required_argument, 0, 'o'},        {"root", required_argument, 0, 'r'},
        {"allreduce", no_argument, 0, 'A'},       {"kind", required_argument, 0, 'Q'},
        {"segment", required_argument, 0, 's'},
        {"iters", required_argument, 0, 'i'},     {"warmup", required_argument, 0, 'w'},
        {"d", required_argument, 0, 'd'},         {"c", required_argument, 0, 'c'},
        {"latency", required_argument, 0, 'l'},   {"flight", required_argument, 0, 'L'},
        {"K", required_argument, 0, 'K'},         {"parallelism", required_argument, 0, 'k'},
        {"timeout", required_argument, 0, 'x'},   {"inject-delay", required_argument, 0, 'y'},
        {"dead-rank", required_argument, 0, 'z'}, {"format", required_argument, 0, 'f'},
        {"profile", required_argument, 0, 'P'},   {"explain", no_argument, 0, 'E'},
        {"reproducible", no_argument, 0, 'R'},    {"op-cost", required_argument, 0, 'C'},
        {"tune", required_argument, 0, 'u'},      {"costs", required_argument, 0, 'H'},
        {"parts", required_argument, 0, 'Z'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    cli_run_args_init(a);
    int st = cli_parse_options("run", argc, argv, opts, help, take_option, a);
    return st != CLI_OK ? st : check_args(a);
}

static int run_parsed(cli_run_args *a)
{
    trd_status ts = a->costs_path ? trd_costs_read(&a->costs, a->costs_path) : TRD_OK;
    if (ts != TRD_OK)
        return cli_lib_error("run", ts);
    const trd_wire_info *wire;
    trd_wire_find(a->wire, &wire); /* checked by parse_args */
    int st = wire->launched ? cli_run_mpi(a, wire) : cli_run_threads(a);
    trd_costs_free(a->costs);
    return st;
}

int cmd_run(int argc, char **argv)
{
    cli_run_args a;
    int st = parse_args(argc, argv, &a);
    st = st != CLI_OK ? (st < 0 ? CLI_OK : st) : run_parsed(&a);
    free(a.parts);
    return st;
}
