/* callsig.h: what a collective call is, as its messages carry it
 * (src/wire/callsig.c).
 *
 * Ranks must make the same collective calls in the same order (as in
 * MPI); a rank that calls another algorithm, kind, root, count, element
 * size or operator than its peers would otherwise exchange messages that
 * match by (peer, tag) alone and end with a wrong result.  So the runtime
 * gives each call a signature (runtime/comm_state.c): a hash of everything
 * its plan depends on and of the operator, and the number of calls the
 * communicator made before it.  The wires stamp every message and every
 * posted receive with it and refuse a match whose signatures differ
 * (threads: a field of the pending record; the shared-memory rings: the
 * slot header; MPI point-to-point: bits of the tag, mpi.c), so mismatched
 * calls end in an error on the rank that sees it, which fails the
 * communicator (wire.h abort) and so every rank. */
#ifndef TRD_WIRE_CALLSIG_H
#define TRD_WIRE_CALLSIG_H

#include <stddef.h>
#include <stdint.h>

typedef struct trd_call_sig {
    uint32_t hash; /* the call's plan key and operator: equal for equal calls */
    uint32_t seq;  /* collective calls the communicator made before this one */
    /* What the call is, for the message that names a mismatch (never
     * hashed again: hash covers them). */
    const char *algo;             /* registry name */
    const char *op_kind, *op_type; /* trd_op_names: NULL for a user operator */
    int64_t count;
    uint32_t elem; /* bytes per element */
    int32_t root;  /* -1: an allreduce */
} trd_call_sig;

/* The 64 bits that travel with a message: hash and seq. */
static inline uint64_t trd_call_sig_value(const trd_call_sig *s)
{
    return s ? (uint64_t)s->hash << 32 | s->seq : 0;
}

/* "call 3, a reduce to root 0 (binomial, 10 x 4 B, sum of int32)" into
 * buf (always terminated). */
void trd_call_sig_text(const trd_call_sig *s, char *buf, size_t size);

#endif
