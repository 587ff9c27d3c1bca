/* node.h: the memory of one node as the cost model sees it: the aggregate
 * bandwidth B(k) of k concurrent streams (trd_profile.stream_bw), measured
 * for k = 1 .. streams, and what it costs a plan whose transfers and
 * combines stream at once (src/select/contention.c). */
#ifndef TRD_MODEL_NODE_H
#define TRD_MODEL_NODE_H

#include "treduce/treduce.h"

/* Makes a measured curve bw[0..n) (bw[k-1] = B(k), bytes per second)
 * a model's: non-decreasing (B(k) = max(B(k), B(k-1)): one more stream
 * never slows the others' sum down, so a dip is noise) and bounded by k
 * streams each as fast as one alone (B(k) <= k B(1): a higher value is
 * one stream measured slow).  false, leaving bw, when a value is not
 * finite and > 0. */
bool trd_node_clean_curve(double *bw, int32_t n);
/* Whether bw[0..n) is such a curve (n = 0: none, valid). */
bool trd_node_curve_valid(const double *bw, int32_t n);
/* B(k) for a real k >= 0: k B(1) below one stream, linear between the
 * measured points, B(n) beyond them (the node saturated: more streams
 * than measured share the same bus). */
double trd_node_bandwidth(const double *bw, int32_t n, double k);
/* How much longer a stretch of time runs when its transfers and combines
 * demand k streams at once (each at one stream's speed alone) but only
 * `runnable` of them run at a time (0: all): the demand, capped at the
 * runnable, takes k B(1) / B(k) of the time it would alone, and never
 * less (1 for k <= 1). */
double trd_node_slowdown(const double *bw, int32_t n, double k, double runnable);

#endif
