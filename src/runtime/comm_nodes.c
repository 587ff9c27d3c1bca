/* comm_nodes.c: the node of each rank of a communicator (treduce.h,
 * trd_comm_set_nodes, trd_comm_learn_nodes): what the node-aware
 * algorithms plan for (params.node_of, src/plan/node_ring.c).
 *
 * Set once, before the first collective call: a plan the communicator
 * keeps (its cache, the selection's memo of "auto") points at the map, so
 * it is never replaced while the communicator lives.  Nodes are numbered
 * by their lowest rank, so that every rank that learns the same grouping
 * holds the same map (the calls' signatures carry it: ranks given other
 * maps are a mismatch, runtime/comm_state.c). */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "runtime/comm.h"

/* map[r] replaced by the lowest rank with the same node (map values are
 * checked to lie in [0, n)). */
static trd_status renumber(int32_t *map, int32_t n)
{
    int32_t *lowest = malloc((size_t)n * sizeof *lowest);
    if (!lowest)
        return trd_fail(TRD_ENOMEM, "trd_comm_set_nodes: out of memory");
    for (int32_t v = 0; v < n; v++)
        lowest[v] = -1;
    for (int32_t r = 0; r < n; r++) {
        if (lowest[map[r]] < 0)
            lowest[map[r]] = r;
        map[r] = lowest[map[r]];
    }
    free(lowest);
    return TRD_OK;
}

/* A first map after the first collective call: refused. */
static trd_status too_late(const trd_comm *c, const char *fn)
{
    if (c->node_of || c->calls == 0)
        return TRD_OK;
    return trd_fail(TRD_EINVAL, "%s: the communicator has made %lld collective calls: set its "
                    "node map before the first", fn, (long long)c->calls);
}

trd_status trd_comm_set_nodes(trd_comm *c, const int32_t *node_of)
{
    if (!c || !node_of)
        return trd_fail(TRD_EINVAL, "trd_comm_set_nodes: NULL %s", !c ? "communicator"
                                                                     : "node map");
    int32_t n = c->wire.size;
    for (int32_t r = 0; r < n; r++)
        if (node_of[r] < 0 || node_of[r] >= n)
            return trd_fail(TRD_EINVAL, "trd_comm_set_nodes: node_of[%ld] = %ld is not a node: "
                            "need 0 <= node < p = %ld", (long)r, (long)node_of[r], (long)n);
    int32_t *map = malloc((size_t)n * sizeof *map);
    if (!map)
        return trd_fail(TRD_ENOMEM, "trd_comm_set_nodes: out of memory");
    memcpy(map, node_of, (size_t)n * sizeof *map);
    trd_status st = renumber(map, n);
    if (st == TRD_OK && c->node_of && memcmp(c->node_of, map, (size_t)n * sizeof *map))
        st = trd_fail(TRD_EINVAL, "trd_comm_set_nodes: the communicator has another node map "
                      "already (it is set once)");
    else if (st == TRD_OK)
        st = too_late(c, "trd_comm_set_nodes");
    if (st != TRD_OK || c->node_of) {
        free(map);
        return st;
    }
    c->node_of = map;
    return TRD_OK;
}

int32_t trd_comm_node(const trd_comm *c, int32_t rank)
{
    if (!c || !c->node_of || rank < 0 || rank >= c->wire.size)
        return -1;
    return c->node_of[rank];
}

trd_status trd_comm_learn_nodes(trd_comm *c)
{
    if (!c)
        return trd_fail(TRD_EINVAL, "trd_comm_learn_nodes: NULL communicator");
    trd_status st = too_late(c, "trd_comm_learn_nodes");
    if (st != TRD_OK)
        return st;
    const trd_wire *w = &c->wire;
    bool all = w->node_size == 0 || w->node_size == w->size;
    if (!all && !w->node_ranks)
        return trd_fail(TRD_EUNSUPPORTED, "trd_comm_learn_nodes: the %s wire does not know "
                        "which ranks share this rank's node", w->name);
    int32_t lowest = all ? 0 : w->node_ranks[0]; /* ascending: the node's name */
    int32_t *map = malloc((size_t)w->size * sizeof *map);
    if (!map)
        return trd_fail(TRD_ENOMEM, "trd_comm_learn_nodes: out of memory");
    st = trd_comm_allgather(c, &lowest, map, sizeof lowest);
    if (st == TRD_OK)
        st = trd_comm_set_nodes(c, map);
    free(map);
    return st;
}
