/* mpi_node.c: the MPI wire on one node - the shared-memory rings of
 * shm.h set up when every rank of the communicator shares this node, their
 * limit, and the choice of the path of long messages (rings or MPI),
 * measured by the wire itself with its own sends, receives, barrier and
 * agreement (no collective of the runtime's runs inside a wire). */
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

/* The long-message probe: PROBE_ROUNDS reduces of PROBE_COUNT doubles
 * each way, alternated, the first PROBE_WARM dropped (~1.5 ms at np 2).
 * 64 KiB lies in the middle of the sizes at stake (docs/RUNTIME.md,
 * "Transports"). */
#define PROBE_COUNT 8192
#define PROBE_ROUNDS 40
#define PROBE_WARM 10
/* The rings are kept only when clearly faster: a tie goes to MPI's one copy. */
#define PROBE_MARGIN 0.95

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* A binomial reduce of PROBE_COUNT doubles to rank 0 (the messages and sums
 * of the runtime's binomial tree, Prop. 13), through the wire's own sends
 * and receives: rank r sends its sum to r - 2^k at the first bit k set in
 * r, after adding those of r + 2^j for every j < k. */
static trd_status probe_reduce(mpi_wire *w, double *acc, double *in)
{
    int32_t id, from;
    trd_status st = TRD_OK;
    for (int mask = 1; mask < w->size && st == TRD_OK; mask <<= 1) {
        bool sends = w->rank & mask;
        int peer = sends ? w->rank - mask : w->rank + mask;
        if (!sends && peer >= w->size)
            continue;
        st = sends ? trd_mpi_isend(w, peer, 0, acc, sizeof *acc * PROBE_COUNT, 0)
                   : trd_mpi_irecv(w, peer, 0, in, sizeof *in * PROBE_COUNT, 0);
        if (st == TRD_OK)
            st = trd_mpi_wait(w, w->timeout, &id, &from);
        if (sends)
            break;
        for (int i = 0; st == TRD_OK && i < PROBE_COUNT; i++)
            acc[i] += in[i];
    }
    return st;
}

/* One timed reduce with the rings' limit set to `limit`, between barriers:
 * no message is in flight when the limit changes. */
static trd_status probe_call(mpi_wire *w, size_t limit, double *acc, double *in,
                             double *seconds)
{
    trd_status st = trd_wire_mpi_set_shm_max(&w->wire, limit);
    if (st == TRD_OK)
        st = trd_mpi_barrier(w, MPI_Wtime() + w->timeout);
    double t0 = MPI_Wtime();
    if (st == TRD_OK)
        st = probe_reduce(w, acc, in);
    *seconds = MPI_Wtime() - t0;
    return st == TRD_OK ? trd_mpi_barrier(w, MPI_Wtime() + w->timeout) : st;
}

/* Times the probe both ways; w->probe gets the slowest rank's medians. */
static trd_status probe_paths(mpi_wire *w, double *acc, double *in)
{
    const size_t limit[2] = {INT_MAX, TRD_MPI_SHM_MAX_DEFAULT}; /* rings, MPI */
    double t[2][PROBE_ROUNDS];
    trd_status st = TRD_OK;
    for (int k = 0; k < PROBE_ROUNDS && st == TRD_OK; k++)
        for (int way = 0; way < 2 && st == TRD_OK; way++)
            st = probe_call(w, limit[way], acc, in, &t[way][k]);
    for (int way = 0; way < 2 && st == TRD_OK; way++) {
        qsort(t[way] + PROBE_WARM, PROBE_ROUNDS - PROBE_WARM, sizeof(double), by_value);
        w->probe[way] = t[way][PROBE_WARM + (PROBE_ROUNDS - PROBE_WARM) / 2];
    }
    return st == TRD_OK ? trd_mpi_agree(w, w->probe, 2, MPI_Wtime() + w->timeout) : st;
}

/* The probe kept the rings for every message. */
static bool kept_rings(const mpi_wire *w)
{
    return w->probe[0] < PROBE_MARGIN * w->probe[1];
}

/* Messages longer than the default limit, where every rank has a core:
 * through the rings (two copies, the receiver's overlapping the sender's)
 * or through MPI (one copy by the receiver).  Which is faster depends on
 * how the two cores share their caches: 0.5-0.8x MPI's time through the
 * rings in most runs on this project's VM, 1.1-1.75x in others
 * (docs/RUNTIME.md, "Transports").  So both are measured and the faster
 * kept. */
trd_status trd_wire_mpi_choose_long_path(trd_wire *wire)
{
    if (!trd_wire_mpi_shm_choice(wire))
        return TRD_OK;
    mpi_wire *w = wire->ctx;
    double *acc = malloc(PROBE_COUNT * sizeof *acc), *in = malloc(PROBE_COUNT * sizeof *in);
    trd_status st = acc && in ? TRD_OK : trd_fail(TRD_ENOMEM, "mpi wire: out of memory");
    for (int i = 0; st == TRD_OK && i < PROBE_COUNT; i++)
        acc[i] = i % 7;
    if (st == TRD_OK)
        st = probe_paths(w, acc, in);
    if (st == TRD_OK)
        st = trd_wire_mpi_set_shm_max(wire, kept_rings(w) ? INT_MAX : TRD_MPI_SHM_MAX_DEFAULT);
    if (st != TRD_OK)
        w->probe[0] = w->probe[1] = 0; /* not measured */
    free(acc);
    free(in);
    return st;
}

bool trd_wire_mpi_shm_probe(const trd_wire *wire, double *rings_s, double *mpi_s)
{
    const mpi_wire *w = trd_mpi_is_wire(wire) ? wire->ctx : NULL;
    bool measured = w && w->probe[1] > 0;
    if (rings_s)
        *rings_s = measured ? w->probe[0] : 0.0;
    if (mpi_s)
        *mpi_s = measured ? w->probe[1] : 0.0;
    return measured;
}

bool trd_wire_mpi_long_choice(const trd_wire *wire, size_t bytes)
{
    return trd_wire_mpi_shm_probe(wire, NULL, NULL) && bytes > TRD_MPI_SHM_MAX_DEFAULT;
}

trd_status trd_wire_mpi_long_path(trd_wire *wire, bool other)
{
    mpi_wire *w = trd_mpi_is_wire(wire) ? wire->ctx : NULL;
    if (!w || other == w->long_other || !(w->probe[1] > 0))
        return TRD_OK;
    bool rings = kept_rings(w) != other;
    trd_status st = trd_wire_mpi_set_shm_max(wire, rings ? INT_MAX : TRD_MPI_SHM_MAX_DEFAULT);
    if (st == TRD_OK)
        w->long_other = other;
    return st;
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

trd_status trd_wire_mpi_choose_long_path(trd_wire *w)
{
    (void)w;
    return TRD_OK;
}

bool trd_wire_mpi_shm_probe(const trd_wire *w, double *rings_s, double *mpi_s)
{
    (void)w;
    if (rings_s)
        *rings_s = 0.0;
    if (mpi_s)
        *mpi_s = 0.0;
    return false;
}

bool trd_wire_mpi_long_choice(const trd_wire *w, size_t bytes)
{
    (void)w;
    (void)bytes;
    return false;
}

trd_status trd_wire_mpi_long_path(trd_wire *w, bool other)
{
    (void)w;
    (void)other;
    return TRD_OK;
}

#endif
