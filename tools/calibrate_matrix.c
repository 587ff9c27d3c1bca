/* calibrate_matrix.c: `treduce calibrate --matrix`: latency and bandwidth
 * of every ordered pair of ranks and each rank's combine speed
 * (trd_comm_profile_pairs), written
 *   - as a heterogeneous cost file for a message of --count elements (the
 *     format `treduce simulate --costs` reads, docs/SIMULATION.md):
 *     d[i][j] = latency + bytes x seconds per byte, c[i] = the combine of
 *     --count elements on rank i;
 *   - as a platform JSON (docs/PLATFORMS.md) with time unit 1 s and message
 *     unit --unit-bytes: link i -> j of cost unit x seconds per byte, node
 *     i of speed 1 / (its combine of a unit's elements).
 * The ranks of a launched wire (processes) are named after the testbed
 * node they run on (TRD_TESTBED_NODE, set by `treduce testbed run`), else
 * after their MPI processor name, threads after their rank; "#rank" is
 * added where several ranks share one.  Every rank gets every name through
 * the communicator (trd_comm_allgather), as it gets the measurements. */
#include "calibrate_matrix.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "ranks.h"

#ifdef TRD_HAVE_MPI
#include <mpi.h>
#endif

static const char *const cmd = "calibrate";
#define NAME_MAX_LEN 64

typedef struct matrix_ctx {
    const trd_op *op;
    trd_pair_profile profile;
    char (*names)[NAME_MAX_LEN]; /* p names, filled on rank 0 */
    trd_status status;
    char error[512];
} matrix_ctx;

void cli_matrix_args_init(cli_matrix_args *m)
{
    const char *unit = getenv("TRD_TESTBED_UNIT_BYTES");
    *m = (cli_matrix_args){.count = 131072, .unit_bytes = unit ? atof(unit) : 1e6};
    if (!(m->unit_bytes > 0))
        m->unit_bytes = 1e6;
}

/* This rank's own name (before making names unique): a process's host, a
 * thread's rank.  A launched wire's runtime is MPI's
 * (trd_wire_info.launched). */
static void own_name(trd_comm *comm, char *buf)
{
    const char *node = getenv("TRD_TESTBED_NODE");
    snprintf(buf, NAME_MAX_LEN, "r%d", (int)trd_comm_rank(comm));
    if (!cli_comm_wire(comm)->launched)
        return;
#ifdef TRD_HAVE_MPI
    int len = 0;
    char host[MPI_MAX_PROCESSOR_NAME];
    if (MPI_Get_processor_name(host, &len) == 0)
        snprintf(buf, NAME_MAX_LEN, "%.63s", host);
#endif
    if (node)
        snprintf(buf, NAME_MAX_LEN, "%.63s", node);
}

/* Every rank's name on every rank, "#rank" added to each of the names
 * that several ranks have (all of them: found before any is changed). */
static trd_status gather_names(trd_comm *comm, char (*names)[NAME_MAX_LEN])
{
    int32_t p = trd_comm_size(comm);
    char mine[NAME_MAX_LEN] = {0};
    own_name(comm, mine);
    trd_status st = trd_comm_allgather(comm, mine, names, NAME_MAX_LEN);
    bool *shared = st == TRD_OK ? calloc((size_t)p, sizeof *shared) : NULL;
    if (st == TRD_OK && !shared)
        return TRD_ENOMEM;
    for (int32_t r = 0; st == TRD_OK && r < p; r++)
        for (int32_t s = 0; s < p; s++)
            shared[r] = shared[r] || (s != r && !strcmp(names[r], names[s]));
    for (int32_t r = 0; st == TRD_OK && r < p; r++)
        if (shared[r]) {
            char base[NAME_MAX_LEN - 12];
            snprintf(base, sizeof base, "%s", names[r]);
            snprintf(names[r], NAME_MAX_LEN, "%s#%d", base, (int)r);
        }
    free(shared);
    return st;
}

/* Errors stay in the context (reported by rank 0, MPI or threads alike). */
static trd_status measure(trd_comm *comm, void *arg)
{
    matrix_ctx *c = arg;
    c->status = trd_comm_profile_pairs(comm, c->op, &c->profile);
    if (c->status == TRD_OK)
        c->names = calloc((size_t)trd_comm_size(comm), NAME_MAX_LEN);
    if (c->status == TRD_OK && c->names)
        c->status = gather_names(comm, c->names);
    if (c->status != TRD_OK)
        snprintf(c->error, sizeof c->error, "%s",
                 c->status == TRD_ENOMEM ? "out of memory" : trd_errmsg());
    return TRD_OK;
}

