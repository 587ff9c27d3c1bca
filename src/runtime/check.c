/* check.c: the argument checks of the collective calls.  Every bad
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

/* Where a call's buffers stand at one rank: whether it gets a result,
 * may pass TRD_IN_PLACE, and how many bytes it sends and receives. */
typedef struct call_buffers {
    bool gets_result, in_place_ok;
    size_t send_bytes, recv_bytes;
} call_buffers;

static call_buffers buffers_of(const trd_comm *c, trd_collective coll, int64_t count,
                               size_t elem, int32_t root)
{
    int32_t r = c->wire.rank;
    size_t bytes = (size_t)count * elem;
    call_buffers b = {.gets_result = true, .in_place_ok = true, .send_bytes = bytes,
                      .recv_bytes = bytes};
    switch (coll) {
    case TRD_COLL_REDUCE:
        b.gets_result = b.in_place_ok = r == root;
        break;
    case TRD_COLL_REDUCE_SCATTER: /* in place (or sendbuf == recvbuf, the same): recvbuf
                                     holds the whole input */
        b.recv_bytes = (size_t)trd_comm_part_count(c, count, r) * elem;
        break;
    case TRD_COLL_EXSCAN: /* rank 0's result is undefined: its recvbuf is left alone */
        b.gets_result = r > 0;
        break;
    default:
        break;
    }
    return b;
}

static trd_status check_buffers(const trd_comm *c, const void *sendbuf, const void *recvbuf,
                                call_buffers b)
{
    int32_t r = c->wire.rank;
    if (b.send_bytes > 0 && !sendbuf)
        return trd_fail(TRD_EINVAL, "rank %ld: sendbuf is NULL", (long)r);
    if (sendbuf == TRD_IN_PLACE && !b.in_place_ok)
        return trd_fail(TRD_EINVAL, "rank %ld: TRD_IN_PLACE is only valid where the result "
                        "lands (the root of a reduce, every rank of the other collectives)",
                        (long)r);
    if (sendbuf == TRD_IN_PLACE && b.send_bytes > 0 && !recvbuf)
        return trd_fail(TRD_EINVAL, "rank %ld: recvbuf is NULL with TRD_IN_PLACE (it holds "
                        "the input)", (long)r);
    if (b.recv_bytes > 0 && b.gets_result && !recvbuf)
        return trd_fail(TRD_EINVAL, "rank %ld: recvbuf is NULL where the result lands", (long)r);
    if (b.recv_bytes > 0 && b.gets_result && sendbuf != TRD_IN_PLACE && sendbuf != recvbuf) {
        uintptr_t s = (uintptr_t)sendbuf, d = (uintptr_t)recvbuf;
        if (s < d + b.recv_bytes && d < s + b.send_bytes)
            return trd_fail(TRD_EINVAL, "rank %ld: sendbuf and recvbuf overlap without being "
                            "the same buffer", (long)r);
    }
    return TRD_OK;
}

/* A reduce-scatter's parts: as many as ranks, their counts >= 0 and
 * summing to count. */
static trd_status check_parts(const trd_comm *c, trd_collective coll, int64_t count)
{
    int64_t p = c->wire.size;
    if (coll != TRD_COLL_REDUCE_SCATTER)
        return TRD_OK;
    if (!c->parts)
        return count % p == 0 ? TRD_OK
                              : trd_fail(TRD_EINVAL, "reduce-scatter of %lld elements over %lld "
                                         "ranks: need a multiple of p", (long long)count,
                                         (long long)p);
    int64_t sum = 0;
    for (int64_t r = 0; r < p; r++) {
        if (c->parts[r] < 0)
            return trd_fail(TRD_EINVAL, "recvcounts[%lld] = %lld is negative", (long long)r,
                            (long long)c->parts[r]);
        sum += c->parts[r];
    }
    return sum == count ? TRD_OK
                        : trd_fail(TRD_EINVAL, "recvcounts sum to %lld, not %lld",
                                   (long long)sum, (long long)count);
}

/* What the algorithm's registry flags refuse. */
static trd_status check_algo(const trd_algo *a, const trd_op *op, trd_collective coll,
                             bool reproducible)
{
    trd_status st = trd_algo_check_reproducible(a, reproducible);
    if (st == TRD_OK)
        st = trd_algo_check_collective(a, coll);
    if (st == TRD_OK)
        st = trd_algo_check_operator(a, !trd_op_is_commutative(op));
    return st;
}

/* Segments of about segment_bytes, at least one element each.  Without a
 * size: the pipelined algorithms choose from the model; one that routes
 * around slow links, given costs, cuts TRD_LINK_SEGMENT_BYTES pieces; the
 * others cut large buffers into TRD_SEGMENT_BYTES pieces (at most
 * TRD_SEGMENTS_DEFAULT of them), so that receiving one overlaps combining
 * the previous one. */
