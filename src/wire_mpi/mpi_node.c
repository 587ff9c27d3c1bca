/* mpi_node.c: the MPI wire on one node - the shared-memory rings of
 * shm.h set up when every rank of the communicator shares this node, their
 * limit, and the choice of the path of long messages (rings or MPI),
 * measured by the wire itself with its own sends, receives, barrier and
 * agreement (no collective of the runtime's runs inside a wire). */
#include "wire_mpi/mpi_wire.h"

#include "core/error.h"

#ifdef TRD_HAVE_MPI

#include "core/fifo.h"
#include "wire_mpi/mpi_internal.h"
#include "wire_mpi/shm.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The node's ranks, ascending (the split's key is the rank), and their
 * processes, gathered within the node's communicator that the split just
 * made (w->node_list, w->node_pids). */
static int gather_node(mpi_wire *w, MPI_Comm node, int local)
{
    int32_t me[2] = {w->rank, (int32_t)getpid()};
    int32_t *both = malloc(2 * (size_t)local * sizeof *both);
    w->node_list = malloc((size_t)local * sizeof *w->node_list);
    w->node_pids = malloc((size_t)local * sizeof *w->node_pids);
    int rc = both && w->node_list && w->node_pids ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allgather(me, 2, MPI_INT32_T, both, 2, MPI_INT32_T, node);
    for (int i = 0; rc == MPI_SUCCESS && i < local; i++) {
        w->node_list[i] = both[2 * i];
        w->node_pids[i] = both[2 * i + 1];
    }
    free(both);
    if (rc != MPI_SUCCESS) {
        free(w->node_list);
        free(w->node_pids);
        w->node_list = w->node_pids = NULL;
    }
    return rc;
}

/* Whether process pid has ended: gone, or a zombie its parent has not
 * reaped yet (a killed rank under mpirun stays one a moment). */
static bool ended(int32_t pid)
{
    if (kill((pid_t)pid, 0) != 0)
        return errno == ESRCH;
    char path[64], stat[256];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(stat, 1, sizeof stat - 1, f) : 0;
    if (f)
        fclose(f);
    stat[n] = '\0';
    const char *state = strrchr(stat, ')'); /* "pid (name) S ...": the state follows the name */
    return state && (state[2] == 'Z' || state[2] == 'X');
}

void trd_mpi_silent(const mpi_wire *w, char *buf, size_t size, size_t *at)
{
    for (int i = 0; w->node_pids && i < w->node_ranks && *at < size; i++) {
        if (w->node_list[i] == w->rank || !ended(w->node_pids[i]))
            continue;
        int n = snprintf(buf + *at, size - *at, "; rank %d (pid %d) is dead",
                         (int)w->node_list[i], (int)w->node_pids[i]);
        *at += n > 0 ? (size_t)n : 0;
    }
}

/* w->node_ranks: how many of the communicator's ranks run on this node
 * (known, or counted by MPI_Comm_split_type); and w->crowded: whether the
 * node's processes (procs, else those ranks) outnumber its cores online
 * (back_off), or TRD_MPI_CROWDED=1 says the machine's cores are shared
 * anyway (the hosts of `treduce testbed run` are namespaces of one
 * machine). */