/* d[i][j] for a message of `bytes`. */
static double transfer(const trd_pair_profile *pr, int32_t i, int32_t j, double bytes)
{
    size_t k = (size_t)i * (size_t)pr->p + (size_t)j;
    return i == j ? 0.0 : pr->latency[k] + bytes * pr->per_byte[k];
}

static int write_costs(const cli_run_args *a, const cli_matrix_args *m, const matrix_ctx *c,
                       size_t elem)
{
    const trd_pair_profile *pr = &c->profile;
    cli_out out;
    FILE *f = cli_out_open(cmd, &out, NULL, m->costs_out);
    if (!f)
        return CLI_FAILED;
    double bytes = (double)m->count * (double)elem;
    fprintf(f, "# treduce calibrate --matrix: %d ranks over %s, %s on %s, a message of %lld "
            "elements (%.0f bytes)\n# d[i][j] = latency + bytes x seconds per byte (i sends "
            "to j), c[i] = one combine on rank i; seconds\n# ranks:", (int)pr->p, a->wire,
            a->op, a->type, (long long)m->count, bytes);
    for (int32_t i = 0; i < pr->p; i++)
        fprintf(f, " %d=%s", (int)i, c->names[i]);
    fprintf(f, "\nn %d\n", (int)pr->p);
    for (int32_t i = 0; i < pr->p; i++)
        for (int32_t j = 0; j < pr->p; j++)
            fprintf(f, "%.9g%c", transfer(pr, i, j, bytes), j + 1 < pr->p ? ' ' : '\n');
    for (int32_t i = 0; i < pr->p; i++)
        fprintf(f, "%.9g%c", pr->combine_fixed[i] + (double)m->count * pr->per_element[i],
                i + 1 < pr->p ? ' ' : '\n');
    return cli_out_end(cmd, &out, true) ? CLI_OK : CLI_FAILED;
}

/* A positive time as the exact decimal the platform loader reads. */
static json_t *decimal(double seconds)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.6g", seconds > 1e-12 ? seconds : 1e-12);
    return json_string(buf);
}

static int write_platform(const cli_run_args *a, const cli_matrix_args *m, const matrix_ctx *c,
                          size_t elem)
{
    const trd_pair_profile *pr = &c->profile;
    json_t *nodes = json_array(), *links = json_array();
    double unit_elems = m->unit_bytes / (double)elem;
    for (int32_t i = 0; i < pr->p; i++) {
        double task = pr->combine_fixed[i] + unit_elems * pr->per_element[i];
        json_array_append_new(nodes, json_pack("{s:s, s:o}", "name", c->names[i], "speed",
                                               decimal(1.0 / (task > 1e-12 ? task : 1e-12))));
        for (int32_t j = 0; j < pr->p; j++)
            if (j != i)
                json_array_append_new(
                    links, json_pack("{s:s, s:s, s:o}", "from", c->names[i], "to", c->names[j],
                                     "cost", decimal(m->unit_bytes *
                                                     pr->per_byte[i * pr->p + j])));
    }
    char comment[256];
    snprintf(comment, sizeof comment, "treduce calibrate --matrix over %s: time unit 1 s, "
             "message unit %g bytes, a task combines a unit of %s on %s; latency left out",
             a->wire, m->unit_bytes, a->op, a->type);
    json_t *j = json_pack("{s:s, s:o, s:o}", "comment", comment, "nodes", nodes, "links", links);
    cli_out out;
    FILE *f = cli_out_open(cmd, &out, NULL, m->platform_out);
    bool ok = f && json_dumpf(j, f, JSON_INDENT(2)) == 0;
    json_decref(j);
    return f && cli_out_end(cmd, &out, ok) ? CLI_OK : CLI_FAILED;
}

/* A p x p table of f(i, j) as JSON rows. */
static json_t *table(const trd_pair_profile *pr, double (*f)(const trd_pair_profile *, size_t))
{
    json_t *rows = json_array();
    for (int32_t i = 0; i < pr->p; i++) {
        json_t *row = json_array();
        for (int32_t j = 0; j < pr->p; j++)
            json_array_append_new(row, json_real(f(pr, (size_t)i * (size_t)pr->p + (size_t)j)));
        json_array_append_new(rows, row);
    }
    return rows;
}

static double latency_of(const trd_pair_profile *pr, size_t k) { return pr->latency[k]; }
static double probe_of(const trd_pair_profile *pr, size_t k) { return pr->probe_bytes[k]; }
static double bandwidth_of(const trd_pair_profile *pr, size_t k)
{
    return pr->per_byte[k] > 0 ? 1.0 / pr->per_byte[k] : 0.0;
}

static json_t *vector(const double *v, int32_t p)
{
    json_t *a = json_array();
    for (int32_t i = 0; i < p; i++)
        json_array_append_new(a, json_real(v[i]));
    return a;
}

