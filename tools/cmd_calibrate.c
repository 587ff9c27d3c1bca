/* cmd_calibrate.c: `treduce calibrate`: measures this platform's cost
 * profile (trd_comm_profile: latency, time per byte, combine time per
 * element of an operator) over the threads wire or MPI, prints it and
 * writes it as JSON for `treduce run --profile` (docs/RUNTIME.md). */
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate_matrix.h"
#include "ranks.h"

static void help(void)
{
    printf("usage: treduce calibrate [--wire threads|mpi] [-p P] [--op OP] [--type T]\n"
           "                         [--out FILE] [--format text|json]\n"
           "       treduce calibrate --matrix [--count N] [--costs-out FILE]\n"
           "                         [--platform-out FILE] [--unit-bytes B] [same options]\n\n"
           "Measures the cost model of this platform: one-way message times from 0 B to\n"
           "8 MiB between ranks 0 and 1 (median of ping-pongs, buffers cycled so large\n"
           "messages come from memory) fitted to latency + bytes x time per byte; the\n"
           "time rank 0 spends per message of a burst from rank 1 (the rest of the\n"
           "latency is in flight: flight_s, which lets a rank take its next message\n"
           "while the last is on its way); and\n"
           "combines of 1 Ki to 1 Mi elements of OP fitted to fixed + elements x time per\n"
           "element (least squares); and the parallelism: P if an integer loop runs on\n"
           "all ranks at once about as fast as alone (a core each), else P times a\n"
           "combine's time alone over its time when all P ranks combine at once (auto\n"
           "then adds the work the platform cannot run at once to its predictions); and\n"
           "the memory bandwidth of 1 to min(P, cores) ranks streaming a[i] += b[i] at\n"
           "once (auto charges plans whose transfers and combines share the bus).\n"
           "Under MPI: mpirun -np P treduce calibrate --wire mpi; when all ranks\n"
           "share a node, messages of at most 16 KiB go through shared memory\n"
           "(TRD_MPI_SHM_MAX sets the limit, 0: none) and the profile's line is\n"
           "fitted through both regimes.\n\n"
           "  --wire W       threads (default) or mpi\n"
           "                 (--transport W: the same, its older spelling)\n"
           "  -p P           ranks for threads (default 2)\n"
           "  --op OP        operator (default sum; matrix, interval, sleep-sum and\n"
           "                 spin-sum too, the last two with --op-cost US per call)\n"
           "  --type T       element type (default double)\n"
           "  --out FILE     also write the profile as JSON (for treduce run --profile)\n"
           "  --format F     text (default) or json on stdout\n\n"
           "--matrix measures every ordered pair of ranks instead, one pair at a time\n"
           "(latency, bandwidth), and each rank's combine speed (docs/TESTBED.md):\n"
           "  --count N          the cost file is for messages of N elements (default\n"
           "                     131072): d[i][j] = latency + bytes / bandwidth\n"
           "  --costs-out FILE   write the cost file (treduce simulate --costs)\n"
           "  --platform-out FILE  write a platform JSON: time unit 1 s, message unit B\n"
           "  --unit-bytes B     bytes per unit (default: the testbed's, else 1e6)\n");
}

typedef struct calib_ctx {
    const trd_op *op;
    size_t elem_size;
    trd_profile profile;
    int64_t p;
    cli_shm shm; /* the rings' limit and its probe */
    trd_status status;
    char error[512];
} calib_ctx;

/* Errors stay in the context (reported by rank 0, MPI or threads alike). */
static trd_status measure(trd_comm *comm, void *arg)
{
    calib_ctx *c = arg;
    c->p = trd_comm_size(comm);
    c->shm = cli_shm_of(comm);
    c->status = trd_comm_profile(comm, c->op, &c->profile);
    if (c->status != TRD_OK)
        snprintf(c->error, sizeof c->error, "%s", trd_errmsg());
    return TRD_OK;
}

/* The profile's file (trd_profile_save) and, on stdout, the same keys
 * and the shared-memory probe. */
