/* scan_chain.c: the chain (linear pipeline) scan and exscan.
 *
 * Rank r receives the prefix P_{r-1} = x_0 (+) ... (+) x_{r-1} from rank
 * r - 1, combines it on the left of its own value, P_r = P_{r-1} (+) x_r,
 * and passes P_r on to rank r + 1; rank 0 starts with P_0 = x_0.  The
 * buffer is cut into m = params.segments blocks, one message each, so
 * that segment j + 1 travels while segment j is combined.  Source: the
 * linear scan of MPI libraries (Open MPI's basic component: receive from
 * r - 1, combine, send to r + 1), pipelined like the chain reduce of
 * pipeline.c (reduce-parallel-pattern Sec. 3).
 *
 * Scan: rank r receives segment j into slot 1 and combines it LEFT into
 * slot 0, which then holds P_r and is sent on.  Exscan: the same, and once
 * the SEND of P_r is done rank r copies P_{r-1}, still in slot 1, back
 * into slot 0 (a COPY: free in the model, and off the critical path: the
 * next rank is combining P_r by then); the last rank receives P_{p-2}
 * straight into slot 0 (no combine), rank 0 sends x_0.
 *
 * Cost (alpha per message, beta per byte, gamma per byte combined, a
 * buffer of n bytes), m segments, a segment's transfer t = alpha +
 * n beta / m and combine g = n gamma / m, t >= g: the last segment leaves
 * rank 0 after the m transfers of the link to rank 1 (the links are the
 * bottleneck) and crosses the p - 2 other links, each a transfer and a
 * combine at the rank it leaves, then the last rank combines it (scan
 * only): scan m t + (p - 2)(t + g) + g = (p + m - 2) t + (p - 1) g,
 * exscan (p + m - 2) t + (p - 2) g (p >= 2).  For m = 1: (p - 1)(alpha +
 * n beta + n gamma), and (p - 1)(alpha + n beta) + (p - 2) n gamma.  Per
 * rank: rank r < p - 1 sends m messages (n bytes in all); scan: every rank
 * r > 0 combines m blocks (n bytes); exscan: ranks 0 < r < p - 1 do, the
 * others combine nothing.
 *
 * Scratch: slot 1.  Each block of slot 1 is received once and read by one
 * COMBINE, which waits for its RECV (and an exscan's COPY, which waits
 * for the SEND after that COMBINE); the SEND of a block waits for the
 * COMBINE that wrote it, and the only step that writes that block of slot
 * 0 afterwards, the exscan's COPY, waits for the SEND.  RECVs from one
 * peer all have different first blocks, so no channel needs ordering.
 *
 * Commutativity: every COMBINE joins [0, r - 1] on the left of [r, r], so
 * a non-commutative operator is honoured; the order is fixed
 * (reproducible). */
#include "plan/algorithms.h"
#include "plan/exchange.h"

static trd_xrange segment(int32_t j)
{
    return (trd_xrange){.block = j, .blocks = 1};
}

/* Scan at rank r: P_r into slot 0, sent on. */
static void emit_scan(trd_xbuild *x, int32_t p, int32_t m, int32_t r)
{
    for (int32_t j = 0; j < m; j++) {
        int32_t ready = -1; /* the step after which slot 0 of segment j holds P_r */
        if (r > 0) {
            int32_t got = trd_xb_recv(x, r - 1, 1, segment(j), -1, -1);
            ready = trd_xb_combine(x, TRD_SIDE_LEFT, segment(j), got, -1);
        }
        if (r < p - 1)
            trd_xb_send(x, r + 1, segment(j), ready, -1);
    }
}

/* Exscan at rank r: P_r into slot 0 and sent on, then P_{r-1}, kept in
 * slot 1, copied back into slot 0 (the last rank just receives P_{p-2}
 * into slot 0). */
static void emit_exscan(trd_xbuild *x, int32_t p, int32_t m, int32_t r)
{
    for (int32_t j = 0; j < m; j++) {
        if (r == 0) {
            trd_xb_send(x, 1, segment(j), -1, -1);
            continue;
        }
        int32_t got = trd_xb_recv(x, r - 1, r == p - 1 ? 0 : 1, segment(j), -1, -1);
        if (r == p - 1)
            continue;
        int32_t ready = trd_xb_combine(x, TRD_SIDE_LEFT, segment(j), got, -1);
        int32_t sent = trd_xb_send(x, r + 1, segment(j), ready, -1);
        trd_xb_copy(x, 0, 1, segment(j), sent, -1);
    }
}

/* Rank r's program; ctx: the plan's parameters. */
static void emit_rank(trd_xbuild *x, const void *ctx, int32_t r)
{
    const trd_params *prm = ctx;
    int32_t p = (int32_t)prm->n, m = (int32_t)prm->segments;
    (prm->collective == TRD_COLL_EXSCAN ? emit_exscan : emit_scan)(x, p, m, r);
}

trd_status trd_schedule_scan_chain(trd_plan *plan)
{
    int32_t p = (int32_t)plan->params.n, m = (int32_t)plan->params.segments;
    /* At most 4 steps a segment per rank. */
    return trd_xb_build_ranks(plan, (double)m, 4.0 * p * m, emit_rank, &plan->params);
}
