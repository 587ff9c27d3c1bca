/* treduce/mpi.h: communicators over MPI point-to-point (the MPI wire), in
 * libtreduce_wire_mpi: a program that runs over threads only, simulates or
 * plans links libtreduce alone, which needs no MPI library.  A program
 * that looks wires up by name (trd_wire_find) registers this one first:
 * trd_wire_register(trd_wire_mpi()). */
#ifndef TREDUCE_MPI_H
#define TREDUCE_MPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "treduce/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A communicator over MPI point-to-point on a duplicate of *mpi_comm (an
 * MPI_Comm; NULL: MPI_COMM_WORLD), MPI already initialised by the caller.
 * Collective over *mpi_comm.  When all its ranks share a node, messages of
 * at most 16 KiB go through shared-memory rings instead, and every message
 * where ranks outnumber cores.  Where every rank has a core, a 64 KiB
 * reduce is timed both ways at creation (milliseconds) and the rings take
 * every message when they are faster (trd_comm_shm_probe).  The
 * environment variable TRD_MPI_SHM_MAX, read on rank 0, sets the limit in
 * bytes instead (0: no rings; not a byte count: TRD_EINVAL on every rank;
 * docs/RUNTIME.md).  TRD_EUNSUPPORTED when treduce was built without MPI. */
trd_status trd_comm_mpi_create(trd_comm **out, const void *mpi_comm, double timeout_s);
/* What a communicator over MPI may be told at creation, so that making it
 * communicates less, or not at all (docs/RUNTIME.md, "Communicators over
 * MPI").  trd_mpi_opts_init sets the defaults, trd_comm_mpi_create's. */
typedef struct trd_mpi_opts {
    double timeout_s;  /* deadline of every wait (default 30 s) */
    bool own_comm;     /* *mpi_comm was made for this communicator alone:
                          taken instead of duplicated, and freed by
                          trd_comm_free (or by a creation that fails) */
    int32_t node_ranks; /* how many ranks of *mpi_comm share this rank's
                          node, as MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)
                          counts them; 0 (default): counted so (collective) */
    int32_t node_procs; /* how many processes share this node's cores, the
                          communicator's and others (the program's other
                          ranks): where they outnumber the cores, waits
                          sleep and the rings take every message; 0
                          (default): node_ranks */
    bool deferred;     /* no message at creation: the rings of one node and
                          the path of long messages are set up by the first
                          collective call (barrier, agreement, reduction)
                          on every rank */
    const double *shm_probe; /* trd_comm_shm_probe's two values from a
                          communicator of the same processes: the path of
                          long messages without measuring it again; read
                          at the set-up (creation, or the first call when
                          deferred: it must live until then); NULL or
                          zeros (the default): measured where it is a
                          choice */
} trd_mpi_opts;
void trd_mpi_opts_init(trd_mpi_opts *opts);
/* trd_comm_mpi_create with options: with own_comm, node_ranks and
 * deferred it sends no message and is local (a creation inside a call that
 * must not communicate); else collective over *mpi_comm.  TRD_EINVAL for
 * a NULL out or opts, own_comm without a communicator, a timeout out of
 * (0, 1e6] or a negative node_ranks or node_procs. */
trd_status trd_comm_mpi_create_with(trd_comm **out, const void *mpi_comm,
                                    const trd_mpi_opts *opts);
/* Whether this build has the MPI wire. */
bool trd_mpi_available(void);
/* The MPI wire's row of the wire registry ("mpi": launched, one rank per
 * process, create makes this process's communicator over MPI_COMM_WORLD),
 * for trd_wire_register. */
const trd_wire_info *trd_wire_mpi(void);
/* The largest message this communicator moves through shared-memory rings
 * instead of MPI point-to-point (an MPI communicator on one node,
 * docs/RUNTIME.md); 0: none (threads, several nodes, TRD_MPI_SHM_MAX=0). */
size_t trd_comm_shm_max(const trd_comm *comm);
/* Whether this communicator timed long messages both ways at creation
 * (trd_comm_mpi_create); if so, the median seconds of a 64 KiB reduce
 * through the rings and through MPI (the slowest rank's, the same on every
 * rank).  The rings took every message when the first was below 0.95x the
 * second.  Either pointer may be NULL. */
bool trd_comm_shm_probe(const trd_comm *comm, double *rings_s, double *mpi_s);

#ifdef __cplusplus
}
#endif

#endif /* TREDUCE_MPI_H */
