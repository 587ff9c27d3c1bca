/* reduce_scatter_halving.c: the reduce-scatter by recursive vector halving
 * and distance halving.
 *
 * With p a power of two, every rank starts with the window of all p parts.
 * In round k (0 <= k < log2 p) rank r and its partner at distance
 * p / 2^(k+1) (r XOR p / 2^(k+1)) hold the same window of p / 2^k parts;
 * the lower one keeps the lower half and sends the upper half, the upper
 * one keeps the upper half, and each combines the half it receives into
 * the half it keeps.  The half kept is the one that holds the rank's own
 * part, so after log2 p rounds rank r holds part r fully reduced.  Source:
 * Thakur, Rabenseifner and Gropp, "Optimization of collective
 * communication operations in MPICH", IJHPCA 19(1), 2005 (their
 * reduce-scatter by recursive halving for commutative operators, and the
 * fold below).
 *
 * Non-powers of two (exchange.h, trd_fold): with p' the largest power of
 * two <= p and rem = p - p', ranks 2i and 2i + 1 for i < rem pair up; 2i
 * sends its whole buffer to 2i + 1, which combines it on the left and
 * stands for both as newrank i; ranks >= 2 rem are newrank r - rem.  A
 * newrank i < rem stands for parts 2i and 2i + 1, one >= rem for part
 * i + rem, so a window of newranks is a contiguous range of parts and the
 * p' newranks run the rounds above on those ranges.  At the end rank 2i + 1
 * sends part 2i to rank 2i.
 *
 * Cost (alpha per message, beta per byte, gamma per byte combined, a
 * buffer of n bytes), p a power of two:
 * log2(p) alpha + ((p-1)/p) n beta + ((p-1)/p) n gamma.  Otherwise the fold
 * adds a full-buffer message and combine before and a one-part message
 * after, and a round-k half window holds between p'/2^(k+1) and
 * 2 p'/2^(k+1) parts of n/p bytes: at most
 * (log2(p') + 2) alpha + (1 + 2(p'-1)/p + 1/p) n beta + (1 + 2(p'-1)/p) n gamma.
 * With m segments the buffer is B = p m blocks, rank-major as the
 * collective lays them out (block c m + j is segment j of part c): the m
 * blocks of a part are contiguous, so every message still covers a range
 * of whole parts, m blocks each, and a rank that takes part sends log2(p')
 * messages (one more to fold a neighbour back; one in all for a
 * folded-out rank), whatever m.
 *
 * Scratch: slot 1.  The window shrinks, so round k's RECV into slot 1
 * (within the range round k - 1's COMBINE read) waits for that COMBINE; a
 * round's SEND waits for the previous COMBINE, which wrote what it sends,
 * and the COMBINE (keep half) never touches what the round's SEND reads
 * (the other half).  The fold's steps are those of trd_fold_in and
 * trd_fold_back; a folded-out rank receives its part into slot 0 after
 * its SEND of the whole buffer.
 *
 * Commutativity: after round k a rank holds the reduction of the newranks
 * that differ from it in their top k + 1 bits, not a contiguous rank range,
 * so this algorithm is commutative-only (its registry row).  The partner's
 * half is still combined LEFT when its newrank is below ours, RIGHT
 * otherwise. */
#include "plan/algorithms.h"
#include "plan/exchange.h"

/* The first part newrank nr stands for (nr = p': p, the end). */
static int32_t first_part(const trd_fold *f, int32_t nr)
{
    return nr < f->rem ? 2 * nr : nr + f->rem;
}

/* The parts of newranks [lo, lo + width), m blocks each. */
static trd_xrange parts_of(const trd_fold *f, int32_t m, int32_t lo, int32_t width)
{
    int32_t a = first_part(f, lo), b = first_part(f, lo + width);
    return (trd_xrange){.block = a * m, .blocks = (b - a) * m};
}

/* The rounds at newrank nr; done: the last step that wrote slot 0 (-1:
 * none).  Returns the last COMBINE. */
static int32_t emit_rounds(trd_xbuild *x, const trd_fold *f, int32_t m, int32_t nr, int32_t done)
{
    int32_t lo = 0, width = f->p2;
    for (int32_t k = 0; k < f->rounds; k++) {
        int32_t half = width / 2, partner = nr ^ half, peer = trd_fold_rank(f, partner);
        bool upper = partner < nr; /* we keep the upper half */
        int32_t keep = lo + (upper ? half : 0), give = lo + (upper ? 0 : half);
        trd_xb_send(x, peer, parts_of(f, m, give, half), done, -1);
        int32_t got = trd_xb_recv(x, peer, 1, parts_of(f, m, keep, half), done, -1);
        done = trd_xb_combine(x, upper ? TRD_SIDE_LEFT : TRD_SIDE_RIGHT,
                              parts_of(f, m, keep, half), got, -1);
        lo = keep;
        width = half;
    }
    return done;
}

/* Rank r's program; ctx: the fold. */
static void emit_rank(trd_xbuild *x, const void *ctx, int32_t r)
{
    const trd_fold *f = ctx;
    int32_t m = (int32_t)x->plan->params.segments;
    trd_xrange whole = {.block = 0, .blocks = f->p * m};
    trd_xrange mine = {.block = r * m, .blocks = m};
    int32_t nr = trd_fold_newrank(f, r);
    if (nr < 0) { /* folded out: hand the input over, get part r back */
        int32_t sent = trd_xb_send(x, r + 1, whole, -1, -1);
        trd_xb_recv(x, r + 1, 0, mine, sent, -1);
        return;
    }
    int32_t done = emit_rounds(x, f, m, nr, trd_fold_in(x, f, r, whole));
    trd_fold_back(x, f, r, (trd_xrange){.block = (r - 1) * m, .blocks = m}, done, -1);
}

trd_status trd_schedule_reduce_scatter_halving(trd_plan *plan)
{
    int32_t p = (int32_t)plan->params.n, m = (int32_t)plan->params.segments;
    trd_fold f = trd_fold_make(p);
    /* 3 steps a round at each of the p' ranks that take part, 5 for the
     * fold and the way back of each of the rem pairs. */
    double steps = 3.0 * f.rounds * f.p2 + 5.0 * f.rem;
    return trd_xb_build_ranks(plan, (double)p * m, steps, emit_rank, &f);
}
