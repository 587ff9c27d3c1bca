/* pipelined_fibonacci.c: the pipelined tree of reduce-parallel-pattern
 * Sec. 4: a binary Fibonacci tree (the subtrees of a node's two children
 * differ in height by one: T_k has T_{k-1} and T_{k-2} below its root, so
 * it holds F(k+2) - 1 nodes and has height about log_phi p) whose buffer is
 * cut into m segments, so every node receives segment k+1 from its
 * children while it combines and forwards segment k.  In the paper's BSP
 * model T(m) ~ (T_start + (n/m) T_byte)(h + 2m - 2), minimal for
 *   m = sqrt(n (h - 3) T_byte / (3 T_start)),  h = log_phi p;
 * for h <= 3 (p <= 4) that is one segment.  T_start and n T_byte as for
 * the pipeline (src/plan/pipeline.c).
 *
 * For any p the descendants of a node are split in the golden ratio
 * (exactly T_{k-1} and T_{k-2} when p = F(k+2) - 1). */
#include <math.h>

#include "plan/algorithms.h"

/* Positions base .. base+size-1 form one subtree rooted at base (pre-order:
 * root, left subtree, right subtree); the parent of its root is `up`.  The
 * size-1 descendants are split in the golden ratio, which gives exactly
 * T_{k-1} and T_{k-2} for a complete T_k. */
static void build(int32_t *parent, int32_t base, int32_t size, int32_t up)
{
    const double phi = (1.0 + sqrt(5.0)) / 2.0;
    while (size > 0) {
        parent[base] = up;
        int32_t left = (int32_t)lround((size - 1) / phi);
        build(parent, base + 1, left, base); /* depth is O(log_phi p) */
        up = base;
        base += 1 + left;
        size -= 1 + left;
    }
}

trd_status trd_build_fibonacci_binary(const trd_params *params, trd_tree *tree)
{
    (void)params;
    build(tree->parent, 0, tree->n, -1);
    return TRD_OK;
}

int64_t trd_segments_fibonacci(const trd_params *p)
{
    double work = trd_segment_work(p), start = trd_segment_start(p);
    double h = log((double)p->n) / log((1.0 + sqrt(5.0)) / 2.0);
    if (h <= 3.0 || work <= 0)
        return 1;
    if (start <= 0)
        return TRD_SEGMENTS_DEFAULT_MAX;
    return trd_segments_clamp(sqrt(work * (h - 3.0) / (3.0 * start)));
}
