/* steady_series_mpi.c: `treduce steady --problem reduce --run OPS
 * --wire mpi`: the periodic schedule of a series of reduces (the plan
 * of include/treduce/steady_series.h) run over a launched wire (MPI), one
 * rank per platform node - rank i is node i, routers forwarding - as
 * `treduce testbed run --all-nodes` places them on a testbed built from
 * the same platform.  Every rank solves the same LP (exact, so the same
 * plan everywhere) and runs its node's program (trd_comm_run_plan); each
 * operation's message is the testbed's unit of message size, so the LP's
 * throughput TP (operations per time unit) is TP / time_unit operations
 * per second there, printed next to the measured rate.  The target checks
 * every result against the fold in participant order (the 2x2 matrix
 * checker), as the threads run does (steady_series.c).  Rank 0 learns the
 * outcome through the communicator's agreement, with its deadline (no
 * collective of MPI's, which has none). */
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

trd_comm *steady_mpi_begin(const trd_wire_info *wire)
{
    MPI_Init(NULL, NULL);
    trd_comm *comm = NULL;
    if (wire->create(&comm, 1, 120.0) != TRD_OK) {
        fprintf(stderr, "treduce %s: %s\n", cmd, trd_errmsg());
        MPI_Finalize();
    }
    return comm;
}

void steady_mpi_end(trd_comm *comm)
{
    trd_comm_free(comm);
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
    bool failed;
} series_outcome;

/* This rank's part: its node's program on its values; the target counts
 * wrong results. */
static trd_status run_node(trd_comm *comm, const trd_plan *plan, const trd_steady *st,
                           int64_t ops, int64_t per_op, series_outcome *out)
{
    trd_op *op = NULL;
    int32_t rank = trd_comm_rank(comm);
    trd_matrix2x2 *buf = NULL;
    trd_status s = trd_op_matrix2x2(&op);
    if (s == TRD_OK && !(buf = steady_series_inputs(st, rank, ops * per_op)))
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
    trd_op_free(op);
    return s;
}

/* Every rank's outcome into o: the largest time, any failure, the
 * target's count of wrong results (the others put -2 there, below any
 * count, -1 included).  A rank whose run failed takes part too, with its
 * failure; if its communicator failed, the agreement fails at once there
 * and, the failure reaching them, within the deadline on the others. */
static trd_status agree_outcome(trd_comm *comm, bool target, series_outcome *o)
{
    double v[3] = {o->seconds, o->failed ? 1.0 : 0.0, target ? (double)o->wrong : -2.0};
    trd_status s = trd_comm_agree_max(comm, v, v, 3);
    if (s == TRD_OK)
        *o = (series_outcome){.seconds = v[0], .failed = v[1] > 0, .wrong = (int64_t)v[2]};
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

int steady_series_run_mpi(trd_comm *comm, const trd_platform *pf, const trd_steady *st,
                          int64_t ops, const steady_mpi_units *u, json_t *json)
{
    int rank = trd_comm_rank(comm), size = trd_comm_size(comm);
    if (size != trd_platform_node_count(pf)) {
        if (rank == 0)
            fprintf(stderr, "treduce %s: the series needs one rank per platform node: %d "
                    "ranks for %d nodes (treduce testbed run --all-nodes)\n", cmd, size,
                    (int)trd_platform_node_count(pf));
        return CLI_USAGE;
    }
    int64_t per_op = u->unit_bytes >= 32 ? (int64_t)llround(u->unit_bytes / 16) : 1;
    trd_plan *plan = NULL;
    series_outcome mine = {0}, all;
    trd_status s = trd_steady_series_plan(st, pf, ops, &plan);
    if (s != TRD_OK) {
        trd_plan_free(plan);
        return rank == 0 ? cli_lib_error(cmd, s) : CLI_USAGE; /* the same on every rank */
    }
    mine.failed = run_node(comm, plan, st, ops, per_op, &mine) != TRD_OK;
    bool target = rank == trd_plan_result_rank(plan);
    trd_plan_free(plan);
    all = mine;
    s = agree_outcome(comm, target, &all);
    if (s != TRD_OK && !mine.failed) /* its own run went well: say why it failed after */
        fprintf(stderr, "treduce %s: rank %d: %s\n", cmd, rank, trd_errmsg());
    if (rank != 0)
        return mine.failed || s != TRD_OK ? CLI_FAILED : CLI_OK;
    if (s != TRD_OK || all.failed || all.wrong < 0) {
        fprintf(stderr, "treduce %s: %s\n", cmd, s != TRD_OK || all.failed ? "the run failed "
                "(see the ranks' messages)" : "out of memory for the check");
        return CLI_FAILED;
    }
    return report(st, ops, per_op * (int64_t)sizeof(trd_matrix2x2), u, &all, json);
}
#else
trd_comm *steady_mpi_begin(const trd_wire_info *wire)
{
    (void)wire;
    fprintf(stderr, "treduce %s: this treduce was built without MPI (install libopenmpi-dev "
            "and rebuild)\n", cmd);
    return NULL;
}

void steady_mpi_end(trd_comm *comm)
{
    (void)comm;
}

void steady_mpi_mute(int rank, bool mute)
{
    (void)rank, (void)mute;
}

int steady_series_run_mpi(trd_comm *comm, const trd_platform *pf, const trd_steady *st,
                          int64_t ops, const steady_mpi_units *u, json_t *json)
{
    (void)comm, (void)pf, (void)st, (void)ops, (void)u, (void)json;
    return CLI_FAILED;
}
#endif