int trd_mpi_count_node(mpi_wire *w, int32_t known, int32_t procs)
{
    int rc = MPI_SUCCESS, local = known;
    if (known == 0) {
        MPI_Comm node;
        rc = PMPI_Comm_split_type(w->comm, MPI_COMM_TYPE_SHARED, w->rank, MPI_INFO_NULL, &node);
        if (rc != MPI_SUCCESS)
            return rc;
        rc = PMPI_Comm_size(node, &local);
        if (rc == MPI_SUCCESS)
            rc = gather_node(w, node, local);
        PMPI_Comm_free(&node);
    }
    w->node_ranks = local;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const char *forced = getenv("TRD_MPI_CROWDED");
    int competing = procs > local ? procs : local;
    w->crowded = cores < 1 || competing > cores || (forced && !strcmp(forced, "1"));
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

/* Rank 0's word on the rings: max -1 when it refused TRD_MPI_SHM_MAX;
 * pooled: the segment is one a closed wire over these processes left
 * (mpi_pool.c), else a new one. */
typedef struct seg_msg {
    int64_t max, frag, choice, pooled;
    char name[64];
} seg_msg;

/* The longest a rank waits for its own close of a pooled segment. */
#define POOL_WAIT_S 1.0

/* A message of the set-up between rank 0 and `peer`, sent or received
 * and waited for (the wire's own tag T_SETUP). */
static trd_status setup_msg(mpi_wire *w, bool send, int peer, void *buf, int bytes,
                            double deadline)
{
    MPI_Request r;
    int rc = send ? PMPI_Isend(buf, bytes, MPI_BYTE, peer, w->ctrl_tag + T_SETUP, w->comm, &r)
                  : PMPI_Irecv(buf, bytes, MPI_BYTE, peer, w->ctrl_tag + T_SETUP, w->comm, &r);
    if (rc != MPI_SUCCESS)
        return trd_mpi_error(TRD_EIO, rc, "a message of the set-up", w->rank);
    trd_status s = trd_mpi_finish(w, &r, deadline);
    if (s != TRD_OK)
        trd_mpi_drop(&r, !send);
    return s;
}

/* A new segment's pages, written by this rank before it answers: the
 * verdict then comes after every rank's, so none writes a zero over a
 * message already sent (shm.h trd_shm_touch).  Where the rings are made
 * inside a call (deferred), the first messages take the page faults
 * instead: they cost milliseconds up front. */
static void touch(mpi_wire *w)
{
    if (!w->deferred)
        trd_shm_touch(w->shm);
}

/* Rank 0's segment for the round: a pooled one (first round), or new. */
static void root_segment(mpi_wire *w, seg_msg *seg, bool pool)
{
    w->shm = pool ? trd_mpi_pool_take_any(w, (size_t)seg->frag, seg->name) : NULL;
    seg->pooled = w->shm != NULL;
    if (!w->shm &&
        trd_shm_open(&w->shm, seg->name, true, 0, w->size, (size_t)seg->frag) != TRD_OK)
        seg->max = 0;
    else if (!seg->pooled)
        touch(w);
}

/* Rank 0: its word sent to every rank, each answers whether it has its end
 * of the segment, the verdict (all do) goes back to each.  A new segment's
 * name is unlinked once every rank has answered. */
static trd_status round_root(mpi_wire *w, seg_msg *seg, int *all, double deadline)
{
    trd_status s = TRD_OK;
    for (int r = 1; r < w->size && s == TRD_OK; r++)
        s = setup_msg(w, true, r, seg, (int)sizeof *seg, deadline);
    *all = seg->max > 0;
    for (int r = 1; r < w->size && s == TRD_OK && seg->max > 0; r++) {
        int ok = 0;
        s = setup_msg(w, false, r, &ok, (int)sizeof ok, deadline);
        *all = *all && ok;
    }
    if (seg->max > 0 && !seg->pooled)
        trd_shm_unlink(seg->name); /* mapped everywhere, or by nobody else */
    for (int r = 1; r < w->size && s == TRD_OK && seg->max > 0; r++)
        s = setup_msg(w, true, r, all, (int)sizeof *all, deadline);
    return s;
}

static trd_status setup_root(mpi_wire *w, seg_msg *seg, int *all, double deadline)
{
    trd_status s = shm_limit(w, &seg->max, &seg->frag, &seg->choice);
    if (s != TRD_OK) {
        char why[256];
        snprintf(why, sizeof why, "%s", trd_errmsg());
        seg->max = -1;
        s = round_root(w, seg, all, deadline);
        return s != TRD_OK ? s : trd_fail(TRD_EINVAL, "%s", why);
    }
    for (int round = 0; round < 2 && s == TRD_OK; round++) {
        if (seg->max > 0)
            root_segment(w, seg, round == 0);
        s = round_root(w, seg, all, deadline);
        if (s != TRD_OK || *all || !seg->pooled)
            break;
        trd_shm_free(w->shm); /* a rank lacked its end: a new segment */
        w->shm = NULL;
    }
    return s;
}

static trd_status setup_leaf(mpi_wire *w, seg_msg *seg, int *all, double deadline)
{
    trd_status s = TRD_OK;
    for (int round = 0; round < 2 && s == TRD_OK; round++) {
        if ((s = setup_msg(w, false, 0, seg, (int)sizeof *seg, deadline)) != TRD_OK)
            break;
        if (seg->max < 0)
            return trd_fail(TRD_EINVAL, "mpi wire: rank 0 refused its TRD_MPI_SHM_MAX (not a "
                            "byte count)");
        if (seg->max == 0)
            break;
        seg->name[sizeof seg->name - 1] = '\0';
        double wait = PMPI_Wtime() + (w->timeout < POOL_WAIT_S ? w->timeout : POOL_WAIT_S);
        if (seg->pooled)
            w->shm = trd_mpi_pool_take(w, seg->name, (size_t)seg->frag, wait);
        else if (trd_shm_open(&w->shm, seg->name, false, w->rank, w->size,
                              (size_t)seg->frag) == TRD_OK)
            touch(w);
        int ok = w->shm != NULL;
        s = setup_msg(w, true, 0, &ok, (int)sizeof ok, deadline);
        if (s == TRD_OK)
            s = setup_msg(w, false, 0, all, (int)sizeof *all, deadline);
        if (s != TRD_OK || *all || !seg->pooled)
            break;
        trd_shm_free(w->shm); /* some rank lacked its end: rank 0 makes a new one */
        w->shm = NULL;
    }
    return s;
}

/* The rings of shm.h, when every rank of the communicator is on this node:
 * rank 0 offers their segment (one kept from a closed wire over the same
 * processes, or a new one) and tells the others its name and limit; if any
 * rank cannot take its end, every rank goes without (MPI only). */
static trd_status setup_shm(mpi_wire *w)
{
    if (w->node_ranks != w->size || w->size < 2)
        return TRD_OK; /* the same on every rank: no node holds them all */
    seg_msg seg = {0, 0, 0, 0, ""};
    int all = 0;
    double deadline = PMPI_Wtime() + w->timeout;
    trd_status s = w->rank == 0 ? setup_root(w, &seg, &all, deadline)
                                : setup_leaf(w, &seg, &all, deadline);
    if (s == TRD_OK && all) {
        w->shm_below = (size_t)seg.max + 1;
        w->shm_choice = seg.choice;
        memcpy(w->shm_name, seg.name, sizeof w->shm_name);
        trd_shm_set_call(w->shm, w->call_sig);
    } else {
        trd_shm_free(w->shm);
        w->shm = NULL;
    }
    return s;
}

static trd_status choose_path(mpi_wire *w);

trd_status trd_mpi_ready(mpi_wire *w)
{
    return w->ready ? trd_mpi_check_usable(w) : trd_mpi_prepare(w);
}

trd_status trd_mpi_prepare(mpi_wire *w)
{
    trd_status s = trd_mpi_check_usable(w);
    if (s != TRD_OK || w->ready)
        return s;
    w->ready = true; /* the probe below sends through the wire */
    s = setup_shm(w);
    if (s == TRD_OK && w->choose_path)
        s = choose_path(w);
    return trd_mpi_broke(w, s);
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
 * each way, alternated, the first PROBE_WARM dropped (milliseconds).
 * 64 KiB lies in the middle of the sizes at stake
 * (docs/RUNTIME_INTERNALS.md, "Shared-memory rings"). */
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
        st = trd_mpi_barrier(w, PMPI_Wtime() + w->timeout);
    double t0 = PMPI_Wtime();
    if (st == TRD_OK)
        st = probe_reduce(w, acc, in);
    *seconds = PMPI_Wtime() - t0;
    return st == TRD_OK ? trd_mpi_barrier(w, PMPI_Wtime() + w->timeout) : st;
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
    return st == TRD_OK ? trd_mpi_agree(w, w->probe, 2, PMPI_Wtime() + w->timeout) : st;
}

/* The probe kept the rings for every message. */
static bool kept_rings(const mpi_wire *w)
{
    return w->probe[0] < PROBE_MARGIN * w->probe[1];
}

/* Messages longer than the default limit, where every rank has a core:
 * through the rings (two copies, the receiver's overlapping the sender's)
 * or through MPI (one copy by the receiver).  Which is faster depends on
 * how the two cores share their caches, which can differ from one launch
 * to the next on the same machine (docs/RUNTIME_INTERNALS.md,
 * "Shared-memory rings").  So both are measured and the faster kept. */
/* The probe, and the limit it keeps. */
static trd_status measure_path(mpi_wire *w)
{
    double *acc = malloc(PROBE_COUNT * sizeof *acc), *in = malloc(PROBE_COUNT * sizeof *in);
    trd_status st = acc && in ? TRD_OK : trd_fail(TRD_ENOMEM, "mpi wire: out of memory");
    for (int i = 0; st == TRD_OK && i < PROBE_COUNT; i++)
        acc[i] = i % 7;
    if (st == TRD_OK)
        st = probe_paths(w, acc, in);
    if (st == TRD_OK)
        st = trd_wire_mpi_set_shm_max(&w->wire,
                                      kept_rings(w) ? INT_MAX : TRD_MPI_SHM_MAX_DEFAULT);
    if (st != TRD_OK)
        w->probe[0] = w->probe[1] = 0; /* not measured */
    free(acc);
    free(in);
    return st;
}

/* Where the path is a choice: the given probe's, or measured. */
static trd_status choose_path(mpi_wire *w)
{
    if (!w->shm_choice)
        return TRD_OK;
    if (!w->probe_given || !(w->probe_given[0] > 0 && w->probe_given[1] > 0))
        return measure_path(w);
    w->probe[0] = w->probe_given[0];
    w->probe[1] = w->probe_given[1];
    return trd_wire_mpi_set_shm_max(&w->wire, kept_rings(w) ? INT_MAX : TRD_MPI_SHM_MAX_DEFAULT);
}

trd_status trd_wire_mpi_choose_long_path(trd_wire *wire)
{
    if (!trd_mpi_is_wire(wire))
        return TRD_OK;
    mpi_wire *w = wire->ctx;
    trd_status st = trd_mpi_ready(w);
    return st != TRD_OK || !w->shm_choice ? st : measure_path(w);
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
    trd_status st = w ? trd_mpi_ready(w) : TRD_OK;
    if (!w || st != TRD_OK || other == w->long_other || !(w->probe[1] > 0))
        return st;
    bool rings = kept_rings(w) != other;
    st = trd_wire_mpi_set_shm_max(wire, rings ? INT_MAX : TRD_MPI_SHM_MAX_DEFAULT);
    if (st == TRD_OK)
        w->long_other = other;
    return st;
}

/* wire.h's long_choice and long_path. */
bool trd_mpi_long_choice(void *ctx, size_t bytes)
{
    return trd_wire_mpi_long_choice(&((mpi_wire *)ctx)->wire, bytes);
}

trd_status trd_mpi_long_path(void *ctx, bool other)
{
    return trd_wire_mpi_long_path(&((mpi_wire *)ctx)->wire, other);
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
