/* check.c: the argument checks of trd_reduce and trd_allreduce.  Every bad
 * argument is refused with a message naming it before anything moves, so a
 * refused call loses nothing and leaves every buffer as it was.  (A call
 * that one rank refuses and others do not still leaves the others waiting
 * until their deadline: all ranks must pass the same arguments, as in
 * MPI.) */
#include <math.h>
#include <stdint.h>

#include "core/error.h"
#include "model/node.h"
#include "plan/registry.h"
#include "runtime/comm.h"
#include "ir/costs.h"

static trd_status check_buffers(const trd_comm *c, const void *sendbuf, const void *recvbuf,
                                size_t bytes, bool gets_result)
{
    int32_t r = c->wire.rank;
    if (bytes > 0 && !sendbuf)
        return trd_fail(TRD_EINVAL, "rank %ld: sendbuf is NULL", (long)r);
    if (sendbuf == TRD_IN_PLACE && !gets_result)
        return trd_fail(TRD_EINVAL, "rank %ld: TRD_IN_PLACE is only valid where the result "
                        "lands (the root of a reduce, every rank of an allreduce)", (long)r);
    if (bytes > 0 && gets_result && !recvbuf)
        return trd_fail(TRD_EINVAL, "rank %ld: recvbuf is NULL where the result lands", (long)r);
    if (bytes > 0 && gets_result && sendbuf != TRD_IN_PLACE && sendbuf != recvbuf) {
        uintptr_t s = (uintptr_t)sendbuf, d = (uintptr_t)recvbuf;
        if (s < d + bytes && d < s + bytes)
            return trd_fail(TRD_EINVAL, "rank %ld: sendbuf and recvbuf overlap without being "
                            "the same buffer", (long)r);
    }
    return TRD_OK;
}

/* What the algorithm's registry flags refuse. */
static trd_status check_algo(const trd_algo *a, const trd_op *op, bool allreduce,
                             bool reproducible)
{
    trd_status st = trd_algo_check_reproducible(a, reproducible);
    if (st == TRD_OK)
        st = trd_algo_check_collective(a, allreduce);
    if (st == TRD_OK)
        st = trd_algo_check_operator(a, !trd_op_is_commutative(op));
    return st;
}

/* Segments of about segment_bytes, at least one element each.  Without a
 * size: the pipelined algorithms choose from the model; the others cut
 * large buffers into TRD_SEGMENT_BYTES pieces (at most
 * TRD_SEGMENTS_DEFAULT of them), so that receiving one overlaps combining
 * the previous one. */
static int64_t segments_for(const trd_algo *a, const trd_coll_opts *o, int64_t count,
                            size_t elem)
{
    if (count == 0 || a->kind == TRD_KIND_DYNAMIC)
        return 1;
    if (o->segment_bytes == 0 && a->segments)
        return 0; /* the algorithm's choice (comm.c keeps it <= count) */
    int64_t bytes = count * (int64_t)elem; /* a constant divisor: a shift, not a division */
    int64_t m = o->segment_bytes ? (bytes + o->segment_bytes - 1) / o->segment_bytes
                                 : (bytes + TRD_SEGMENT_BYTES - 1) / TRD_SEGMENT_BYTES;
    if (m > count)
        m = count;
    if (o->segment_bytes == 0 && m > TRD_SEGMENTS_DEFAULT)
        m = TRD_SEGMENTS_DEFAULT; /* huge buffers: larger segments, not more */
    return m > TRD_SEGMENTS_MAX ? TRD_SEGMENTS_MAX : m;
}

static trd_status check_sizes(const trd_comm *c, int64_t count, size_t elem,
                              const trd_coll_opts *o)
{
    int64_t p = c->wire.size, blocks;
    size_t slots;
    if (count < 0)
        return trd_fail(TRD_EINVAL, "count = %lld is negative", (long long)count);
    /* block boundaries count * b / B stay in 64 bits; slot sizes in size_t.
     * Products checked for overflow, not quotients: three 64-bit divisions
     * were a tenth of a one-rank call. */
    if (__builtin_mul_overflow(count, (int64_t)TRD_SEGMENTS_MAX * (p + 1), &blocks) ||
        blocks > INT64_MAX / 4 ||
        __builtin_mul_overflow((size_t)count, elem * (size_t)(p + 2), &slots))
        return trd_fail(TRD_EINVAL, "count = %lld elements of %zu bytes is too large for %lld "
                        "ranks", (long long)count, elem, (long long)p);
    if (o->segment_bytes < 0)
        return trd_fail(TRD_EINVAL, "segment size = %lld bytes is negative",
                        (long long)o->segment_bytes);
    return TRD_OK;
}

