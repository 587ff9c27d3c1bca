/* mpi_create.c: the MPI wire's creation (a duplicate communicator, the
 * rings of the node, the control tags, the coordinator's tables) and
 * release. */
#include "wire/mpi_wire.h"

#include "core/error.h"

#ifdef TRD_HAVE_MPI

#include "core/fifo.h"
#include "wire/mpi_internal.h"
#include "wire/shm.h"

#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- Creation and release. ---- */

static void drop(MPI_Request *r, bool cancel)
{
    if (*r == MPI_REQUEST_NULL)
        return;
    if (cancel)
        MPI_Cancel(r);
    MPI_Request_free(r);
}

void trd_mpi_free(void *ctx)
{
    mpi_wire *w = ctx;
    if (!w)
        return;
    int finalized = 1;
    MPI_Finalized(&finalized);
    if (!finalized && w->comm != MPI_COMM_NULL) {
        for (int i = 0; i < w->n; i++) /* cancelling sends is deprecated: abandon them */
            drop(&w->reqs[i], w->info[i].kind == K_RECV);
        for (int c = 0; c < C_COUNT; c++)
            drop(&w->ctrl[c], c == C_REQ_IN || c == C_ARRIVE_IN || c == C_REP_IN ||
                                  c == C_RELEASE_IN || c == C_ABORT_IN || c == C_CALL_IN);
        for (int r = 0; w->reply_req && w->release_req && r < w->size; r++) {
            drop(&w->reply_req[r], false);
            drop(&w->release_req[r], false);
        }
        for (int r = 0; w->fail_req && r < w->size; r++)
            drop(&w->fail_req[r], false);
        for (int r = 0; w->tell_req && r < w->size; r++)
            drop(&w->tell_req[r], false);
        /* A failed wire's communicator is kept, not freed: sends it
         * abandoned may still arrive, and Open MPI delivers a message for
         * a freed context to the next communicator that reuses it - a new
         * wire's call would take a failed call's data (caught by the call
         * signature, or not where the calls agree), and creating that
         * communicator stalled in MPI_Comm_dup in about one run of six
         * (tests/mpi/test_faults_mpi.c).  One communicator per failure. */
        if (w->fail_code == TRD_OK)
            MPI_Comm_free(&w->comm);
    }
    free(w->reqs);
    free(w->info);
    free(w->idx);
    free(w->st);
    free(w->done.items);
    trd_shm_free(w->shm);
    free(w->held);
    free(w->reply);
    free(w->reply_req);
    free(w->release_out);
    free(w->release_req);
    free(w->fail_req);
    free(w->heard);
    free(w->told);
    free(w->tell);
    free(w->tell_req);
    free(w);
}

/* The first tag of the wire's own messages: 1 << 20, or the top T_COUNT
 * tags on an MPI that has fewer.  MPI_TAG_UB is cached on MPI_COMM_WORLD
 * (MPI-3.1 Sec. 8.1.2): Open MPI leaves it off communicators made by
 * MPI_Comm_split or MPI_Comm_create and their duplicates. */
static trd_status pick_ctrl_tag(mpi_wire *w)
{
    int *ub = NULL, flag = 0;
    int rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    if (rc != MPI_SUCCESS || !flag || !ub)
        return trd_fail(TRD_EBACKEND, "mpi wire: MPI_TAG_UB is not available");
    w->ctrl_tag = *ub >= CTRL_TAG + T_COUNT ? CTRL_TAG : *ub - T_COUNT + 1;
    return trd_mpi_setup_faults(w, *ub);
}

/* Rank 0's tables: one reply and one release slot per rank, held requests. */
static trd_status alloc_root(mpi_wire *w)
{
    size_t n = (size_t)w->size;
    w->held = malloc(n * sizeof *w->held);
    w->reply = malloc(n * sizeof *w->reply);
    w->reply_req = malloc(n * sizeof *w->reply_req);
    w->release_out = malloc(n * sizeof *w->release_out);
    w->release_req = malloc(n * sizeof *w->release_req);
    if (!w->held || !w->reply || !w->reply_req || !w->release_out || !w->release_req) {
        free(w->reply_req); /* trd_mpi_free must not read uninitialised requests */
        free(w->release_req);
        w->reply_req = w->release_req = NULL;
        return trd_fail(TRD_ENOMEM, "mpi wire: out of memory for %d ranks", w->size);
    }
    for (size_t r = 0; r < n; r++)
        w->reply_req[r] = w->release_req[r] = MPI_REQUEST_NULL;
    if (w->size == 1)
        return TRD_OK;
    trd_status s = trd_mpi_post_standing(w, C_REQ_IN);
    return s != TRD_OK ? s : trd_mpi_post_standing(w, C_ARRIVE_IN);
}

