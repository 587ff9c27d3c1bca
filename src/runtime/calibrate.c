/* calibrate.c: the size-aware cost model of DESIGN.md measured on the
 * running transport: one-way times of messages (ping-pong between ranks 0
 * and 1), the time a rank spends per message of a burst (the rest of the
 * latency is in flight: LogP's L against its o), times of combines with
 * the actual operator, how many ranks combine at full speed at once
 * (trd_coll_opts.parallelism), and an agreement on the values (the
 * wire's own, with the communicator's deadline: trd_comm_agree_max) so
 * that every rank builds the same plans.  trd_comm_calibrate measures at
 * the size of one call; trd_comm_profile (profile.c) at several sizes,
 * fitted to lines. */
#include "runtime/calibrate.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/splitmix.h"

#define PINGS_SMALL 21
#define PINGS_LARGE 5
#define PROBE_MIN (64 * 1024)
#define PROBE_MAX (4 * 1024 * 1024)
/* Round trips cycle through buffers spanning at least this much, so that a
 * large message is measured from memory, as in a real call (whose
 * buffers, scratch slots and peers' buffers do not stay in cache), not
 * from a cache the same buffer keeps warm. */
#define COLD_SPAN (32 * 1024 * 1024)
#define COLD_BUFFERS 16
#define BURST 16  /* messages per burst (trd_calibrate_gap) */
#define BURSTS 5  /* bursts, the median kept */
#define ROUNDS 5  /* rounds of combines all at once, the median kept */
#define SPIN_ITERS 400000 /* own_cores' loop */

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

/* One round trip of `bytes` between ranks 0 and 1. */
static trd_status round_trip(trd_comm *c, void *buf, size_t bytes, double *seconds)
{
    trd_wire *w = &c->wire;
    int32_t me = w->rank, peer = 1 - me, id, from;
    double t0 = w->now(w->ctx);
    trd_status st = TRD_OK;
    for (int leg = 0; leg < 2 && st == TRD_OK; leg++) {
        bool sending = (leg == 0) == (me == 0);
        st = sending ? w->isend(w->ctx, peer, 0, buf, bytes, 0)
                     : w->irecv(w->ctx, peer, 0, buf, bytes, 0);
        if (st == TRD_OK)
            st = w->wait(w->ctx, c->timeout_s, &id, &from);
    }
    *seconds = w->now(w->ctx) - t0;
    return st;
}