static int64_t segments_for(const trd_algo *a, const trd_coll_opts *o, int64_t count,
                            size_t elem)
{
    /* (a reduce-scatter cuts each part: count is then its smallest part) */
    if (count == 0 || a->kind == TRD_KIND_DYNAMIC)
        return 1;
    if (o->segment_bytes == 0 && a->segments)
        return 0; /* the algorithm's choice (comm.c keeps it <= count) */
    bool links = o->segment_bytes == 0 && o->costs && (a->caps & TRD_CAP_LINKS);
    int64_t bytes = count * (int64_t)elem; /* a constant divisor: a shift, not a division */
    int64_t m = o->segment_bytes ? (bytes + o->segment_bytes - 1) / o->segment_bytes
                : links          ? (bytes + TRD_LINK_SEGMENT_BYTES - 1) / TRD_LINK_SEGMENT_BYTES
                                 : (bytes + TRD_SEGMENT_BYTES - 1) / TRD_SEGMENT_BYTES;
    if (m > count)
        m = count;
    if (o->segment_bytes == 0 && !links && m > TRD_SEGMENTS_DEFAULT)
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
                               int64_t count, const trd_op *op, int32_t root, trd_collective coll,
                               const trd_coll_opts *o)
{
    trd_status st;
    if (!c || !op)
        return trd_fail(TRD_EINVAL, "treduce: NULL %s", c ? "operator" : "communicator");
    if (!trd_collective_name(coll))
        return trd_fail(TRD_EINVAL, "collective = %d is out of range", (int)coll);
    if (root < 0 || root >= c->wire.size)
        return trd_fail(TRD_EINVAL, "root = %ld is not a rank: need 0 <= root < p = %ld",
                        (long)root, (long)c->wire.size);
    size_t elem = trd_op_elem_size(op);
    if ((st = check_sizes(c, count, elem, o)) != TRD_OK || (st = check_model(o)) != TRD_OK ||
        (st = check_parts(c, coll, count)) != TRD_OK)
        return st;
    return check_buffers(c, sendbuf, recvbuf, buffers_of(c, coll, count, elem, root));
}

/* The count a reduce-scatter's segments are cut from: its smallest part
 * (every block keeps an element where it can); the buffer's otherwise. */
static int64_t smallest_part(const trd_comm *c, trd_collective coll, int64_t count)
{
    if (coll != TRD_COLL_REDUCE_SCATTER)
        return count;
    int64_t least = count / c->wire.size;
    for (int32_t r = 0; c->parts && r < c->wire.size; r++)
        least = r == 0 || c->parts[r] < least ? c->parts[r] : least;
    return least;
}

/* The buffer a rank's slot 0 is: recvbuf where the result lands in it as
 * the plan leaves it (the root of a reduce, every rank of an allreduce or
 * a scan, ranks > 0 of an exscan, a reduce-scatter in place: its part is
 * moved to the front at the end), else NULL: scratch. */
static void *result_slot(const trd_comm *c, const void *sendbuf, void *recvbuf,
                         trd_collective coll, int32_t root)
{
    switch (coll) {
    case TRD_COLL_REDUCE:
        return c->wire.rank == root ? recvbuf : NULL;
    case TRD_COLL_REDUCE_SCATTER:
        return sendbuf == TRD_IN_PLACE ? recvbuf : NULL;
    case TRD_COLL_EXSCAN:
        return c->wire.rank > 0 ? recvbuf : NULL;
    default:
        return recvbuf;
    }
}

trd_status trd_comm_key_for(const trd_comm *c, int64_t count, const trd_op *op, int32_t root,
                            trd_collective coll, const trd_coll_opts *o, trd_comm_key *key)
{
    size_t index;
    trd_status st;
    size_t elem = trd_op_elem_size(op);
    if ((st = trd_algo_find(o->algo, &index)) != TRD_OK ||
        (st = check_algo(trd_algo_entry(index), op, coll, o->reproducible)) != TRD_OK)
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
    p.root = coll == TRD_COLL_REDUCE ? root : 0;
    p.collective = coll;
    p.allreduce = coll == TRD_COLL_ALLREDUCE;
    p.noncommutative = !trd_op_is_commutative(op);
    p.segments = segments_for(trd_algo_entry(index), o, smallest_part(c, coll, count), elem);
    p.costs = o->costs;
    p.node_of = c->node_of;
    p.far_d = o->far_d;
    p.far_latency = o->far_latency;
    *key = (trd_comm_key){.algo = index, .params = p, .parallelism = o->parallelism,
                          .count = count, .elem = elem, .reproducible = o->reproducible,
                          .costs_version = trd_costs_version(o->costs),
                          .parts = coll == TRD_COLL_REDUCE_SCATTER ? c->parts_hash : 0};
    return TRD_OK;
}

trd_status trd_comm_check(const trd_comm *c, const void *sendbuf, void *recvbuf, int64_t count,
                          const trd_op *op, int32_t root, trd_collective coll,
                          const trd_coll_opts *opts, trd_comm_key *key, void **acc)
{
    trd_coll_opts defaults;
    if (!opts)
        trd_coll_opts_init(&defaults);
    const trd_coll_opts *o = opts ? opts : &defaults;
    trd_status st = trd_comm_check_args(c, sendbuf, recvbuf, count, op, root, coll, o);
    if (st == TRD_OK)
        st = trd_comm_key_for(c, count, op, root, coll, o, key);
    if (st == TRD_OK)
        *acc = result_slot(c, sendbuf, recvbuf, coll, root);
    return st;
}

trd_status trd_comm_check_buffers(const trd_comm *c, const void *sendbuf, void *recvbuf,
                                  const trd_comm_key *key, void **acc)
{
    const trd_params *p = &key->params;
    *acc = result_slot(c, sendbuf, recvbuf, p->collective, (int32_t)p->root);
    return check_buffers(c, sendbuf, recvbuf,
                         buffers_of(c, p->collective, key->count, key->elem, (int32_t)p->root));
}
