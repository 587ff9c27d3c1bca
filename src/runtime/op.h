/* op.h: what the runtime needs of operators beyond treduce.h
 * (src/runtime/op.c). */
#ifndef TRD_RUNTIME_OP_H
#define TRD_RUNTIME_OP_H

#include "treduce/treduce.h"

/* A number no other operator of this process had or will have (0 for
 * NULL): an operator freed and another created at the same address are
 * told apart by it, so what was remembered of the first (comm.c's memo,
 * tune.c's choices) is never used for the second. */
uint64_t trd_op_serial(const trd_op *op);

/* What an operator is in every process alike, for the signature of a call
 * (wire/callsig.h): a built-in's operator and type names ("sum",
 * "int32"), a checker's name and NULL; NULL and NULL for a user operator
 * (whose function cannot be compared across processes). */
void trd_op_names(const trd_op *op, const char **kind, const char **type);

/* trd_op_combine with the accumulator read from one buffer and written to
 * another: out = in (+) acc (TRD_SIDE_LEFT) or acc (+) in (TRD_SIDE_RIGHT).
 * acc is only read and may equal out; in is clobbered on the right, as in
 * trd_op_combine.  Lets the runtime combine straight from the caller's
 * sendbuf instead of copying it first (exec.c). */
trd_status trd_op_combine_into(const trd_op *op, trd_side side, void *out, const void *acc,
                               void *in, int64_t count);

/* Elements of a piece when a combine may be cut into pieces at no extra
 * cost (a built-in operator, side LEFT or commutative: one kernel call per
 * piece), else 0 (a user operator may cost per call: one call). */
int64_t trd_op_piece(const trd_op *op, trd_side side);
/* One piece (count <= trd_op_piece elements) of trd_op_combine_into on
 * the left, out = in (+) acc, written to `copy` too (a peer's receive the
 * runtime claimed, wire.h claim_recv).  stream: both written past the
 * cache (core/stream.h; the caller fences), for large combines. */
void trd_op_combine_piece(const trd_op *op, void *out, void *copy, const void *acc,
                          const void *in, int64_t count, bool stream);

#endif
