/* node.c: which processes share a node.
 *
 * Learnt once, at MPI_Init, where every process of the world is
 * (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) over the world, then an
 * allgather of each process's node: the lowest world rank on it).  A
 * communicator made later counts the ranks of its node from its group,
 * locally: treduce's wire needs that count (its shared-memory rings serve
 * a communicator held by one node), and counting it with a split of the
 * new communicator would be a collective whose context-id agreement can
 * deadlock against other communicators' creations. */
#include <stdlib.h>

#include "layer.h"

static int *node_of; /* [world rank]: the lowest world rank on its node */
static int world_size;

bool tml_nodes_start(void)
{
    MPI_Comm node;
    int leader = tml_g.world_rank, rc;
    PMPI_Comm_size(tml_g.world, &world_size);
    rc = PMPI_Comm_split_type(tml_g.world, MPI_COMM_TYPE_SHARED, tml_g.world_rank,
                              MPI_INFO_NULL, &node);
    if (rc == MPI_SUCCESS) {
        rc = PMPI_Allreduce(&tml_g.world_rank, &leader, 1, MPI_INT, MPI_MIN, node);
        PMPI_Comm_free(&node);
    }
    int ok = rc == MPI_SUCCESS && (node_of = malloc((size_t)world_size * sizeof *node_of)), all;
    if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, tml_g.world) != MPI_SUCCESS || !all ||
        PMPI_Allgather(&leader, 1, MPI_INT, node_of, 1, MPI_INT, tml_g.world) != MPI_SUCCESS) {
        tml_nodes_finish();
        return false;
    }
    return true;
}

int tml_node_procs(void)
{
    int here = node_of ? node_of[tml_g.world_rank] : -1, n = 0;
    for (int r = 0; node_of && r < world_size; r++)
        n += node_of[r] == here;
    return n;
}

int32_t *tml_node_map(const int *world, int n)
{
    if (!node_of || !world)
        return NULL;
    int32_t *map = malloc((size_t)n * sizeof *map);
    int *first = malloc((size_t)world_size * sizeof *first); /* [node] lowest rank of comm there */
    for (int v = 0; map && first && v < world_size; v++)
        first[v] = -1;
    for (int r = 0; map && first && r < n; r++) {
        int v = node_of[world[r]];
        if (first[v] < 0)
            first[v] = r;
        map[r] = first[v];
    }
    free(first);
    if (!first) {
        free(map);
        return NULL;
    }
    return map;
}

void tml_nodes_finish(void)
{
    free(node_of);
    node_of = NULL;
}

int *tml_world_ranks(MPI_Comm comm, int *n, int *node_ranks)
{
    MPI_Group group, world;
    *n = 0;
    *node_ranks = 1;
    if (PMPI_Comm_size(comm, n) != MPI_SUCCESS || PMPI_Comm_group(comm, &group) != MPI_SUCCESS)
        return NULL;
    int *ranks = malloc((size_t)*n * sizeof *ranks), *world_ranks = NULL;
    int ok = ranks && (world_ranks = malloc((size_t)*n * sizeof *world_ranks)) &&
             PMPI_Comm_group(MPI_COMM_WORLD, &world) == MPI_SUCCESS;
    if (ok) {
        for (int r = 0; r < *n; r++)
            ranks[r] = r;
        ok = PMPI_Group_translate_ranks(group, *n, ranks, world, world_ranks) == MPI_SUCCESS;
        PMPI_Group_free(&world);
    }
    PMPI_Group_free(&group);
    free(ranks);
    int here = node_of ? node_of[tml_g.world_rank] : -1, local = 0;
    for (int r = 0; ok && r < *n; r++) {
        ok = world_ranks[r] >= 0 && world_ranks[r] < world_size; /* MPI_UNDEFINED: spawned */
        local += ok && node_of && node_of[world_ranks[r]] == here;
    }
    if (!ok) {
        free(world_ranks);
        return NULL; /* a process from elsewhere: counted apart from this node */
    }
    *node_ranks = local > 0 ? local : 1;
    return world_ranks;
}
