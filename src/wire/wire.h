/* wire.h: what the runtime needs from a wire, a real point-to-point
 * backend (Gloo's split: the algorithms never touch a socket; they talk
 * to a wire).
 *
 * A wire connects the `size` ranks of one communicator and moves bytes
 * between them: non-blocking sends and receives named by the engine's step
 * id, and one wait for the next completion with a deadline.  The runtime
 * (src/runtime/exec.c) turns the engine's SEND and RECV steps into these
 * calls and runs COMBINE and COPY itself, so the same wire serves every
 * algorithm.  Two wires exist: threads of one process
 * (src/wire/threads.c) and MPI point-to-point (src/wire_mpi/mpi.c,
 * with shared-memory rings for the small messages of one node: shm.c).
 *
 * Matching.  A receive accepts a message from its `peer` (or from any rank
 * with TRD_ANY_RANK) with the same `tag`; messages from one sender with
 * one tag are matched in the order they were sent, receives in the order
 * they were posted (MPI's non-overtaking rule).  A send completes once its
 * buffer may be reused; a receive once the bytes are in its buffer.
 * Sizes must agree: a message longer than the receive buffer is an error
 * (TRD_EIO naming both sizes), never a silent truncation.  So must calls:
 * every message and receive carries the signature of the collective call
 * that posted it (callsig.h, set_call), and a message whose signature is
 * not its receive's is an error naming both calls (TRD_EIO), never a
 * match.
 *
 * Failures.  A wire is ok until a failure: its own (a deadline, a lost
 * peer, a mismatch), the runtime's (abort), or a peer's it learns of.
 * Then it is failed for good: every call but free returns the first
 * failure's code and message.  A rank whose wire fails tells its peers
 * (threads: they share one world; MPI: a control message to each, and a
 * flag in the shared segment of the rings), so that they stop waiting at
 * once instead of at their own deadlines.  And before the runtime's call
 * returns and its caller frees the buffers, abort takes back every send
 * and receive the rank posted: no peer reads or writes a buffer of a rank
 * once its call has returned (what MPI cannot promise: mpi.c). */
#ifndef TRD_WIRE_WIRE_H
#define TRD_WIRE_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "ir/policy.h" /* the policies of decide, TRD_ANY_RANK */
#include "wire/callsig.h"
#include "treduce/treduce.h"

typedef struct trd_wire trd_wire;

/* Most values one agree() takes. */
#define TRD_WIRE_AGREE_MAX 16

/* Takes the bytes of a message where they lie (wire.irecv_consume). */
typedef trd_status (*trd_consume_fn)(void *arg, const void *data, size_t bytes);

