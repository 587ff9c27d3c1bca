/* contention.h: the time a plan loses on a node whose ranks' memory
 * streams share one bus (contention.c). */
#ifndef TRD_SELECT_CONTENTION_H
#define TRD_SELECT_CONTENTION_H

#include "treduce/treduce.h"

/* Seconds to add to the makespan of plan (under its own params; the
 * buffer `bytes` long) for o->stream_bw at o->parallelism ranks at once;
 * 0 when o models no curve or the plan has heterogeneous costs. */
double trd_contention_plan(const trd_plan *plan, double makespan, double bytes,
                           const trd_coll_opts *o);
/* The same for a dynamic algorithm under p: any tree of n - 1 transfers
 * and combines of the whole buffer. */
double trd_contention_tree(const trd_params *p, double makespan, double bytes,
                           const trd_coll_opts *o);

#endif
