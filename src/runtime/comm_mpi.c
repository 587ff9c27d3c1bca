/* comm_mpi.c: communicators over the MPI wire (src/wire/mpi.c).  What is
 * MPI's own - the rings of one node, the measured path of long messages -
 * lives in the wire; the communicator asks it. */
#include <stdlib.h>

#include "core/error.h"
#include "runtime/comm.h"
#include "wire/mpi_wire.h"

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

bool trd_comm_long_choice(const trd_comm *c, size_t bytes)
{
    return trd_wire_mpi_long_choice(&c->wire, bytes);
}

trd_status trd_comm_long_path(trd_comm *c, bool other)
{
    return trd_wire_mpi_long_path(&c->wire, other);
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
    if (st == TRD_OK)
        st = trd_wire_mpi_choose_long_path(w);
    if (st == TRD_OK && !(*out = trd_comm_new(*w, timeout_s))) /* its free releases *w */
        st = trd_fail(TRD_ENOMEM, "runtime: out of memory");
    if (st != TRD_OK && w)
        w->free(w->ctx);
    return st;
}
