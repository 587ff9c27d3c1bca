/* fibonacci.c: Fibonacci-stat of benoit-canon-marchal Sec. 3.2.  FS_k is
 * FS_{k-1} on the first F(k+1) positions and FS_{k-2} on the next F(k)
 * ones, run in parallel; the root of FS_{k-2} then sends to the root of
 * FS_{k-1} during its last combine.  FS_0 and FS_-1 are single positions.
 * For n ranks, k is the smallest order with F(k+2) >= n and only the first n
 * positions are kept.  The shape is the Fibonacci tree of canon-antoniu
 * Def. 15; makespan d + (k-1) max(d, c) + c at most (Prop. 16), exact when
 * n = F(k+2).  O(n log n) (each position walks down k orders). */
#include "plan/algorithms.h"

/* F(0) = 0, F(1) = 1, ... ; F(46) > 2^31 bounds every order we need. */
static int64_t fib(int k)
{
    int64_t a = 0, b = 1;
    for (int i = 0; i < k; i++) {
        int64_t next = a + b;
        a = b;
        b = next;
    }
    return a;
}

/* Smallest order k >= 0 with F(k+2) >= n (k = 0 for n = 1). */
int trd_fibonacci_order(int64_t n)
{
    int k = 0;
    while (fib(k + 2) < n)
        k++;
    return k;
}

static int32_t fs_parent(int64_t pos, int k)
{
    int64_t base = 0;
    while (k > 0) {
        int64_t left = fib(k + 1); /* size of FS_{k-1} */
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
