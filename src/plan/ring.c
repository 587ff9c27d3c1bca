/* ring.c: the ring allreduce, a reduce-scatter followed by an allgather
 * around the ring r -> r + 1 (mod p).
 *
 * The buffer is cut into p chunks (times m segments, below).  In step s of
 * the reduce-scatter (0 <= s < p - 1) rank r sends chunk r - s to r + 1 and
 * receives chunk r - s - 1 from r - 1, which it combines into its own copy:
 * after p - 1 steps rank r holds chunk r + 1 fully reduced.  The allgather
 * then passes the reduced chunks on around the ring: in its step s rank r
 * sends chunk r + 1 - s and receives chunk r - s straight into slot 0 (all
 * chunks mod p).  Sources: Thakur, Rabenseifner and Gropp, "Optimization
 * of collective communication operations in MPICH", IJHPCA 19(1), 2005
 * (allreduce as a reduce-scatter then an allgather, and the ring
 * allgather); Patarasuk and Yuan, "Bandwidth optimal all-reduce algorithms
 * for clusters of workstations", JPDC 69(2), 2009 (this ring, and that its
 * bandwidth term is optimal).
 *
 * Cost (alpha per message, beta per byte, gamma per byte combined, a
 * buffer of n bytes): 2(p-1) alpha + 2((p-1)/p) n beta + ((p-1)/p) n gamma,
 * for any p (no fold).  With m segments every chunk is sent as m blocks,
 * so B = p m blocks (segment-major: block j p + c is chunk c of segment j)
 * and every rank sends 2(p-1) m messages of n/(p m) bytes; combining block
 * k overlaps receiving block k + 1.
 *
 * Scratch: slot 1 only.  Each chunk of slot 1 is received once (the
 * reduce-scatter receives every chunk but r's own, each once) and read by
 * one COMBINE, so RECVs into it need no dependency.  The allgather receives
 * chunk r - s into slot 0 after the reduce-scatter's SEND of that same
 * chunk (step s; it was combined into at step s - 1, before that SEND).
 *
 * Commutativity: chunk c is reduced in the rotated order c, c+1, ..., p-1,
 * 0, ..., c-1, so ring is commutative-only (TRD_CAP_COMMUTATIVE in its
 * registry row).  The side of each COMBINE is still that of the rank range
 * it receives (LEFT when it lies below r, RIGHT when it wrapped past
 * p - 1). */
#include "plan/exchange.h"

/* Chunk c (mod p) of segment j. */
static trd_xrange chunk(int32_t p, int32_t j, int32_t c)
{
    return (trd_xrange){.block = j * p + ((c % p) + p) % p, .blocks = 1};
}

/* Program layout (step-major, so a rank posts its first receives in the
 * order its neighbour sends), from the ring's first step g->base:
 * reduce-scatter step s of segment j is SEND, RECV, COMBINE at rs_at(s, j);
 * allgather step s of segment j is SEND, RECV at ag_at(s, j). */
static int32_t rs_at(const trd_ring *g, int32_t s, int32_t j)
{
    return g->base + 3 * (s * g->m + j);
}

static int32_t ag_at(const trd_ring *g, int32_t s, int32_t j)
{
    return g->base + 3 * (g->p - 1) * g->m + 2 * (s * g->m + j);
}

static int32_t rank_at(const trd_ring *g, int32_t i)
{
    i = ((i % g->p) + g->p) % g->p;
    return g->at ? g->at[i] : i;
}

/* The step segment j's slot 0 waits for before the ring reads or writes
 * it (-1: none). */
static int32_t ready_of(const trd_ring *g, int32_t j)
{
    return g->ready ? g->ready[j] : -1;
}

static void emit_reduce_scatter(trd_xbuild *x, const trd_ring *g)
{
    int32_t p = g->p, m = g->m, r = g->me;
    int32_t next = rank_at(g, r + 1), prev = rank_at(g, r - 1);
    for (int32_t s = 0; s < p - 1; s++)
        for (int32_t j = 0; j < m; j++) {
            int32_t c = ((r - s - 1) % p + p) % p; /* the chunk received */
            int32_t ready = s > 0 ? rs_at(g, s - 1, j) + 2 : ready_of(g, j);
            trd_xb_send(x, next, chunk(p, j, r - s), ready, -1);
            int32_t got = trd_xb_recv(x, prev, 1, chunk(p, j, c), -1, -1);
            trd_xb_combine(x, c < r ? TRD_SIDE_LEFT : TRD_SIDE_RIGHT, chunk(p, j, c), got,
                           ready_of(g, j));
        }
}

static void emit_allgather(trd_xbuild *x, const trd_ring *g)
{
    int32_t p = g->p, m = g->m, r = g->me;
    int32_t next = rank_at(g, r + 1), prev = rank_at(g, r - 1);
    for (int32_t s = 0; s < p - 1; s++)
        for (int32_t j = 0; j < m; j++) {
            int32_t ready = s > 0 ? ag_at(g, s - 1, j) + 1 : rs_at(g, p - 2, j) + 2;
            trd_xb_send(x, next, chunk(p, j, r + 1 - s), ready, -1);
            trd_xb_recv(x, prev, 0, chunk(p, j, r - s), rs_at(g, s, j), -1);
        }
}

void trd_ring_emit(trd_xbuild *x, const trd_ring *g)
{
    if (g->p < 2)
        return;
    emit_reduce_scatter(x, g);
    emit_allgather(x, g);
}

double trd_ring_steps(int32_t p, int32_t m)
{
    return 5.0 * (p - 1.0) * m;
}

/* Chunk c of segment j is whole at ring index me after the last
 * reduce-scatter COMBINE for its own chunk me + 1, else after the
 * allgather step s that receives it (me - s = c). */
int32_t trd_ring_final(const trd_ring *g, int32_t j, int32_t c)
{
    int32_t p = g->p;
    if (p < 2)
        return ready_of(g, j);
    int32_t s = ((g->me - c) % p + p) % p;
    return s == p - 1 ? rs_at(g, p - 2, j) + 2 : ag_at(g, s, j) + 1;
}

/* Rank r's program, the whole ring; ctx: the plan's parameters. */
static void emit_rank(trd_xbuild *x, const void *ctx, int32_t r)
{
    const trd_params *prm = ctx;
    trd_ring_emit(x, &(trd_ring){.p = (int32_t)prm->n, .m = (int32_t)prm->segments, .me = r});
}

trd_status trd_schedule_ring(trd_plan *plan)
{
    const trd_params *prm = &plan->params;
    int32_t p = (int32_t)prm->n, m = (int32_t)prm->segments;
    return trd_xb_build_ranks(plan, (double)p * m, (double)p * trd_ring_steps(p, m), emit_rank,
                              prm);
}
