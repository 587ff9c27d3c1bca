/* calibrate.h: the measurements shared by trd_comm_calibrate and
 * trd_comm_profile (src/select/calibrate.c, profile.c). */
#ifndef TRD_SELECT_CALIBRATE_H
#define TRD_SELECT_CALIBRATE_H

#include "select/select.h"

/* One-way times of a `bytes` message between ranks 0 and 1 when both
 * leave a barrier, the receiver's, timed several times each way: the
 * means of the two directions' lower quartiles (legs[0]) and medians
 * (legs[1]) (collective; on rank 0, 0 on the others and when p = 1). */
trd_status trd_calibrate_one_way(trd_comm *c, size_t bytes, double legs[2]);
/* The same between ranks 0 and peer (0 < peer < p). */
trd_status trd_calibrate_one_way_to(trd_comm *c, int32_t peer, size_t bytes, double legs[2]);
/* The same with a receive-and-combine of count elements of op at the
 * receiving end, run as the executor runs a RECV_COMBINE step: until the
 * message is combined into the receiver's accumulator. */
trd_status trd_calibrate_recv_combine(trd_comm *c, const trd_op *op, int64_t count,
                                      double legs[2]);
/* The time kept of legs on p ranks of which `parallelism` run at once
 * (trd_calibrate_parallelism).  Where ranks outnumber cores, the median:
 * a message then often waits for its receiver to get a core, and that
 * is the platform's.  Where every rank has a core, the lower quartile: a
 * slower leg is the host's doing (a rank's thread sharing a core a
 * moment, or woken from an idle one: a hundred times the message), and
 * after a phase of long waits the wire's spins may have shrunk
 * (threads_park.c) so that most legs of a calibration sleep: their median
 * then makes the latency many times too long, which their quartile does
 * far more seldom (docs/RUNTIME_INTERNALS.md, "Calibration"). */
double trd_calibrate_leg(const double legs[2], double parallelism, int32_t p);
/* trd_params.recv_combine_saving from a receive-and-combine's time (as
 * trd_calibrate_recv_combine) and, for the same message, the latency, the
 * size-dependent part of its plain transfer (`copy`) and its combine's
 * time: the share of `copy` that the receive-and-combine did not pay,
 * within [0, 1] (0 when copy is 0). */
double trd_calibrate_saving(double recv_combine, double latency, double copy, double combine);
/* Median time rank 0 spends per message when a burst of empty messages
 * from rank 1 is already waiting for it (collective; 0 on the other ranks
 * and when p = 1): what a rank pays per message, as opposed to the time a
 * message takes to arrive (trd_params.flight = latency minus this). */
trd_status trd_calibrate_gap(trd_comm *c, double *seconds);
/* Best of three combines of count elements of op on this rank, the ranks
 * taking turns (collective). */
trd_status trd_calibrate_combine(trd_comm *c, const trd_op *op, int64_t count,
                                 double *seconds);
/* How many of the p ranks run at once (collective, the same value on
 * every rank): p times a fixed integer loop's time alone over its time on
 * all ranks at once, within [1, p]; p when all at once takes less than
 * 1.5 times alone (every rank has a core: the simulator's assumption). */
trd_status trd_calibrate_parallelism(trd_comm *c, double *k);
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
