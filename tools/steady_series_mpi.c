/* steady_series_mpi.c: `treduce steady --problem reduce --run OPS
 * --wire mpi`: the periodic schedule of a series of reduces (the plan
 * of include/treduce/steady_series.h) run over MPI, one rank per platform
 * node - rank i is node i, routers forwarding - as `treduce testbed run
 * --all-nodes` places them on a testbed built from the same platform.
 * Every rank solves the same LP (exact, so the same plan everywhere) and
 * runs its node's program (trd_comm_run_plan); each operation's message is
 * the testbed's unit of message size, so the LP's throughput TP
 * (operations per time unit) is TP / time_unit operations per second
 * there, printed next to the measured rate.  The target checks every
 * result against the fold in participant order (the 2x2 matrix checker),
 * as the threads run does (steady_series.c). */
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "steady_series.h"

static const char *const cmd = "steady";

void steady_mpi_units_init(steady_mpi_units *u)
{
    const char *bytes = getenv("TRD_TESTBED_UNIT_BYTES"), *time = getenv("TRD_TESTBED_TIME_UNIT");
    *u = (steady_mpi_units){.unit_bytes = bytes ? atof(bytes) : 0.0,
                            .time_unit = time ? atof(time) : 1.0,
                            .known = bytes != NULL};
    if (!(u->unit_bytes >= 0) || !(u->time_unit > 0)) {
        u->unit_bytes = 0;
        u->time_unit = 1;
        u->known = false;
    }
}

#ifdef TRD_HAVE_MPI
#include <mpi.h>

bool steady_mpi_begin(int *rank)
{
    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    return true;
}

void steady_mpi_end(void)
{
    MPI_Finalize();
}

void steady_mpi_mute(int rank, bool mute)
{
    static int saved = -1;
    if (rank == 0)
        return;
    fflush(NULL);
    if (mute && saved < 0) {
        int null = open("/dev/null", O_WRONLY);
        saved = dup(STDERR_FILENO);
        if (null >= 0) {
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
            close(null);
        }
    } else if (!mute && saved >= 0) {
        dup2(saved, STDERR_FILENO);
        close(saved);
        saved = -1;
    }
}

/* What rank 0 learns: the slowest rank's time, the wrong results at the
 * target, whether any rank failed. */
typedef struct series_outcome {
    double seconds;
    int64_t wrong; /* -1: the fold could not be computed */
    int failed;
} series_outcome;

/* This rank's part: its node's program on its values; the target counts
 * wrong results. */
static trd_status run_node(const trd_plan *plan, const trd_steady *st, int64_t ops,
                           int64_t per_op, series_outcome *out)
{
    trd_comm *comm = NULL;
    trd_op *op = NULL;
    int32_t rank = 0;
    trd_matrix2x2 *buf = NULL;
    trd_status s = trd_op_matrix2x2(&op);
    if (s == TRD_OK)
        s = trd_comm_mpi_create(&comm, NULL, 120.0);
    if (s == TRD_OK && !(buf = steady_series_inputs(st, rank = trd_comm_rank(comm),
                                                    ops * per_op)))
        s = TRD_ENOMEM;
    if (s == TRD_OK)
        s = trd_comm_barrier(comm);
    double t0 = s == TRD_OK ? trd_comm_now(comm) : 0;
    if (s == TRD_OK)
        s = trd_comm_run_plan(comm, plan, buf, ops * per_op, op);
    out->seconds = s == TRD_OK ? trd_comm_now(comm) - t0 : 0;
    if (s == TRD_OK && rank == trd_plan_result_rank(plan))
        out->wrong = steady_series_wrong(st, op, buf, ops, per_op);
    if (s != TRD_OK)
        fprintf(stderr, "treduce %s: rank %d: %s\n", cmd, (int)rank, trd_errmsg());
    free(buf);
    trd_comm_free(comm);
    trd_op_free(op);
    return s;
}

/* The run's JSON object (its rates null where not finite, recorded in f). */
static json_t *run_json(int64_t ops, int64_t bytes, const steady_mpi_units *u,
                        const series_outcome *o, double tp_s, cli_finite *f)
{
    double rate = (double)ops / o->seconds;
    json_t *run = json_pack("{s:I, s:f, s:o, s:b, s:s, s:s, s:I}", "ops", (json_int_t)ops,
                            "seconds", o->seconds, "ops_per_second",
                            cli_json_real(f, "ops_per_second", rate), "verified", o->wrong == 0,
                            "wire", "mpi", "transport", "mpi", "bytes_per_op", (json_int_t)bytes);
    if (run && u->known &&
        (json_object_set_new(run, "tp_ops_per_second", cli_json_real(f, "TP", tp_s)) != 0 ||
         json_object_set_new(run, "ratio_to_tp",
                             cli_json_real(f, "ratio_to_tp", rate / tp_s)) != 0)) {
        json_decref(run);
        return NULL;
    }
    return run;
}

