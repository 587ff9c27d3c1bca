/* run_mpi.c: `mpirun -np P treduce run --wire mpi ...`: one process per
 * rank.  Around the measurement the ranks only agree on the slowest rank's
 * times and every rank's check, through the communicator's own agreement
 * (trd_comm_agree_max, with its deadline), never through a collective of
 * MPI's: when a rank has died, MPI's would wait for it forever. */
#include "run.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef TRD_HAVE_MPI
#include <mpi.h>

static volatile sig_atomic_t exit_code = CLI_FAILED;

static void leave(int sig)
{
    (void)sig;
    _exit(exit_code);
}

/* Open MPI's MPI_Finalize waits for every process of the job (a fence):
 * after a failure one may be dead (--dead-rank under mpirun
 * --enable-recovery), and then it would never return.  So a rank whose run
 * failed, its message printed, gives it `seconds` and then leaves without
 * it, with its exit status. */
static void bound_finalize(double seconds, int code)
{
    exit_code = code;
    signal(SIGALRM, leave);
    alarm((unsigned)ceil(seconds));
}

/* Every rank gets the slowest rank's time of each iteration and whether
 * every rank checked out.  A rank whose run failed says so alone (its
 * communicator is failed, or its arguments were refused on every rank);
 * the agreement of the others then ends with the failure that reached
 * them, within the deadline. */
static void gather(const cli_run_args *a, trd_comm *comm, cli_run_result *res)
{
    size_t n = (size_t)a->iters + 1;
    double *v = comm && res->status == TRD_OK ? malloc(n * sizeof *v) : NULL;
    if (!v)
        return;
    memcpy(v, res->times, (size_t)a->iters * sizeof *v);
    v[a->iters] = res->verified ? 0.0 : 1.0; /* the largest: any rank unverified */
    trd_status st = trd_comm_agree_max(comm, v, v, (int64_t)n);
    if (st == TRD_OK) {
        memcpy(res->times, v, (size_t)a->iters * sizeof *v);
        res->verified = v[a->iters] == 0.0;
    } else {
        res->status = st;
        snprintf(res->error, sizeof res->error, "%s", trd_errmsg());
    }
    free(v);
}

/* The buffers of the ranks of each node against its memory (cmd_run.c
 * checked this process alone before MPI was up): refused on every rank
 * when refused on any node, so that none waits for the others at its
 * deadline.  One agreement of the communicator's own (no MPI collective);
 * true when refused (res says why, and rank 0 alone says it). */
static bool node_memory(const cli_run_args *a, trd_comm *comm, cli_run_result *res)
{
    int32_t local = trd_comm_node_size(comm);
    char why[sizeof res->error];
    bool mine = cli_run_check_memory(a, local, trd_comm_size(comm), false, why, sizeof why) !=
                CLI_OK;
    double refused = mine ? (double)local : 0.0;
    trd_status st = trd_comm_agree_max(comm, &refused, &refused, 1);
    if (st == TRD_OK && refused == 0.0)
        return false;
    res->status = st != TRD_OK ? st : TRD_ENOMEM;
    if (st != TRD_OK)
        snprintf(res->error, sizeof res->error, "%s", trd_errmsg());
    else if (mine)
        snprintf(res->error, sizeof res->error, "%s", why);
    else
        snprintf(res->error, sizeof res->error, "--count %lld is too large for a node of %.0f "
                 "ranks", (long long)a->count, refused);
    res->everywhere = st == TRD_OK;
    return true;
}

int cli_run_mpi(const cli_run_args *a, const trd_wire_info *wire)
{
    int rank = 0, size = 1, rc = CLI_FAILED;
    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    trd_comm *comm = NULL;
    trd_op *op = NULL;
    cli_run_result res = {.times = calloc((size_t)a->iters, sizeof(double))};
    trd_status st = cli_run_make_op(a, &op);
    if (st == TRD_OK)
        st = wire->create(&comm, 1, a->timeout);
    if (st == TRD_OK) /* which ranks share a host: node-ring plans for it */
        st = trd_comm_learn_nodes(comm);
    if (st == TRD_OK && res.times) {
        if (!node_memory(a, comm, &res))
            cli_run_rank(a, comm, op, &res);
        for (int r = 0; r < size; r++)
            res.nodes += trd_comm_node(comm, r) == r;
    } else {
        res = (cli_run_result){.status = st ? st : TRD_ENOMEM, .times = res.times};
        snprintf(res.error, sizeof res.error, "%s", st ? trd_errmsg() : "out of memory");
    }
    if (!res.everywhere)
        gather(a, comm, &res);
    bool usage = res.status == TRD_EINVAL || res.status == TRD_ENOALGO ||
                 res.status == TRD_EUNSUPPORTED; /* the same on every rank: rank 0 says it */
    if (res.status != TRD_OK && rank != 0 && !usage && !res.everywhere)
        fprintf(stderr, "treduce run: rank %d: %s\n", rank, res.error[0] ? res.error : trd_errmsg());
    if (rank == 0)
        rc = cli_run_report(a, size, &res);
    trd_comm_free(comm);
    trd_op_free(op);
    free(res.times);
    rc = rank == 0 ? rc : res.status == TRD_OK ? CLI_OK : usage ? CLI_USAGE : CLI_FAILED;
    fflush(NULL);
    if (res.status != TRD_OK && !usage)
        bound_finalize(a->timeout + 1.0, rc);
    MPI_Finalize();
    return rc;
}
#else
int cli_run_mpi(const cli_run_args *a, const trd_wire_info *wire)
{
    (void)a, (void)wire;
    fprintf(stderr, "treduce run: this treduce was built without MPI (install libopenmpi-dev "
                    "and rebuild)\n");
    return CLI_FAILED;
}
#endif
