/* binomial_strategy.c: the binomial strategy of canon-antoniu Sec. 7.3:
 * Algorithm 1 run with min(d, c) set to 0, so it builds a binomial tree
 * whenever n is a power of two (Theorem 14), then evaluated with the true
 * costs.  Theorem 18: a (1 + min(d,c)/max(d,c))-approximation; makespan
 * <= ceil(log2 n) (d + c). */
#include "plan/algorithms.h"

trd_status trd_build_binomial_strategy(const trd_params *params, trd_tree *tree)
{
    double d = params->d, c = params->c;
    if (d <= c)
        d = 0.0;
    else
        c = 0.0;
    if (d == 0.0 && c == 0.0) /* any positive cost gives the same tree */
        c = 1.0;
    return trd_greedy_tree(tree->n, d, c, tree->n, tree->parent);
}
