/* profile_pairs.c: the heterogeneous cost model (docs/MODEL.md: matrix
 * d[i][j], vector c[i]) measured on the running wire, one ordered
 * pair of ranks at a time: `treduce calibrate --matrix`.
 *
 * Pairs go one after the other, a barrier between two, so that no two
 * measurements share a link, whatever the network between the ranks (the
 * ranks do not know it).  For the pair i -> j, i times round trips: an
 * 8-byte control message announcing a size s, s bytes, and an empty
 * acknowledgement from j.  With s = 0 (the median of LAT_REPS) that is
 * two small messages: the latency is half of it.  Then s grows from
 * GROW_FROM (doubling) until the s bytes add at least TARGET_S to the
 * round trip (a TCP window's growth, and the few kilobytes a token
 * bucket lets through at once after an idle moment, then weigh little);
 * the time per byte is the fastest of BW_REPS round trips of s, less the
 * fastest small round trip, over s - and if that fastest adds less than
 * TARGET_S / 2 (a stall ended the growth early), s doubles again.  The fastest of each: on a busy
 * machine a stalled process only adds time, so medians (or the difference
 * of two sizes' times) can make a link look faster than it is
 * (docs/TESTBED.md).
 * Each rank's combine line comes from timed combines of two sizes, the
 * ranks in turn (calibrate.c).  Every rank ends with every value (our own
 * max-allreduce of arrays in which each rank filled its own entries). */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "select/calibrate.h"

#define LAT_REPS 15
#define BW_REPS 5
#define GROW_FROM 4096
#define GROW_MAX (64 << 20)
#define TARGET_S 0.06
#define STOP (-1)
static const int64_t combine_counts[2] = {65536, 1048576};

typedef struct pair_io {
    trd_comm *c;
    unsigned char *buf;
    size_t cap;
} pair_io;

static trd_status grow(pair_io *io, size_t bytes)
{
    if (bytes <= io->cap)
        return TRD_OK;
    unsigned char *b = realloc(io->buf, bytes);
    if (!b)
        return trd_fail(TRD_ENOMEM, "calibrate: out of memory for %zu bytes", bytes);
    memset(b + io->cap, 1, bytes - io->cap); /* real pages, not the shared zero page */
    io->buf = b;
    io->cap = bytes;
    return TRD_OK;
}

/* One send or receive of `bytes`, waited for. */
static trd_status xfer(trd_comm *c, bool send, int32_t peer, void *buf, size_t bytes)
{
    trd_wire *w = &c->wire;
    int32_t id, from;
    trd_status st = send ? w->isend(w->ctx, peer, 0, buf, bytes, 0)
                         : w->irecv(w->ctx, peer, 0, buf, bytes, 0);
    return st != TRD_OK ? st : w->wait(w->ctx, c->timeout_s, &id, &from);
}

/* The sender's round trip: control, `size` bytes, acknowledgement. */
static trd_status round_trip(pair_io *io, int32_t peer, int64_t size, double *t)
{
    trd_comm *c = io->c;
    double t0 = trd_comm_now(c);
    trd_status st = xfer(c, true, peer, &size, sizeof size);
    if (st == TRD_OK && size > 0)
        st = xfer(c, true, peer, io->buf, (size_t)size);
    if (st == TRD_OK && size != STOP)
        st = xfer(c, false, peer, NULL, 0);
    *t = trd_comm_now(c) - t0;
    return st;
}

/* The receiver's side: answers round trips until the sender stops. */
static trd_status serve(pair_io *io, int32_t peer)
{
    for (;;) {
        int64_t size = 0;
        trd_status st = xfer(io->c, false, peer, &size, sizeof size);
        if (st != TRD_OK || size == STOP)
            return st;
        if (size < 0 || size > GROW_MAX)
            return trd_fail(TRD_EIO, "calibrate: rank %d announced %lld bytes", (int)peer,
                            (long long)size);
        if (size > 0 && ((st = grow(io, (size_t)size)) != TRD_OK ||
                         (st = xfer(io->c, false, peer, io->buf, (size_t)size)) != TRD_OK))
            return st;
        if ((st = xfer(io->c, true, peer, NULL, 0)) != TRD_OK)
            return st;
    }
}

/* `reps` round trips of `size` bytes (reps <= LAT_REPS): the fastest, and
 * the median when `median` is not NULL. */
static trd_status trips(pair_io *io, int32_t peer, int64_t size, int reps, double *fastest,
                        double *median)
{
    double v[LAT_REPS];
    trd_status st = TRD_OK;
    *fastest = 1e300;
    for (int i = 0; i < reps && st == TRD_OK; i++)
        if ((st = round_trip(io, peer, size, &v[i])) == TRD_OK && v[i] < *fastest)
            *fastest = v[i];
    if (median)
        *median = st == TRD_OK ? trd_calibrate_median(v, reps) : 0.0;
    return st;
}

/* The sender's side of i -> peer: latency (half the median small round
 * trip), time per byte (the fastest large round trip less the fastest
 * small one: stalls cannot make either too short), probe size. */