/* trd_coll_opts.parallelism: 0 (not modelled) or a finite k > 0;
 * stream_bw: a curve of trd_node_curve_valid;
 * trd_coll_opts.tune: 0 to TRD_TUNE_MAX candidates. */
static trd_status check_model(const trd_coll_opts *o)
{
    if (!isfinite(o->parallelism) || o->parallelism < 0)
        return trd_fail(TRD_EINVAL, "parallelism = %g: need a finite number >= 0 (0: not "
                        "modelled)", o->parallelism);
    if (!trd_node_curve_valid(o->stream_bw, o->streams))
        return trd_fail(TRD_EINVAL, "stream_bw of %ld streams: need 0 to %d streams, each "
                        "value finite, > 0, non-decreasing and at most k stream_bw[0]",
                        (long)o->streams, TRD_STREAMS_MAX);
    if (o->tune < 0 || o->tune > TRD_TUNE_MAX)
        return trd_fail(TRD_EINVAL, "tune = %ld: need 0 (the model's choice) to %d candidates",
                        (long)o->tune, TRD_TUNE_MAX);
    return TRD_OK;
}

/* The checks that do not depend on the algorithm: "auto" is checked by
 * them before anything is measured or ranked, a named algorithm before its
 * own checks (trd_comm_key_for). */
trd_status trd_comm_check_args(const trd_comm *c, const void *sendbuf, const void *recvbuf,
                               int64_t count, const trd_op *op, int32_t root, bool allreduce,
                               const trd_coll_opts *o)
{
    trd_status st;
    if (!c || !op)
        return trd_fail(TRD_EINVAL, "treduce: NULL %s", c ? "operator" : "communicator");
    if (root < 0 || root >= c->wire.size)
        return trd_fail(TRD_EINVAL, "root = %ld is not a rank: need 0 <= root < p = %ld",
                        (long)root, (long)c->wire.size);
    size_t elem = trd_op_elem_size(op);
    if ((st = check_sizes(c, count, elem, o)) != TRD_OK || (st = check_model(o)) != TRD_OK)
        return st;
    bool gets_result = allreduce || c->wire.rank == root;
    return check_buffers(c, sendbuf, recvbuf, (size_t)count * elem, gets_result);
}

trd_status trd_comm_key_for(const trd_comm *c, int64_t count, const trd_op *op, int32_t root,
                            bool allreduce, const trd_coll_opts *o, trd_comm_key *key)
{
    size_t index;
    trd_status st;
    size_t elem = trd_op_elem_size(op);
    if ((st = trd_algo_find(o->algo, &index)) != TRD_OK ||
        (st = check_algo(trd_algo_entry(index), op, allreduce, o->reproducible)) != TRD_OK)
        return st;
    trd_params p;
    trd_params_init(&p);
    p.n = c->wire.size;
    p.d = o->d;
    p.c = o->c;
    p.latency = o->latency;
    p.combine_fixed = o->combine_fixed;
    p.flight = o->flight;
    p.recv_combine_saving = o->recv_combine_saving;
    p.K = trd_algo_uses_k(index) ? o->K : 0;
    p.root = root;
    p.allreduce = allreduce;
    p.noncommutative = !trd_op_is_commutative(op);
    p.segments = segments_for(trd_algo_entry(index), o, count, elem);
    p.costs = o->costs;
    p.node_of = c->node_of;
    p.far_d = o->far_d;
    p.far_latency = o->far_latency;
    *key = (trd_comm_key){.algo = index, .params = p, .parallelism = o->parallelism,
                          .count = count, .elem = elem, .reproducible = o->reproducible,
                          .costs_version = trd_costs_version(o->costs)};
    return TRD_OK;
}

trd_status trd_comm_check(const trd_comm *c, const void *sendbuf, void *recvbuf, int64_t count,
                          const trd_op *op, int32_t root, bool allreduce,
                          const trd_coll_opts *opts, trd_comm_key *key, void **acc)
{
    trd_coll_opts defaults;
    if (!opts)
        trd_coll_opts_init(&defaults);
    const trd_coll_opts *o = opts ? opts : &defaults;
    trd_status st = trd_comm_check_args(c, sendbuf, recvbuf, count, op, root, allreduce, o);
    if (st == TRD_OK)
        st = trd_comm_key_for(c, count, op, root, allreduce, o, key);
    if (st == TRD_OK)
        *acc = allreduce || c->wire.rank == root ? recvbuf : NULL;
    return st;
}

trd_status trd_comm_check_buffers(const trd_comm *c, const void *sendbuf, void *recvbuf,
                                  const trd_comm_key *key, void **acc)
{
    bool gets_result = key->params.allreduce || c->wire.rank == key->params.root;
    *acc = gets_result ? recvbuf : NULL;
    return check_buffers(c, sendbuf, recvbuf, (size_t)key->count * key->elem, gets_result);
}