static int report(const trd_steady *st, int64_t ops, int64_t bytes, const steady_mpi_units *u,
                  const series_outcome *o, json_t *json)
{
    double rate = (double)ops / o->seconds;
    double tp_s = trd_steady_throughput_double(st) / u->time_unit;
    if (o->wrong != 0)
        fprintf(stderr, "treduce %s: %lld of %lld results differ from the fold in participant "
                "order\n", cmd, (long long)o->wrong, (long long)ops);
    int rc = o->wrong == 0 ? CLI_OK : CLI_FAILED;
    cli_finite f = {0};
    json_t *run = run_json(ops, bytes, u, o, tp_s, &f);
    int finite = cli_finite_end(cmd, &f, json);
    if (json) {
        if (!run || json_object_set_new(json, "run", run) != 0)
            return CLI_FAILED;
        return rc != CLI_OK ? rc : finite;
    }
    json_decref(run);
    if (finite != CLI_OK || !run)
        return run ? finite : CLI_FAILED;
    printf("ran %lld operations over MPI (one rank per node, %lld bytes per message): %.6f s, "
           "%.4g operations per second, results %s\n", (long long)ops, (long long)bytes,
           o->seconds, rate, o->wrong == 0 ? "verified" : "WRONG");
    if (u->known)
        printf("  TP = %s per time unit of %g s = %.4g operations per second: measured / TP "
               "= %.3f\n", trd_steady_throughput(st), u->time_unit, tp_s, rate / tp_s);
    else
        printf("  (TP = %s per time unit of the model: give --unit-bytes, or run under "
               "treduce testbed run, to compare)\n", trd_steady_throughput(st));
    return rc;
}

int steady_series_run_mpi(const trd_platform *pf, const trd_steady *st, int64_t ops,
                          const steady_mpi_units *u, json_t *json)
{
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != trd_platform_node_count(pf)) {
        if (rank == 0)
            fprintf(stderr, "treduce %s: the series needs one rank per platform node: %d "
                    "ranks for %d nodes (treduce testbed run --all-nodes)\n", cmd, size,
                    (int)trd_platform_node_count(pf));
        return CLI_USAGE;
    }
    int64_t per_op = u->unit_bytes >= 32 ? (int64_t)llround(u->unit_bytes / 16) : 1;
    trd_plan *plan = NULL;
    series_outcome mine = {0}, all = {0};
    trd_status s = trd_steady_series_plan(st, pf, ops, &plan);
    if (s != TRD_OK) {
        trd_plan_free(plan);
        return rank == 0 ? cli_lib_error(cmd, s) : CLI_USAGE; /* the same on every rank */
    }
    mine.failed = run_node(plan, st, ops, per_op, &mine) != TRD_OK;
    trd_plan_free(plan);
    MPI_Reduce(&mine.seconds, &all.seconds, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mine.wrong, &all.wrong, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mine.failed, &all.failed, 1, MPI_INT, MPI_LOR, 0, MPI_COMM_WORLD);
    if (rank != 0)
        return mine.failed ? CLI_FAILED : CLI_OK;
    if (all.failed || all.wrong < 0) {
        fprintf(stderr, "treduce %s: %s\n", cmd, all.failed ? "the run failed (see the "
                "ranks' messages)" : "out of memory for the check");
        return CLI_FAILED;
    }
    return report(st, ops, per_op * (int64_t)sizeof(trd_matrix2x2), u, &all, json);
}
#else
bool steady_mpi_begin(int *rank)
{
    *rank = 0;
    fprintf(stderr, "treduce %s: this treduce was built without MPI (install libopenmpi-dev "
            "and rebuild)\n", cmd);
    return false;
}

void steady_mpi_end(void)
{
}

void steady_mpi_mute(int rank, bool mute)
{
    (void)rank, (void)mute;
}

int steady_series_run_mpi(const trd_platform *pf, const trd_steady *st, int64_t ops,
                          const steady_mpi_units *u, json_t *json)
{
    (void)pf, (void)st, (void)ops, (void)u, (void)json;
    return CLI_FAILED;
}
#endif
