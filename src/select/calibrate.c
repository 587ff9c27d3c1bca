/* calibrate.c: the size-aware cost model of docs/RUNTIME.md measured on the
 * running wire: one-way times of messages (between ranks 0 and 1,
 * both leaving a barrier), with and without a combine on arrival (the
 * receive-and-combine saving), the time a rank spends per message of a
 * burst (the rest of the latency is in flight: LogP's L against its o),
 * times of combines with the actual operator, how many ranks run at once
 * (trd_coll_opts.parallelism), and an agreement on the
 * values (the wire's own, with the communicator's deadline:
 * trd_comm_agree_max) so that every rank builds the same plans.
 * trd_comm_calibrate measures at the size of one call; trd_comm_profile
 * (profile.c) at several sizes, fitted to lines. */
#include "select/calibrate.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/splitmix.h"

/* Messages timed each way (trd_calibrate_leg says which time is kept).
 * Each message reuses the same buffers, as a program that reduces its
 * buffers call after call (and treduce bench) does: a message that fits
 * in cache is timed from cache, a larger one from memory. */
#define PINGS_SMALL 21
#define PINGS_LARGE 9
#define PROBE_MIN (64 * 1024)
#define PROBE_MAX (4 * 1024 * 1024)
#define BURST 16  /* messages per burst (trd_calibrate_gap) */
#define BURSTS 5  /* bursts, the median kept */
#define SPIN_ITERS 400000 /* spin_times' loop */

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

double trd_calibrate_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return v[n / 2];
}

/* A rank's buffers for timed messages: what it sends from, where a plain
 * receive lands (and, with an operator, a wire that cannot combine from
 * the sender's buffer), and the accumulator a receive-and-combine folds
 * into (count elements).  Apart, as a collective's are: the other rank
 * only ever reads `send`, so the bytes this rank writes are never in the
 * other's cache (reusing one buffer both ways made every written line an
 * invalidation of the other core's copy, and a plain 1 MiB receive over
 * threads several times slower than with the buffers apart). */
typedef struct leg_bufs {
    unsigned char *send, *land, *acc;
    const trd_op *op;
    int64_t count;
} leg_bufs;

/* A consumed message folded into the accumulator where it lies (wire.h
 * irecv_consume), as the executor's consume does. */
static trd_status fold(void *arg, const void *data, size_t bytes)
{
    const leg_bufs *l = arg;
    (void)bytes;
    return trd_op_apply(l->op, data, l->acc, l->count);
}

/* The receiving end of one timed message: as the executor runs a
 * RECV_COMBINE (exec.c post_recv_combine) when l->op is set - combined
 * where the sender keeps it when the wire can, else landed then combined
 * - or a plain receive. */
static trd_status receive(trd_comm *c, int32_t from, const leg_bufs *l, size_t bytes)
{
    trd_wire *w = &c->wire;
    int32_t id, src;
    trd_status st = l->op && w->irecv_consume
                        ? w->irecv_consume(w->ctx, from, 0, bytes, 0, fold, (void *)l)
                        : w->irecv(w->ctx, from, 0, l->land, bytes, 0);
    if (st == TRD_OK)
        st = w->wait(w->ctx, c->timeout_s, &id, &src);
    if (st == TRD_OK && l->op && !w->irecv_consume)
        st = trd_op_apply(l->op, l->land, l->acc, l->count);
    return st;
}

/* One message of `bytes` from rank `from` to the other of ranks 0 and peer,
 * as a collective meets it: both leave a barrier, one sends, the other
 * receives; the receiver's time from the barrier to the message's arrival
 * (*seconds; the other ranks: the barrier only).  Not half a ping-pong: a
 * ping-pong's leg waits a whole leg before its message comes, long enough
 * for a wire that spins and then parks (threads) to park, where a
 * collective's message mostly arrives during the spin; and a bench times
 * a call the same way, from a barrier to its end. */
static trd_status one_leg(trd_comm *c, int32_t peer, int32_t from, const leg_bufs *l,
                          size_t bytes, double *seconds)
{
    trd_wire *w = &c->wire;
    int32_t me = w->rank, id, src;
    trd_status st = trd_comm_barrier(c);
    double t0 = w->now(w->ctx);
    if (st == TRD_OK && me == from) {
        st = w->isend(w->ctx, me == 0 ? peer : 0, 0, l->send, bytes, 0);
        if (st == TRD_OK)
            st = w->wait(w->ctx, c->timeout_s, &id, &src);
    } else if (st == TRD_OK && (me == 0 || me == peer)) {
        st = receive(c, from, l, bytes);
    }
    *seconds = w->now(w->ctx) - t0;
    return st;
}

