/* homogeneous.h: evaluation of any reduction tree under the one-port
 * overlap model of canon-antoniu Sec. 3.1, with its homogeneous costs
 * (transfer d, combine c) or the heterogeneous ones of benoit Sec. 3.1
 * (d[i][j], c[i]). */
#ifndef TRD_MODEL_HOMOGENEOUS_H
#define TRD_MODEL_HOMOGENEOUS_H

#include <stdint.h>

#include "ir/tree.h"

/* The costs the evaluator charges, over a tree's positions: position p is
 * rank (p + root) mod n, the numbering of a commutative plan (number.c). */
typedef struct trd_cost_view {
    const double *d; /* n x n, d[i*n + j]: rank i sends to rank j; NULL: d0 */
    const double *c; /* per rank; NULL: c0 */
    double d0, c0;
    int32_t n, root;
} trd_cost_view;

static inline int32_t trd_view_rank(const trd_cost_view *v, int32_t pos)
{
    int32_t r = pos + v->root; /* root < n and pos < n: no overflow in 31 bits */
    return r >= v->n ? r - v->n : r;
}

/* Time of a transfer from position `from` to position `to`. */
static inline double trd_view_transfer(const trd_cost_view *v, int32_t from, int32_t to)
{
    if (!v->d)
        return v->d0;
    return v->d[(int64_t)trd_view_rank(v, from) * v->n + trd_view_rank(v, to)];
}

/* Time of a combine on position pos. */
static inline double trd_view_combine(const trd_cost_view *v, int32_t pos)
{
    return v->c ? v->c[trd_view_rank(v, pos)] : v->c0;
}

/* The homogeneous view: every transfer d, every combine c. */
static inline trd_cost_view trd_view_homogeneous(double d, double c)
{
    return (trd_cost_view){.d0 = d, .c0 = c};
}

/* Times of every transfer and combine of a tree, over its positions. */
typedef struct trd_timing {
    int32_t n;
    int32_t *order;      /* breadth-first order from the root: parents first */
    int32_t *first;      /* children of v: child[first[v] .. first[v+1]) */
    int32_t *child;      /* ... in the order they are received */
    double *ready;       /* when v's partial result is ready to be sent */
    double *send_start;  /* start of v's transfer to its parent; NaN at root */
    double *send_end;    /* its end (arrival); NaN at root */
    double *combine_start; /* per child[] entry: start of the combine of it */
    double *combine_end; /* per child[] entry: end of the combine of it */
    const double *release; /* the tree's release times (borrowed), or NULL */
    bool ordered;        /* the tree fixed the receive orders (tree->seq) */
    double makespan;     /* end of the root's last combine */
} trd_timing;

/* Evaluates `tree` under the homogeneous costs d, c: trd_evaluate_costs
 * with trd_view_homogeneous(d, c). */
trd_status trd_evaluate(const trd_tree *tree, double d, double c, trd_timing *out);
/* Evaluates `tree` under `costs`: a node sends once its combines are done
 * (and not before tree->release, if any); a receiver takes part in one
 * transfer at a time and receives its next input while combining the
 * previous one.  Inputs are received in tree->seq order when the tree has
 * one, else in the order their senders became ready (ties: smaller
 * position first).  Every transfer and combine starts as early as that
 * allows: Prop. 3's tight schedule (for homogeneous costs the ready order
 * is optimal).  Fails with TRD_EINVAL if `tree` is not a tree rooted at
 * position 0 or its seq does not number each node's inputs 0, 1, ... */
trd_status trd_evaluate_costs(const trd_tree *tree, const trd_cost_view *costs,
                              trd_timing *out);
void trd_timing_free(trd_timing *timing);

/* The time node v finishes combining its m inputs received in the order
 * inputs[0..m) whose partial results are ready at ready[input] (0 when
 * m = 0): input j is received from a_j = max(ready, a_{j-1} + its
 * predecessor's transfer) and combined by e_j = max(a_j + transfer,
 * e_{j-1}) + c(v).  The planners' evaluator of one node. */
double trd_node_finish(const trd_cost_view *costs, int32_t v, const int32_t *inputs,
                       int32_t m, const double *ready);

#endif
