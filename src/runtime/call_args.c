/* call_args.c: a call's arguments as the core's memo and the selection
 * layer's tables compare them (comm.h, trd_call_args). */
#include <stdbool.h>

#include "ir/costs.h"
#include "runtime/comm.h"
#include "runtime/op.h"

static bool same_opts(const trd_coll_opts *a, const trd_coll_opts *b)
{
    return a->d == b->d && a->c == b->c && a->latency == b->latency &&
           a->combine_fixed == b->combine_fixed && a->flight == b->flight &&
           a->recv_combine_saving == b->recv_combine_saving && a->far_d == b->far_d &&
           a->far_latency == b->far_latency && a->parallelism == b->parallelism && a->stream_bw == b->stream_bw &&
           a->streams == b->streams && a->K == b->K &&
           a->reproducible == b->reproducible && a->segment_bytes == b->segment_bytes &&
           a->tune == b->tune && a->measure_model == b->measure_model && a->costs == b->costs;
}

trd_call_args trd_call_args_of(const trd_op *op, int64_t count, int32_t root, trd_collective coll,
                             const trd_coll_opts *opts)
{
    trd_call_args k = {.op = op, .op_serial = trd_op_serial(op), .count = count,
                      .root = coll == TRD_COLL_REDUCE ? root : 0, .coll = coll, .opts = *opts,
                      .costs_version = trd_costs_version(opts->costs)};
    k.opts.algo = NULL;
    return k;
}

/* Whether k holds these arguments (the operator not dereferenced). */
static bool same_args(const trd_call_args *k, const trd_op *op, uint64_t op_serial,
                      int64_t count, int32_t root, trd_collective coll, const trd_coll_opts *opts,
                      uint64_t costs_version)
{
    return k->op == op && k->count == count && k->root == (coll == TRD_COLL_REDUCE ? root : 0) &&
           k->coll == coll && same_opts(&k->opts, opts) && k->op_serial == op_serial &&
           k->costs_version == costs_version;
}

bool trd_call_args_match(const trd_call_args *k, const trd_op *op, int64_t count, int32_t root,
                        trd_collective coll, const trd_coll_opts *opts)
{
    return same_args(k, op, trd_op_serial(op), count, root, coll, opts,
                     trd_costs_version(opts->costs));
}

bool trd_call_args_same(const trd_call_args *a, const trd_call_args *b)
{
    return same_args(a, b->op, b->op_serial, b->count, b->root, b->coll, &b->opts,
                     b->costs_version);
}

