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
 * the ring itself.  Scratch: slots 1 (the ring) and 2 (the node).
 *
 * Slow links (params.costs): in the ring every node's link carries
 * 2 (R-1)/R n bytes each way, so one slow host sets the pace of all (the
 * ring's bandwidth is its slowest link's: Patarasuk and Yuan, Sec. 4).  A
 * node whose link is slow enough leaves the ring as a satellite: its
 * leader sends its node's sum segment by segment, segment j to the ring
 * node (j + i) mod R of the fastest first (i: its place among the
 * satellites), which combines it with its own node's before the ring and
 * sends the result's chunks of segment j back - n bytes each way over the
 * slow link, not 2 (R-1)/R n, overlapping but for one segment, and no
 * ring node carrying more than 1/R of it.  This is the lesson of
 * Legrand, Marchal and Robert (JPDC 2005) on platforms of uneven links:
 * route the heavy traffic around the slow ones rather than through them.
 * Which nodes: a node's link is its leader's best connection to another
 * leader under the costs (a transfer runs at its slower end's speed, so a
 * slow host's link bounds all of its transfers); the s slowest leave, for
 * the s of 0 .. H-2 whose busiest port is least - a satellite's
 * (1 + 2/m) n at its link's pace plus its last segment's ring (its sends
 * and the last segment's way back do not overlap), or a ring node's
 * 2 (R-1)/R n plus 1/R
 * of the satellites' segments at theirs (a one-port model holds a port
 * for a transfer's whole time); each satellite more must cut that by 5 %
 * (the estimate is rough), so equal links never split and one segment
 * never pays. */
#include <stdlib.h>

#include "core/error.h"
#include "plan/builders.h"
#include "plan/exchange.h"

/* The nodes of the plan: node k's ranks are member[first[k] .. first[k+1])
 * in increasing order, its leader the first; leader[k] for the ring. */
typedef struct cluster {
    int32_t n, nodes;
    int32_t *first, *member, *leader;
    int32_t *index_of; /* rank -> its node's index k */
    int32_t ring;      /* nodes in the ring (the others are satellites) */
    int32_t *sat_of;   /* node k's place among the satellites, -1 for a ring node */
    int32_t *ring_of;  /* node k's place in the ring, -1 for a satellite */
    int32_t *ring_at;  /* the ring's leaders, in ring order */
    int32_t *fast;     /* the ring's nodes, fastest link first */
} cluster;

static void cluster_free(cluster *c)
{
    free(c->first);
    free(c->member);
    free(c->leader);
    free(c->index_of);
    free(c->sat_of);
    free(c->ring_of);
    free(c->ring_at);
    free(c->fast);
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

/* Node k's link: its leader's best connection to another node's leader
 * (v over positions rotated by root). */
static double link_of(const cluster *c, const trd_cost_view *v, int32_t root, int32_t k)
{
    int32_t a = (c->leader[k] - root + c->n) % c->n;
    double best = -1;
    for (int32_t l = 0; l < c->nodes; l++) {
        int32_t b = (c->leader[l] - root + c->n) % c->n;
        double t = trd_view_transfer(v, a, b), back = trd_view_transfer(v, b, a);
        t = back > t ? back : t;
        if (l != k && (best < 0 || t < best))
            best = t;
    }
    return best;
}

/* The busiest port with the s slowest nodes (by_speed[0 .. s), slowest
 * first) as satellites, m segments: a satellite's (its sends and receives
 * overlap but for the last segment's, so it needs several to win), or a
 * ring node's, which takes 1/R of the satellites' segments - at their
 * links' pace, as a port is held for a transfer's whole time. */
static double busiest(const cluster *c, const double *link, const int32_t *by_speed, int32_t s,
                      int32_t m)
{
    int32_t H = c->nodes, R = H - s;
    double ring = 2.0 * (R - 1) / R, t = 0, sats = 0;
    /* the last segment's way: out, through the ring's 2 steps, back */
    double tail = 2.0 * (R - 1) / R / m * link[by_speed[s]];
    for (int32_t i = 0; i < s; i++) {
        double busy = (1.0 + 2.0 / m) * link[by_speed[i]] + tail;
        t = busy > t ? busy : t;
        sats += link[by_speed[i]];
    }
    for (int32_t q = s; q < H; q++) {
        double busy = ring * link[by_speed[q]] + sats / R;
        t = busy > t ? busy : t;
    }
    return t;
}

/* The nodes that leave the ring under prm->costs (none without costs or
 * below 3 nodes), and the ring's order: increasing node index. */
static trd_status choose_ring(cluster *c, const trd_params *prm)
{
    int32_t H = c->nodes, s = 0, m = (int32_t)prm->segments;
    c->sat_of = malloc((size_t)H * sizeof *c->sat_of);
    c->ring_of = malloc((size_t)H * sizeof *c->ring_of);
    c->ring_at = malloc((size_t)H * sizeof *c->ring_at);
    c->fast = malloc((size_t)H * sizeof *c->fast);
    double *link = calloc((size_t)H, sizeof *link);
    int32_t *by_speed = calloc((size_t)H, sizeof *by_speed);
    if (!c->sat_of || !c->ring_of || !c->ring_at || !c->fast || !link || !by_speed) {
        free(link);
        free(by_speed);
        return trd_fail(TRD_ENOMEM, "node-ring: out of memory for %ld nodes", (long)H);
    }
    trd_cost_view v = trd_plan_cost_view(prm);
    for (int32_t k = 0; k < H; k++) {
        link[k] = prm->costs && H > 2 ? link_of(c, &v, (int32_t)prm->root, k) : 0;
        int32_t at = k; /* insertion by link, slowest first; ties by index */
        while (at > 0 && link[by_speed[at - 1]] < link[k]) {
            by_speed[at] = by_speed[at - 1];
            at--;
        }
        by_speed[at] = k;
    }
    double best = busiest(c, link, by_speed, 0, m);
    for (int32_t t = 1; prm->costs && t <= H - 2; t++) {
        double b = busiest(c, link, by_speed, t, m);
        if (b < best * 0.95) { /* a satellite more must win clearly: the estimate is rough */
            best = b;
            s = t;
        }
    }
    for (int32_t k = 0; k < H; k++)
        c->sat_of[k] = -1;
    for (int32_t i = 0; i < s; i++)
        c->sat_of[by_speed[i]] = i;
    c->ring = 0;
    for (int32_t k = 0; k < H; k++) {
        c->ring_of[k] = c->sat_of[k] < 0 ? c->ring++ : -1;
        if (c->sat_of[k] < 0)
            c->ring_at[c->ring_of[k]] = c->leader[k];
    }
    for (int32_t q = 0; q < c->ring; q++)
        c->fast[q] = by_speed[H - 1 - q];
    free(link);
    free(by_speed);
    return TRD_OK;
}

/* The ring node that takes segment j of satellite k: in turn, from the
 * fastest, so that no ring node's port carries a satellite's whole pace. */
static int32_t partner(const cluster *c, int32_t k, int32_t j)
{
    return c->fast[(c->sat_of[k] + j) % c->ring];
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

/* Node k's segments combined in rank order into its leader's slot 0
 * (ready[j]: the last combine of segment j, -1 when there is none), then
 * those of its satellites' leaders: n steps so far returned. */
static int32_t combine_inputs(trd_xbuild *x, const cluster *cl, int32_t k, int32_t m,
                              int32_t *ready)
{
    int32_t R = cl->ring, s = node_size(cl, k), steps = 0;
    const int32_t *mine = cl->member + cl->first[k];
    for (int32_t j = 0; j < m; j++) {
        ready[j] = -1;
        for (int32_t q = 1; q < s; q++, steps += 2) {
            int32_t got = trd_xb_recv(x, mine[q], 2, segment(R, j), ready[j], -1);
            ready[j] = trd_xb_combine_from(x, TRD_SIDE_RIGHT, 2, segment(R, j), got, ready[j]);
        }
        for (int32_t q = 0; cl->ring_of[k] >= 0 && q < cl->nodes; q++)
            if (cl->sat_of[q] >= 0 && partner(cl, q, j) == k) {
                int32_t got = trd_xb_recv(x, cl->leader[q], 2, segment(R, j), ready[j], -1);
                ready[j] =
                    trd_xb_combine_from(x, TRD_SIDE_RIGHT, 2, segment(R, j), got, ready[j]);
                steps += 2;
            }
    }
    return steps;
}

/* Chunk c of segment j, whole after step `whole`, to the node's other
 * ranks and, from a ring node, to its satellites' leaders. */
static void hand_down(trd_xbuild *x, const cluster *cl, int32_t k, int32_t j, int32_t c,
                      int32_t whole)
{
    const int32_t *mine = cl->member + cl->first[k];
    for (int32_t q = 1; q < node_size(cl, k); q++)
        trd_xb_send(x, mine[q], chunk(cl->ring, j, c), whole, -1);
    for (int32_t q = 0; cl->ring_of[k] >= 0 && q < cl->nodes; q++)
        if (cl->sat_of[q] >= 0 && partner(cl, q, j) == k)
            trd_xb_send(x, cl->leader[q], chunk(cl->ring, j, c), whole, -1);
}

/* A ring node's leader: its inputs combined, the ring, then each chunk
 * down as soon as it is whole. */
static void emit_leader(trd_xbuild *x, const cluster *cl, int32_t k, int32_t m, int32_t *ready)
{
    int32_t R = cl->ring;
    trd_ring g = {.p = R, .m = m, .me = cl->ring_of[k], .base = combine_inputs(x, cl, k, m, ready),
                  .at = cl->ring_at, .ready = ready};
    trd_ring_emit(x, &g);
    for (int32_t j = 0; j < m; j++)
        for (int32_t c = 0; c < R; c++)
            hand_down(x, cl, k, j, c, trd_ring_final(&g, j, c));
}

/* A satellite's leader: its node's sum segment by segment, each to its
 * partner, the result's chunks back from it into slot 0 once the
 * segment's SEND has read it, each handed down as it comes. */
static void emit_satellite(trd_xbuild *x, const cluster *cl, int32_t k, int32_t m,
                           int32_t *ready)
{
    int32_t R = cl->ring, sent0 = combine_inputs(x, cl, k, m, ready);
    for (int32_t j = 0; j < m; j++) /* in order: the ring takes them in order */
        trd_xb_send(x, cl->leader[partner(cl, k, j)], segment(R, j), ready[j],
                    j > 0 ? sent0 + j - 1 : -1);
    for (int32_t j = 0; j < m; j++)
        for (int32_t c = 0; c < R; c++)
            hand_down(x, cl, k, j, c,
                      trd_xb_recv(x, cl->leader[partner(cl, k, j)], 0, chunk(R, j, c),
                                  sent0 + j, -1));
}

/* Steps of every program together: each rank's segments and chunks
 * (m + R m but for the leaders), the leaders' combines (2 m per other
 * rank or satellite), rings, and chunks sent down (R m per other rank or
 * satellite); a satellite's leader sends m segments and gets R m chunks. */
static double step_count(const cluster *cl, int32_t m)
{
    double R = cl->ring, sats = cl->nodes - R, others = cl->n - cl->nodes;
    return (others + sats) * ((double)m + R * m) + (others + sats) * 2.0 * m +
           R * trd_ring_steps(cl->ring, m) + (others + sats) * R * m;
}

trd_status trd_schedule_node_ring(trd_plan *plan)
{
    const trd_params *prm = &plan->params;
    int32_t n = (int32_t)prm->n, m = (int32_t)prm->segments;
    cluster cl;
    trd_status st = cluster_make(&cl, prm->node_of, n);
    if (st == TRD_OK && (st = choose_ring(&cl, prm)) != TRD_OK)
        cluster_free(&cl);
    if (st != TRD_OK)
        return st;
    int32_t *ready = malloc((size_t)m * sizeof *ready);
    trd_xbuild x;
    if (!ready)
        st = trd_fail(TRD_ENOMEM, "node-ring: out of memory for %ld segments", (long)m);
    else
        st = trd_xb_begin(&x, plan, (double)cl.ring * m, step_count(&cl, m));
    if (st == TRD_OK) {
        for (int32_t r = 0; r < n; r++) {
            int32_t k = cl.index_of[r];
            trd_xb_rank(&x, r);
            if (cl.leader[k] != r)
                emit_member(&x, cl.ring, m, cl.leader[k]);
            else if (cl.ring_of[k] >= 0)
                emit_leader(&x, &cl, k, m, ready);
            else
                emit_satellite(&x, &cl, k, m, ready);
        }
        st = trd_xb_end(&x);
    }
    free(ready);
    cluster_free(&cl);
    return st;
}
