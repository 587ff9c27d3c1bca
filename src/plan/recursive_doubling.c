/* recursive_doubling.c: the recursive-doubling allreduce.
 *
 * With p a power of two, in round k (0 <= k < log2 p) rank r exchanges its
 * whole partial result with rank r XOR 2^k and combines what it receives:
 * after round k every rank holds the reduction of its aligned group of
 * 2^(k+1) ranks, after log2 p rounds the full reduction.  Source: Thakur,
 * Rabenseifner and Gropp, "Optimization of collective communication
 * operations in MPICH", IJHPCA 19(1), 2005 (their allreduce for short
 * messages, and the fold below).
 *
 * Cost (alpha per message, beta per byte, gamma per byte combined, a
 * buffer of n bytes): log2(p) (alpha + n beta + n gamma) for p a power of
 * two.  Otherwise, with p' the largest power of two <= p, the fold adds a
 * message and a combine before and a message after:
 * (log2(p') + 2) (alpha + n beta) + (log2(p') + 1) n gamma.
 * With m segments the buffer is cut into B = m blocks that go through the
 * rounds independently (every message is one block of n/m bytes): a rank
 * combines block k of a round while it receives block k + 1, and block k
 * starts the next round while later blocks finish this one.  A rank that
 * takes part sends log2(p') m messages (m more if it folded a neighbour in,
 * m in all for a folded-out rank).
 *
 * Non-powers of two (exchange.h, trd_fold): ranks 2i and 2i + 1 for
 * i < p - p' pair up, 2i sends its buffer to 2i + 1, which combines it on
 * the left and stands for both as newrank i; ranks >= 2(p - p') are newrank
 * r - (p - p').  The p' newranks run the rounds above, then rank 2i + 1
 * sends the result back to rank 2i.
 *
 * Commutativity: newranks keep the rank order of the ranges they hold, and
 * in round k the partner's group is the aligned group next to ours: it is
 * combined LEFT when its newrank is below ours, RIGHT otherwise, so every
 * COMBINE joins adjacent rank ranges in order and a non-commutative
 * operator is honoured for every p.
 *
 * Scratch: slot 1.  Round k's COMBINE reads (RIGHT: clobbers) slot 1 and
 * writes slot 0, so it waits for its RECV and for its own SEND of slot 0;
 * the next round's SEND and RECV wait for it. */
#include "plan/exchange.h"

/* Block j's program at rank r (one segment); ctx: the fold. */
static void emit_block(trd_xbuild *x, const void *ctx, int32_t r, int32_t j)
{
    const trd_fold *f = ctx;
    trd_xrange blk = {.block = j, .blocks = 1};
    int32_t nr = trd_fold_newrank(f, r);
    if (nr < 0) {
        trd_fold_out(x, r, blk);
        return;
    }
    int32_t done = trd_fold_in(x, f, r, blk); /* last step to write slot 0 / read slot 1 */
    for (int32_t k = 0; k < f->rounds; k++) {
        int32_t partner = nr ^ (1 << k), peer = trd_fold_rank(f, partner);
        int32_t sent = trd_xb_send(x, peer, blk, done, -1);
        int32_t got = trd_xb_recv(x, peer, 1, blk, done, -1);
        trd_side side = partner < nr ? TRD_SIDE_LEFT : TRD_SIDE_RIGHT;
        done = trd_xb_combine(x, side, blk, got, sent);
    }
    trd_fold_back(x, f, r, blk, done, -1);
}

trd_status trd_schedule_recursive_doubling(trd_plan *plan)
{
    int32_t p = (int32_t)plan->params.n, m = (int32_t)plan->params.segments;
    trd_fold f = trd_fold_make(p);
    /* Per block: 3 steps a round at each of the p' ranks that take part,
     * and 5 for the fold and the way back of each of the rem pairs. */
    double steps = (3.0 * f.rounds * f.p2 + 5.0 * f.rem) * m;
    return trd_xb_build_segments(plan, (double)m, steps, emit_block, &f);
}
