/* homogeneous.h: evaluation of any reduction tree under the homogeneous
 * one-port model of canon-antoniu Sec. 3.1 (transfer d, combine c). */
#ifndef TRD_MODEL_HOMOGENEOUS_H
#define TRD_MODEL_HOMOGENEOUS_H

#include <stdint.h>

#include "plan/tree.h"

/* Times of every transfer and combine of a tree, over its positions. */
typedef struct trd_timing {
    int32_t n;
    int32_t *order;      /* breadth-first order from the root: parents first */
    int32_t *first;      /* children of v: child[first[v] .. first[v+1]) */
    int32_t *child;      /* ... in the order they are received */
    double *ready;       /* when v's partial result is ready to be sent */
    double *send_start;  /* start of v's transfer to its parent; NaN at root */
    double *combine_end; /* per child[] entry: end of the combine of it */
    const double *release; /* the tree's release times (borrowed), or NULL */
    double makespan;     /* end of the root's last combine */
} trd_timing;

/* Evaluates `tree`: a node sends once its combines are done (and not before
 * tree->release, if any); a receiver takes part in one transfer at a time and
 * serves waiting senders in the order they became ready (ties: smaller
 * position first); it receives its next input while combining the previous
 * one.  This is Prop. 3's tight schedule.  Fails with TRD_EINVAL if `tree`
 * is not a tree rooted at position 0. */
trd_status trd_evaluate(const trd_tree *tree, double d, double c, trd_timing *out);
void trd_timing_free(trd_timing *timing);

#endif
