/* bounds.h: closed-form bounds of canon-antoniu and benoit-canon-marchal on
 * reduction makespans under the homogeneous model (d, c). */
#ifndef TRD_MODEL_BOUNDS_H
#define TRD_MODEL_BOUNDS_H

#include "treduce/treduce.h"

/* ceil(log2 n) for n >= 1. */
int trd_ceil_log2(int64_t n);
/* The Fibonacci number F(k): F(0) = 0, F(1) = 1 (k <= 92). */
int64_t trd_fibonacci(int k);
/* Smallest order k >= 0 with F(k+2) >= n (k = 0 for n = 1): the order of
 * the Fibonacci tree of n ranks (src/plan/fibonacci.c, Prop. 16). */
int trd_fibonacci_order(int64_t n);

/* Lemma 5: every schedule takes >= ceil(log2 n) max(d, c). */
double trd_bound_lemma5(const trd_params *p);

/* An upper bound on one algorithm's makespan; see each definition. */
typedef double (*trd_bound_fn)(const trd_params *p);
double trd_bound_prop6(const trd_params *p);          /* ceil(log2 n)(d+c) */
double trd_bound_prop8_corrected(const trd_params *p);/* K-limited, docs/MODEL.md */
double trd_bound_theorem19(const trd_params *p);      /* 2 x Lemma 5 */
double trd_bound_prop16(const trd_params *p);         /* Fibonacci tree */
double trd_bound_chain(const trd_params *p);          /* (n-1)(d+c) */
double trd_bound_flat(const trd_params *p);           /* d+(n-2)max+c */

#endif
