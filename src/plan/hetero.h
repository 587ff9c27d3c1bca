/* hetero.h: what the planners for heterogeneous costs share
 * (hetero_greedy.c, hetero_local.c, hetero_exact.c).  They work over a
 * tree's positions (position 0 the root; costs through a trd_cost_view,
 * which rotates positions to ranks by the root) and give every node an
 * explicit receive order (trd_tree.seq), which the plan keeps. */
#ifndef TRD_PLAN_HETERO_H
#define TRD_PLAN_HETERO_H

#include "model/homogeneous.h"

/* A tree with its receive orders and its makespan under the costs. */
typedef struct trd_hetero_tree {
    int32_t *parent; /* n entries, parent[0] = -1 */
    int32_t *seq;    /* n entries: place among the parent's inputs (0 first) */
    double makespan;
} trd_hetero_tree;

/* hetero-greedy's tree for n positions under costs (hetero_greedy.c). */
trd_status trd_hetero_greedy_tree(const trd_cost_view *costs, int32_t n, trd_hetero_tree *out);

/* Improves `tree` (n positions, its makespan set) by moving inputs to
 * other parents and exchanging ranks, while the makespan drops; the
 * receive orders are then each node's better of two rules
 * (hetero_local.c).  Never makes it worse. */
trd_status trd_hetero_local_search(const trd_cost_view *costs, int32_t n, trd_hetero_tree *tree);

#endif
