/* mpi_wire.h: the wire of wire.h over MPI point-to-point (src/wire_mpi/mpi.c).
 *
 * The header needs no mpi.h: the communicator is passed by address.  When
 * treduce is built without MPI (no MPI library found, or -DTRD_MPI=OFF) the
 * functions still exist: trd_wire_mpi_available() says false and
 * trd_wire_mpi_create fails with TRD_EUNSUPPORTED. */
#ifndef TRD_WIRE_MPI_MPI_WIRE_H
#define TRD_WIRE_MPI_MPI_WIRE_H

#include <limits.h>
#include <stdbool.h>

#include "ir/policy.h"
#include "wire/wire.h"

/* Seconds a decide() or end_dynamic() waits for the coordinator (rank 0)
 * before failing with TRD_ETIMEDOUT. */
#define TRD_WIRE_MPI_TIMEOUT 30.0

/* Whether this build of treduce has the MPI wire. */
bool trd_wire_mpi_available(void);

/* How a wire is made (trd_wire_mpi_setup_init: the defaults). */
typedef struct trd_wire_mpi_setup {
    /* The communicator was made for this wire alone: the wire takes it
     * (and frees it) instead of duplicating it, whether creation succeeds
     * or not.  Default false. */
    bool own_comm;
    /* How many ranks of the communicator share this rank's node, as
     * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) would count them; 0 (the
     * default): counted so, a collective. */
    int32_t node_ranks;
    /* How many processes share this node's cores, the communicator's and
     * others' (a program's other ranks): a node is crowded when they
     * outnumber its cores (its waits then sleep, its rings take every
     * message).  0 (the default): node_ranks. */
    int32_t node_procs;
    /* Nothing is sent at creation: the rings of the node and the path of
     * long messages are set up by every rank's first message, barrier or
     * agreement, through the wire's own messages (a creation that must
     * not communicate).  Default false: at creation. */
    bool deferred;
    /* Where the path of long messages is a choice
     * (trd_wire_mpi_shm_choice), it is chosen with the rings' set-up: by
     * the probe of a wire over the same processes (trd_wire_mpi_shm_probe's
     * rings_s, mpi_s, two values, read at the set-up: they must live until
     * then) if given and > 0, else measured
     * (trd_wire_mpi_choose_long_path).  Default false, NULL: not chosen. */
    bool choose_path;
    const double *probe;
} trd_wire_mpi_setup;
void trd_wire_mpi_setup_init(trd_wire_mpi_setup *setup);

/* A wire over a duplicate of `comm` (an MPI_Comm passed as a pointer so
 * the public header needs no mpi.h), or over comm itself (own_comm).  MPI
 * must be initialised by the caller.  Collective over `comm` unless
 * own_comm, node_ranks and deferred say otherwise: every rank of it
 * calls this.  (*out)->free((*out)->ctx) releases everything, the
 * wire's communicator and the trd_wire itself included: every rank of the
 * communicator frees its wire (in any order with other wires: the release
 * completes without blocking, at the latest in MPI_Finalize,
 * mpi_close.c).  After a failure, keep the buffers of pending sends alive
 * until MPI_Finalize.  An own_comm is the wire's even when this fails (then
 * freed before it returns). */
trd_status trd_wire_mpi_create_with(trd_wire **out, const void *mpi_comm,
                                    const trd_wire_mpi_setup *setup);
/* The same with the defaults: a duplicate, counted, set up at once. */
trd_status trd_wire_mpi_create(trd_wire **out, const void *mpi_comm);

/* Sets how long decide() and end_dynamic() wait for the coordinator
 * (default TRD_WIRE_MPI_TIMEOUT).  TRD_EINVAL for a wire that is not an
 * MPI wire or a time that is not finite and > 0 (the timeout is then
 * unchanged). */
trd_status trd_wire_mpi_set_timeout(trd_wire *w, double seconds);

/* Default largest message through the rings (bytes; TRD_MPI_SHM_MAX sets
 * it), measured (docs/RUNTIME_INTERNALS.md, "Shared-memory rings").  When
 * every rank has a core: 16 KiB (up to there the rings beat MPI at np 2;
 * longer messages win in some runs and lose in others, where every copy
 * between the two cores is slow and the rings' two copies lose to MPI's
 * one: trd_wire_mpi_shm_choice).  On a node with more ranks than cores,
 * every message: there the longer messages too were faster through the
 * rings, where MPI's copies pay a system call each. */
#define TRD_MPI_SHM_MAX_DEFAULT 16384
#define TRD_MPI_SHM_MAX_CROWDED INT_MAX

/* The largest message this wire moves through shared-memory rings instead
 * of MPI (src/wire_mpi/shm.h): 0 when it has none (its communicator spans
 * several nodes, TRD_MPI_SHM_MAX=0, no shared memory, or not an MPI
 * wire).  Set at creation from TRD_MPI_SHM_MAX, read on rank 0 (bytes,
 * default TRD_MPI_SHM_MAX_DEFAULT, or _CROWDED on a crowded node);
 * creation fails with TRD_EINVAL on every rank when it is not a byte
 * count.  Sends and receives must then agree on
 * which side of the limit a message lies: a receive buffer larger than
 * the limit never gets a message no longer than it (the wait times out). */
size_t trd_wire_mpi_shm_max(const trd_wire *w);

/* Whether the limit is TRD_MPI_SHM_MAX_DEFAULT because nothing set it on a
 * node where every rank has a core: longer messages may then go either way
 * and the faster depends on the machine (trd_wire_mpi_choose_long_path). */
bool trd_wire_mpi_shm_choice(const trd_wire *w);
/* Where trd_wire_mpi_shm_choice: times a binomial reduce of 64 KiB through
 * the rings and through MPI (the wire's own messages, barrier and
 * agreement, with the wire's timeout) and keeps the rings for every
 * message when they are clearly faster; elsewhere a no-op.  Collective:
 * every rank calls it, before any other message. */
trd_status trd_wire_mpi_choose_long_path(trd_wire *w);
/* Whether the probe ran; its medians (seconds, the slowest rank's), either
 * pointer may be NULL.  False and zeros for any other wire. */
bool trd_wire_mpi_shm_probe(const trd_wire *w, double *rings_s, double *mpi_s);
/* Whether a call of `bytes` per rank may send messages longer than the
 * default limit on a wire whose probe chose their path: a tuner may time
 * it both ways (trd_wire_mpi_long_path). */
bool trd_wire_mpi_long_choice(const trd_wire *w, size_t bytes);
/* Long messages from now on take the path the probe kept (other false) or
 * the other one.  Every rank of a call sets the same before it, so both
 * ends of each message agree; a no-op without a probe or another wire. */
trd_status trd_wire_mpi_long_path(trd_wire *w, bool other);
/* Sets the limit of a wire with rings to max bytes (1 to INT_MAX; else, or
 * without rings, TRD_EINVAL and nothing changes).  Collective: every rank
 * sets the same limit while no message is in flight. */
trd_status trd_wire_mpi_set_shm_max(trd_wire *w, size_t max);

#endif