/* The means of rank 0's and rank peer's two values, on rank 0 (peer
 * sends its values; the other ranks do nothing). */
static trd_status mean_of_two(trd_comm *c, int32_t peer, const double mine[2], double mean[2])
{
    trd_wire *w = &c->wire;
    int32_t id, from;
    double theirs[2] = {0.0, 0.0};
    trd_status st = TRD_OK;
    mean[0] = mean[1] = 0.0;
    if (w->rank != 0 && w->rank != peer)
        return TRD_OK;
    st = w->rank == peer ? w->isend(w->ctx, 0, 1, mine, sizeof theirs, 0)
                         : w->irecv(w->ctx, peer, 1, theirs, sizeof theirs, 0);
    if (st == TRD_OK)
        st = w->wait(w->ctx, c->timeout_s, &id, &from);
    for (int k = 0; k < 2 && w->rank == 0; k++)
        mean[k] = 0.5 * (mine[k] + theirs[k]);
    return st;
}

/* Messages of `bytes` go both ways, each timed by its receiver, and the
 * two directions' times are averaged: a barrier does not release its
 * ranks at the same instant (over MPI the rank that gathers the arrivals
 * leaves first), and what that lag adds to one direction it takes from
 * the other.  With op, each message folds into an accumulator. */
static trd_status timed_legs(trd_comm *c, int32_t peer, const trd_op *op, size_t bytes,
                             double legs[2])
{
    double t[PINGS_SMALL];
    int reps = bytes < PROBE_MIN ? PINGS_SMALL : PINGS_LARGE, got = 0;
    int32_t me = c->wire.rank;
    size_t room = (me == 0 || me == peer) && bytes ? bytes : 1;
    unsigned char *buf = malloc(3 * room);
    trd_status st = TRD_OK;
    if (!buf)
        st = trd_fail(TRD_ENOMEM, "calibrate: out of memory for %zu bytes", 3 * room);
    else /* real pages, not the shared zero page; zeros are valid for every type */
        memset(buf, 0, 3 * room);
    leg_bufs l = {buf, buf + room, buf + 2 * room, op,
                  op ? (int64_t)(bytes / trd_op_elem_size(op)) : 0};
    for (int i = 0; i < 2 * reps && st == TRD_OK; i++) {
        int32_t from = i % 2 ? peer : 0; /* directions alternate */
        double one;
        st = one_leg(c, peer, from, &l, bytes, &one);
        if (me == (from == 0 ? peer : 0))
            t[got++] = one;
    }
    st = trd_comm_fail(c, st); /* before buf goes: the peer may hold it */
    free(buf);
    double mine[2] = {0.0, 0.0};
    if (got > 0) {
        mine[1] = trd_calibrate_median(t, got); /* sorts t */
        mine[0] = t[got / 4];
    }
    if (st == TRD_OK)
        st = trd_comm_fail(c, mean_of_two(c, peer, mine, legs));
    return st;
}

trd_status trd_calibrate_one_way(trd_comm *c, size_t bytes, double legs[2])
{
    return trd_calibrate_one_way_to(c, 1, bytes, legs);
}

trd_status trd_calibrate_one_way_to(trd_comm *c, int32_t peer, size_t bytes, double legs[2])
{
    legs[0] = legs[1] = 0.0;
    return c->wire.size < 2 ? TRD_OK : timed_legs(c, peer, NULL, bytes, legs);
}

trd_status trd_calibrate_recv_combine(trd_comm *c, const trd_op *op, int64_t count,
                                      double legs[2])
{
    legs[0] = legs[1] = 0.0;
    return c->wire.size < 2 ? TRD_OK
                            : timed_legs(c, 1, op, (size_t)count * trd_op_elem_size(op), legs);
}

double trd_calibrate_leg(const double legs[2], double parallelism, int32_t p)
{
    return parallelism < (double)p ? legs[1] : legs[0];
}

/* One burst: rank 1 posts BURST sends, everyone passes a barrier, then
 * rank 0 receives them all; rank 0's time per message. */
