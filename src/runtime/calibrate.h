/* calibrate.h: the measurements shared by trd_comm_calibrate and
 * trd_comm_profile (src/runtime/calibrate.c, profile.c). */
#ifndef TRD_RUNTIME_CALIBRATE_H
#define TRD_RUNTIME_CALIBRATE_H

#include "runtime/comm.h"

/* Median one-way time of a `bytes` message between ranks 0 and 1
 * (collective; 0 on the other ranks and when p = 1). */
trd_status trd_calibrate_one_way(trd_comm *c, size_t bytes, double *seconds);
/* Best of three combines of count elements of op on this rank, the ranks
 * taking turns (collective). */
trd_status trd_calibrate_combine(trd_comm *c, const trd_op *op, int64_t count,
                                 double *seconds);
/* out[i] = the largest in[i] over all ranks (collective, our allreduce),
 * so that every rank builds the same plans from the same model. */
trd_status trd_calibrate_agree(trd_comm *c, const double *in, double *out, int n);

#endif
