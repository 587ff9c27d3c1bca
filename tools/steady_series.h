/* steady_series.h: what the real runs of a series of reduces share -
 * tools/steady_series.c (threads, one per node) and
 * tools/steady_series_mpi.c (MPI, one rank per node, e.g. under
 * `treduce testbed run --all-nodes`). */
#ifndef TRD_TOOLS_STEADY_SERIES_H
#define TRD_TOOLS_STEADY_SERIES_H

#include <jansson.h>

#include "cli.h"
#include "treduce/steady_series.h"

/* Node `node`'s slot 0 for a run of count elements: participant k's
 * matrices where node is participant k's, zeros on a node that takes no
 * part.  NULL when out of memory. */
trd_matrix2x2 *steady_series_inputs(const trd_steady *st, int32_t node, int64_t count);
/* Operations (blocks of per_op elements) whose result in got differs from
 * the fold v_0 (+) v_1 (+) ... in participant order; -1 when the fold
 * cannot be computed. */
int64_t steady_series_wrong(const trd_steady *st, const trd_op *op, const trd_matrix2x2 *got,
                            int64_t ops, int64_t per_op);

/* The MPI run's units: an operation's message is unit_bytes (rounded to
 * whole 16-byte matrices; 0: one matrix), the platform's time unit lasts
 * time_unit seconds; both default to the testbed's (TRD_TESTBED_UNIT_BYTES,
 * TRD_TESTBED_TIME_UNIT, set by `treduce testbed run`). */
typedef struct steady_mpi_units {
    double unit_bytes, time_unit;
    bool known; /* given or from a testbed: TP converts to operations per second */
} steady_mpi_units;
void steady_mpi_units_init(steady_mpi_units *u);

/* MPI_Init and this process's communicator over the launched wire (the
 * job's ranks; its deadline 120 s); NULL when built without MPI or when it
 * cannot be made (said on stderr).  steady_mpi_end frees it, MPI_Finalize. */
trd_comm *steady_mpi_begin(const trd_wire_info *wire);
void steady_mpi_end(trd_comm *comm);
/* On ranks other than 0: mute (true) sends standard output and error to
 * /dev/null - every rank solves the same LP and would say the same -, and
 * false gives standard error back for the run's own messages. */
void steady_mpi_mute(int rank, bool mute);
/* `treduce steady --run OPS --wire mpi`: every rank has solved st;
 * rank i of comm runs node i's program, the target checks every result,
 * rank 0 reports (json non-NULL: under "run").  An exit status. */
int steady_series_run_mpi(trd_comm *comm, const trd_platform *pf, const trd_steady *st,
                          int64_t ops, const steady_mpi_units *u, json_t *json);

#endif
