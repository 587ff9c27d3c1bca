/* flat.c: the flat tree: every position sends straight to the root, which
 * receives one input at a time (one-port) while combining the previous one
 * (canon-antoniu Sec. 3.1).  Makespan exactly d + (n - 2) max(d, c) + c
 * for n >= 2: good only when n is tiny or d is negligible. */
#include "plan/algorithms.h"

trd_status trd_build_flat(const trd_params *params, trd_tree *tree)
{
    (void)params;
    tree->parent[0] = -1;
    for (int32_t i = 1; i < tree->n; i++)
        tree->parent[i] = 0;
    return TRD_OK;
}