static json_t *profile_json(const cli_run_args *a, const calib_ctx *c, cli_finite *f)
{
    const trd_profile *pr = &c->profile;
    json_t *curve = json_array();
    for (int32_t k = 0; k < pr->streams; k++)
        json_array_append_new(curve, cli_json_real(f, "stream_bandwidth_Bps", pr->stream_bw[k]));
    return json_pack("{s:i, s:s, s:s, s:I, s:s, s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
                     "s:o, s:o, s:I, s:o}", "treduce_profile", 2, "wire", a->wire, "transport",
                     a->wire, "p", (json_int_t)c->p, "op", a->op, "type", a->type, "elem_size",
                     (json_int_t)c->elem_size, "latency_s", cli_json_real(f, "latency_s",
                                                                          pr->latency),
                     "flight_s", cli_json_real(f, "flight_s", pr->flight), "seconds_per_byte",
                     cli_json_real(f, "seconds_per_byte", pr->per_byte), "bandwidth_GBps",
                     cli_json_real(f, "bandwidth_GBps",
                                   pr->per_byte > 0 ? 1e-9 / pr->per_byte : 0.0),
                     "combine_fixed_s", cli_json_real(f, "combine_fixed_s", pr->combine_fixed),
                     "combine_seconds_per_element",
                     cli_json_real(f, "combine_seconds_per_element", pr->per_element),
                     "parallelism", cli_json_real(f, "parallelism", pr->parallelism),
                     "recv_combine_saving",
                     cli_json_real(f, "recv_combine_saving", pr->recv_combine_saving),
                     "stream_bandwidth_Bps", curve, "shm_max_bytes", (json_int_t)c->shm.max, "shm_probe_us",
                     cli_shm_probe_json(&c->shm));
}

static int save(const cli_run_args *a, const calib_ctx *c, const char *out)
{
    trd_profile_meta m = {.p = (int32_t)c->p, .elem_size = c->elem_size, .shm_max = c->shm.max};
    snprintf(m.wire, sizeof m.wire, "%s", a->wire);
    snprintf(m.op, sizeof m.op, "%s", a->op);
    snprintf(m.type, sizeof m.type, "%s", a->type);
    cli_out file;
    if (!cli_out_begin("calibrate", &file, NULL, out))
        return CLI_FAILED;
    return cli_out_finish("calibrate", &file, trd_profile_save(file.tmp, &c->profile, &m));
}

static int report(const cli_run_args *a, const calib_ctx *c, const char *out)
{
    const trd_profile *pr = &c->profile;
    int64_t p = c->p;
    cli_finite f = {0};
    json_t *j = profile_json(a, c, &f);
    int st = cli_finite_end("calibrate", &f, j);
    if (st == CLI_OK && out && (st = save(a, c, out)) != CLI_OK) {
        json_decref(j);
        return st;
    }
    if (a->json) {
        json_dumpf(j, stdout, JSON_INDENT(2));
        putchar('\n');
    } else if (st == CLI_OK) {
        printf("%s wire, %lld ranks, %s on %s\n", a->wire, (long long)p, a->op,
               a->type);
        printf("  transfer  latency %.3g us + %.3g ns per byte (%.2f GB/s)\n",
               1e6 * pr->latency, 1e9 * pr->per_byte,
               pr->per_byte > 0 ? 1e-9 / pr->per_byte : 0.0);
        printf("            of the latency, %.3g us in flight (a rank spends %.3g us per "
               "message)\n", 1e6 * pr->flight, 1e6 * (pr->latency - pr->flight));
        printf("            a message combined as it arrives saves %.0f%% of its time per byte\n",
               100 * pr->recv_combine_saving);
        if (c->shm.max >= INT_MAX)
            printf("            every message goes through shared memory\n");
        else if (c->shm.max) /* one line through two regimes: say so */
            printf("            messages of at most %zu bytes go through shared memory, larger "
                   "ones\n            through MPI: the line is fitted through both\n",
                   c->shm.max);
        cli_shm_probe_print(&c->shm, "            ");
        printf("  combine   %.3g us + %.3g ns per element\n", 1e6 * pr->combine_fixed,
               1e9 * pr->per_element);
        printf("  parallel  %.3g of %lld ranks run at once\n", pr->parallelism,
               (long long)p);
        printf("  memory   ");
        for (int32_t k = 0; k < pr->streams; k++)
            printf(" %.2f", 1e-9 * pr->stream_bw[k]);
        printf(" GB/s with 1 to %d ranks streaming at once\n", (int)pr->streams);
        if (out)
            printf("  profile written to %s\n", out);
    }
    json_decref(j);
    return st;
}


