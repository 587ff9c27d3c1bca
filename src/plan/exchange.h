/* exchange.h: what the exchange builders (the allreduces ring.c,
 * recursive_doubling.c, rabenseifner.c; reduce_scatter_*.c, scan_*.c and
 * the others that write per-rank programs) share: writing the per-rank
 * programs one rank after the other, and the fold of a rank count that is
 * not a power of two (docs/ALGORITHMS_ALLREDUCE.md). */
#ifndef TRD_PLAN_EXCHANGE_H
#define TRD_PLAN_EXCHANGE_H

#include "plan/plan_internal.h"

/* Blocks [block, block + blocks) of the buffer. */
typedef struct trd_xrange {
    int32_t block, blocks;
} trd_xrange;

/* Writes the programs of ranks 0, 1, ..., n-1 in that order into a plan.
 * The first failure (out of memory) sticks: later steps are dropped and
 * trd_xb_end reports it, so builders need not check every step. */
typedef struct trd_xbuild {
    trd_plan *plan;
    trd_step_list list;
    size_t first;  /* where the current rank's program starts in list */
    trd_status st;
} trd_xbuild;

/* Checks that `steps` steps
 * (all ranks together) over `blocks` blocks fit in a plan the engine can
 * run, then sets plan->blocks and allocates plan->step_first. */
trd_status trd_xb_begin(trd_xbuild *x, trd_plan *plan, double blocks, double steps);
/* Starts the program of rank r (ranks in increasing order). */
void trd_xb_rank(trd_xbuild *x, int32_t r);
/* Appends a step to the current program and returns its index there (-1
 * once a push failed).  dep0, dep1: earlier steps of the program, or -1.
 * SEND reads slot 0; RECV writes `slot`; COMBINE is slot 0 = slot 1 (+)
 * slot 0 (LEFT) or slot 0 (+) slot 1 (RIGHT, clobbering slot 1). */
int32_t trd_xb_send(trd_xbuild *x, int32_t peer, trd_xrange r, int32_t dep0, int32_t dep1);
int32_t trd_xb_recv(trd_xbuild *x, int32_t peer, int32_t slot, trd_xrange r, int32_t dep0,
                    int32_t dep1);
int32_t trd_xb_combine(trd_xbuild *x, trd_side side, trd_xrange r, int32_t dep0, int32_t dep1);
/* The same with other slots: SEND reads `slot`; COMBINE is slot 0 = slot
 * src (+) slot 0 (LEFT) or slot 0 (+) slot src (RIGHT, clobbering src). */
int32_t trd_xb_send_slot(trd_xbuild *x, int32_t peer, int32_t slot, trd_xrange r, int32_t dep0,
                         int32_t dep1);
int32_t trd_xb_combine_from(trd_xbuild *x, trd_side side, int32_t src, trd_xrange r,
                            int32_t dep0, int32_t dep1);
/* The general forms: COMBINE is slot dst = slot src (+) slot dst (LEFT)
 * or slot dst (+) slot src (RIGHT, clobbering src); COPY is slot dst =
 * slot src. */
int32_t trd_xb_combine_into(trd_xbuild *x, trd_side side, int32_t dst, int32_t src,
                            trd_xrange r, int32_t dep0, int32_t dep1);
int32_t trd_xb_copy(trd_xbuild *x, int32_t dst, int32_t src, trd_xrange r, int32_t dep0,
                    int32_t dep1);
/* Hands the steps to the plan (plan->steps, step_first[n]), or frees them
 * and returns the failure. */
trd_status trd_xb_end(trd_xbuild *x);

/* Writes rank r's program; ctx is the builder's own (its fold, its
 * parameters). */
typedef void trd_xb_rank_fn(trd_xbuild *x, const void *ctx, int32_t r);
/* Writes segment j's program at rank r (j < params.segments). */
typedef void trd_xb_segment_fn(trd_xbuild *x, const void *ctx, int32_t r, int32_t j);
/* A whole plan of `steps` steps over `blocks` blocks (trd_xb_begin):
 * every rank's program in rank order, as `emit` writes it, then
 * trd_xb_end.  For p = 1 every program stays empty: a lone rank's buffer
 * is already the result of every collective. */
trd_status trd_xb_build_ranks(trd_plan *plan, double blocks, double steps, trd_xb_rank_fn *emit,
                              const void *ctx);
/* The same for a builder whose params.segments segments each run the
 * algorithm on their own, so that one travels while another is combined
 * (each builder's head): a rank's program is segment 0's, then segment
 * 1's, and so on. */
trd_status trd_xb_build_segments(trd_plan *plan, double blocks, double steps,
                                 trd_xb_segment_fn *emit, const void *ctx);

/* The fold of Thakur, Rabenseifner and Gropp (2005): of p ranks, the first
 * 2 rem (rem = p - p2, p2 the largest power of two <= p) pair up as
 * (2i, 2i+1); the even one hands its data to the odd one and waits, so p2
 * ranks take part, newrank i < rem being rank 2i + 1 (holding ranks 2i and
 * 2i + 1, in that order) and newrank i >= rem being rank i + rem: newranks
 * keep the order of the rank ranges they hold. */
typedef struct trd_fold {
    int32_t p, p2, rem, rounds; /* rounds = log2(p2) */
} trd_fold;

trd_fold trd_fold_make(int32_t p);
/* Newrank of rank r, or -1 for a rank folded out (an even rank < 2 rem). */
int32_t trd_fold_newrank(const trd_fold *f, int32_t r);
/* The rank of newrank nr. */
int32_t trd_fold_rank(const trd_fold *f, int32_t nr);
/* The program of a folded-out rank r for range `seg`: send it to r + 1,
 * then receive the result back into slot 0 once that SEND is done. */
void trd_fold_out(trd_xbuild *x, int32_t r, trd_xrange seg);
/* At rank r that takes part: if it holds a folded-out neighbour r - 1,
 * receive its `seg` into slot 1 and combine it on the left; returns that
 * COMBINE (-1 when r holds nobody).  Slot 1 of seg is read until it is
 * done, slot 0 of seg written. */
int32_t trd_fold_in(trd_xbuild *x, const trd_fold *f, int32_t r, trd_xrange seg);
/* At rank r that takes part: if it holds a folded-out neighbour, send it
 * the result of `seg` once dep0 and dep1 are done. */
void trd_fold_back(trd_xbuild *x, const trd_fold *f, int32_t r, trd_xrange seg, int32_t dep0,
                   int32_t dep1);

/* The ring allreduce of ring.c over p ranks of a plan (a group of them:
 * node_ring.c's leaders), as one rank's program.  Ring index i is rank
 * at[i] (NULL: rank i); the program being written is index me's, its ring
 * steps from program index base on; the buffer is p m chunks (block
 * j p + c is chunk c of segment j); segment j's slot 0 holds the rank's
 * own data once step ready[j] is done (NULL, or -1: from the start).
 * Scratch: slot 1. */
typedef struct trd_ring {
    int32_t p, m, me, base;
    const int32_t *at;
    const int32_t *ready;
} trd_ring;

/* Appends the ring's steps to the current program (none for p < 2). */
void trd_ring_emit(trd_xbuild *x, const trd_ring *g);
/* How many steps trd_ring_emit appends. */
double trd_ring_steps(int32_t p, int32_t m);
/* The step after which chunk c of segment j holds the ring's result at
 * index me (ready[j] when p < 2). */
int32_t trd_ring_final(const trd_ring *g, int32_t j, int32_t c);

#endif
