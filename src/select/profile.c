/* profile.c: a platform profile (the size-aware cost model of
 * docs/RUNTIME.md, "Calibration and prediction"):
 * transfers cost latency + bytes * per_byte (flight of the latency spent
 * in flight, trd_calibrate_gap), combines combine_fixed +
 * elements * per_element, each line fitted by least squares (GSL's
 * gsl_fit_wlinear) to medians measured at several sizes.  The measuring
 * itself (round trips, timed combines, agreeing on the values) is shared
 * with trd_comm_calibrate (src/select/calibrate.c). */
#include <gsl/gsl_fit.h>
#include <math.h>
#include <string.h>

#include "core/error.h"
#include "model/node.h"
#include "select/calibrate.h"
#include "runtime/op.h"

static const size_t transfer_sizes[] = {0, 4096, 65536, 1 << 20, 8 << 20};
/* Between two nodes: smaller, since the network may be a thousand times
 * slower than a node's memory (a 100 Mbit/s link moves 256 KiB in 21 ms). */
static const size_t far_sizes[] = {0, 4096, 65536, 256 << 10};
static const int64_t combine_counts[] = {1024, 16384, 262144, 1 << 20};
#define FUSED_PROBE (1 << 20) /* bytes of the receive-and-combine (recv_combine_saving) */
#define NT (sizeof transfer_sizes / sizeof transfer_sizes[0])
#define NC (sizeof combine_counts / sizeof combine_counts[0])
#define NF (sizeof far_sizes / sizeof far_sizes[0])

/* y = c0 + c1 x by least squares on relative errors (weights 1/y^2: a
 * 4-byte message must fit as well as an 8 MiB one, or the latency drowns
 * in the large sizes' noise), both clamped at 0. */
static void fit(const double *x, const double *y, size_t n, double *c0, double *c1)
{
    double w[NT > NC ? NT : NC], cov00, cov01, cov11, chisq;
    for (size_t i = 0; i < n; i++)
        w[i] = y[i] > 0 ? 1.0 / (y[i] * y[i]) : 1.0;
    gsl_fit_wlinear(x, 1, w, 1, y, 1, n, c0, c1, &cov00, &cov01, &cov11, &chisq);
    *c0 = *c0 > 0 ? *c0 : 0.0;
    *c1 = *c1 > 0 ? *c1 : 0.0;
}

static trd_status measure(trd_comm *c, const trd_op *op, trd_profile *out);

trd_status trd_comm_profile(trd_comm *c, const trd_op *op, trd_profile *out)
{
    trd_comm_drain(c); /* after the calls started before it, as any blocking call */
    trd_status st = c && op && out ? trd_comm_barrier(c) /* the late ranks are in */
                                   : trd_fail(TRD_EINVAL, "profile: NULL argument");
    if (st != TRD_OK)
        return st;
    double timeout = c->timeout_s, limit = trd_comm_profile_timeout(c);
    if (c->timeout_s > limit)
        c->timeout_s = limit; /* a stall now is a fault, not a late rank */
    st = measure(c, op, out);
    c->timeout_s = timeout;
    return st;
}

/* The lowest rank on another node than rank 0's (trd_comm_set_nodes), or
 * -1: one node, or none known. */
static int32_t far_peer(const trd_comm *c)
{
    int32_t home = trd_comm_node(c, 0);
    for (int32_t r = 1; home >= 0 && r < c->wire.size; r++)
        if (trd_comm_node(c, r) != home)
            return r;
    return -1;
}

/* far_latency and far_per_byte from the agreed legs between nodes. */
static void fit_far(const double *legs, const trd_profile *near, int32_t p, trd_profile *out)
{
    double x[NF], t[NF];
    for (size_t i = 0; i < NF; i++) {
        x[i] = (double)far_sizes[i];
        t[i] = trd_calibrate_leg(&legs[2 * i], near->parallelism, p);
    }
    fit(x, t, NF, &out->far_latency, &out->far_per_byte);
    if (out->far_latency <= 0)
        out->far_latency = t[0];
}

