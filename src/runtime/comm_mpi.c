/* comm_mpi.c: communicators over the MPI wire (src/transport/mpi.c). */
#include <stdlib.h>

#include "core/error.h"
#include "runtime/comm.h"
#include "transport/mpi_wire.h"

#ifdef TRD_HAVE_MPI
#include <mpi.h>
#endif

bool trd_mpi_available(void) { return trd_wire_mpi_available(); }

size_t trd_comm_shm_max(const trd_comm *comm)
{
    return comm ? trd_wire_mpi_shm_max(&comm->wire) : 0; /* 0 for any other wire */
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
    if (st == TRD_OK && !(*out = calloc(1, sizeof **out)))
        st = trd_fail(TRD_ENOMEM, "runtime: out of memory");
    if (st != TRD_OK) {
        if (w)
            w->free(w->ctx);
        return st;
    }
    (*out)->wire = *w; /* the wire's free releases *w itself */
    (*out)->timeout_s = timeout_s;
    return TRD_OK;
}
