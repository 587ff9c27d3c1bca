/* cmd_bench.c: `treduce bench`: every treduce algorithm, auto and a
 * baseline, timed on real data over a range of sizes (docs/BENCHMARKS.md).
 * Under MPI the baseline is the linked MPI library's own collective of
 * the kind (MPI_Reduce, MPI_Allreduce, ...) measured in the same run; over threads, the
 * memory-bandwidth bound (bench_threads.c says why it is one).  auto runs
 * what the model picks under a profile of the platform measured once at
 * the start (trd_comm_profile), and every point carries the model's
 * prediction, so the run also says how well the model predicts.  Results
 * are checked against the rank-order fold of the inputs (bench_data.c). */
#include "bench_harness.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
    printf("usage: treduce bench [--wire threads|mpi] [-p P] [--sizes LIST]\n"
           "         [--ops LIST] [--kinds LIST] [--algos LIST|all] [--iters I]\n"
           "         [--op-cost US] [--tune N] [--out DIR] [--timeout S]\n"
           "         [--format text|json]\n"
           "mpirun -np P treduce bench --wire mpi ...\n\n"
           "Times collectives of doubles (reduce and allreduce; --kinds adds\n"
           "reduce-scatter, scan, exscan) over a range of sizes with every\n"
           "algorithm of 'treduce list' that runs the kind, with auto (the algorithm the\n"
           "model predicts fastest under a profile measured once at the start; with\n"
           "--tune, the fastest of the model's best timed on its first calls), and with\n"
           "a baseline: under MPI, the MPI library's own collective (MPI_Reduce,\n"
           "MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Scan, MPI_Exscan);\n"
           "over threads, the memory-bandwidth bound (the bytes a reduction must read\n"
           "and write over the bandwidth of p ranks streaming a[i] += b[i] at once,\n"
           "best of several; for the sum only).  Each series: a warm-up call, then\n"
           "repetitions of barrier, time, call, time; a repetition's time is the\n"
           "slowest rank's; the median is reported.  Every result is checked against\n"
           "the rank-order fold of the inputs.\n\n"
           "  --wire W        threads (default: P threads) or mpi (P is the MPI size)\n"
           "                  (--transport W: the same, its older spelling)\n"
           "  -p P            ranks for threads (default 2)\n"
           "  --sizes LIST    bytes per rank, multiples of 8, with optional K, M, G\n"
           "                  (x1024) suffixes, e.g. 8,1K,64K,1M,16M (default: 8 B x 4^k\n"
           "                  up to 8 MiB, and 16 MiB)\n"
           "  --ops LIST      sum (default), costly (sleep-sum: sleeps US per call, a\n"
           "                  combine offloaded elsewhere), costly-spin (spin-sum: spins\n"
           "                  US per call, compute-bound)\n"
           "  --kinds LIST    the collectives, of reduce (to rank 0), allreduce,\n"
           "                  reduce-scatter (a size is the part each rank gets: its\n"
           "                  input is P parts), scan, exscan (default reduce,allreduce)\n"
           "  --algos LIST    algorithms timed besides auto (default all; each in the\n"
           "                  kinds 'treduce list' names for it)\n"
           "  --iters I       repetitions per series (default: adaptive, about 0.2 s per\n"
           "                  series, between 5 and 200)\n"
           "  --op-cost US    microseconds per call of the costly operators (default 200)\n"
           "  --tune N        auto times the model's N best candidates, 6 calls each\n"
           "                  (the bench's untimed warm-ups), and keeps the fastest\n"
           "                  (default 4; 0: the model's first, untimed; at most 8)\n"
           "  --out DIR       folder of bench.csv, ratios.csv and the PNG figures\n"
           "                  (default bench-out)\n"
           "  --timeout S     timeout of every wait in seconds (default 120)\n"
           "  --format F      text (default) or json summary on stdout (rank 0)\n\n"
           "Files: bench.csv (wire,p,kind,op,bytes,algo,median_us,min_us,\n"
           "predicted_us,verified; algo is a registered name, auto, mpi or bound),\n"
           "ratios.csv (auto over the baseline per point; model_algo: the model's own\n"
           "first choice), time-<kind>-<op>.png,\n"
           "ratio-<op>.png.  Exit status: 0 verified, 1 failure or a wrong result,\n"
           "2 bad usage or input.\n");
}

