/* fibonacci.c: Fibonacci-stat of benoit-canon-marchal Sec. 3.2.  FS_k is
 * FS_{k-1} on the first F(k+1) positions and FS_{k-2} on the next F(k)
 * ones, run in parallel; the root of FS_{k-2} then sends to the root of
 * FS_{k-1} during its last combine.  FS_0 and FS_-1 are single positions.
 * For n ranks, k is the smallest order with F(k+2) >= n and only the first n
 * positions are kept.  The shape is the Fibonacci tree of canon-antoniu
 * Def. 15; makespan d + (k-1) max(d, c) + c at most (Prop. 16), exact when
 * n = F(k+2).  O(n log n) (each position walks down k orders). */
#include "model/bounds.h"
#include "plan/algorithms.h"

static int32_t fs_parent(int64_t pos, int k)
{
    int64_t base = 0;
    while (k > 0) {
        int64_t left = trd_fibonacci(k + 1); /* size of FS_{k-1} */
        if (pos < left) {
            k -= 1;
        } else if (pos == left) {
            return (int32_t)base;
        } else {
            pos -= left;
            base += left;
            k -= 2;
        }
    }
    return -1; /* pos is the root of a single-position schedule */
}

trd_status trd_build_fibonacci(const trd_params *params, trd_tree *tree)
{
    (void)params;
    int k = trd_fibonacci_order(tree->n);
    for (int32_t i = 0; i < tree->n; i++)
        tree->parent[i] = i == 0 ? -1 : fs_parent(i, k);
    return TRD_OK;
}