trd_status trd_calibrate_one_way(trd_comm *c, size_t bytes, double *seconds)
{
    double t[PINGS_SMALL];
    int reps = bytes < PROBE_MIN ? PINGS_SMALL : PINGS_LARGE;
    *seconds = 0.0;
    if (c->wire.size < 2 || c->wire.rank > 1)
        return TRD_OK;
    size_t nbuf = bytes ? COLD_SPAN / bytes : 1;
    nbuf = nbuf < 1 ? 1 : nbuf > COLD_BUFFERS ? COLD_BUFFERS : nbuf;
    unsigned char *buf = malloc(nbuf * (bytes ? bytes : 1));
    if (!buf)
        return trd_fail(TRD_ENOMEM, "calibrate: out of memory for %zu bytes", nbuf * bytes);
    memset(buf, 1, nbuf * bytes); /* real pages, not the shared zero page */
    trd_status st = TRD_OK;
    for (int i = 0; i < reps && st == TRD_OK; i++)
        st = round_trip(c, buf + (size_t)i % nbuf * bytes, bytes, &t[i]);
    st = trd_comm_fail(c, st); /* before buf goes: the peer may hold it */
    free(buf);
    if (st == TRD_OK) {
        *seconds = trd_calibrate_median(t, reps) / 2;
    }
    return st;
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

/* A combine's time alone (best of 3, the ranks in turn, the fastest
 * rank's) and when all ranks combine at once (3 combines from leaving one
 * barrier to leaving the next, the median of 5 rounds, the slowest
 * rank's). */
static trd_status combine_times(trd_comm *c, const trd_op *op, int64_t count, double *alone,
                                double *together)
{
    unsigned char *a, *b;
    double mine = 0.0, t[ROUNDS];
    trd_status st = operands(op, count, &a, &b);
    if (st == TRD_OK)
        st = trd_calibrate_combine(c, op, count, &mine);
    if (st == TRD_OK)
        st = fastest_rank(c, mine, alone);
    for (int r = 0; r < ROUNDS && st == TRD_OK; r++) {
        st = trd_comm_barrier(c);
        double t0 = trd_comm_now(c);
        for (int i = 0; i < 3 && st == TRD_OK; i++)
            st = trd_op_apply(op, a, b, count);
        if (st == TRD_OK)
            st = trd_comm_barrier(c);
        t[r] = (trd_comm_now(c) - t0) / 3;
    }
    free(a);
    free(b);
    if (st != TRD_OK)
        return st;
    double median = trd_calibrate_median(t, ROUNDS);
    return trd_comm_agree_max(c, &median, together, 1);
}

/* A fixed integer loop (about a millisecond): work that needs a core and
 * nothing else. */
static volatile uint64_t spin_sink; /* keeps the loop */

static double spin(trd_comm *c)
{
    uint64_t x = 1;
    double t0 = trd_comm_now(c);
    for (int i = 0; i < SPIN_ITERS; i++)
        x = trd_mix64(x + TRD_GOLDEN64);
    spin_sink = x;
    return trd_comm_now(c) - t0;
}

/* Whether every rank has a core of its own: the spin on all ranks at once
 * (from leaving a barrier to leaving the next, the slowest rank) takes
 * less than 1.5 times the fastest rank's alone. */
static trd_status own_cores(trd_comm *c, bool *own)
{
    double mine = 1e300, alone, together;
    trd_status st = TRD_OK;
    for (int32_t r = 0; r < c->wire.size && st == TRD_OK; r++) {
        st = trd_comm_barrier(c);
        if (st == TRD_OK && r == c->wire.rank)
            mine = spin(c);
    }
    if (st == TRD_OK)
        st = fastest_rank(c, mine, &alone);
    if (st == TRD_OK)
        st = trd_comm_barrier(c);
    double t0 = trd_comm_now(c);
    if (st == TRD_OK) {
        spin(c);
        st = trd_comm_barrier(c); /* a spin alone fits in a time slice: count the turns */
    }
    double t = trd_comm_now(c) - t0;
    if (st == TRD_OK)
        st = trd_comm_agree_max(c, &t, &together, 1);
    *own = st == TRD_OK && together < 1.5 * alone;
    return st;
}

trd_status trd_calibrate_parallelism(trd_comm *c, const trd_op *op, int64_t count, double *k)
{
    int32_t p = c->wire.size;
    double alone = 0.0, together = 0.0;
    bool own = true;
    trd_status st = p > 1 ? own_cores(c, &own) : TRD_OK;
    *k = p;
    if (st != TRD_OK || own)
        return st;
    if ((st = combine_times(c, op, count, &alone, &together)) == TRD_OK && together > 0)
        *k = p * alone / together;
    *k = *k < 1 ? 1.0 : *k > p ? (double)p : *k;
    return st;
}


trd_status trd_comm_calibrate(trd_comm *c, const trd_op *op, int64_t count, trd_coll_opts *o)
{
    if (!c || !op || !o || count < 0)
        return trd_fail(TRD_EINVAL, "calibrate: NULL argument or count < 0");
    trd_status st = trd_comm_usable(c);
    if (st != TRD_OK)
        return st;
    size_t bytes = (size_t)count * trd_op_elem_size(op);
    size_t probe = bytes < PROBE_MIN ? PROBE_MIN : bytes > PROBE_MAX ? PROBE_MAX : bytes;
    double v[4], m[4], big = 0.0;
    int64_t many = (int64_t)(probe / trd_op_elem_size(op)); /* parallelism's probe */
    st = trd_calibrate_one_way(c, 0, &v[0]);
    if (st == TRD_OK)
        st = trd_calibrate_one_way(c, probe, &big);
    v[1] = big > v[0] ? (big - v[0]) / (double)probe : 0.0; /* seconds per byte */
    if (st == TRD_OK)
        st = trd_calibrate_combine(c, op, count, &v[2]);
    if (st == TRD_OK)
        st = trd_calibrate_gap(c, &v[3]);
    if (st == TRD_OK)
        st = trd_comm_agree_max(c, v, m, 4);
    if (st == TRD_OK)
        st = trd_calibrate_parallelism(c, op, many, &o->parallelism);
    if (st == TRD_OK)
        st = trd_comm_node_curve(c);
    if (st != TRD_OK)
        return st;
    o->stream_bw = c->profiles.streams > 0 ? c->profiles.stream_bw : NULL;
    o->streams = c->profiles.streams;
    o->latency = m[0];
    o->flight = m[0] > m[3] ? m[0] - m[3] : 0.0;
    o->combine_fixed = 0.0;
    o->d = m[0] + (double)bytes * m[1];
    o->c = m[2];
    o->measure_model = false; /* a model is given now */
    return TRD_OK;
}