int cmd_calibrate(int argc, char **argv)
{
    static const struct option opts[] = {
        {"transport", required_argument, 0, 'T'},
        {"wire", required_argument, 0, 'T'}, {"op", required_argument, 0, 'o'},
        {"type", required_argument, 0, 't'},      {"out", required_argument, 0, 'O'},
        {"format", required_argument, 0, 'f'},    {"help", no_argument, 0, 'h'},
        {"op-cost", required_argument, 0, 'C'},
        {"matrix", no_argument, 0, 'M'},          {"count", required_argument, 0, 'n'},
        {"costs-out", required_argument, 0, 'D'}, {"platform-out", required_argument, 0, 'P'},
        {"unit-bytes", required_argument, 0, 'u'},
        {0, 0, 0, 0}};
    cli_matrix_args mx;
    cli_matrix_args_init(&mx);
    cli_run_args a;
    cli_run_args_init(&a);
    a.p = 2;
    const char *out = NULL;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "p:h", opts, NULL)) != -1) {
        switch (opt) {
        case 'h': help(); return CLI_OK;
        case 'T': a.wire = optarg; break;
        case 'p': if (!cli_int("calibrate", "-p", optarg, &a.p)) return CLI_USAGE; break;
        case 'o': a.op = optarg; break;
        case 't': a.type = optarg; break;
        case 'O': out = optarg; break;
        case 'M': mx.matrix = true; break;
        case 'n': if (!cli_int("calibrate", "--count", optarg, &mx.count)) return CLI_USAGE; break;
        case 'D': mx.costs_out = optarg; break;
        case 'P': mx.platform_out = optarg; break;
        case 'u':
            if (!cli_real("calibrate", "--unit-bytes", optarg, &mx.unit_bytes) ||
                !(mx.unit_bytes > 0))
                return cli_usage_error("calibrate", "invalid --unit-bytes '%s'", optarg);
            break;
        case 'C':
            if (!cli_real("calibrate", "--op-cost", optarg, &a.op_cost_us) ||
                !(a.op_cost_us >= 0 && a.op_cost_us <= 1e7))
                return cli_usage_error("calibrate", "invalid --op-cost '%s': need 0 to 1e7 "
                                       "microseconds", optarg);
            break;
        case 'f':
            if (strcmp(optarg, "text") && strcmp(optarg, "json"))
                return cli_usage_error("calibrate", "invalid --format '%s'", optarg);
            a.json = !strcmp(optarg, "json");
            break;
        default:
            return cli_usage_error("calibrate", "unknown or incomplete option '%s'",
                                   argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage_error("calibrate", "unexpected argument '%s'", argv[optind]);
    const trd_wire_info *wire;
    int bad = cli_wire("calibrate", a.wire, &wire);
    if (bad == CLI_OK)
        bad = cli_run_check_op("calibrate", a.op);
    if (bad != CLI_OK)
        return bad;
    if (!wire->launched && (a.p < 2 || a.p > wire->p_max))
        return cli_usage_error("calibrate", "invalid -p %lld: need 2 <= p <= 4096 (the "
                               "ping-pong takes two ranks)", (long long)a.p);
    if (!mx.matrix && (mx.costs_out || mx.platform_out))
        return cli_usage_error("calibrate", "--costs-out and --platform-out need --matrix");
    if (mx.matrix)
        return cli_calibrate_matrix(&a, wire, &mx);
    trd_op *op = NULL;
    trd_status st = cli_run_make_op(&a, &op);
    if (st != TRD_OK)
        return cli_lib_error("calibrate", st);
    calib_ctx ctx = {.op = op, .elem_size = trd_op_elem_size(op)};
    int rank = 0;
    st = cli_ranks_run(wire, (int32_t)a.p, a.timeout, measure, &ctx, sizeof ctx, NULL,
                       &rank);
    trd_op_free(op);
    if (st == TRD_EUNSUPPORTED && !trd_mpi_available()) {
        fprintf(stderr, "treduce calibrate: this treduce was built without MPI\n");
        return CLI_FAILED;
    }
    if (st == TRD_OK && ctx.status != TRD_OK) {
        fprintf(stderr, "treduce calibrate: %s\n", ctx.error);
        return CLI_FAILED;
    }
    if (st != TRD_OK)
        return cli_lib_error("calibrate", st);
    return rank == 0 ? report(&a, &ctx, out) : CLI_OK;
}
