/* calibrate.h: the measurements shared by trd_comm_calibrate and
 * trd_comm_profile (src/runtime/calibrate.c, profile.c). */
#ifndef TRD_RUNTIME_CALIBRATE_H
#define TRD_RUNTIME_CALIBRATE_H

#include "runtime/comm.h"

/* Median one-way time of a `bytes` message between ranks 0 and 1
 * (collective; 0 on the other ranks and when p = 1). */
trd_status trd_calibrate_one_way(trd_comm *c, size_t bytes, double *seconds);
/* Median time rank 0 spends per message when a burst of empty messages
 * from rank 1 is already waiting for it (collective; 0 on the other ranks
 * and when p = 1): what a rank pays per message, as opposed to the time a
 * message takes to arrive (trd_params.flight = latency minus this). */
trd_status trd_calibrate_gap(trd_comm *c, double *seconds);
/* Best of three combines of count elements of op on this rank, the ranks
 * taking turns (collective). */
trd_status trd_calibrate_combine(trd_comm *c, const trd_op *op, int64_t count,
                                 double *seconds);
/* How many of the p ranks work at full speed at once (collective, the
 * same value on every rank): p when a fixed integer loop runs on all ranks
 * at once in less than 1.5 times its time alone (every rank has a core:
 * the simulator's assumption); otherwise p times a combine of count
 * elements of op alone over its time when every rank combines at once,
 * within [1, p]. */
trd_status trd_calibrate_parallelism(trd_comm *c, const trd_op *op, int64_t count, double *k);
/* The aggregate memory bandwidth of k ranks streaming at once into
 * bw[k - 1] (bytes per second), k = 1 .. *streams = min(p, cores),
 * cleaned (trd_node_clean_curve); the same on every rank (collective).
 * *streams = 0 when a pass was too short for the clock. */
trd_status trd_calibrate_streams(trd_comm *c, double *bw, int32_t *streams);
/* The communicator's curve (c->profiles.stream_bw), measured by
 * trd_calibrate_streams the first time (collective): the node does not
 * change with the operator or the call. */
trd_status trd_comm_node_curve(trd_comm *c);
/* The median of v[0..n) (upper median for even n; sorts v). */
double trd_calibrate_median(double *v, int n);

#endif
