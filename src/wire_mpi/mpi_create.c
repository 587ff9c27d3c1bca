/* mpi_create.c: the MPI wire's creation (its communicator, the ranks of
 * the node, the control tags, the coordinator's tables; the rings and the
 * path of long messages are mpi_node.c's, at once or deferred to the
 * first message) and the release of its resources (mpi_close.c decides
 * when). */
#include "wire_mpi/mpi_wire.h"

#include "core/error.h"

#ifdef TRD_HAVE_MPI

#include "core/fifo.h"
#include "wire_mpi/mpi_internal.h"
#include "wire_mpi/shm.h"

#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- Creation and release. ---- */

void trd_mpi_drop(MPI_Request *r, bool cancel)
{
    if (*r == MPI_REQUEST_NULL)
        return;
    if (cancel) {
        PMPI_Cancel(r);
        PMPI_Wait(r, MPI_STATUS_IGNORE); /* local once cancelled */
    } else {
        PMPI_Request_free(r);
    }
}

static void free_memory(mpi_wire *w)
{
    free(w->reqs);
    free(w->info);
    free(w->idx);
    free(w->st);
    free(w->done.items);
    trd_shm_free(w->shm);
    free(w->held);
    free(w->node_list);
    free(w->node_pids);
    free(w->arrived);
    free(w->decided);
    free(w->reply);
    free(w->reply_req);
    free(w->release_out);
    free(w->release_req);
    free(w->fail_req);
    free(w->heard);
    free(w->told);
    free(w->tell);
    free(w->tell_req);
    free(w->world);
    free(w);
}

/* The receives a wire keeps posted, and the data requests of a failed
 * call: cancelled, so that MPI writes none of their buffers any more;
 * sends still pending (a failed call's: cancelling sends is deprecated)
 * are abandoned, their buffers kept by their owner (wire.h). */
static void drop_requests(mpi_wire *w)
{
    for (int i = 0; i < w->n; i++)
        trd_mpi_drop(&w->reqs[i], w->info[i].kind == K_RECV);
    for (int c = 0; c < C_COUNT; c++)
        trd_mpi_drop(&w->ctrl[c], c == C_REQ_IN || c == C_ARRIVE_IN || c == C_REP_IN ||
                                      c == C_RELEASE_IN || c == C_ABORT_IN || c == C_CALL_IN);
    for (int r = 0; w->reply_req && w->release_req && r < w->size; r++) {
        trd_mpi_drop(&w->reply_req[r], false);
        trd_mpi_drop(&w->release_req[r], false);
    }
    for (int r = 0; w->fail_req && r < w->size; r++)
        trd_mpi_drop(&w->fail_req[r], false);
    for (int r = 0; w->tell_req && r < w->size; r++)
        trd_mpi_drop(&w->tell_req[r], false);
}

void trd_mpi_destroy(mpi_wire *w, bool free_comm)
{
    int finalized = 1;
    PMPI_Finalized(&finalized);
    if (!finalized && w->comm != MPI_COMM_NULL) {
        drop_requests(w);
        if (free_comm)
            PMPI_Comm_free(&w->comm);
    }
    if (!finalized && free_comm && w->shm && trd_shm_quiet(w->shm))
        trd_mpi_pool_put(w); /* clean everywhere: the next wire may go on with it */
    free_memory(w);
}

/* Wires whose memory a pending vote may still write (trd_mpi_give_up):
 * kept here, reachable, until the process ends. */
static mpi_wire *kept;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

void trd_mpi_give_up(mpi_wire *w)
{
    int finalized = 1;
    PMPI_Finalized(&finalized);
    if (!finalized && w->comm != MPI_COMM_NULL)
        drop_requests(w);
    if (w->close_req == MPI_REQUEST_NULL || finalized) {
        free_memory(w);
        return;
    }
    /* a vote still pending (a nonblocking collective cannot be freed)
     * writes into the wire: its memory is kept for the process's life */
    pthread_mutex_lock(&kept_lock);
    w->close_next = kept;
    kept = w;
    pthread_mutex_unlock(&kept_lock);
}

