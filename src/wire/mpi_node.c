/* mpi_node.c: the MPI wire on one node - the shared-memory rings of
 * shm.h set up when every rank of the communicator shares this node, their
 * limit, and the choice of the path of long messages (rings or MPI),
 * measured by the wire itself. */
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

/* *local: how many of the communicator's ranks run on this node; and
 * w->crowded: whether that is more than it has cores online (back_off),
 * or TRD_MPI_CROWDED=1 says the machine's cores are shared anyway (the
 * hosts of `treduce testbed run` are namespaces of one machine). */
int trd_mpi_count_node(mpi_wire *w, int *local)
{
    MPI_Comm node;
    int rc = MPI_Comm_split_type(w->comm, MPI_COMM_TYPE_SHARED, w->rank, MPI_INFO_NULL, &node);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = MPI_Comm_size(node, local);
    MPI_Comm_free(&node);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const char *forced = getenv("TRD_MPI_CROWDED");
    w->crowded = cores < 1 || *local > cores || (forced && !strcmp(forced, "1"));
    return rc;
}

/* Rank 0: the largest message for the rings, from TRD_MPI_SHM_MAX (bytes;
 * 0: no rings) or the default (mpi_wire.h: larger on a crowded node), and
 * their slots' size: at most TRD_SHM_FRAGMENT, cut to what fits
 * (trd_shm_fit; 0: no rings). */
static trd_status shm_limit(const mpi_wire *w, int64_t *max, int64_t *frag, int64_t *choice)
{
    const char *text = getenv("TRD_MPI_SHM_MAX");
    *choice = !text && !w->crowded;
    char *end = NULL;
    long long v = text ? strtoll(text, &end, 10)
                       : w->crowded ? TRD_MPI_SHM_MAX_CROWDED : TRD_MPI_SHM_MAX_DEFAULT;
    if (text && (end == text || *end || v < 0 || v > INT_MAX))
        return trd_fail(TRD_EINVAL, "mpi wire: TRD_MPI_SHM_MAX=%s is not a byte count from 0 "
                        "to %d", text, INT_MAX);
    *frag = (int64_t)trd_shm_fit(w->size, v < TRD_SHM_FRAGMENT ? (size_t)v : TRD_SHM_FRAGMENT);
    *max = *frag > 0 ? v : 0;
    return TRD_OK;
}

/* The rings of shm.h, when every rank of the communicator is on this node:
 * rank 0 creates their segment and tells the others its name and limit;
 * if any rank cannot map it, every rank goes without (MPI only). */
trd_status trd_mpi_setup_shm(mpi_wire *w, int local)
{
    if (local != w->size || w->size < 2)
        return TRD_OK; /* the same on every rank: no node holds them all */
    struct {
        int64_t max, frag, choice; /* max -1: rank 0 refused TRD_MPI_SHM_MAX */
        char name[64];
    } seg = {0, 0, 0, ""};
    trd_status s = TRD_OK;
    if (w->rank == 0) {
        s = shm_limit(w, &seg.max, &seg.frag, &seg.choice);
        if (s != TRD_OK)
            seg.max = -1;
        else if (seg.max > 0 &&
                 trd_shm_open(&w->shm, seg.name, true, 0, w->size, (size_t)seg.frag) != TRD_OK)
            seg.max = 0;
    }
    int rc = MPI_Bcast(&seg, (int)sizeof seg, MPI_BYTE, 0, w->comm);
    if (rc != MPI_SUCCESS)
        return trd_mpi_error(TRD_EBACKEND, rc, "MPI_Bcast of the shared segment", w->rank);
    if (seg.max < 0)
        return w->rank == 0 ? s : trd_fail(TRD_EINVAL, "mpi wire: rank 0 refused its "
                                           "TRD_MPI_SHM_MAX (not a byte count)");
    if (seg.max == 0)
        return TRD_OK;
    int ok = w->rank == 0 || trd_shm_open(&w->shm, seg.name, false, w->rank, w->size,
                                          (size_t)seg.frag) == TRD_OK, all = 0;
    rc = MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, w->comm);
    if (w->rank == 0)
        trd_shm_unlink(seg.name); /* mapped everywhere now: nothing to leave behind */
    if (rc != MPI_SUCCESS)
        return trd_mpi_error(TRD_EBACKEND, rc, "MPI_Allreduce of the shared segment", w->rank);
    if (all) {
        w->shm_below = (size_t)seg.max + 1;
        w->shm_choice = seg.choice;
    } else {
        trd_shm_free(w->shm);
        w->shm = NULL;
    }
    return TRD_OK;
}

size_t trd_wire_mpi_shm_max(const trd_wire *w)
{
    if (!trd_mpi_is_wire(w))
        return 0;
    const mpi_wire *m = w->ctx;
    return m->shm_below ? m->shm_below - 1 : 0;
}

bool trd_wire_mpi_shm_choice(const trd_wire *w)
{
    return trd_mpi_is_wire(w) && ((const mpi_wire *)w->ctx)->shm_choice;
}

trd_status trd_wire_mpi_set_shm_max(trd_wire *w, size_t max)
{
    mpi_wire *m = trd_mpi_is_wire(w) ? w->ctx : NULL;
    if (!m || !m->shm_below || max == 0 || max > INT_MAX)
        return trd_fail(TRD_EINVAL, "mpi wire: %s", !m ? "not an MPI wire"
                        : !m->shm_below ? "no shared-memory rings to set a limit for"
                                        : "the limit must be from 1 to INT_MAX bytes");
    m->shm_below = max + 1;
    return TRD_OK;
}

#else /* !TRD_HAVE_MPI */

size_t trd_wire_mpi_shm_max(const trd_wire *w)
{
    (void)w;
    return 0;
}

bool trd_wire_mpi_shm_choice(const trd_wire *w)
{
    (void)w;
    return false;
}

trd_status trd_wire_mpi_set_shm_max(trd_wire *w, size_t max)
{
    (void)w;
    (void)max;
    return trd_fail(TRD_EUNSUPPORTED, "treduce was built without MPI");
}

#endif
