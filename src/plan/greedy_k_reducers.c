/* greedy_k_reducers.c: Algorithm 3 of canon-antoniu (Sec. 6.2): the optimal
 * tree when at most K machines may receive and combine (MapReduce's fixed
 * number of reducers); the other machines only send.
 *
 * It is Algorithm 1 with the argmin of line 7 restricted to the first K
 * visited machines, so it runs trd_greedy_tree with that limit (Theorem 9:
 * optimal).  Makespan <= (floor(log2 K) + 1 + ceil((n - 2^(floor(log2 K)+1))
 * / K)) (d + c), Corollary 11 in its corrected form (docs/MODEL.md). */
#include "plan/algorithms.h"

trd_status trd_build_greedy_k_reducers(const trd_params *params, trd_tree *tree)
{
    return trd_greedy_tree(tree->n, params->d, params->c, params->K, tree->parent);
}
