/* scan_binomial.c: the binomial scan and exscan, an up-sweep then a
 * down-sweep over the ranks (the work-efficient prefix of Brent and Kung,
 * "A regular layout for parallel adders", IEEE Trans. Computers C-31(3),
 * 1982, and of Blelloch, "Prefix sums and their applications", CMU-CS-90-190,
 * 1990, with ranks as the leaves).
 *
 * Scan over q ranks v = 0 .. q-1.  Up-sweep, level k = 0, 1, ... while
 * 2^(k+1) <= q: rank v with (v + 1) mod 2^(k+1) == 0 receives the range
 * [v - 2^(k+1) + 1, v - 2^k] from v - 2^k (which holds it whole: all its
 * lower ranks exist) and combines it LEFT; after the up-sweep rank v holds
 * [v + 1 - 2^j, v], 2^j the lowest set bit of v + 1, so the ranks with
 * v + 1 a power of two hold their whole prefix.  Down-sweep, level k from
 * the top down to 0: rank v with (v + 1) mod 2^(k+1) == 0 and
 * t = v + 2^k < q sends its prefix [0, v] to t, which holds [v + 1, t]
 * (the lowest set bit of t + 1 is 2^k) and combines it LEFT into [0, t].
 * v's prefix is whole by then: v + 1 is a power of two, or v received it
 * at level log2(lowest bit of v + 1) > k, which comes earlier.  Every v
 * with v + 1 not a power of two, v + 1 = 2^k (2i + 1) with i >= 1, gets
 * its prefix at level k from v - 2^k; the top level is the largest k with
 * a pair, the smallest sender being 2^(k+1) - 1: 2^(k+1) - 1 + 2^k < q,
 * i.e. k = floor(log2(q / 3)) (no down-sweep for q < 3).  Levels: up
 * floor(log2 q), down floor(log2(q / 3)) + 1 (q >= 3), at most
 * 2 floor(log2 q) in all.
 *
 * Scan: q = p, v = r.  Exscan: the scan of the inputs shifted by one
 * rank, one round first: rank r < p - 1 sends x_r to r + 1 (from its
 * input: fusion, plan/fuse.c, makes it a send from the input, so the
 * RECV into slot 0 that waits for it as written waits no more), rank
 * r > 0 receives x_{r-1} into slot 0, then ranks 1 .. p-1 run the scan as
 * v = r - 1, q = p - 1, so rank r ends with x_0 (+) ... (+) x_{r-1}.
 * Shifting first rather than last (scan, then pass each result to the
 * next rank) takes the same one extra round, but the sweeps run over
 * p - 1 ranks, which is never more levels.
 *
 * Cost (alpha per message, beta per byte, gamma per byte combined, a
 * buffer of n bytes), m = 1, tau = alpha + n beta + n gamma: L levels, and
 * every rank done by 2 floor(log2 q) tau (exscan: plus alpha + n beta for
 * the shift).  The up-sweep's level J ends at J tau (one receive per
 * level at each rank, its sender done a level before).  A rank's sends
 * leave one at a time in program order: the up-sweep one, then the
 * down-sweep ones far to near (the farther target has more ranks below it
 * to serve).  A prefix's way down from rank 2^J - 1 (whole at J tau) to
 * any rank is hops at levels k_1 > k_2 > ..., at most J of them, each a
 * transfer and a combine after the sends its sender makes first: at a
 * sender that got its prefix at level j, j - 1 - k sends to farther
 * targets (its up-sweep send was long done), plus, at rank 2^J - 1, its
 * up-sweep send if it makes one (then J < floor(log2 q)).  These waits
 * telescope to at most J sends in all, so the way takes at most 2 J tau
 * (plus one send where J < floor(log2 q)).  Per rank v, with 2^j the
 * lowest set bit of v + 1: messages (n bytes each): one in the up-sweep if
 * v + 2^j < q, one in the down-sweep for each k < j with v + 2^k < q
 * (exscan: plus one for the shift at r < p - 1); combines (n bytes each):
 * j in the up-sweep, one in the down-sweep unless v + 1 is a power of
 * two.  With m segments each block runs the sweeps on its own (m messages
 * of n/m bytes where there was one), so block j + 1 travels while block j
 * is combined.
 *
 * Scratch: slot 1.  Each RECV into slot 1 waits for the COMBINE that read
 * the last one (a rank's receives are one per level and combined at
 * once).  The steps on slot 0 are chained: each SEND and COMBINE waits
 * for the last step that touched slot 0 (a COMBINE also for its RECV), so
 * no write of slot 0 overlaps a SEND of it and every SEND follows the
 * COMBINE that wrote what it sends.  Exscan: the shift's RECV into slot 0
 * waits for the shift's SEND of slot 0, and every later RECV waits for
 * it: the sweeps' first RECV (level 0, from v - 1) is from the same rank
 * r - 1 for the same block, and the wire matches the two in posting order
 * (its COMBINE needs the shifted value in slot 0 anyway).  Otherwise a
 * rank receives from a peer at most once per block, so no other channel
 * needs ordering.
 *
 * Commutativity: every COMBINE joins a range on the left of the adjacent
 * range above it, so a non-commutative operator is honoured for any p; the
 * order is fixed (reproducible). */
