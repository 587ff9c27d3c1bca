/* binomial.c: Binomial-stat of benoit-canon-marchal Sec. 3.2: in round
 * k = 1..ceil(log2 n), rank i*2^k + 2^(k-1) sends to rank i*2^k, i.e. every
 * position sends to itself with its lowest set bit cleared.  Rounds are not
 * synchronised: a transfer starts as soon as both ends are ready.  Each
 * subtree covers a contiguous position range, so with position order it
 * honours non-commutative operators.  Makespan ceil(log2 n) (d + c) at most
 * (Prop. 13: exactly k(d + c) on 2^k ranks). */
#include "plan/algorithms.h"

trd_status trd_build_binomial(const trd_params *params, trd_tree *tree)
{
    (void)params;
    tree->parent[0] = -1;
    for (int32_t i = 1; i < tree->n; i++)
        tree->parent[i] = i & (i - 1);
    return TRD_OK;
}
