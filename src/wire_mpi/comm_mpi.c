/* comm_mpi.c: communicators over the MPI wire (src/wire_mpi/mpi.c).  What is
 * MPI's own - the rings of one node, the measured path of long messages -
 * lives in the wire; the communicator asks it. */
#include <stdlib.h>

#include "core/error.h"
#include "runtime/comm.h"
#include "wire_mpi/mpi_wire.h"

#ifdef TRD_HAVE_MPI
#include <mpi.h>
#endif

bool trd_mpi_available(void) { return trd_wire_mpi_available(); }

size_t trd_comm_shm_max(const trd_comm *comm)
{
    return comm ? trd_wire_mpi_shm_max(&comm->wire) : 0; /* 0 for any other wire */
}

bool trd_comm_shm_probe(const trd_comm *comm, double *rings_s, double *mpi_s)
{
    return trd_wire_mpi_shm_probe(comm ? &comm->wire : NULL, rings_s, mpi_s);
}

void trd_mpi_opts_init(trd_mpi_opts *o)
{
    *o = (trd_mpi_opts){.timeout_s = 30.0, .own_comm = false, .node_ranks = 0,
                        .node_procs = 0, .deferred = false, .shm_probe = NULL};
}

trd_status trd_comm_mpi_create(trd_comm **out, const void *mpi_comm, double timeout_s)
{
    trd_mpi_opts o;
    trd_mpi_opts_init(&o);
    o.timeout_s = timeout_s;
    return trd_comm_mpi_create_with(out, mpi_comm, &o);
}

trd_status trd_comm_mpi_create_with(trd_comm **out, const void *mpi_comm, const trd_mpi_opts *o)
{
    trd_wire *w = NULL;
    if (!out || !o)
        return trd_fail(TRD_EINVAL, "trd_comm_mpi_create: NULL argument (%s)", out ? "opts" : "out");
    *out = NULL;
    if (!(o->timeout_s > 0) || o->timeout_s > 1e6)
        return trd_fail(TRD_EINVAL, "timeout = %g s is invalid: need 0 < timeout <= 1e6",
                        o->timeout_s);
    if (o->own_comm && !mpi_comm)
        return trd_fail(TRD_EINVAL, "trd_comm_mpi_create: own_comm needs a communicator");
#ifdef TRD_HAVE_MPI
    MPI_Comm world = MPI_COMM_WORLD;
    if (!mpi_comm)
        mpi_comm = &world; /* duplicated by the wire: need not outlive this call */
#endif
    trd_wire_mpi_setup setup;
    trd_wire_mpi_setup_init(&setup);
    setup.own_comm = o->own_comm;
    setup.node_ranks = o->node_ranks;
    setup.node_procs = o->node_procs;
    setup.deferred = o->deferred;
    setup.choose_path = true;
    setup.probe = o->shm_probe;
    trd_status st = trd_wire_mpi_create_with(&w, mpi_comm, &setup);
    if (st == TRD_OK)
        st = trd_wire_mpi_set_timeout(w, o->timeout_s);
    if (st == TRD_OK && !(*out = trd_comm_new(*w, o->timeout_s))) /* its free releases *w */
        st = trd_fail(TRD_ENOMEM, "runtime: out of memory");
    if (st != TRD_OK && w)
        w->free(w->ctx);
    return st;
}

static trd_status create_world(trd_comm **comm, int32_t p, double timeout_s)
{
    (void)p; /* the launcher's */
    return trd_comm_mpi_create(comm, NULL, timeout_s); /* MPI_COMM_WORLD */
}

static const trd_wire_info mpi_wire = {
    "mpi", "one MPI process per rank (mpirun -np P); shared-memory rings on one node", true, 1,
    create_world, "MPI processes"};

const trd_wire_info *trd_wire_mpi(void) { return &mpi_wire; }