static trd_status burst(trd_comm *c, double *seconds)
{
    trd_wire *w = &c->wire;
    int32_t me = w->rank, id, from;
    double t0 = 0;
    trd_status st = TRD_OK;
    for (int32_t i = 0; i < BURST && me == 1 && st == TRD_OK; i++)
        st = w->isend(w->ctx, 0, 0, NULL, 0, i);
    if (st == TRD_OK)
        st = trd_comm_barrier(c);
    if (me == 0)
        t0 = w->now(w->ctx);
    for (int32_t i = 0; i < BURST && me == 0 && st == TRD_OK; i++)
        st = w->irecv(w->ctx, 1, 0, NULL, 0, i);
    for (int32_t i = 0; i < BURST && me <= 1 && st == TRD_OK; i++)
        st = w->wait(w->ctx, c->timeout_s, &id, &from);
    *seconds = me == 0 ? (w->now(w->ctx) - t0) / BURST : 0.0;
    return trd_comm_fail(c, st);
}

trd_status trd_calibrate_gap(trd_comm *c, double *seconds)
{
    double t[BURSTS];
    trd_status st = TRD_OK;
    *seconds = 0.0;
    if (c->wire.size < 2)
        return TRD_OK;
    for (int i = 0; i < BURSTS && st == TRD_OK; i++)
        st = burst(c, &t[i]);
    if (st == TRD_OK && c->wire.rank == 0) {
        *seconds = trd_calibrate_median(t, BURSTS);
    }
    return st;
}

/* Two operands of count elements of op for timed combines: real pages
 * (not the shared zero page) holding zeros, valid for every type.  Both
 * NULL and TRD_ENOMEM when out of memory. */
static trd_status operands(const trd_op *op, int64_t count, unsigned char **a,
                           unsigned char **b)
{
    size_t bytes = (size_t)count * trd_op_elem_size(op);
    *a = malloc(bytes ? bytes : 1);
    *b = malloc(bytes ? bytes : 1);
    if (!*a || !*b) {
        free(*a);
        free(*b);
        *a = *b = NULL;
        return trd_fail(TRD_ENOMEM, "calibrate: out of memory for %zu bytes", 2 * bytes);
    }
    memset(*a, 0, bytes);
    memset(*b, 0, bytes);
    return TRD_OK;
}

/* Best of three combines on this rank, now. */
static trd_status time_combine(trd_comm *c, const trd_op *op, int64_t count, double *seconds)
{
    unsigned char *a, *b;
    trd_status st = operands(op, count, &a, &b);
    *seconds = count > 0 ? 1e300 : 0.0;
    for (int i = 0; i < 3 && st == TRD_OK && count > 0; i++) {
        double t0 = trd_comm_now(c);
        st = trd_op_apply(op, a, b, count);
        double t = trd_comm_now(c) - t0;
        *seconds = t < *seconds ? t : *seconds;
    }
    free(a);
    free(b);
    return st;
}

/* The ranks take turns, so that on a machine with fewer cores than ranks
 * each measures a core of its own, not its share of one (the model gives
 * every rank its own core). */
trd_status trd_calibrate_combine(trd_comm *c, const trd_op *op, int64_t count, double *seconds)
{
    trd_status st = TRD_OK;
    *seconds = 0.0;
    for (int32_t r = 0; r < c->wire.size && st == TRD_OK; r++) {
        st = trd_comm_barrier(c);
        if (st == TRD_OK && r == c->wire.rank)
            st = time_combine(c, op, count, seconds);
    }
    return st;
}

/* The smallest of every rank's `mine` (collective): a time measured alone
 * on every rank in turn, where the slower ones may have shared their core
 * with ranks waiting in a barrier. */
static trd_status fastest_rank(trd_comm *c, double mine, double *fastest)
{
    double neg = -mine, most;
    trd_status st = trd_comm_agree_max(c, &neg, &most, 1);
    *fastest = st == TRD_OK ? -most : mine;
    return st;
}

/* A fixed integer loop (about a millisecond): work that needs a core and
 * nothing else. */
/* keeps the loop; atomic, as every rank of a threads wire (or every
 * thread of an MPI process) may spin at once */
static _Atomic uint64_t spin_sink;

static double spin(trd_comm *c)
{
    uint64_t x = 1;
    double t0 = trd_comm_now(c);
    for (int i = 0; i < SPIN_ITERS; i++)
        x = trd_mix64(x + TRD_GOLDEN64);
    atomic_store_explicit(&spin_sink, x, memory_order_relaxed);
    return trd_comm_now(c) - t0;
}

/* The spin's time alone (on each rank in turn, the fastest rank's) and on
 * all ranks at once (from leaving a barrier to leaving the next, the
 * slowest rank's). */
