/* calibrate_streams.c: the aggregate memory bandwidth of k ranks
 * streaming at once, k = 1 .. min(p, cores) (trd_profile.stream_bw; the
 * model's use: src/model/node.h).
 *
 * In each round k ranks (k in a row, from a rank that moves on by one
 * each round: in_round) run a[i] += b[i] over arrays of their own, too
 * large for their share of a cache, from leaving a barrier; the others
 * wait in it.  A round lasts from the first stream's start to the last
 * one's end (the ranks' clocks agree: one node), the shortest of ROUNDS
 * rounds is kept (a stall, a late start or two streams on one core only
 * lengthen a round), and B(k) = k x the bytes one pass moves (two arrays
 * read, one written) / that time.  Not each rank's own time: streams
 * that do not overlap (ranks leaving the barrier apart, or taking turns
 * on fewer cores) would each show one stream's speed, and k of them k
 * times it.  Measured with the ranks themselves, the curve is the node's
 * when they share one, and linear when they do not (ranks on several
 * hosts): the right answer in both cases without asking where the ranks
 * run.  Beyond the cores, ranks take turns on them
 * (trd_coll_opts.parallelism) and the bus is no faster: the model holds
 * B at its last value.
 *
 * Cost: k = 1 .. 16 rounds of at most 16 x 24 MiB, about 0.3 s at p = 16
 * on a bus of 50 GB/s. */
#include "select/calibrate.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "model/node.h"

#define STREAM_BYTES (8u << 20) /* per array: two per streaming rank */
#define ROUNDS 5

/* a[i] += b[i] once over count doubles; its start and end on the clock
 * of the communicator (at[0] = -start, at[1] = end: the largest of each
 * over the ranks is the first start and the last end). */
static void stream_pass(trd_comm *c, double *restrict a, const double *restrict b,
                        size_t count, double *at)
{
    at[0] = -trd_comm_now(c);
    for (size_t i = 0; i < count; i++)
        a[i] += b[i];
    at[1] = trd_comm_now(c);
}

/* The streams this node can run at once: min(p, cores here, the most any
 * rank has) - the same on every rank. */
static trd_status stream_count(trd_comm *c, int32_t *kmax)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    double mine = cores > 0 ? (double)cores : 1.0, most = mine;
    trd_status st = trd_comm_agree_max(c, &mine, &most, 1);
    int32_t p = c->wire.size;
    *kmax = most < p ? (int32_t)most : p;
    *kmax = *kmax > TRD_STREAMS_MAX ? TRD_STREAMS_MAX : *kmax;
    return st;
}

/* Whether this rank streams in round r of k streams: ranks r .. r + k - 1
 * (mod p).  Not always ranks 0 .. k - 1: with more ranks than cores the
 * scheduler may keep two ranks on one core for many rounds, and ranks 0
 * and 1 alone then measure B(2) = B(1) on a machine whose two cores stream
 * twice what one does (docs/RUNTIME_INTERNALS.md, "The node's memory"). */
static bool in_round(const trd_comm *c, int32_t k, int32_t r)
{
    int32_t p = c->wire.size, me = c->wire.rank;
    return ((me - r) % p + p) % p < k;
}

/* Every round of every k on this rank: -start and end at
 * t[2 ((k - 1) ROUNDS + r)], -1e300 where this rank did not stream
 * (collective). */
static trd_status stream_rounds(trd_comm *c, int32_t kmax, double *t)
{
    size_t count = STREAM_BYTES / sizeof(double);
    double *a = NULL, *b = NULL;
    bool streams = false; /* in some round of some k */
    for (int32_t r = 0; r < ROUNDS; r++)
        streams |= in_round(c, kmax, r);
    if (streams && (!(a = malloc(STREAM_BYTES)) || !(b = malloc(STREAM_BYTES)))) {
        free(a);
        return trd_fail(TRD_ENOMEM, "calibrate: out of memory for %u bytes", 2 * STREAM_BYTES);
    }
    if (a) { /* real pages, zeros: the sums stay 0 */
        memset(a, 0, STREAM_BYTES);
        memset(b, 0, STREAM_BYTES);
    }
    trd_status st = TRD_OK;
    for (int32_t k = 1; k <= kmax && st == TRD_OK; k++)
        for (int32_t r = 0; r < ROUNDS && st == TRD_OK; r++) {
            double *at = t + 2 * ((k - 1) * ROUNDS + r);
            st = trd_comm_barrier(c);
            at[0] = at[1] = -1e300;
            if (in_round(c, k, r) && st == TRD_OK)
                stream_pass(c, a, b, count, at);
        }
    if (st == TRD_OK)
        st = trd_comm_barrier(c); /* nobody streams while the next step times */
    free(a);
    free(b);
    return st;
}

trd_status trd_calibrate_streams(trd_comm *c, double *bw, int32_t *streams)
{
    int32_t kmax = 0;
    *streams = 0;
    trd_status st = stream_count(c, &kmax);
    double *t = st == TRD_OK ? calloc((size_t)kmax * ROUNDS * 2, sizeof *t) : NULL;
    double span[ROUNDS];
    if (st == TRD_OK && !t)
        st = trd_fail(TRD_ENOMEM, "calibrate: out of memory");
    if (st == TRD_OK)
        st = stream_rounds(c, kmax, t);
    if (st == TRD_OK) /* each round's first start and last end */
        st = trd_comm_agree_max(c, t, t, (int64_t)kmax * ROUNDS * 2);
    for (int32_t k = 1; k <= kmax && st == TRD_OK; k++) {
        for (int32_t r = 0; r < ROUNDS; r++)
            span[r] = t[2 * ((k - 1) * ROUNDS + r)] + t[2 * ((k - 1) * ROUNDS + r) + 1];
        double s = span[0];
        for (int32_t r = 1; r < ROUNDS; r++)
            s = span[r] < s ? span[r] : s;
        bw[k - 1] = s > 0 ? 3.0 * STREAM_BYTES * k / s : 0.0;
    }
    free(t);
    if (st == TRD_OK && trd_node_clean_curve(bw, kmax))
        *streams = kmax; /* else a clock too coarse for a pass: not modelled */
    return st;
}

trd_status trd_comm_node_curve(trd_comm *c)
{
    struct trd_select_state *state = trd_select_state_of(c);
    if (!state)
        return trd_fail(TRD_ENOMEM, "calibrate: out of memory");
    trd_comm_profiles *t = &state->profiles;
    return t->streams > 0 ? TRD_OK : trd_calibrate_streams(c, t->stream_bw, &t->streams);
}
