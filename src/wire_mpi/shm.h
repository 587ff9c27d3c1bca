/* shm.h: mailbox rings in shared memory for the small messages of ranks
 * that share a node (src/wire_mpi/shm.c), under the MPI wire.
 *
 * A message through MPI's point-to-point API costs its matching, a request
 * and the progress engine: several times what it costs through a cache
 * line the two ranks share (docs/RUNTIME_INTERNALS.md, "Shared-memory
 * rings").  So the MPI wire (mpi.c) hands the
 * messages up to a limit (TRD_MPI_SHM_MAX) to these rings when every rank
 * of its communicator is on one node, and everything larger to MPI.
 *
 * One ring per ordered pair (sender, receiver) in one POSIX shared-memory
 * segment: TRD_SHM_SLOTS slots of `frag` bytes, written only by the
 * sender, read only by the receiver.  A message longer than a slot goes as
 * consecutive fragments, which the receiver copies out while the sender
 * writes the next ones.  A slot is published by a release store of its
 * sequence number after its bytes; the receiver frees it by a release
 * store of its consumed count.  A send copies into the ring and is
 * complete once its last fragment is in (its buffer may be reused), or
 * waits in order behind a full ring; a receive copies out.  Matching
 * follows wire.h (per sender and tag in sending order; receives in posting
 * order; TRD_ANY_RANK), decided by a message's first fragment: a message
 * that no posted receive wants is copied aside (unexpected, as in MPI) so
 * the ring never stalls its sender.
 *
 * Nothing here blocks or reads a clock: the caller polls (mpi.c's wait
 * loop, with its back-off and deadlines) and gets completions pushed onto
 * its FIFO. */
#ifndef TRD_WIRE_MPI_SHM_H
#define TRD_WIRE_MPI_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/fifo.h"
#include "wire/callsig.h"
#include "treduce/treduce.h"

/* Slots per ring: with TRD_SHM_FRAGMENT, 512 KiB, so a sender can leave a
 * whole message of that size while its receiver is still combining the
 * previous one (the overlap canon-antoniu's trees count on: with 8 slots a
 * 512 KiB transfer stalled after 128 KiB until the combine ended, and
 * greedy lost to binomial at c = d; docs/RUNTIME_INTERNALS.md,
 * "Shared-memory rings"). */
#define TRD_SHM_SLOTS 32
/* Bytes per slot (a message's fragment), at most. */
#define TRD_SHM_FRAGMENT 16384
/* Largest segment one node maps for n ranks (n * n rings); more ranks
 * get smaller slots, or no rings (trd_shm_fit). */
#define TRD_SHM_SEGMENT_MAX ((size_t)64 << 20)

typedef struct trd_shm trd_shm;

/* The largest slot size at most `wanted` whose segment for n ranks fits
 * in TRD_SHM_SEGMENT_MAX; 0 when not even 64 bytes do. */
size_t trd_shm_fit(int32_t n, size_t wanted);

/* Bytes of the segment for n ranks and slots of frag bytes. */
size_t trd_shm_segment_bytes(int32_t n, size_t frag);

/* Creates (create: one rank of the node, the others after it) or maps the
 * segment called `name` ("/treduce-...", at most 63 characters; create
 * picks it and writes it there) and returns rank me's end of it.  The
 * creator unlinks the name with trd_shm_unlink once every rank has
 * mapped it; the mapping lives until trd_shm_free. */
trd_status trd_shm_open(trd_shm **out, char name[64], bool create, int32_t me, int32_t n,
                        size_t frag);
void trd_shm_unlink(const char *name);
/* Writes a zero into every page of the rings this rank reads or writes, so
 * that no call pays their page faults: without it, the first messages
 * through each slot take many times the later ones, enough to mislead the
 * tuner (tune.c),
 * and with it a new segment costs milliseconds (mpi_node.c leaves it to
 * the first messages where the rings are made inside a call).  Safe:
 * every rank does it before any rank sends. */
void trd_shm_touch(trd_shm *s);
void trd_shm_free(trd_shm *s);

/* A send to peer of call sig (callsig.h: its slots' header carries it):
 * complete at once (pushed onto done) when its ring has room for all its
 * fragments and no earlier send to peer waits; else it waits in order for
 * room (trd_shm_poll). */
trd_status trd_shm_isend(trd_shm *s, int32_t peer, int32_t tag, uint64_t sig, const void *buf,
                         size_t bytes, int32_t id, trd_fifo *done);

/* A receive of call sig into buf of at most bytes from peer or
 * TRD_ANY_RANK; a longer message, or one of another call, fails it with
 * TRD_EIO naming both sizes or both calls. */
trd_status trd_shm_irecv(trd_shm *s, int32_t peer, int32_t tag, uint64_t sig, void *buf,
                         size_t bytes, int32_t id, trd_fifo *done);

/* Moves waiting sends into rings with room and arrived messages into their
 * receives (or aside); *progress says whether anything moved.  Once a rank
 * of the node failed (trd_shm_fail), returns its failure instead. */
trd_status trd_shm_poll(trd_shm *s, trd_fifo *done, bool *progress);

/* Rank `rank` failed with code and text: every rank's next poll returns
 * that (the first failure set stays; a later one is dropped). */
void trd_shm_fail(trd_shm *s, int32_t rank, int32_t code, const char *text);
/* Whether a rank of the node failed; if so, its rank, code and text. */
bool trd_shm_failure(const trd_shm *s, int32_t *rank, int32_t *code, char *text, size_t size);
/* The distinct ranks this rank's posted receives wait for (TRD_ANY_RANK
 * aside), at most max of them: how many. */
int trd_shm_awaited(const trd_shm *s, int32_t *peers, int max);
/* The call a mismatch's message names as this rank's (callsig.h); it
 * must outlive the rings. */
void trd_shm_set_call(trd_shm *s, const trd_call_sig *call);
/* Drops this rank's waiting sends and posted receives (a failed call's):
 * their buffers are never read or written again. */
void trd_shm_withdraw(trd_shm *s);

/* Posted receives and waiting sends not complete yet. */
void trd_shm_pending(const trd_shm *s, int *recvs, int *sends);
/* Nothing pending, filling, stray or failed: a call on every rank that
 * maps these rings may start on them afresh (another wire's, mpi_pool.c). */
bool trd_shm_quiet(const trd_shm *s);
/* The segment's bytes, and its slots' (*frag). */
size_t trd_shm_size(const trd_shm *s, size_t *frag);

#endif
