/* fibonacci_strategy.c: the Fibonacci strategy of canon-antoniu Sec. 7.3:
 * Algorithm 1 run as if d = c, so it builds a Fibonacci tree whenever n is
 * a Fibonacci number (Theorem 17), then evaluated with the true costs.
 * Theorem 19: a 2-approximation; makespan <= 2 ceil(log2 n) max(d, c). */
#include "plan/algorithms.h"

trd_status trd_build_fibonacci_strategy(const trd_params *params, trd_tree *tree)
{
    (void)params; /* only d = c matters, and its scale does not */
    return trd_greedy_tree(tree->n, 1.0, 1.0, tree->n, tree->parent);
}
