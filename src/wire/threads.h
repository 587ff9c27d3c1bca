/* threads.h: the threads wire (src/wire/threads.c). */
#ifndef TRD_WIRE_THREADS_H
#define TRD_WIRE_THREADS_H

#include "wire/wire.h"

/* Most threads one world accepts. */
#define TRD_THREADS_MAX 4096

/* Fills wires[0..p-1], one per rank, over one shared world (its mailboxes,
 * barrier and shared policy state); each wire is then used by one thread
 * only.  The world lives until every wire's free has been called. */
trd_status trd_wire_threads_create(trd_wire *wires, int32_t p, const trd_threads_opts *opts);

/* Receives this rank's wire has claimed so far (wire.h claim_recv): the
 * tests' proof that the runtime writes results into its peers' buffers. */
int64_t trd_wire_threads_claims(const trd_wire *wire);

/* Test hook (runtime/test_hooks.h): a random delay in [0, max_us) before
 * each of this rank's sends, from a stream of seed and the rank; call it
 * before the rank's first send. */
void trd_wire_threads_delay(trd_wire *wire, double max_us, uint64_t seed);

/* The options the world was created with. */
const trd_threads_opts *trd_wire_threads_opts(const trd_wire *wire);

#endif