static trd_status spin_times(trd_comm *c, double *alone, double *together)
{
    double mine = 1e300;
    trd_status st = TRD_OK;
    for (int32_t r = 0; r < c->wire.size && st == TRD_OK; r++) {
        st = trd_comm_barrier(c);
        if (st == TRD_OK && r == c->wire.rank)
            mine = spin(c);
    }
    if (st == TRD_OK)
        st = fastest_rank(c, mine, alone);
    if (st == TRD_OK)
        st = trd_comm_barrier(c);
    double t0 = trd_comm_now(c);
    if (st == TRD_OK) {
        spin(c);
        st = trd_comm_barrier(c); /* a spin alone fits in a time slice: count the turns */
    }
    double t = trd_comm_now(c) - t0;
    return st == TRD_OK ? trd_comm_agree_max(c, &t, together, 1) : st;
}

/* Work that needs a core and no memory: the ranks' sharing of the memory
 * bus is the stream curve's (calibrate_streams.c), which the prediction
 * charges apart (contention.c).  Measured with combines of the sum of
 * doubles, k held both, the bus was charged twice, and 64 KiB and 1 MiB
 * calls came out predicted too slow where ranks outnumber cores. */
trd_status trd_calibrate_parallelism(trd_comm *c, double *k)
{
    int32_t p = c->wire.size;
    double alone = 0.0, together = 0.0;
    *k = p;
    if (p < 2)
        return TRD_OK;
    trd_status st = spin_times(c, &alone, &together);
    if (st != TRD_OK || !(together >= 1.5 * alone)) /* every rank has a core */
        return st;
    *k = p * alone / together;
    *k = *k < 1 ? 1.0 : *k > p ? (double)p : *k;
    return st;
}

double trd_calibrate_saving(double recv_combine, double latency, double copy, double combine)
{
    if (!(copy > 0))
        return 0.0;
    double paid = (recv_combine - latency - combine) / copy;
    return paid <= 0 ? 1.0 : paid >= 1 ? 0.0 : 1.0 - paid;
}

trd_status trd_comm_calibrate(trd_comm *c, const trd_op *op, int64_t count, trd_coll_opts *o)
{
    if (!c || !op || !o || count < 0)
        return trd_fail(TRD_EINVAL, "calibrate: NULL argument or count < 0");
    trd_comm_drain(c); /* after the calls started before it, as any blocking call */
    trd_status st = trd_comm_usable(c);
    if (st != TRD_OK)
        return st;
    size_t bytes = (size_t)count * trd_op_elem_size(op);
    size_t probe = bytes < PROBE_MIN ? PROBE_MIN : bytes > PROBE_MAX ? PROBE_MAX : bytes;
    /* the legs (trd_calibrate_one_way) of 0 bytes, of the probe and fused
     * of the probe; the combines of count and of the probe; the gap */
    double v[9], m[9];
    int64_t many = (int64_t)(probe / trd_op_elem_size(op)); /* parallelism's probe */
    st = trd_calibrate_one_way(c, 0, &v[0]);
    if (st == TRD_OK)
        st = trd_calibrate_one_way(c, probe, &v[2]);
    if (st == TRD_OK)
        st = trd_calibrate_combine(c, op, count, &v[6]);
    if (st == TRD_OK)
        st = trd_calibrate_gap(c, &v[8]);
    if (st == TRD_OK)
        st = trd_calibrate_combine(c, op, many, &v[7]);
    if (st == TRD_OK)
        st = trd_calibrate_recv_combine(c, op, many, &v[4]);
    if (st == TRD_OK)
        st = trd_comm_agree_max(c, v, m, 9);
    if (st == TRD_OK)
        st = trd_calibrate_parallelism(c, &o->parallelism);
    if (st == TRD_OK)
        st = trd_comm_node_curve(c);
    if (st != TRD_OK)
        return st;
    int32_t p = c->wire.size;
    double lat = trd_calibrate_leg(&m[0], o->parallelism, p);
    double at_probe = trd_calibrate_leg(&m[2], o->parallelism, p);
    double fused = trd_calibrate_leg(&m[4], o->parallelism, p);
    double per_byte = at_probe > lat ? (at_probe - lat) / (double)probe : 0.0;
    const trd_comm_profiles *t = &trd_select_state_of(c)->profiles; /* the curve made it */
    o->stream_bw = t->streams > 0 ? t->stream_bw : NULL;
    o->streams = t->streams;
    o->latency = lat;
    o->flight = lat > m[8] ? lat - m[8] : 0.0;
    o->recv_combine_saving = trd_calibrate_saving(fused, lat, (double)many *
                                                  (double)trd_op_elem_size(op) * per_byte, m[7]);
    o->combine_fixed = 0.0;
    o->d = lat + (double)bytes * per_byte;
    o->c = m[6];
    o->measure_model = false; /* a model is given now */
    return TRD_OK;
}
