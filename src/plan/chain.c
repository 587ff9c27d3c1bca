/* chain.c: the chain (linear) reduction: every position sends to its left
 * neighbour, which combines it with its own value and forwards the result as
 * soon as it is ready.  Makespan exactly (n - 1)(d + c): no overlap is
 * possible since every node has one input.  It is the shape that the
 * segmented pipeline of reduce-parallel-pattern Sec. 3 cuts into blocks. */
#include "plan/algorithms.h"

trd_status trd_build_chain(const trd_params *params, trd_tree *tree)
{
    (void)params;
    for (int32_t i = 0; i < tree->n; i++)
        tree->parent[i] = i - 1;
    return TRD_OK;
}