static trd_status measure(pair_io *io, int32_t peer, double *lat, double *per_byte,
                          double *probe)
{
    double base, base_median, t = 0, stop_t;
    int64_t size = GROW_FROM;
    trd_status st = trips(io, peer, 0, LAT_REPS, &base, &base_median);
    while (st == TRD_OK && (st = grow(io, (size_t)size)) == TRD_OK &&
           (st = round_trip(io, peer, size, &t)) == TRD_OK && t - base < TARGET_S &&
           size < GROW_MAX)
        size = size * 2 > GROW_MAX ? GROW_MAX : size * 2;
    /* A stall may have ended the growth early: the fastest of the repeats
     * must still last half the target, or the size grows on. */
    while (st == TRD_OK && (st = trips(io, peer, size, BW_REPS, &t, NULL)) == TRD_OK &&
           t - base < TARGET_S / 2 && size < GROW_MAX) {
        size = size * 2 > GROW_MAX ? GROW_MAX : size * 2;
        st = grow(io, (size_t)size);
    }
    if (st == TRD_OK)
        st = round_trip(io, peer, STOP, &stop_t);
    *lat = base_median / 2;
    *per_byte = t > base ? (t - base) / (double)size : 0.0;
    *probe = (double)size;
    return st;
}

/* Both directions of the pair a < b on its two ranks; v holds three p x p
 * tables (latency, per byte, probe size) of which this rank fills its row. */
static trd_status pair(pair_io *io, int32_t a, int32_t b, double *v)
{
    int32_t me = io->c->wire.rank, p = io->c->wire.size, peer = me == a ? b : a;
    size_t at = (size_t)me * (size_t)p + (size_t)peer, pp = (size_t)p * (size_t)p;
    trd_status st = TRD_OK;
    if (me == a && (st = measure(io, b, &v[at], &v[pp + at], &v[2 * pp + at])) == TRD_OK)
        st = serve(io, b);
    if (me == b && (st = serve(io, a)) == TRD_OK)
        st = measure(io, a, &v[at], &v[pp + at], &v[2 * pp + at]);
    return st;
}

/* This rank's combine line: fixed seconds and seconds per element. */
static trd_status combine_line(trd_comm *c, const trd_op *op, double *fixed, double *per)
{
    double t[2] = {0, 0};
    trd_status st = TRD_OK;
    for (int i = 0; i < 2 && st == TRD_OK; i++)
        st = trd_calibrate_combine(c, op, combine_counts[i], &t[i]);
    *per = t[1] > t[0] ? (t[1] - t[0]) / (double)(combine_counts[1] - combine_counts[0]) : 0;
    *fixed = t[0] - *per * (double)combine_counts[0];
    *fixed = *fixed > 0 ? *fixed : 0.0;
    return st;
}

static trd_status alloc_profile(trd_pair_profile *out, int32_t p)
{
    size_t pp = (size_t)p * (size_t)p;
    memset(out, 0, sizeof *out);
    out->p = p;
    out->latency = calloc(pp, sizeof(double));
    out->per_byte = calloc(pp, sizeof(double));
    out->probe_bytes = calloc(pp, sizeof(double));
    out->combine_fixed = calloc((size_t)p, sizeof(double));
    out->per_element = calloc((size_t)p, sizeof(double));
    if (out->latency && out->per_byte && out->probe_bytes && out->combine_fixed &&
        out->per_element)
        return TRD_OK;
    trd_pair_profile_free(out);
    return trd_fail(TRD_ENOMEM, "calibrate: out of memory for %d ranks", (int)p);
}

/* Copies the agreed tables into out. */
static void unpack(const double *m, int32_t p, trd_pair_profile *out)
{
    size_t pp = (size_t)p * (size_t)p;
    memcpy(out->latency, m, pp * sizeof *m);
    memcpy(out->per_byte, m + pp, pp * sizeof *m);
    memcpy(out->probe_bytes, m + 2 * pp, pp * sizeof *m);
    memcpy(out->combine_fixed, m + 3 * pp, (size_t)p * sizeof *m);
    memcpy(out->per_element, m + 3 * pp + (size_t)p, (size_t)p * sizeof *m);
}

trd_status trd_comm_profile_pairs(trd_comm *c, const trd_op *op, trd_pair_profile *out)
{
    if (!c || !op || !out)
        return trd_fail(TRD_EINVAL, "trd_comm_profile_pairs: NULL argument");
    trd_comm_drain(c); /* after the calls started before it, as any blocking call */
    int32_t p = c->wire.size, me = c->wire.rank;
    size_t pp = (size_t)p * (size_t)p, n = 3 * pp + 2 * (size_t)p;
    double *v = calloc(n, sizeof *v), *m = calloc(n, sizeof *m);
    pair_io io = {.c = c};
    trd_status st = v && m ? alloc_profile(out, p)
                           : trd_fail(TRD_ENOMEM, "calibrate: out of memory for %d ranks", p);
    for (int32_t a = 0; a < p && st == TRD_OK; a++)
        for (int32_t b = a + 1; b < p && st == TRD_OK; b++)
            if ((st = pair(&io, a, b, v)) == TRD_OK)
                st = trd_comm_barrier(c); /* the next pair starts when this one is done */
    if (st == TRD_OK)
        st = combine_line(c, op, &v[3 * pp + (size_t)me], &v[3 * pp + (size_t)p + (size_t)me]);
    if (st == TRD_OK && (st = trd_comm_agree_max(c, v, m, (int64_t)n)) == TRD_OK)
        unpack(m, p, out);
    else if (out->latency)
        trd_pair_profile_free(out);
    free(io.buf);
    free(v);
    free(m);
    return st;
}

void trd_pair_profile_free(trd_pair_profile *profile)
{
    if (!profile)
        return;
    free(profile->latency);
    free(profile->per_byte);
    free(profile->probe_bytes);
    free(profile->combine_fixed);
    free(profile->per_element);
    memset(profile, 0, sizeof *profile);
}
