/* node_ring.c: the two-level allreduce of a cluster of multi-core nodes
 * (params.node_of): inside each node the ranks' buffers are combined into
 * the node's leader, its lowest rank; the H leaders run the ring
 * allreduce of ring.c among themselves, in the order of their ranks; each
 * leader hands the result back to the ranks of its node.  This is the
 * shape of Open MPI's coll/han allreduce (an intra-node reduce, an
 * inter-node allreduce among one rank per node, an intra-node broadcast:
 * Luo et al., "HAN: a Hierarchical AutotuNed Collective Communication
 * Framework", IEEE Cluster 2020), with the bandwidth-optimal ring between
 * the nodes (Patarasuk and Yuan, JPDC 69(2), 2009): only leaders use the
 * network, and each sends and receives 2 (H-1)/H n bytes there, the bound
 * of a node's link, whatever the number of ranks per node.
 *
 * Blocks: the buffer is H m chunks (segment-major, as ring.c: block
 * j H + c is chunk c of segment j), so segment j is the H consecutive
 * blocks [j H, j H + H).  A rank that is not a leader sends each segment
 * whole to its leader (m messages), and gets the result back chunk by
 * chunk as the leader's ring finishes it (H m messages).  The leader
 * receives its ranks' segments in rank order into slot 2 and combines
 * each on the right (its node's ranks above it); segment j enters the
 * ring once its last such combine is done (trd_ring.ready), and chunk c
 * of it goes back to the node as soon as the ring has it whole
 * (trd_ring_final).  Pipelining: with m > 1 segments, a node's ranks
 * send segment j + 1 while the leaders' ring works on segment j.
 *
 * Commutativity: the ring reduces each chunk in a rotated order of the
 * nodes (ring.c), so node-ring takes commutative operators only
 * (TRD_CAP_COMMUTATIVE); its order is fixed by the plan
 * (TRD_CAP_REPRODUCIBLE).  Without params.node_of every rank is a node:
 * the ring itself.  Scratch: slots 1 (the ring) and 2 (the node). */
#include <stdlib.h>

#include "core/error.h"
#include "plan/exchange.h"

/* The nodes of the plan: node k's ranks are member[first[k] .. first[k+1])
 * in increasing order, its leader the first; leader[k] for the ring. */
typedef struct cluster {
    int32_t n, nodes;
    int32_t *first, *member, *leader;
    int32_t *index_of; /* rank -> its node's index k */
} cluster;

static void cluster_free(cluster *c)
{
    free(c->first);
    free(c->member);
    free(c->leader);
    free(c->index_of);
}

/* Groups the ranks by node_of (NULL: one node per rank); nodes are
 * numbered by their lowest rank. */
static trd_status cluster_make(cluster *c, const int32_t *node_of, int32_t n)
{
    *c = (cluster){.n = n};
    int32_t *index_of_node = malloc((size_t)n * sizeof *index_of_node);
    c->first = calloc((size_t)n + 1, sizeof *c->first);
    c->member = malloc((size_t)n * sizeof *c->member);
    c->leader = malloc((size_t)n * sizeof *c->leader);
    c->index_of = malloc((size_t)n * sizeof *c->index_of);
    if (!index_of_node || !c->first || !c->member || !c->leader || !c->index_of) {
        free(index_of_node);
        cluster_free(c);
        return trd_fail(TRD_ENOMEM, "node-ring: out of memory for n = %ld", (long)n);
    }
    for (int32_t v = 0; v < n; v++)
        index_of_node[v] = -1;
    for (int32_t r = 0; r < n; r++) { /* node indices in order of their lowest rank */
        int32_t v = node_of ? node_of[r] : r;
        if (index_of_node[v] < 0) {
            index_of_node[v] = c->nodes;
            c->leader[c->nodes++] = r;
        }
        c->index_of[r] = index_of_node[v];
        c->first[c->index_of[r] + 1]++;
    }
    for (int32_t k = 0; k < c->nodes; k++)
        c->first[k + 1] += c->first[k];
    int32_t *fill = calloc((size_t)c->nodes, sizeof *fill);
    if (!fill) {
        free(index_of_node);
        cluster_free(c);
        return trd_fail(TRD_ENOMEM, "node-ring: out of memory for n = %ld", (long)n);
    }
    for (int32_t r = 0; r < n; r++) {
        int32_t k = c->index_of[r];
        c->member[c->first[k] + fill[k]++] = r;
    }
    free(fill);
    free(index_of_node);
    return TRD_OK;
}

