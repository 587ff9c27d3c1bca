/* number.h: mapping a planner's positions to ranks. */
#ifndef TRD_PLAN_NUMBER_H
#define TRD_PLAN_NUMBER_H

#include "model/homogeneous.h"

/* Fills rank[pos] for every position of an evaluated tree.  Commutative:
 * rank = (pos + root) mod n.  Non-commutative: an interval numbering
 * (canon-antoniu Sec. 4.1, machines may be permuted) in which every subtree
 * covers a contiguous rank range and every node receives its inputs in the
 * order they join its range, so each combine joins adjacent intervals; the
 * root lands on rank `root`.  TRD_EUNSUPPORTED when no such numbering puts
 * the root at `root` (the root's subtree sizes cannot sum to it). */
trd_status trd_number_ranks(const trd_timing *timing, int64_t root,
                            bool noncommutative, int32_t *rank);

#endif
