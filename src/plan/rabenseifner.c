/* rabenseifner.c: Rabenseifner's allreduce, a reduce-scatter by recursive
 * vector halving and distance doubling, then an allgather by recursive
 * vector doubling and distance halving.
 *
 * With p a power of two the buffer is cut into p chunks.  In round k of the
 * reduce-scatter (0 <= k < log2 p) rank r and its partner r XOR 2^k hold
 * the same window of p / 2^k chunks; the one whose bit k is 0 keeps the
 * lower half and sends the upper half, the other keeps the upper half, and
 * each combines the half it receives into the half it keeps.  After log2 p
 * rounds each rank holds one chunk fully reduced (the chunk whose index is
 * r with its bits reversed).  The allgather retraces the rounds backwards
 * (k = log2 p - 1 .. 0): the partners swap their windows, which double.
 * Sources: R. Rabenseifner, "Optimization of collective reduction
 * operations", ICCS 2004, LNCS 3036 (this distance-doubling variant);
 * Thakur, Rabenseifner and Gropp, "Optimization of collective
 * communication operations in MPICH", IJHPCA 19(1), 2005 (its use for long
 * messages, and the fold below).
 *
 * Cost (alpha per message, beta per byte, gamma per byte combined, a
 * buffer of n bytes), p a power of two:
 * 2 log2(p) alpha + 2((p-1)/p) n beta + ((p-1)/p) n gamma.  Otherwise, with
 * p' the largest power of two <= p, the fold adds a full-buffer message and
 * combine before and a full-buffer message after:
 * (2 log2(p') + 2) alpha + (2(p'-1)/p' + 2) n beta + ((p'-1)/p' + 1) n gamma.
 * With m segments the buffer is cut into B = p' m blocks, segment-major
 * (block j p' + c is chunk c of segment j), and each segment runs the
 * algorithm on its own: every message covers a range of chunks of one
 * segment, a rank that takes part sends 2 log2(p') m messages, and segment
 * j + 1 travels while segment j is combined.
 *
 * Non-powers of two (exchange.h, trd_fold): ranks 2i and 2i + 1 for
 * i < p - p' pair up, 2i sends its whole segment to 2i + 1, which combines
 * it on the left and stands for both as newrank i; ranks >= 2(p - p') are
 * newrank r - (p - p').  At the end rank 2i + 1 sends the result back.
 *
 * Commutativity: distance doubling makes every partial result the
 * reduction of an aligned group of 2^k newranks, hence of a contiguous rank
 * range (the fold keeps rank order); the partner's group is combined LEFT
 * when its newrank is below ours, RIGHT otherwise, so a non-commutative
 * operator is honoured for every p.  (MPICH's distance-halving variant
 * combines ranks r and r + p/2 first and could not.)
 *
 * Scratch: slot 1.  The window shrinks, so round k's RECV into slot 1
 * (part of the range round k - 1's COMBINE read) waits for that COMBINE;
 * a round's SEND waits for the previous COMBINE, which wrote what it
 * sends.  Allgather round k receives into slot 0 the range the
 * reduce-scatter sent in its round k, so it waits for that SEND; its SEND
 * waits for the previous allgather RECV and SEND (which cover, by
 * transitivity, every write to the window it sends). */
#include "plan/exchange.h"

/* Chunks [lo, lo + width) of segment j. */
static trd_xrange chunks(const trd_fold *f, int32_t j, int32_t lo, int32_t width)
{
    return (trd_xrange){.block = j * f->p2 + lo, .blocks = width};
}

/* Where a segment's program stands at a rank taking part as newrank nr. */
typedef struct seg_state {
    int32_t j, nr;
    int32_t lo, width; /* the window of chunks this rank is responsible for */
    int32_t done;      /* last step that wrote slot 0 of it (the allgather:
                          the last RECV) */
    int32_t sent;      /* the allgather: the last SEND (-1 before) */
    int32_t rs_send[32]; /* the reduce-scatter's SEND of round k */
} seg_state;

static void emit_reduce_scatter(trd_xbuild *x, const trd_fold *f, seg_state *g)
{
    for (int32_t k = 0; k < f->rounds; k++) {
        int32_t half = g->width / 2, partner = g->nr ^ (1 << k);
        int32_t peer = trd_fold_rank(f, partner);
        bool upper = partner < g->nr; /* we keep the upper half */
        int32_t keep = g->lo + (upper ? half : 0), give = g->lo + (upper ? 0 : half);
        g->rs_send[k] = trd_xb_send(x, peer, chunks(f, g->j, give, half), g->done, -1);
        int32_t got = trd_xb_recv(x, peer, 1, chunks(f, g->j, keep, half), g->done, -1);
        g->done = trd_xb_combine(x, upper ? TRD_SIDE_LEFT : TRD_SIDE_RIGHT,
                                 chunks(f, g->j, keep, half), got, -1);
        g->lo = keep;
        g->width = half;
    }
}

static void emit_allgather(trd_xbuild *x, const trd_fold *f, seg_state *g)
{
    for (int32_t k = f->rounds - 1; k >= 0; k--) {
        int32_t partner = g->nr ^ (1 << k), peer = trd_fold_rank(f, partner);
        bool upper = partner < g->nr; /* the partner's window lies below ours */
        int32_t theirs = upper ? g->lo - g->width : g->lo + g->width;
        int32_t sent = trd_xb_send(x, peer, chunks(f, g->j, g->lo, g->width), g->done,
                                   g->sent);
        g->done = trd_xb_recv(x, peer, 0, chunks(f, g->j, theirs, g->width), g->rs_send[k],
                              -1);
        g->sent = sent;
        g->lo = upper ? theirs : g->lo;
        g->width *= 2;
    }
}

/* Segment j's program at rank r; ctx: the fold. */
static void emit_segment(trd_xbuild *x, const void *ctx, int32_t r, int32_t j)
{
    const trd_fold *f = ctx;
    trd_xrange whole = chunks(f, j, 0, f->p2);
    seg_state g = {.j = j, .nr = trd_fold_newrank(f, r), .lo = 0, .width = f->p2,
                   .sent = -1};
    if (g.nr < 0) {
        trd_fold_out(x, r, whole);
        return;
    }
    g.done = trd_fold_in(x, f, r, whole);
    emit_reduce_scatter(x, f, &g);
    emit_allgather(x, f, &g);
    trd_fold_back(x, f, r, whole, g.done, g.sent);
}

trd_status trd_schedule_rabenseifner(trd_plan *plan)
{
    int32_t p = (int32_t)plan->params.n, m = (int32_t)plan->params.segments;
    trd_fold f = trd_fold_make(p);
    /* Per segment: 5 steps a round (3 reduce-scatter, 2 allgather) at each
     * of the p' ranks that take part, 5 for the fold and the way back of
     * each of the rem pairs. */
    double steps = (5.0 * f.rounds * f.p2 + 5.0 * f.rem) * m;
    return trd_xb_build_segments(plan, (double)f.p2 * m, steps, emit_segment, &f);
}