void trd_mpi_free(void *ctx)
{
    mpi_wire *w = ctx;
    if (!w)
        return;
    int finalized = 1;
    PMPI_Finalized(&finalized);
    if (finalized || w->comm == MPI_COMM_NULL)
        trd_mpi_destroy(w, false);
    else
        trd_mpi_close(w); /* released once no message can reach it */
}

/* The first tag of the wire's own messages: 1 << 20, or the top T_COUNT
 * tags on an MPI that has fewer.  MPI_TAG_UB is cached on MPI_COMM_WORLD
 * (MPI-3.1 Sec. 8.1.2): Open MPI leaves it off communicators made by
 * MPI_Comm_split or MPI_Comm_create and their duplicates. */
static trd_status pick_ctrl_tag(mpi_wire *w)
{
    int *ub = NULL, flag = 0;
    int rc = PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
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
    w->arrived = calloc(n, sizeof *w->arrived);
    w->decided = calloc(n, sizeof *w->decided);
    if (!w->held || !w->reply || !w->reply_req || !w->release_out || !w->release_req ||
        !w->arrived || !w->decided) {
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

/* The wire's communicator: the caller's own (made for this wire alone)
 * or a duplicate of it; errors returned. */
static trd_status take_comm(mpi_wire *w, MPI_Comm comm, bool own)
{
    int rc = MPI_SUCCESS;
    if (own)
        w->comm = comm;
    else if ((rc = PMPI_Comm_dup(comm, &w->comm)) != MPI_SUCCESS)
        w->comm = MPI_COMM_NULL;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_set_errhandler(w->comm, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_rank(w->comm, &w->rank);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_size(w->comm, &w->size);
    return rc == MPI_SUCCESS ? TRD_OK
                             : trd_mpi_error(TRD_EBACKEND, rc, own ? "setting up the communicator"
                                                                   : "MPI_Comm_dup", -1);
}

/* w->world: the world ranks of the wire's ranks (local; NULL when a
 * process is not in the world, or out of memory: its rings are never
 * kept, mpi_pool.c). */
static void find_world(mpi_wire *w)
{
    MPI_Group mine, world;
    int *ranks = malloc((size_t)w->size * sizeof *ranks);
    w->world = malloc((size_t)w->size * sizeof *w->world);
    bool ok = ranks && w->world && PMPI_Comm_group(w->comm, &mine) == MPI_SUCCESS;
    if (ok) {
        for (int r = 0; r < w->size; r++)
            ranks[r] = r;
        ok = PMPI_Comm_group(MPI_COMM_WORLD, &world) == MPI_SUCCESS;
        if (ok) {
            ok = PMPI_Group_translate_ranks(mine, w->size, ranks, world, w->world) ==
                 MPI_SUCCESS;
            PMPI_Group_free(&world);
        }
        PMPI_Group_free(&mine);
    }
    for (int r = 0; ok && r < w->size; r++)
        ok = w->world[r] != MPI_UNDEFINED;
    free(ranks);
    if (!ok) {
        free(w->world);
        w->world = NULL;
    }
}

static trd_status setup(mpi_wire *w, MPI_Comm comm, const trd_wire_mpi_setup *o)
{
    trd_status s = take_comm(w, comm, o->own_comm);
    if (s != TRD_OK)
        return s;
    find_world(w);
    int rc = trd_mpi_count_node(w, o->node_ranks, o->node_procs);
    if (rc != MPI_SUCCESS)
        return trd_mpi_error(TRD_EBACKEND, rc, "counting the ranks of this node", -1);
    w->deferred = o->deferred;
    w->choose_path = o->choose_path;
    w->probe_given = o->choose_path ? o->probe : NULL;
    s = pick_ctrl_tag(w);
    if (s == TRD_OK && w->rank == 0)
        s = alloc_root(w);
    return s;
}

void trd_wire_mpi_setup_init(trd_wire_mpi_setup *o)
{
    *o = (trd_wire_mpi_setup){.own_comm = false, .node_ranks = 0, .node_procs = 0,
                              .deferred = false, .choose_path = false, .probe = NULL};
}

trd_status trd_wire_mpi_create(trd_wire **out, const void *mpi_comm)
{
    trd_wire_mpi_setup o;
    trd_wire_mpi_setup_init(&o);
    return trd_wire_mpi_create_with(out, mpi_comm, &o);
}

trd_status trd_wire_mpi_create_with(trd_wire **out, const void *mpi_comm,
                                    const trd_wire_mpi_setup *o)
{
    if (!out || !mpi_comm || !o)
        return trd_fail(TRD_EINVAL, "mpi wire: create needs out, a communicator and a set-up");
    *out = NULL;
    int init = 0, fin = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    if (!init || fin)
        return trd_fail(TRD_EINVAL, "mpi wire: MPI is %s (MPI_Init must come first)",
                        fin ? "finalized" : "not initialised");
    if (o->node_ranks < 0 || o->node_procs < 0)
        return trd_fail(TRD_EINVAL, "mpi wire: node_ranks %ld or node_procs %ld is negative",
                        (long)o->node_ranks, (long)o->node_procs);
    trd_mpi_reap();
    mpi_wire *w = calloc(1, sizeof *w);
    if (!w)
        return trd_fail(TRD_ENOMEM, "mpi wire: out of memory");
    w->comm = MPI_COMM_NULL;
    for (int c = 0; c < C_COUNT; c++)
        w->ctrl[c] = MPI_REQUEST_NULL;
    w->timeout = TRD_WIRE_MPI_TIMEOUT;
    trd_status s = setup(w, *(const MPI_Comm *)mpi_comm, o);
    if (s != TRD_OK) {
        trd_mpi_destroy(w, true); /* nothing was sent on it yet */
        return s;
    }
    int level = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&level);
    w->wire = (trd_wire){.ctx = w, .rank = w->rank, .size = w->size, .name = "mpi",
                         .node_size = w->node_ranks, .node_ranks = w->node_list,
                         .async = level == MPI_THREAD_MULTIPLE,
                         .isend = trd_mpi_isend, .irecv = trd_mpi_irecv, .wait = trd_mpi_wait,
                         .now = trd_mpi_now, .decide = trd_mpi_decide,
                         .end_dynamic = trd_mpi_end_dynamic, .barrier = trd_mpi_barrier,
                         .agree = trd_mpi_agree, .set_call = trd_mpi_set_call,
                         .long_choice = trd_mpi_long_choice, .long_path = trd_mpi_long_path,
                         .failed = trd_mpi_failed, .abort = trd_mpi_abort, .free = trd_mpi_free};
    trd_mpi_close_at_finalize();
    if (!o->deferred && (s = trd_mpi_prepare(w)) != TRD_OK) {
        trd_mpi_free(w);
        return s;
    }
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

void trd_wire_mpi_setup_init(trd_wire_mpi_setup *o)
{
    *o = (trd_wire_mpi_setup){.node_ranks = 0};
}

trd_status trd_wire_mpi_create_with(trd_wire **out, const void *mpi_comm,
                                    const trd_wire_mpi_setup *setup)
{
    (void)mpi_comm;
    (void)setup;
    if (out)
        *out = NULL;
    return trd_fail(TRD_EUNSUPPORTED, "treduce was built without MPI");
}

trd_status trd_wire_mpi_create(trd_wire **out, const void *mpi_comm)
{
    return trd_wire_mpi_create_with(out, mpi_comm, NULL);
}

trd_status trd_wire_mpi_set_timeout(trd_wire *w, double seconds)
{
    (void)w;
    (void)seconds;
    return trd_fail(TRD_EUNSUPPORTED, "treduce was built without MPI");
}

#endif
