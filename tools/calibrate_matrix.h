/* calibrate_matrix.h: `treduce calibrate --matrix` (tools/calibrate_matrix.c):
 * every ordered pair of ranks measured (trd_comm_profile_pairs) and
 * written as a heterogeneous cost file and as a platform JSON. */
#ifndef TRD_TOOLS_CALIBRATE_MATRIX_H
#define TRD_TOOLS_CALIBRATE_MATRIX_H

#include "run.h"

typedef struct cli_matrix_args {
    bool matrix;              /* --matrix given */
    int64_t count;            /* elements of the message the cost file is for */
    const char *costs_out;    /* --costs-out FILE, or NULL */
    const char *platform_out; /* --platform-out FILE, or NULL */
    double unit_bytes;        /* bytes per unit of message size of the platform */
} cli_matrix_args;

/* Defaults: count 131072, unit from TRD_TESTBED_UNIT_BYTES (set by
 * `treduce testbed run`) or 1e6. */
void cli_matrix_args_init(cli_matrix_args *m);
/* The measurement on `wire`, a->wire's (a->p threads, or a launched
 * wire's job), and the report on rank 0: an exit status. */
int cli_calibrate_matrix(const cli_run_args *a, const trd_wire_info *wire,
                         const cli_matrix_args *m);

#endif
