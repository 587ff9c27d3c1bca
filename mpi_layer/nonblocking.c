/* nonblocking.c: MPI_Iallreduce, MPI_Ireduce, MPI_Ireduce_scatter_block,
 * MPI_Ireduce_scatter, MPI_Iscan and MPI_Iexscan run by treduce, and
 * advanced while the program computes without calling MPI.
 *
 * The call is decided on the caller's thread without communicating, by
 * the blocking function's rules (call.c, tml_job_begin), then queued on
 * its communicator's progress thread (trd_comm_post), which runs it after
 * the calls started before it - MPI orders a communicator's collectives
 * by their start on every rank (MPI-3.1 Sec. 5.12) - exactly as the
 * blocking call would run (the model's measurements included, which
 * communicate on treduce's own communicator only).  A blocking call on
 * the communicator waits for the started ones first.  One queue and one
 * thread per communicator, not per process: ranks may start calls on two
 * communicators in different orders, which one thread would deadlock.
 *
 * The program's request is a generalized request (MPI-3.1 Sec. 12.2),
 * which the progress thread completes once the call is done: every MPI
 * function on requests - the Wait and Test families with arrays mixing
 * it with point-to-point and MPI's own requests, MPI_Request_get_status -
 * is MPI's own, untouched, and the status is a collective's (MPI_ERROR
 * the call's result, no elements, not cancelled).  MPI_Request_free and
 * MPI_Cancel on a collective's request are erroneous (Sec. 5.12); the
 * layer's cancel does nothing, and a freed request's call still runs to
 * its end (MPI_Finalize waits for it).  A failure is the request's error, which the
 * Wait or Test that completes it returns (told on stderr, and the
 * communicator's later calls go to MPI, as for a blocking call).
 *
 * Only where every process runs at MPI_THREAD_MULTIPLE: another thread
 * may call MPI then.  Below it the call goes to MPI unchanged (reason
 * "threads"), as it does where the layer does not run the blocking call
 * (and for a derived datatype that needs staging: MPI lets the program
 * free the datatype before the call completes).  The layer's requests
 * are not persistent: MPI_Allreduce_init and the other MPI 4.0 (MPIX_*
 * in Open MPI's pcollreq) persistent calls are not interposed and go to
 * MPI. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "layer.h"

typedef struct greq {
    tml_job *job;
    MPI_Request req;
    atomic_int rc;   /* the call's result, set before the request completes */
    atomic_int refs; /* the step and MPI's request: the last to end frees */
} greq;

static void release(greq *g)
{
    if (atomic_fetch_sub(&g->refs, 1) == 1) {
        tml_job_free(g->job);
        free(g);
    }
}

static int query(void *extra, MPI_Status *status)
{
    greq *g = extra;
    PMPI_Status_set_elements(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    status->MPI_ERROR = atomic_load(&g->rc);
    return status->MPI_ERROR;
}

static int free_request(void *extra)
{
    release(extra);
    return MPI_SUCCESS;
}

static int cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

/* On the communicator's progress thread. */
static trd_status step(void *arg)
{
    greq *g = arg;
    atomic_store(&g->rc, tml_job_run(g->job));
    PMPI_Grequest_complete(g->req);
    release(g);
    return TRD_OK;
}

static int pass(const tml_args *a, MPI_Request *req)
{
    switch (a->fn) {
    case TML_F_IREDUCE:
        return PMPI_Ireduce(a->sendbuf, a->recvbuf, a->count, a->dt, a->op, a->root, a->comm,
                            req);
    case TML_F_IREDUCE_SCATTER_BLOCK:
        return PMPI_Ireduce_scatter_block(a->sendbuf, a->recvbuf, a->count, a->dt, a->op,
                                          a->comm, req);
    case TML_F_IREDUCE_SCATTER:
        return PMPI_Ireduce_scatter(a->sendbuf, a->recvbuf, a->recvcounts, a->dt, a->op,
                                    a->comm, req);
    case TML_F_ISCAN:
        return PMPI_Iscan(a->sendbuf, a->recvbuf, a->count, a->dt, a->op, a->comm, req);
    case TML_F_IEXSCAN:
        return PMPI_Iexscan(a->sendbuf, a->recvbuf, a->count, a->dt, a->op, a->comm, req);
    default:
        return PMPI_Iallreduce(a->sendbuf, a->recvbuf, a->count, a->dt, a->op, a->comm, req);
    }
}

int tml_icollective(const tml_args *a, MPI_Request *req)
{
    tml_job *job = NULL;
    int rc = MPI_SUCCESS;
    if (!req || tml_job_begin(a, &job, &rc) != TML_OK)
        return pass(a, req);
    greq *g = calloc(1, sizeof *g);
    if (!g) { /* the other ranks' calls end at their deadline */
        tml_job_free(job);
        return PMPI_Comm_call_errhandler(a->comm, MPI_ERR_NO_MEM), MPI_ERR_NO_MEM;
    }
    g->job = job;
    atomic_init(&g->rc, rc);
    atomic_init(&g->refs, job ? 2 : 1);
    int st = PMPI_Grequest_start(query, free_request, cancel, g, req);
    if (st != MPI_SUCCESS) {
        tml_job_free(job);
        free(g);
        return st;
    }
    g->req = *req;
    if (!job) /* done already: nothing to move */
        return PMPI_Grequest_complete(g->req);
    if (trd_comm_post(tml_job_comm(job), step, g) != TRD_OK) { /* said at the wait */
        fprintf(stderr, "treduce-mpi: rank %d: %s: %s\n", tml_g.world_rank, tml_fn_name(a->fn),
                trd_errmsg());
        atomic_store(&g->rc, MPI_ERR_OTHER);
        PMPI_Grequest_complete(g->req);
        release(g);
    }
    return MPI_SUCCESS;
}
