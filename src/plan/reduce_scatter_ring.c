/* reduce_scatter_ring.c: the ring reduce-scatter, the first half of the
 * ring allreduce (ring.c) with its parts shifted so that rank r ends with
 * part r.
 *
 * The buffer is cut into p parts (times m segments, below).  In step s
 * (0 <= s < p - 1) rank r sends part r - s - 1 to r + 1 and receives part
 * r - s - 2 from r - 1, which it combines into its own copy (parts mod p).
 * Part c thus starts at rank c + 1 as that rank's input and goes once
 * around the ring, each rank adding its contribution, to end at rank c
 * after p - 1 steps.  Sources: Patarasuk and Yuan, "Bandwidth optimal
 * all-reduce algorithms for clusters of workstations", JPDC 69(2), 2009
 * (this ring, and that its bandwidth term is optimal); Thakur, Rabenseifner
 * and Gropp, "Optimization of collective communication operations in
 * MPICH", IJHPCA 19(1), 2005 (the reduce-scatter as the first half of an
 * allreduce).
 *
 * Cost (alpha per message, beta per byte, gamma per byte combined, a
 * buffer of n bytes): (p-1) alpha + ((p-1)/p) n beta + ((p-1)/p) n gamma,
 * for any p.  With m segments every part is sent as m blocks, so B = p m
 * blocks, rank-major as the collective lays them out (block c m + j is
 * segment j of part c), and every rank sends (p-1) m messages of
 * n/(p m) bytes and combines (p-1) m blocks; combining block j of a step
 * overlaps receiving block j + 1.
 *
 * Scratch: slot 1 only.  Each block of slot 1 is received once (every part
 * but r - 1, whose input r sends first and never receives) and read by one
 * COMBINE, so RECVs need no dependency.  Each block of slot 0 is written by
 * one COMBINE and sent by the next step's SEND, which waits for it; the
 * step-0 SEND reads the input, which nothing writes before it (fusion
 * makes it a SEND_INPUT).  So every conflicting pair of steps is ordered.
 *
 * Commutativity: part c is reduced in the rotated order c+1, ..., p-1, 0,
 * ..., c, so this ring is commutative-only (its registry row).  The side
 * of each COMBINE is still that of the rank range received (LEFT when it
 * lies below r, RIGHT when it wrapped past p - 1), as in ring.c. */
#include "plan/algorithms.h"
#include "plan/exchange.h"

/* Segment j of part c (mod p), m segments a part. */
static trd_xrange part_seg(int32_t p, int32_t m, int32_t c, int32_t j)
{
    return (trd_xrange){.block = (((c % p) + p) % p) * m + j, .blocks = 1};
}

/* Rank r's program: step-major (SEND, RECV, COMBINE of segment j of step s
 * at index 3 (s m + j)), so a rank posts its receives in the order its
 * neighbour sends.  ctx: the plan's parameters. */
static void emit_rank(trd_xbuild *x, const void *ctx, int32_t r)
{
    const trd_params *prm = ctx;
    int32_t p = (int32_t)prm->n, m = (int32_t)prm->segments;
    int32_t next = (r + 1) % p, prev = (r + p - 1) % p;
    for (int32_t s = 0; s < p - 1; s++)
        for (int32_t j = 0; j < m; j++) {
            int32_t c = ((r - s - 2) % p + p) % p; /* the part received */
            int32_t ready = s > 0 ? 3 * ((s - 1) * m + j) + 2 : -1; /* wrote what we send */
            trd_xb_send(x, next, part_seg(p, m, r - s - 1, j), ready, -1);
            int32_t got = trd_xb_recv(x, prev, 1, part_seg(p, m, c, j), -1, -1);
            trd_xb_combine(x, c < r ? TRD_SIDE_LEFT : TRD_SIDE_RIGHT, part_seg(p, m, c, j), got,
                           -1);
        }
}

trd_status trd_schedule_reduce_scatter_ring(trd_plan *plan)
{
    int32_t p = (int32_t)plan->params.n, m = (int32_t)plan->params.segments;
    return trd_xb_build_ranks(plan, (double)p * m, 3.0 * p * (p - 1.0) * m, emit_rank,
                              &plan->params);
}
