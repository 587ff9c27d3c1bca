/* op.h: what the runtime needs of operators beyond treduce.h
 * (src/runtime/op.c). */
#ifndef TRD_RUNTIME_OP_H
#define TRD_RUNTIME_OP_H

#include "treduce/treduce.h"

/* trd_op_combine with the accumulator read from one buffer and written to
 * another: out = in (+) acc (TRD_SIDE_LEFT) or acc (+) in (TRD_SIDE_RIGHT).
 * acc is only read and may equal out; in is clobbered on the right, as in
 * trd_op_combine.  Lets the runtime combine straight from the caller's
 * sendbuf instead of copying it first (exec.c). */
trd_status trd_op_combine_into(const trd_op *op, trd_side side, void *out, const void *acc,
                               void *in, int64_t count);

#endif
