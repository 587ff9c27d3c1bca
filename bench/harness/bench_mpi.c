/* bench_mpi.c: `mpirun -np P treduce bench --wire mpi`: one process
 * per rank, and the baseline is the linked MPI library's own MPI_Reduce,
 * MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Scan or MPI_Exscan,
 * measured in the same run the same way as treduce's algorithms
 * (MPI_Barrier for both, time, call, time; the slowest rank's time per
 * repetition; the result checked against the same fold).  For the costly
 * operators MPI gets a commutative MPI_Op_create'd operator doing the same
 * sum and the same wait per call, so both libraries pay the operator's
 * cost per combine call they make. */
#include "bench_harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "costly_op.h"

#ifdef TRD_HAVE_MPI
#include <mpi.h>

/* MPI user functions take no context: the cost lives here. */
static double costly_seconds;

static void sum_into(const void *in, void *inout, int len)
{
    const double *a = in;
    double *b = inout;
    for (int i = 0; i < len; i++)
        b[i] = a[i] + b[i];
}

static void costly_sleep_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    sum_into(in, inout, *len);
    cli_costly_wait(costly_seconds, true);
}

static void costly_spin_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    sum_into(in, inout, *len);
    cli_costly_wait(costly_seconds, false);
}

typedef struct mpi_base {
    MPI_Op op[BENCH_MAX_OPS];
    bool created[BENCH_MAX_OPS];
} mpi_base;

static trd_status mpi_barrier_fn(void *self)
{
    (void)self;
    return MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS ? TRD_OK : TRD_EIO;
}

static trd_status mpi_call_fn(void *self, const bench_case *c)
{
    mpi_base *b = self;
    MPI_Op op = b->op[c->op];
    int n = (int)c->count, rc;
    switch (c->kind) {
    case TRD_COLL_ALLREDUCE:
        rc = MPI_Allreduce(c->in, c->out, n, MPI_DOUBLE, op, MPI_COMM_WORLD);
        break;
    case TRD_COLL_REDUCE_SCATTER:
        rc = MPI_Reduce_scatter_block(c->in, c->out, n, MPI_DOUBLE, op, MPI_COMM_WORLD);
        break;
    case TRD_COLL_SCAN: rc = MPI_Scan(c->in, c->out, n, MPI_DOUBLE, op, MPI_COMM_WORLD); break;
    case TRD_COLL_EXSCAN: rc = MPI_Exscan(c->in, c->out, n, MPI_DOUBLE, op, MPI_COMM_WORLD); break;
    default: rc = MPI_Reduce(c->in, c->out, n, MPI_DOUBLE, op, 0, MPI_COMM_WORLD); break;
    }
    return rc == MPI_SUCCESS ? TRD_OK : TRD_EIO;
}

static trd_status mpi_point(bench_rank *br, const bench_case *c)
{
    bench_runner run = {mpi_barrier_fn, mpi_call_fn, br->baseline_ctx};
    return bench_measure(br, &run, c, &(bench_point){.algo = "mpi", .predicted = NAN});
}

static void make_mpi_ops(const bench_args *a, mpi_base *b)
{
    costly_seconds = 1e-6 * a->op_cost_us;
    for (size_t i = 0; i < a->nops; i++) {
        b->op[i] = MPI_SUM;
        if (strcmp(a->ops[i], "sum")) {
            bool sleep = !strcmp(a->ops[i], "costly");
            MPI_Op_create(sleep ? costly_sleep_fn : costly_spin_fn, 1, &b->op[i]);
            b->created[i] = true;
        }
    }
}

/* This rank's share: everything but the report. */
static trd_status run_rank(bench_args *a, bench_table *table, int rank, bench_rank *br)
{
    trd_op *ops[BENCH_MAX_OPS] = {0};
    mpi_base base = {0};
    trd_comm *comm = NULL;
    trd_status st = TRD_OK;
    for (size_t i = 0; i < a->nops && st == TRD_OK; i++)
        st = bench_make_op(a, a->ops[i], &ops[i]);
    if (st == TRD_OK)
        st = a->wire->create(&comm, 1, a->timeout); /* this process's rank */
    if (st == TRD_OK) {
        table->shm = cli_shm_of(comm);
        make_mpi_ops(a, &base);
        *br = (bench_rank){.a = a, .comm = comm, .table = rank == 0 ? table : NULL,
                           .baseline = mpi_point, .baseline_ctx = &base,
                           .barrier = mpi_barrier_fn,
                           .total = bench_series_total(a, a->nops)};
        for (size_t i = 0; i < a->nops; i++)
            br->ops[i] = ops[i];
        bench_rank_main(br);
        st = br->status;
    } else {
        bench_fail(br, st, "bench");
    }
    for (size_t i = 0; i < a->nops; i++) {
        if (base.created[i])
            MPI_Op_free(&base.op[i]);
        trd_op_free(ops[i]);
    }
    trd_comm_free(comm);
    return st;
}

/* "mpirun -np N " before the command line, so the figures' notes say how
 * to run it again (cut at the end when too long). */
static void prefix_launcher(char *cmd, size_t size, int np)
{
    char pre[32];
    size_t n = (size_t)snprintf(pre, sizeof pre, "mpirun -np %d ", np), len = strlen(cmd);
    if (n + len + 1 > size)
        len = size - n - 1;
    memmove(cmd + n, cmd, len);
    memcpy(cmd, pre, n);
    cmd[n + len] = '\0';
}

int bench_mpi(bench_args *a)
{
    int rank = 0, size = 1, rc = CLI_OK;
    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    a->p = size;
    bench_drop_unfit(a, rank == 0);
    prefix_launcher(a->command, sizeof a->command, size);
    bench_table table = {.p = size};
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    version[strcspn(version, ",\n")] = '\0'; /* "Open MPI v4.1.4" */
    size_t vlen = strlen(version) < sizeof table.baseline_lib ? strlen(version)
                                                              : sizeof table.baseline_lib - 1;
    memcpy(table.baseline_lib, version, vlen);
    bench_rank br = {.a = a};
    trd_status st = run_rank(a, &table, rank, &br);
    if (st != TRD_OK) {
        bool usage = st == TRD_EINVAL || st == TRD_ENOALGO || st == TRD_EUNSUPPORTED;
        if (rank == 0 || !usage) /* the same on every rank: rank 0 says it */
            fprintf(stderr, "treduce bench: rank %d: %s\n", rank, br.error);
        rc = usage ? CLI_USAGE : CLI_FAILED;
    }
    MPI_Finalize();
    if (st == TRD_OK && rank == 0)
        rc = bench_report(a, &table);
    free(table.pt);
    return rc;
}
#else
int bench_mpi(bench_args *a)
{
    (void)a;
    fprintf(stderr, "treduce bench: this treduce was built without MPI (install "
                    "libopenmpi-dev and rebuild)\n");
    return CLI_FAILED;
}
#endif