#include "plan/algorithms.h"
#include "plan/exchange.h"

/* One block's sweeps at v of q ranks base .. base + q - 1. */
typedef struct sweep {
    trd_xbuild *x;
    trd_xrange blk;
    int32_t base, q, v;
    int32_t touch0; /* the last step that touched slot 0 (-1: none) */
    int32_t read1;  /* the last step that read slot 1 */
} sweep;

/* Receives `from`'s range into slot 1 and combines it LEFT. */
static void take(sweep *s, int64_t from)
{
    int32_t got = trd_xb_recv(s->x, s->base + (int32_t)from, 1, s->blk, s->read1, -1);
    s->touch0 = s->read1 = trd_xb_combine(s->x, TRD_SIDE_LEFT, s->blk, got, s->touch0);
}

/* Sends slot 0 to v + w, after the rank's previous step on slot 0. */
static void give(sweep *s, int64_t w)
{
    s->touch0 = trd_xb_send(s->x, s->base + s->v + (int32_t)w, s->blk, s->touch0, -1);
}

static void emit_up(sweep *s)
{
    int64_t v1 = (int64_t)s->v + 1;
    for (int64_t w = 1; 2 * w <= s->q; w *= 2) {
        if (v1 % (2 * w) == 0)
            take(s, s->v - w);
        else if (v1 % (2 * w) == w && s->v + w < s->q)
            give(s, w);
    }
}

static void emit_down(sweep *s)
{
    int64_t v1 = (int64_t)s->v + 1, top = 1;
    while (2 * top <= s->q)
        top *= 2;
    for (int64_t w = top; w >= 1; w /= 2) {
        if (v1 % (2 * w) == 0 && s->v + w < s->q)
            give(s, w);
        else if (v1 % (2 * w) == w && v1 >= 3 * w)
            take(s, s->v - w);
    }
}

/* Block j at rank r; ctx: the plan's parameters. */
static void emit_block(trd_xbuild *x, const void *ctx, int32_t r, int32_t j)
{
    const trd_params *prm = ctx;
    int32_t p = (int32_t)prm->n;
    bool exscan = prm->collective == TRD_COLL_EXSCAN;
    sweep s = {.x = x, .blk = {.block = j, .blocks = 1}, .base = 0, .q = p, .v = r,
               .touch0 = -1, .read1 = -1};
    if (exscan) { /* the shift: x_{r-1} into slot 0 */
        int32_t sent = r < p - 1 ? trd_xb_send(x, r + 1, s.blk, -1, -1) : -1;
        if (r == 0)
            return;
        s.base = 1;
        s.q = p - 1;
        s.v = r - 1;
        /* Before every later RECV: the sweeps' first one is from r - 1
         * too, with the same first block (a channel). */
        s.touch0 = s.read1 = trd_xb_recv(x, r - 1, 0, s.blk, sent, -1);
    }
    emit_up(&s);
    emit_down(&s);
}

trd_status trd_schedule_scan_binomial(trd_plan *plan)
{
    int32_t p = (int32_t)plan->params.n, m = (int32_t)plan->params.segments;
    int32_t levels = 0;
    while (levels < 31 && ((int64_t)1 << (levels + 1)) <= p)
        levels++;
    /* Per block and rank, 2^j the lowest set bit of v + 1 (j <= levels):
     * 2 j + 1 steps up, j + 2 down, 2 for the shift. */
    double steps = (3.0 * levels + 5.0) * p * m;
    return trd_xb_build_segments(plan, (double)m, steps, emit_block, &plan->params);
}
