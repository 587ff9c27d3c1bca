/* comm_mpi.c: communicators over the MPI wire (src/wire/mpi.c). */
#include <limits.h>
#include <stdlib.h>

#include "core/error.h"
#include "runtime/calibrate.h"
#include "runtime/comm.h"
#include "wire/mpi_wire.h"

#ifdef TRD_HAVE_MPI
#include <mpi.h>
#endif

/* The long-message probe: PROBE_ROUNDS reduces of PROBE_COUNT doubles
 * each way, alternated, the first PROBE_WARM dropped (~1.5 ms at np 2).
 * 64 KiB lies in the middle of the sizes at stake (docs/RUNTIME.md,
 * "Transports"). */
#define PROBE_COUNT 8192
#define PROBE_ROUNDS 40
#define PROBE_WARM 10
/* The rings are kept only when clearly faster: a tie goes to MPI's one copy. */
#define PROBE_MARGIN 0.95

bool trd_mpi_available(void) { return trd_wire_mpi_available(); }

size_t trd_comm_shm_max(const trd_comm *comm)
{
    return comm ? trd_wire_mpi_shm_max(&comm->wire) : 0; /* 0 for any other wire */
}

bool trd_comm_shm_probe(const trd_comm *comm, double *rings_s, double *mpi_s)
{
    bool measured = comm && comm->shm_probe[1] > 0;
    if (rings_s)
        *rings_s = measured ? comm->shm_probe[0] : 0.0;
    if (mpi_s)
        *mpi_s = measured ? comm->shm_probe[1] : 0.0;
    return measured;
}

bool trd_comm_long_choice(const trd_comm *c, size_t bytes)
{
    return c->shm_probe[1] > 0 && bytes > TRD_MPI_SHM_MAX_DEFAULT;
}

/* The probe kept the rings for every message. */
static bool kept_rings(const trd_comm *c)
{
    return c->shm_probe[0] < PROBE_MARGIN * c->shm_probe[1];
}

trd_status trd_comm_long_path(trd_comm *c, bool other)
{
    if (other == c->long_other || !(c->shm_probe[1] > 0))
        return TRD_OK;
    bool rings = kept_rings(c) != other;
    trd_status st = trd_wire_mpi_set_shm_max(&c->wire, rings ? INT_MAX : TRD_MPI_SHM_MAX_DEFAULT);
    if (st == TRD_OK)
        c->long_other = other;
    return st;
}

/* One timed binomial reduce with the rings' limit set to `limit`. */
static trd_status probe_call(trd_comm *c, size_t limit, const double *in, double *out,
                             const trd_op *sum, double *seconds)
{
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = "binomial";
    trd_status st = trd_wire_mpi_set_shm_max(&c->wire, limit);
    if (st == TRD_OK)
        st = trd_comm_barrier(c); /* no message in flight when the limit changes */
    double t0 = trd_comm_now(c);
    if (st == TRD_OK)
        st = trd_reduce(c, in, out, PROBE_COUNT, sum, 0, &o);
    *seconds = trd_comm_now(c) - t0;
    return st == TRD_OK ? trd_comm_barrier(c) : st;
}

/* Times the probe both ways; c->shm_probe gets the slowest rank's medians. */
static trd_status probe_paths(trd_comm *c, const trd_op *sum, const double *in, double *out)
{
    const size_t limit[2] = {INT_MAX, TRD_MPI_SHM_MAX_DEFAULT}; /* rings, MPI */
    double t[2][PROBE_ROUNDS], mine[2];
    trd_status st = TRD_OK;
    for (int k = 0; k < PROBE_ROUNDS && st == TRD_OK; k++)
        for (int way = 0; way < 2 && st == TRD_OK; way++)
            st = probe_call(c, limit[way], in, out, sum, &t[way][k]);
    for (int way = 0; way < 2 && st == TRD_OK; way++)
        mine[way] = trd_calibrate_median(t[way] + PROBE_WARM, PROBE_ROUNDS - PROBE_WARM);
    return st == TRD_OK ? trd_comm_agree_max(c, mine, c->shm_probe, 2) : st;
}

/* Messages longer than the default limit, where every rank has a core:
 * through the rings (two copies, the receiver's overlapping the sender's)
 * or through MPI (one copy by the receiver).  Which is faster depends on
 * how the two cores share their caches: 0.5-0.8x MPI's time through the
 * rings in most runs on this project's VM, 1.1-1.75x in others
 * (docs/RUNTIME.md, "Transports").  So both are measured and the faster
 * kept. */
static trd_status choose_long_path(trd_comm *c)
{
    trd_op *sum = NULL;
    double *in = malloc(PROBE_COUNT * sizeof *in), *out = malloc(PROBE_COUNT * sizeof *out);
    trd_status st = in && out ? trd_op_builtin(&sum, TRD_OP_SUM, TRD_DOUBLE)
                              : trd_fail(TRD_ENOMEM, "runtime: out of memory");
    for (int i = 0; st == TRD_OK && i < PROBE_COUNT; i++)
        in[i] = i % 7;
    if (st == TRD_OK)
        st = probe_paths(c, sum, in, out);
    if (st == TRD_OK)
        st = trd_wire_mpi_set_shm_max(&c->wire,
                                      kept_rings(c) ? INT_MAX : TRD_MPI_SHM_MAX_DEFAULT);
    trd_op_free(sum);
    free(in);
    free(out);
    return st;
}

trd_status trd_comm_mpi_create(trd_comm **out, const void *mpi_comm, double timeout_s)
{
    trd_wire *w = NULL;
    if (!out)
        return trd_fail(TRD_EINVAL, "trd_comm_mpi_create: NULL argument (out)");
    *out = NULL;
    if (!(timeout_s > 0) || timeout_s > 1e6)
        return trd_fail(TRD_EINVAL, "timeout = %g s is invalid: need 0 < timeout <= 1e6",
                        timeout_s);
#ifdef TRD_HAVE_MPI
    MPI_Comm world = MPI_COMM_WORLD;
    if (!mpi_comm)
        mpi_comm = &world; /* duplicated by the wire: need not outlive this call */
#endif
    trd_status st = trd_wire_mpi_create(&w, mpi_comm);
    if (st == TRD_OK)
        st = trd_wire_mpi_set_timeout(w, timeout_s);
    if (st == TRD_OK && !(*out = trd_comm_new(*w, timeout_s))) /* its free releases *w */
        st = trd_fail(TRD_ENOMEM, "runtime: out of memory");
    if (st != TRD_OK) {
        if (w)
            w->free(w->ctx);
        return st;
    }
    if (trd_wire_mpi_shm_choice(w) && (st = choose_long_path(*out)) != TRD_OK) {
        trd_comm_free(*out);
        *out = NULL;
    }
    return st;
}