struct trd_wire {
    void *ctx;
    int32_t rank, size;
    const char *name; /* "threads", "mpi" */
    /* The ranks of this wire that share one address space share `group`
     * (threads: their world), which the runtime may key structures of a
     * call by, built once for all of them (runtime/comm_shared.c); NULL:
     * this rank shares its memory with no other (MPI). */
    const void *group;
    /* How many ranks of this wire share this rank's machine (0: all `size`
     * of them), and which (node_ranks[0 .. node_size), ascending; NULL: all,
     * or not known): what a memory check counts.  MPI: the ranks of this
     * node, counted at creation. */
    int32_t node_size;
    const int32_t *node_ranks;
    /* Whether a thread of the process other than the program's may make
     * this wire's calls while the program's threads go on (a progress
     * thread: the requests of src/select/request.c).  Threads: always;
     * MPI: only at MPI_THREAD_MULTIPLE, where MPI allows it. */
    bool async;
    /* Posts a send of `bytes` bytes of buf to rank `peer` (0 <= peer < size,
     * peer != rank); buf stays untouched until the send completes. */
    trd_status (*isend)(void *ctx, int32_t peer, int32_t tag, const void *buf, size_t bytes,
                        int32_t id);
    /* Posts a receive of at most `bytes` bytes into buf from `peer` or from
     * TRD_ANY_RANK. */
    trd_status (*irecv)(void *ctx, int32_t peer, int32_t tag, void *buf, size_t bytes,
                        int32_t id);
    /* Optional (NULL: this wire cannot): a receive of exactly `bytes`
     * bytes that are not stored anywhere but handed to consume(arg, data,
     * bytes) on this rank's thread, straight from the sender's buffer,
     * before the receive completes.  The runtime combines such a message
     * into its accumulator without copying it into scratch first
     * (a RECV_COMBINE step, src/plan/fuse.c).  A consume that fails fails
     * the call or the wait that ran it. */
    trd_status (*irecv_consume)(void *ctx, int32_t peer, int32_t tag, size_t bytes,
                                int32_t id, trd_consume_fn consume, void *arg);
    /* Optional, both or neither (NULL: this wire cannot): a send whose
     * bytes do not exist yet.  claim_recv takes the receive of `peer` that
     * a send of exactly `bytes` bytes with `tag` posted now would match, if
     * it is posted into a buffer of that size (not a consuming one): *dst
     * is then that buffer and *handle names the claim; else, or when the
     * wire would rather carry a message that small, *dst = NULL and
     * nothing changes.  The caller writes the message into *dst and
     * then posts its send with isend_claimed(handle, id), which completes
     * both ends.  The runtime writes a combined block straight into the
     * peer that it would otherwise send it to (exec.c), so that nobody
     * copies it. */
    trd_status (*claim_recv)(void *ctx, int32_t peer, int32_t tag, size_t bytes, void **dst,
                             int32_t *handle);
    trd_status (*isend_claimed)(void *ctx, int32_t handle, int32_t id);
    /* Blocks until one posted send or receive completes: its id, and for a
     * receive the rank it came from (-1 for a send).  Fails with
     * TRD_ETIMEDOUT when nothing completes within `timeout_s` seconds,
     * with a message naming this rank and what it waits for; with
     * TRD_EIO when a peer is known to be lost; with a peer's failure (its
     * code) when a peer failed.  After a failure the wire is failed (see
     * the top).  A timeout, not a deadline: a wait that ends at once then
     * reads no clock (a read is a noticeable part of a small message's
     * call), and the wire may start counting a few polls late. */
    trd_status (*wait)(void *ctx, double timeout_s, int32_t *id, int32_t *from);
    /* Wall-clock seconds (monotonic; the same origin on every rank is NOT
     * required). */
    double (*now)(void *ctx);
    /* The operations below are not point-to-point, yet the wire keeps
     * them, for reasons of structure rather than of speed (their cost built
     * above isend/irecv has not been measured):
     * - decide/end_dynamic: a dynamic policy's state is shared by all
     *   ranks and its decisions must be atomic.  The threads wire holds
     *   one copy under its lock; over MPI rank 0 serves every rank's
     *   decisions while it runs its own part, polled from inside its wire
     *   waits.  Above the wire, rank 0's engine would have to serve the
     *   others between its own steps, with receives of unknown senders
     *   posted for that alone.
     * - barrier/agree: each wire has its own cheap form (threads: one
     *   atomic add per rank; MPI: control messages on the wire's own tags,
     *   which data messages never match, with the wire's deadline and
     *   failure notices).  Built from isend/irecv they would need tags of
     *   their own in the data path's matching.
     * A new wire may implement them with its point-to-point operations. */
    /* Dynamic policies (tree-dyn, nc-tree-dyn): asks the shared policy of
     * collective call `call` what idle rank `rank` does (policy.h).  The
     * wire makes the decisions of all ranks atomic: a lock in threads, a
     * coordinator rank in MPI.  `policy` is this rank's own copy; the wire
     * decides which copy holds the shared state. */
    trd_status (*decide)(void *ctx, const trd_policy *policy, int64_t call, int32_t rank,
                         trd_action *action, int32_t *peer);
    /* Called by every rank after its part of a collective call that used
     * decide(): returns once the shared state may be reset for the next
     * call (a barrier; the MPI coordinator serves pending decisions until
     * every rank has had its last one).  Resets the policy state. */
    trd_status (*end_dynamic)(void *ctx, const trd_policy *policy, int64_t call);
    /* A barrier over all ranks (timing of `treduce run`), with a deadline. */
    trd_status (*barrier)(void *ctx, double deadline);
    /* A barrier that also agrees on n <= TRD_WIRE_AGREE_MAX values: every
     * rank passes v[0..n) and gets back in v the largest v[i] of all
     * ranks (calibration, profiles and tuning build the same plans from
     * the same numbers; the CLI gathers its timings).  Every rank must
     * pass the same n (else TRD_EIO). */
    trd_status (*agree)(void *ctx, double *v, int32_t n, double deadline);
    /* The signature the messages and receives posted from now on carry:
     * *call, read when they are posted (the runtime updates it in place
     * and calls set_call again as each call begins; it must outlive the
     * wire).  NULL: no signature. */
    void (*set_call)(void *ctx, const trd_call_sig *call);
    /* Optional, both or neither (NULL: one path for every message): a
     * wire that carries long messages two ways and measured which one is
     * faster here (the MPI wire on one node: its rings or MPI).
     * long_choice: whether a call of `bytes` per rank may send messages
     * that take that choice; long_path: long messages from now on take
     * the faster path (other false) or the other one, so that a tuner may
     * time both.  Every rank of a call sets the same before it, with no
     * message in flight. */
    bool (*long_choice)(void *ctx, size_t bytes);
    trd_status (*long_path)(void *ctx, bool other);
    /* TRD_OK while the wire is ok; else its first failure (code and a
     * message naming the rank that failed and why). */
    trd_status (*failed)(void *ctx);
    /* The runtime's call on this rank failed with code and message why
     * (or the wire did): the wire becomes failed (the first failure's
     * code and message stay), tells the peers, withdraws every send and
     * receive this rank posted and returns once no peer reads or writes
     * their buffers any more.  Bounded: a peer copying from or into them
     * finishes that one message (or combine) first. */
    void (*abort)(void *ctx, trd_status code, const char *why);
    void (*free)(void *ctx);
};

#endif