static trd_status setup(mpi_wire *w, MPI_Comm comm)
{
    int rc = MPI_Comm_dup(comm, &w->comm);
    if (rc != MPI_SUCCESS) {
        w->comm = MPI_COMM_NULL;
        return trd_mpi_error(TRD_EBACKEND, rc, "MPI_Comm_dup", -1);
    }
    rc = MPI_Comm_set_errhandler(w->comm, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_rank(w->comm, &w->rank);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_size(w->comm, &w->size);
    if (rc == MPI_SUCCESS && w->rank == 0) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        w->epoch = ((uint64_t)now.tv_sec << 30 ^ (uint64_t)now.tv_nsec) * 0x9E3779B97F4A7C15ull ^
                   (uint64_t)getpid();
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Bcast(&w->epoch, 1, MPI_UINT64_T, 0, w->comm);
    if (rc != MPI_SUCCESS)
        return trd_mpi_error(TRD_EBACKEND, rc, "setting up the communicator", -1);
    int local = 1;
    if ((rc = trd_mpi_count_node(w, &local)) != MPI_SUCCESS)
        return trd_mpi_error(TRD_EBACKEND, rc, "counting the ranks of this node", -1);
    trd_status s = trd_mpi_setup_shm(w, local);
    if (s == TRD_OK)
        s = pick_ctrl_tag(w);
    if (s != TRD_OK || w->rank != 0)
        return s;
    return alloc_root(w);
}

trd_status trd_wire_mpi_create(trd_wire **out, const void *mpi_comm)
{
    if (!out || !mpi_comm)
        return trd_fail(TRD_EINVAL, "mpi wire: create needs out and a communicator");
    *out = NULL;
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (!init || fin)
        return trd_fail(TRD_EINVAL, "mpi wire: MPI is %s (MPI_Init must come first)",
                        fin ? "finalized" : "not initialised");
    mpi_wire *w = calloc(1, sizeof *w);
    if (!w)
        return trd_fail(TRD_ENOMEM, "mpi wire: out of memory");
    for (int c = 0; c < C_COUNT; c++)
        w->ctrl[c] = MPI_REQUEST_NULL;
    w->timeout = TRD_WIRE_MPI_TIMEOUT;
    trd_status s = setup(w, *(const MPI_Comm *)mpi_comm);
    if (s != TRD_OK) {
        trd_mpi_free(w);
        return s;
    }
    w->wire = (trd_wire){.ctx = w, .rank = w->rank, .size = w->size, .name = "mpi",
                         .isend = trd_mpi_isend, .irecv = trd_mpi_irecv, .wait = trd_mpi_wait,
                         .now = trd_mpi_now, .decide = trd_mpi_decide,
                         .end_dynamic = trd_mpi_end_dynamic, .barrier = trd_mpi_barrier,
                         .agree = trd_mpi_agree, .set_call = trd_mpi_set_call,
                         .failed = trd_mpi_failed, .abort = trd_mpi_abort, .free = trd_mpi_free};
    *out = &w->wire;
    return TRD_OK;
}

trd_status trd_wire_mpi_set_timeout(trd_wire *w, double seconds)
{
    if (!trd_mpi_is_wire(w))
        return trd_fail(TRD_EINVAL, "mpi wire: set_timeout on a wire that is not an MPI wire");
    if (!isfinite(seconds) || seconds <= 0)
        return trd_fail(TRD_EINVAL, "mpi wire: timeout %g s is not finite and > 0", seconds);
    ((mpi_wire *)w->ctx)->timeout = seconds;
    return TRD_OK;
}

bool trd_wire_mpi_available(void)
{
    return true;
}

bool trd_mpi_is_wire(const trd_wire *w)
{
    return w && w->free == trd_mpi_free;
}

#else /* !TRD_HAVE_MPI: the same functions, saying there is no MPI. */

bool trd_wire_mpi_available(void)
{
    return false;
}

trd_status trd_wire_mpi_create(trd_wire **out, const void *mpi_comm)
{
    (void)mpi_comm;
    if (out)
        *out = NULL;
    return trd_fail(TRD_EUNSUPPORTED, "treduce was built without MPI");
}

trd_status trd_wire_mpi_set_timeout(trd_wire *w, double seconds)
{
    (void)w;
    (void)seconds;
    return trd_fail(TRD_EUNSUPPORTED, "treduce was built without MPI");
}

#endif