static trd_status measure(trd_comm *c, const trd_op *op, trd_profile *out)
{
    /* v: the combines, the gap, then (quartile, median) of each transfer
     * size's legs, of the fused probe's and of each far size's */
    enum { GAP = NC, LEGS = NC + 1, FUSED = LEGS + 2 * NT, FAR = FUSED + 2, NV = FAR + 2 * NF };
    double x[NT], t[NT], xc[NC], tc[NC], v[NV], agreed[NV];
    int32_t far = far_peer(c);
    int64_t fused = FUSED_PROBE / (int64_t)trd_op_elem_size(op);
    trd_status st = TRD_OK;
    for (size_t i = 0; i < NT && st == TRD_OK; i++) {
        x[i] = (double)transfer_sizes[i];
        st = trd_calibrate_one_way(c, transfer_sizes[i], &v[LEGS + 2 * i]);
    }
    for (size_t i = 0; i < NC && st == TRD_OK; i++) {
        xc[i] = (double)combine_counts[i];
        st = trd_calibrate_combine(c, op, combine_counts[i], &v[i]);
    }
    if (st == TRD_OK)
        st = trd_calibrate_gap(c, &v[GAP]);
    if (st == TRD_OK)
        st = trd_calibrate_recv_combine(c, op, fused, &v[FUSED]);
    for (size_t i = 0; i < NF && st == TRD_OK; i++)
        st = far < 0 ? (v[FAR + 2 * i] = v[FAR + 2 * i + 1] = 0.0, TRD_OK)
                     : trd_calibrate_one_way_to(c, far, far_sizes[i], &v[FAR + 2 * i]);
    if (st == TRD_OK)
        st = trd_comm_agree_max(c, v, agreed, NV);
    if (st == TRD_OK)
        st = trd_calibrate_parallelism(c, &out->parallelism);
    if (st == TRD_OK)
        st = trd_comm_node_curve(c);
    if (st != TRD_OK)
        return st;
    const trd_comm_profiles *curve = &trd_select_state_of(c)->profiles; /* made by the curve */
    out->streams = curve->streams;
    memcpy(out->stream_bw, curve->stream_bw, sizeof out->stream_bw);
    for (size_t i = 0; i < NT; i++)
        t[i] = trd_calibrate_leg(&agreed[LEGS + 2 * i], out->parallelism, c->wire.size);
    for (size_t i = 0; i < NC; i++)
        tc[i] = agreed[i];
    fit(x, t, NT, &out->latency, &out->per_byte);
    if (out->latency <= 0) /* noise tilted the line: a 0-byte message costs what it took */
        out->latency = t[0];
    fit(xc, tc, NC, &out->combine_fixed, &out->per_element);
    out->flight = out->latency > agreed[GAP] ? out->latency - agreed[GAP] : 0.0;
    out->recv_combine_saving = trd_calibrate_saving(
        trd_calibrate_leg(&agreed[FUSED], out->parallelism, c->wire.size), out->latency,
        (double)fused * trd_op_elem_size(op) * out->per_byte,
        out->combine_fixed + (double)fused * out->per_element);
    out->far_latency = out->far_per_byte = 0.0;
    if (far >= 0)
        fit_far(&agreed[FAR], out, c->wire.size, out);
    return TRD_OK;
}

static bool valid(double v)
{
    return isfinite(v) && v >= 0;
}

trd_status trd_profile_apply(const trd_profile *p, int64_t count, size_t elem, trd_coll_opts *o)
{
    if (!p || !o || count < 0)
        return trd_fail(TRD_EINVAL, "profile: NULL argument or count < 0");
    if (!valid(p->latency) || !valid(p->per_byte) || !valid(p->combine_fixed) ||
        !valid(p->per_element) || !valid(p->flight) || !valid(p->parallelism) ||
        !valid(p->far_latency) || !valid(p->far_per_byte) ||
        !(p->recv_combine_saving >= 0 && p->recv_combine_saving <= 1) ||
        !trd_node_curve_valid(p->stream_bw, p->streams))
        return trd_fail(TRD_EINVAL, "profile: every value must be finite and >= 0 (latency "
                        "%g, per_byte %g, combine_fixed %g, per_element %g, flight %g, "
                        "parallelism %g), recv_combine_saving (%g) within [0, 1], and "
                        "stream_bw, of 0 to %d streams, "
                        "non-decreasing, positive and at most k stream_bw[0]", p->latency,
                        p->per_byte, p->combine_fixed, p->per_element, p->flight,
                        p->parallelism, p->recv_combine_saving, TRD_STREAMS_MAX);
    o->latency = p->latency;
    o->flight = p->flight < p->latency ? p->flight : p->latency;
    o->d = p->latency + (double)count * (double)elem * p->per_byte;
    o->c = count > 0 ? p->combine_fixed + (double)count * p->per_element : 0.0;
    o->combine_fixed = count > 0 ? p->combine_fixed : 0.0;
    o->parallelism = p->parallelism;
    o->recv_combine_saving = p->recv_combine_saving;
    bool far = p->far_latency > 0 || p->far_per_byte > 0; /* measured between nodes */
    o->far_latency = far ? p->far_latency : 0.0;
    o->far_d = far ? p->far_latency + (double)count * (double)elem * p->far_per_byte : 0.0;
    o->stream_bw = p->streams > 0 ? p->stream_bw : NULL;
    o->streams = p->streams;
    o->measure_model = false; /* a model is given now */
    return TRD_OK;
}

/* Why measured once per operator and kept: a full profile costs the
 * order of a tenth of a second, and auto resolves again whenever a call's
 * arguments differ from the last call's (trd_comm_memo).  Without it,
 * auto ranked under trd_coll_opts_init's unitless 1, 1, 0, where latency
 * is free: a 32-byte allreduce at np 2 then ran rabenseifner's two
 * rounds, well behind Open MPI, where under the profile it runs
 * recursive-doubling's one round (docs/BENCHMARKS.md, "bench/pair"). */
trd_status trd_comm_measured_model(trd_comm *c, const trd_op *op, int64_t count,
                                   trd_coll_opts *opts)
{
    if (!opts->measure_model || opts->reproducible || opts->costs)
        return TRD_OK; /* heterogeneous costs are the model: no profile */
    struct trd_select_state *state = trd_select_state_of(c);
    if (!state)
        return trd_fail(TRD_ENOMEM, "profile: out of memory");
    trd_comm_profiles *t = &state->profiles;
    uint64_t serial = trd_op_serial(op);
    int32_t i = 0;
    while (i < TRD_COMM_PROFILES && t->op_serial[i] != serial)
        i++;
    if (i == TRD_COMM_PROFILES) {
        i = t->next;
        t->op_serial[i] = 0; /* until measured */
        trd_status st = trd_comm_profile(c, op, &t->profile[i]);
        if (st != TRD_OK)
            return st;
        t->op_serial[i] = serial;
        t->next = (i + 1) % TRD_COMM_PROFILES;
    }
    return trd_profile_apply(&t->profile[i], count, trd_op_elem_size(op), opts);
}
