/* calibrate.c: the size-aware cost model of DESIGN.md (latency + bytes /
 * bandwidth per transfer, a measured time per combine), measured on the
 * running transport, and the model's prediction of a call.  Every rank
 * must build the same plan, so the measured values are agreed on with a
 * max-allreduce (our own, binomial) before anyone uses them. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "plan/registry.h"
#include "runtime/comm.h"

#define PINGS 21
#define BIG_MIN (64 * 1024)
#define BIG_MAX (4 * 1024 * 1024)

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return v[n / 2];
}

/* One round trip of `bytes` between ranks 0 and 1 (others idle). */
static trd_status round_trip(trd_comm *c, void *buf, size_t bytes, double *seconds)
{
    trd_wire *w = &c->wire;
    int32_t me = w->rank, peer = 1 - me, id, from;
    double t0 = w->now(w->ctx), deadline = t0 + c->timeout_s;
    trd_status st = TRD_OK;
    for (int leg = 0; leg < 2 && st == TRD_OK; leg++) {
        bool sending = (leg == 0) == (me == 0);
        st = sending ? w->isend(w->ctx, peer, 0, buf, bytes, 0)
                     : w->irecv(w->ctx, peer, 0, buf, bytes, 0);
        if (st == TRD_OK)
            st = w->wait(w->ctx, deadline, &id, &from);
    }
    *seconds = w->now(w->ctx) - t0;
    return st;
}

/* Median one-way time of `bytes` between ranks 0 and 1. */
static trd_status one_way(trd_comm *c, void *buf, size_t bytes, int reps, double *seconds)
{
    double t[PINGS];
    trd_status st = TRD_OK;
    for (int i = 0; i < reps && st == TRD_OK; i++)
        st = round_trip(c, buf, bytes, &t[i]);
    *seconds = st == TRD_OK ? median(t, reps) / 2 : 0.0;
    return st;
}

/* Latency and seconds per byte, measured by ranks 0 and 1. */
static trd_status measure_wire(trd_comm *c, size_t bytes, double *latency, double *per_byte)
{
    *latency = *per_byte = 0.0;
    if (c->wire.size < 2 || c->wire.rank > 1)
        return TRD_OK;
    unsigned char *buf = malloc(bytes ? bytes : 1);
    if (!buf)
        return trd_fail(TRD_ENOMEM, "calibrate: out of memory for %zu bytes", bytes);
    memset(buf, 1, bytes); /* real pages, not the shared zero page */
    double big = 0.0;
    trd_status st = one_way(c, buf, 0, PINGS, latency);
    if (st == TRD_OK)
        st = one_way(c, buf, bytes, 5, &big);
    free(buf);
    *per_byte = big > *latency ? (big - *latency) / (double)bytes : 0.0;
    return st;
}

/* Seconds of one combine of count elements (best of three). */
static trd_status measure_op(trd_comm *c, const trd_op *op, int64_t count, double *seconds)
{
    size_t bytes = (size_t)count * trd_op_elem_size(op);
    unsigned char *a = malloc(bytes ? bytes : 1), *b = malloc(bytes ? bytes : 1);
    trd_status st = a && b ? TRD_OK : trd_fail(TRD_ENOMEM, "calibrate: out of memory");
    if (st == TRD_OK) { /* real pages holding zeros: valid for every type */
        memset(a, 0, bytes);
        memset(b, 0, bytes);
    }
    *seconds = 1e300;
    for (int i = 0; i < 3 && st == TRD_OK && count > 0; i++) {
        double t0 = trd_comm_now(c);
        st = trd_op_apply(op, a, b, count);
        double t = trd_comm_now(c) - t0;
        *seconds = t < *seconds ? t : *seconds;
    }
    if (count == 0)
        *seconds = 0.0;
    free(a);
    free(b);
    return st;
}

trd_status trd_comm_calibrate(trd_comm *c, const trd_op *op, int64_t count, trd_coll_opts *o)
{
    if (!c || !op || !o || count < 0)
        return trd_fail(TRD_EINVAL, "calibrate: NULL argument or count < 0");
    size_t bytes = (size_t)count * trd_op_elem_size(op);
    size_t probe = bytes < BIG_MIN ? BIG_MIN : bytes > BIG_MAX ? BIG_MAX : bytes;
    double v[3], m[3];
    trd_status st = measure_wire(c, probe, &v[0], &v[1]);
    if (st == TRD_OK)
        st = measure_op(c, op, count, &v[2]);
    trd_op *max = NULL;
    trd_coll_opts agree;
    trd_coll_opts_init(&agree);
    if (st == TRD_OK && (st = trd_op_builtin(&max, TRD_OP_MAX, TRD_DOUBLE)) == TRD_OK)
        st = trd_allreduce(c, v, m, 3, max, &agree);
    trd_op_free(max);
    if (st != TRD_OK)
        return st;
    o->latency = m[0];
    o->d = m[0] + (double)bytes * m[1];
    o->c = m[2];
    return TRD_OK;
}

/* A dynamic algorithm: one simulation with constant costs. */
static trd_status simulate_policy(const trd_comm_key *key, double *seconds)
{
    trd_costs *costs;
    trd_status st = trd_costs_create(&costs, key->params.n, TRD_DIST_CONST, key->params.d,
                                     key->params.c, 0.0);
    if (st == TRD_OK)
        st = trd_simulate(trd_algo_name(key->algo), &key->params, costs, TRD_PORT_FULL, 1, 0,
                          seconds);
    trd_costs_free(costs);
    return st;
}

trd_status trd_comm_predict(trd_comm *c, int64_t count, const trd_op *op, int32_t root,
                            bool allreduce, const trd_coll_opts *opts, double *seconds)
{
    trd_comm_key key;
    void *acc;
    static unsigned char none[1];
    if (!seconds)
        return trd_fail(TRD_EINVAL, "predict: NULL argument (seconds)");
    /* the checks of the call itself, with one stand-in buffer (in place) */
    trd_status st = trd_comm_check(c, none, none, count, op, root, allreduce, opts, &key, &acc);
    if (st != TRD_OK)
        return st;
    if (trd_algo_entry(key.algo)->policy)
        return simulate_policy(&key, seconds);
    trd_plan *plan;
    if ((st = trd_comm_plan(&key, &plan)) != TRD_OK)
        return st;
    *seconds = trd_plan_makespan(plan);
    trd_plan_free(plan);
    return TRD_OK;
}
