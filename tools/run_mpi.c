/* run_mpi.c: `mpirun -np P treduce run --transport mpi ...`: one process per
 * rank.  MPI's own collectives are used only around the measurement (the
 * slowest rank's time, every rank's check); the reduction is treduce's. */
#include "run.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef TRD_HAVE_MPI
#include <mpi.h>

/* Rank 0 gets the slowest rank's time of each iteration and whether every
 * rank checked out; any rank's failure fails the run. */
static void gather(const trd_run_args *a, trd_run_result *res, int rank)
{
    double *slowest = malloc((size_t)a->iters * sizeof *slowest);
    int ok = res->verified && res->status == TRD_OK, all = 0;
    int failed = res->status != TRD_OK, any_failed = 0;
    MPI_Reduce(res->times, slowest, (int)a->iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&ok, &all, 1, MPI_INT, MPI_LAND, 0, MPI_COMM_WORLD);
    MPI_Reduce(&failed, &any_failed, 1, MPI_INT, MPI_LOR, 0, MPI_COMM_WORLD);
    if (rank == 0 && slowest) {
        for (int64_t k = 0; k < a->iters; k++)
            res->times[k] = slowest[k];
        res->verified = all;
        if (any_failed && res->status == TRD_OK) {
            res->status = TRD_EIO;
            snprintf(res->error, sizeof res->error, "another rank failed (see its message)");
        }
    }
    free(slowest);
}

int trd_run_mpi(const trd_run_args *a)
{
    int rank = 0, size = 1, rc = CLI_FAILED;
    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    trd_comm *comm = NULL;
    trd_op *op = NULL;
    trd_run_result res = {.times = calloc((size_t)a->iters, sizeof(double))};
    trd_status st = trd_run_make_op(a, &op);
    if (st == TRD_OK)
        st = trd_comm_mpi_create(&comm, NULL, a->timeout);
    if (st == TRD_OK && res.times)
        trd_run_rank(a, comm, op, &res);
    else {
        res = (trd_run_result){.status = st ? st : TRD_ENOMEM, .times = res.times};
        snprintf(res.error, sizeof res.error, "%s", st ? trd_errmsg() : "out of memory");
    }
    bool usage = res.status == TRD_EINVAL || res.status == TRD_ENOALGO ||
                 res.status == TRD_EUNSUPPORTED; /* the same on every rank: rank 0 says it */
    if (res.status != TRD_OK && rank != 0 && !usage)
        fprintf(stderr, "treduce run: rank %d: %s\n", rank, res.error[0] ? res.error : trd_errmsg());
    gather(a, &res, rank);
    if (rank == 0)
        rc = trd_run_report(a, size, &res);
    trd_comm_free(comm);
    trd_op_free(op);
    free(res.times);
    MPI_Finalize();
    return rank == 0 ? rc : res.status == TRD_OK ? CLI_OK : usage ? CLI_USAGE : CLI_FAILED;
}
#else
int trd_run_mpi(const trd_run_args *a)
{
    (void)a;
    fprintf(stderr, "treduce run: this treduce was built without MPI (install libopenmpi-dev "
                    "and rebuild)\n");
    return CLI_FAILED;
}
#endif
