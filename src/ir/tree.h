/* tree.h: the internal reduction tree every planner builds.
 *
 * A planner builds its tree over *positions* 0..n-1 with position 0 the
 * root (the sink of canon-antoniu); plan.c later maps positions to ranks
 * (rotation for --root, interval numbering for --noncommutative). */
#ifndef TRD_IR_TREE_H
#define TRD_IR_TREE_H

#include <stdint.h>

#include "treduce/treduce.h"

typedef struct trd_tree {
    int32_t n;
    int32_t *parent;  /* parent[0] = -1; every other entry in [0, n) */
    double *release;  /* NULL, or per position the earliest time its transfer
                         may start (Alg. 2 delays transfers on purpose) */
    int32_t *seq;     /* NULL: a node receives its inputs in the order they
                         become ready; else seq[pos] is pos's place among its
                         parent's inputs (0 first), an order the plan then
                         keeps (each RECV waits for the one before it) */
} trd_tree;

/* A planner: fills tree->parent (already allocated for tree->n entries)
 * and, if it needs one, allocates tree->release with trd_tree_add_release. */
typedef trd_status (*trd_build_fn)(const trd_params *params, trd_tree *tree);

/* Allocates tree->release, zero-filled. */
trd_status trd_tree_add_release(trd_tree *tree);
/* Allocates tree->seq (uninitialised). */
trd_status trd_tree_add_seq(trd_tree *tree);

/* The greedy core shared by Algorithms 1 and 3 (src/plan/greedy.c): builds
 * the tree of Algorithm 3 with at most `reducers` receiving positions;
 * reducers >= n gives Algorithm 1. */
trd_status trd_greedy_tree(int32_t n, double d, double c, int64_t reducers,
                           int32_t *parent);

/* The planners and the pipelined algorithms' segment choosers are declared
 * from registry.def (plan/algorithms.h). */
/* What one pipeline step pays whatever its size (T_start: latency +
 * combine_fixed) and the size-dependent work of a step on the whole buffer
 * (n T_byte: (d - latency) + (c - combine_fixed)), reduce-parallel-pattern
 * Sec. 3. */
double trd_segment_start(const trd_params *params);
double trd_segment_work(const trd_params *params);
/* The most segments a chooser picks: beyond, a segment's fixed costs
 * dominate on any real machine. */
#define TRD_SEGMENTS_CHOSEN_MAX 256
/* round(m) within 1 .. TRD_SEGMENTS_CHOSEN_MAX (NaN and m < 1 give 1). */
int64_t trd_segments_clamp(double m);
/* What a chooser picks when messages cost no latency: finer would only
 * grow the schedule. */
#define TRD_SEGMENTS_DEFAULT_MAX 64

#endif