static int32_t node_size(const cluster *c, int32_t k)
{
    return c->first[k + 1] - c->first[k];
}

static trd_xrange segment(int32_t H, int32_t j)
{
    return (trd_xrange){.block = j * H, .blocks = H};
}

static trd_xrange chunk(int32_t H, int32_t j, int32_t c)
{
    return (trd_xrange){.block = j * H + c, .blocks = 1};
}

/* A rank that is not its node's leader: its segments up, the result's
 * chunks back down into slot 0 once the segment's SEND has read it. */
static void emit_member(trd_xbuild *x, int32_t H, int32_t m, int32_t leader)
{
    for (int32_t j = 0; j < m; j++)
        trd_xb_send(x, leader, segment(H, j), -1, -1);
    for (int32_t j = 0; j < m; j++)
        for (int32_t c = 0; c < H; c++)
            trd_xb_recv(x, leader, 0, chunk(H, j, c), j, -1);
}

/* A leader: its node's segments combined in rank order (ready[j]: the
 * last combine of segment j, -1 for a node of one rank), the ring, then
 * each chunk to the node's other ranks as soon as it is whole. */
static void emit_leader(trd_xbuild *x, const cluster *cl, int32_t k, int32_t m, int32_t *ready)
{
    int32_t H = cl->nodes, s = node_size(cl, k);
    const int32_t *mine = cl->member + cl->first[k];
    for (int32_t j = 0; j < m; j++) {
        ready[j] = -1;
        for (int32_t q = 1; q < s; q++) {
            int32_t got = trd_xb_recv(x, mine[q], 2, segment(H, j), ready[j], -1);
            ready[j] = trd_xb_combine_from(x, TRD_SIDE_RIGHT, 2, segment(H, j), got, ready[j]);
        }
    }
    trd_ring g = {.p = H, .m = m, .me = k, .base = 2 * (s - 1) * m, .at = cl->leader,
                  .ready = ready};
    trd_ring_emit(x, &g);
    for (int32_t j = 0; j < m; j++)
        for (int32_t c = 0; c < H; c++) {
            int32_t whole = trd_ring_final(&g, j, c);
            for (int32_t q = 1; q < s; q++)
                trd_xb_send(x, mine[q], chunk(H, j, c), whole, -1);
        }
}

/* Steps of every program together: each rank's segments and chunks
 * (m + H m but for the leaders), the leaders' combines (2 m per other
 * rank), rings and chunks sent down (H m per other rank). */
static double step_count(const cluster *cl, int32_t m)
{
    double H = cl->nodes, others = cl->n - H;
    return others * ((double)m + H * m) + others * 2.0 * m + H * trd_ring_steps(cl->nodes, m) +
           others * H * m;
}

trd_status trd_schedule_node_ring(trd_plan *plan)
{
    const trd_params *prm = &plan->params;
    int32_t n = (int32_t)prm->n, m = (int32_t)prm->segments;
    cluster cl;
    trd_status st = cluster_make(&cl, prm->node_of, n);
    if (st != TRD_OK)
        return st;
    int32_t *ready = malloc((size_t)m * sizeof *ready);
    trd_xbuild x;
    if (!ready)
        st = trd_fail(TRD_ENOMEM, "node-ring: out of memory for %ld segments", (long)m);
    else
        st = trd_xb_begin(&x, plan, (double)cl.nodes * m, step_count(&cl, m));
    if (st == TRD_OK) {
        for (int32_t r = 0; r < n; r++) {
            int32_t k = cl.index_of[r];
            trd_xb_rank(&x, r);
            if (cl.leader[k] == r)
                emit_leader(&x, &cl, k, m, ready);
            else
                emit_member(&x, cl.nodes, m, cl.leader[k]);
        }
        st = trd_xb_end(&x);
    }
    free(ready);
    cluster_free(&cl);
    return st;
}