static void print_json(const cli_run_args *a, const matrix_ctx *c)
{
    const trd_pair_profile *pr = &c->profile;
    json_t *names = json_array();
    for (int32_t i = 0; i < pr->p; i++)
        json_array_append_new(names, json_string(c->names[i]));
    json_t *j = json_pack("{s:i, s:s, s:s, s:i, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o}",
                          "treduce_pairs", 1, "wire", a->wire, "transport", a->wire, "p",
                          (int)pr->p, "op",
                          a->op, "type", a->type, "nodes", names, "latency_s",
                          table(pr, latency_of), "bandwidth_Bps", table(pr, bandwidth_of),
                          "probe_bytes", table(pr, probe_of), "combine_fixed_s",
                          vector(pr->combine_fixed, pr->p), "combine_seconds_per_element",
                          vector(pr->per_element, pr->p));
    json_dumpf(j, stdout, JSON_INDENT(2));
    putchar('\n');
    json_decref(j);
}

static void print_text(const cli_run_args *a, const matrix_ctx *c)
{
    const trd_pair_profile *pr = &c->profile;
    printf("%d ranks over %s, one ordered pair at a time; %s on %s\n", (int)pr->p, a->wire,
           a->op, a->type);
    printf("bandwidth from row to column, Mbit/s (latency in us below it):\n%12s", "");
    for (int32_t j = 0; j < pr->p; j++)
        printf(" %10.10s", c->names[j]);
    putchar('\n');
    for (int32_t i = 0; i < pr->p; i++) {
        printf("%12.12s", c->names[i]);
        for (int32_t j = 0; j < pr->p; j++)
            printf(" %10.4g", i == j ? 0.0 : 8e-6 * bandwidth_of(pr, (size_t)(i * pr->p + j)));
        printf("\n%12s", "");
        for (int32_t j = 0; j < pr->p; j++)
            printf(" %10.4g", 1e6 * pr->latency[i * pr->p + j]);
        putchar('\n');
    }
    printf("combine, us + ns per element:");
    for (int32_t i = 0; i < pr->p; i++)
        printf(" %s %.3g + %.3g", c->names[i], 1e6 * pr->combine_fixed[i],
               1e9 * pr->per_element[i]);
    putchar('\n');
}

static int report(const cli_run_args *a, const cli_matrix_args *m, const matrix_ctx *c,
                  size_t elem)
{
    int costs = m->costs_out ? write_costs(a, m, c, elem) : CLI_OK;
    int platform = costs == CLI_OK && m->platform_out ? write_platform(a, m, c, elem) : CLI_OK;
    if (a->json)
        print_json(a, c);
    else
        print_text(a, c);
    if (!a->json && m->costs_out && costs == CLI_OK)
        printf("cost file for %lld elements written to %s\n", (long long)m->count,
               m->costs_out);
    if (!a->json && m->platform_out && costs == CLI_OK && platform == CLI_OK)
        printf("platform written to %s\n", m->platform_out);
    return costs != CLI_OK ? costs : platform;
}

/* A thread rank's copy of the context, other than rank 0's. */
static void release(void *ctx)
{
    matrix_ctx *c = ctx;
    trd_pair_profile_free(&c->profile);
    free(c->names);
}

int cli_calibrate_matrix(const cli_run_args *a, const trd_wire_info *wire,
                         const cli_matrix_args *m)
{
    if (m->count < 1)
        return cli_usage_error(cmd, "invalid --count %lld: must be >= 1", (long long)m->count);
    trd_op *op = NULL;
    trd_status st = cli_run_make_op(a, &op);
    if (st != TRD_OK)
        return cli_lib_error(cmd, st);
    matrix_ctx ctx = {.op = op};
    int rank = 0, rc = CLI_OK;
    st = cli_ranks_run(wire, (int32_t)a->p, a->timeout, measure, &ctx, sizeof ctx,
                       release, &rank);
    size_t elem = trd_op_elem_size(op);
    trd_op_free(op);
    if (st == TRD_EUNSUPPORTED && !trd_mpi_available()) {
        fprintf(stderr, "treduce %s: this treduce was built without MPI\n", cmd);
        rc = CLI_FAILED;
    } else if (st != TRD_OK) {
        rc = cli_lib_error(cmd, st);
    } else if (ctx.status != TRD_OK || !ctx.names) {
        fprintf(stderr, "treduce %s: %s\n", cmd,
                ctx.status != TRD_OK ? ctx.error : "out of memory");
        rc = CLI_FAILED;
    } else if (rank == 0) {
        rc = report(a, m, &ctx, elem);
    }
    trd_pair_profile_free(&ctx.profile);
    free(ctx.names);
    return rc;
}
