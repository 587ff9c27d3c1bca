/* reduce_scatter_pairwise.c: the pairwise-exchange reduce-scatter, combined
 * in rank order.
 *
 * In round k (1 <= k < p) rank r sends its input's part r - k to rank
 * r - k and receives rank r + k's input of part r (ranks mod p), which it
 * combines into its own: after p - 1 rounds it holds part r reduced over
 * every rank.  Every message is a raw input, so no rank waits for another's
 * partial result.  Source: the pairwise exchange of MPICH
 * (MPIR_Reduce_scatter_intra_pairwise; Thakur, Rabenseifner and Gropp,
 * "Optimization of collective communication operations in MPICH",
 * IJHPCA 19(1), 2005, its reduce-scatter for long messages), here with
 * the partner directions mirrored so that rank r hears from r + 1, r + 2,
 * ... in increasing order.
 *
 * Rank order (a non-commutative operator is honoured for every p): the
 * inputs of ranks r + 1 .. p - 1 arrive in increasing order and extend the
 * accumulator [r, ...] on the RIGHT; those of ranks 0 .. r - 1 arrive after
 * the wrap, also in increasing order, and build the prefix [0, ...] in
 * slot 2 (each new one combined on its RIGHT), which is combined LEFT into
 * the accumulator at the end.  Every COMBINE joins adjacent rank
 * intervals.  (MPICH's own loop combines the inputs from above r in
 * decreasing order, so it is used for commutative operators only.)
 *
 * Cost (alpha per message, beta per byte, gamma per byte combined, a
 * buffer of n bytes): (p-1) alpha + ((p-1)/p) n beta + ((p-1)/p) n gamma:
 * p - 1 messages of a part, and p - 1 combines of a part (p - 1 - r on the
 * right, r - 1 into the prefix and the prefix's one, for r > 0).  With m
 * segments every part is sent as m blocks, B = p m rank-major (block
 * c m + j is segment j of part c), so every rank sends (p-1) m messages of
 * n/(p m) bytes and combines (p-1) m blocks; combining block j of a round
 * overlaps receiving block j + 1.
 *
 * Scratch: slots 1 (each message lands there) and 2 (the prefix).  The
 * SENDs read parts of slot 0 other than r, which no step writes: they send
 * the input (fusion makes them SEND_INPUTs) and need no dependency.  The
 * steps of one block of part r form a chain: each RECV waits for the
 * block's step before it, each COMBINE for its RECV and for the last write
 * of its target (slot 0, or slot 2), the final one for the last writes of
 * both.  So a RECV into slot 1 comes after every COMBINE that read (RIGHT:
 * clobbered) slot 1 there, the first prefix input lands in slot 2 before
 * anything touches it, and every pair of steps on one block is ordered.
 * Two links of the chain are not there for their own data: the prefix's
 * first RECV (into slot 2, untouched) and, at rank p - 1, the first RECV
 * into slot 1 (untouched) could be posted at once.  They wait for the
 * block's step before them all the same: the first passes the wait for
 * slot 1 on to the RECVs after it, and both fix the receive order round
 * by round, as MPICH's Sendrecv calls do.  Under the one-port model a
 * sender serves whichever posted receive is free, and a receive posted
 * early pulls it out of its round and delays the rounds behind it (the
 * simulated makespan of p = 8 ranks was 20% to 60% above the formula).
 * Each RECV comes from a different peer, so channels cannot cross. */
#include "plan/algorithms.h"
#include "plan/exchange.h"

#include <stdlib.h>

#include "core/error.h"

/* Where segment j of part r stands in rank r's program: the last step
 * that wrote slot 0 (acc), that wrote slot 2 (prefix), and the last RECV
 * or COMBINE of the block (last); -1: none yet. */
typedef struct seg_state {
    int32_t acc, prefix, last;
} seg_state;

/* Receives rank `from`'s input of the block and folds it in. */
static void take(trd_xbuild *x, int32_t r, int32_t from, trd_xrange blk, seg_state *g)
{
    if (from == 0) { /* the prefix starts with x_0 */
        g->last = g->prefix = trd_xb_recv(x, from, 2, blk, g->last, -1);
        return;
    }
    int32_t got = trd_xb_recv(x, from, 1, blk, g->last, -1);
    if (from > r) /* [r, from - 1] (+) x_from */
        g->last = g->acc = trd_xb_combine_into(x, TRD_SIDE_RIGHT, 0, 1, blk, got, g->acc);
    else /* [0, from - 1] (+) x_from */
        g->last = g->prefix = trd_xb_combine_into(x, TRD_SIDE_RIGHT, 2, 1, blk, got, g->prefix);
}

/* Rank r's program: round-major, segment j of round k after segment
 * j - 1, so receives are posted in the order the senders send.  g: room
 * for the m segments' states. */
static void emit_rank(trd_xbuild *x, int32_t p, int32_t m, int32_t r, seg_state *g)
{
    for (int32_t j = 0; j < m; j++)
        g[j] = (seg_state){.acc = -1, .prefix = -1, .last = -1};
    for (int32_t k = 1; k < p; k++) {
        int32_t to = (r - k + p) % p, from = (r + k) % p;
        for (int32_t j = 0; j < m; j++) {
            trd_xb_send(x, to, (trd_xrange){.block = to * m + j, .blocks = 1}, -1, -1);
            take(x, r, from, (trd_xrange){.block = r * m + j, .blocks = 1}, &g[j]);
        }
    }
    for (int32_t j = 0; j < m && r > 0; j++) /* [0, r - 1] (+) [r, p - 1] */
        trd_xb_combine_into(x, TRD_SIDE_LEFT, 0, 2, (trd_xrange){.block = r * m + j, .blocks = 1},
                            g[j].prefix, g[j].acc);
}

trd_status trd_schedule_reduce_scatter_pairwise(trd_plan *plan)
{
    int32_t p = (int32_t)plan->params.n, m = (int32_t)plan->params.segments;
    /* Per rank and block: a SEND and a RECV a round, p - 1 COMBINEs. */
    trd_xbuild x;
    trd_status st = trd_xb_begin(&x, plan, (double)p * m, 3.0 * (p - 1.0) * p * m);
    if (st != TRD_OK)
        return st;
    seg_state *g = malloc((size_t)m * sizeof *g);
    if (!g)
        x.st = trd_fail(TRD_ENOMEM, "%s: out of memory for m = %ld segments", plan->algo->name,
                        (long)m);
    for (int32_t r = 0; r < p && g; r++) {
        trd_xb_rank(&x, r);
        emit_rank(&x, p, m, r, g);
    }
    free(g);
    return trd_xb_end(&x);
}