/* One option (cli_parse_options' take). */
static int take_option(int opt, void *ctx)
{
    bench_args *a = ctx;
    const char *cmd = "bench";
    switch (opt) {
    case 'T': a->wire_name = optarg; return CLI_OK;
    case 'p': return cli_int(cmd, "-p", optarg, &a->p) ? CLI_OK : CLI_USAGE;
    case 's': return bench_parse_sizes(optarg, a) ? CLI_OK : CLI_USAGE;
    case 'o': return bench_parse_ops(optarg, a) ? CLI_OK : CLI_USAGE;
    case 'k': return bench_parse_kinds(optarg, a) ? CLI_OK : CLI_USAGE;
    case 'a': return bench_parse_algos(optarg, a) ? CLI_OK : CLI_USAGE;
    case 'i':
        if (!cli_int(cmd, "--iters", optarg, &a->iters))
            return CLI_USAGE;
        if (a->iters < 1 || a->iters > 100000)
            return cli_usage_error(cmd, "invalid --iters %lld: need 1 to 100000 (leave it out "
                                   "for adaptive repetitions)", (long long)a->iters);
        return CLI_OK;
    case 'C': return cli_real(cmd, "--op-cost", optarg, &a->op_cost_us) ? CLI_OK : CLI_USAGE;
    case 'u':
        if (!cli_int(cmd, "--tune", optarg, &a->tune))
            return CLI_USAGE;
        if (a->tune < 0 || a->tune > TRD_TUNE_MAX)
            return cli_usage_error(cmd, "invalid --tune %lld: need 0 to %d candidates",
                                   (long long)a->tune, TRD_TUNE_MAX);
        return CLI_OK;
    case 'O': a->out = optarg; return CLI_OK;
    case 'x': return cli_real(cmd, "--timeout", optarg, &a->timeout) ? CLI_OK : CLI_USAGE;
    case 'f':
        if (strcmp(optarg, "text") && strcmp(optarg, "json"))
            return cli_usage_error(cmd, "invalid --format '%s': text or json", optarg);
        a->json = !strcmp(optarg, "json");
        return CLI_OK;
    default:
        return cli_usage_error(cmd, "unknown option");
    }
}

static int by_size(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* Checks what the options cannot check alone; sorts the sizes (the
 * figures draw them in order) and drops repeated ones. */
static int check_args(bench_args *a)
{
    const char *cmd = "bench";
    const trd_wire_info *wire;
    int st = cli_wire(cmd, a->wire_name, &wire);
    if (st == CLI_OK)
        st = cli_wire_ranks(cmd, wire, a->p);
    if (st != CLI_OK)
        return st;
    a->wire_name = wire->name;
    a->wire = wire;
    if (!(a->op_cost_us >= 0) || a->op_cost_us > 1e7)
        return cli_usage_error(cmd, "invalid --op-cost %g: need 0 to 1e7 microseconds",
                               a->op_cost_us);
    if (!(a->timeout > 0))
        return cli_usage_error(cmd, "invalid --timeout %g: must be > 0", a->timeout);
    bool any = false;
    for (int k = 0; k < BENCH_KINDS; k++)
        any = any || a->kind[k];
    if (!any)
        return cli_usage_error(cmd, "--kinds names no kind: reduce, allreduce, "
                               "reduce-scatter, scan or exscan");
    qsort(a->sizes, a->nsizes, sizeof a->sizes[0], by_size);
    size_t n = 0;
    for (size_t i = 0; i < a->nsizes; i++)
        if (n == 0 || a->sizes[i] != a->sizes[n - 1])
            a->sizes[n++] = a->sizes[i];
    a->nsizes = n;
    if (!wire->launched)
        bench_drop_unfit(a, true); /* MPI: once the size is known (bench_mpi.c) */
    return CLI_OK;
}

static void defaults(bench_args *a, int argc, char **argv)
{
    memset(a, 0, sizeof *a);
    a->wire_name = "threads";
    a->out = "bench-out";
    a->p = 2;
    a->op_cost_us = 200;
    a->tune = 4;
    a->timeout = 120;
    a->kind[TRD_COLL_REDUCE] = a->kind[TRD_COLL_ALLREDUCE] = true;
    a->ops[a->nops++] = "sum";
    bench_default_sizes(a);
    bench_parse_algos("all", a);
    size_t len = (size_t)snprintf(a->command, sizeof a->command, "treduce");
    for (int i = 0; i < argc && len < sizeof a->command; i++)
        len += (size_t)snprintf(a->command + len, sizeof a->command - len, " %s", argv[i]);
}

static int parse_args(int argc, char **argv, bench_args *a)
{
    static const struct option opts[] = {
        {"wire", required_argument, 0, 'T'},      {"transport", required_argument, 0, 'T'},
        {"sizes", required_argument, 0, 's'},
        {"ops", required_argument, 0, 'o'},       {"kinds", required_argument, 0, 'k'},
        {"algos", required_argument, 0, 'a'},     {"iters", required_argument, 0, 'i'},
        {"op-cost", required_argument, 0, 'C'},   {"out", required_argument, 0, 'O'},
        {"timeout", required_argument, 0, 'x'},   {"format", required_argument, 0, 'f'},
        {"tune", required_argument, 0, 'u'},      {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    defaults(a, argc, argv);
    int st = cli_parse_options("bench", argc, argv, opts, help, take_option, a);
    return st != CLI_OK ? st : check_args(a);
}

/* Under a launched wire (MPI) the baseline is the MPI library's own. */
static int bench_on_wire(bench_args *a)
{
    return a->wire->launched ? bench_mpi(a) : bench_threads(a);
}

int cmd_bench(int argc, char **argv)
{
    bench_args *a = malloc(sizeof *a);
    if (!a)
        return CLI_FAILED;
    int st = parse_args(argc, argv, a);
    if (st == CLI_OK)
        st = bench_on_wire(a);
    else if (st < 0)
        st = CLI_OK;
    free(a);
    return st;
}
