/* select.h: the selection layer - what it keeps with a communicator and
 * what its files share (select.c: "auto" and the public trd_reduce /
 * trd_allreduce; predict.c, profile.c, tune.c, calibrate*.c). */
#ifndef TRD_SELECT_SELECT_H
#define TRD_SELECT_SELECT_H

#include "runtime/comm.h"
#include "select/tune.h"

/* The profiles auto measured (trd_coll_opts.measure_model), one per
 * operator, the oldest replaced first. */
typedef struct trd_comm_profiles {
    uint64_t op_serial[TRD_COMM_PROFILES]; /* trd_op_serial; 0: a free slot */
    trd_profile profile[TRD_COMM_PROFILES];
    int32_t next;
    int32_t streams;  /* the node's curve, measured once (trd_comm_node_curve) */
    double stream_bw[TRD_STREAMS_MAX];
} trd_comm_profiles;

/* The last "auto" call's arguments, resolved for good: a call with the
 * same ones runs the same key (trd_comm_collective_keyed). */
typedef struct trd_select_memo {
    bool valid;
    trd_call_args args;
    trd_comm_key key;
    trd_call_sig sig;
    uint64_t built; /* the core's cache build key last ran with */
    bool other;     /* tuned auto kept the other path of long messages */
} trd_select_memo;

struct trd_select_state {
    trd_select_memo memo;
    trd_tune_table tune;        /* auto's timed choices (trd_coll_opts.tune) */
    trd_comm_profiles profiles; /* auto's measured models (profile.c) */
    struct trd_progress *progress; /* the started requests' queue (request.c) */
};

/* Ends the progress thread once the queue has run (request.c). */
void trd_progress_free(struct trd_progress *progress);

/* c's state, made on first use (freed with c); NULL when out of memory. */
struct trd_select_state *trd_select_state_of(trd_comm *c);

/* With opts->measure_model (and not reproducible): the communicator's
 * profile of op - measured now if it has none, a collective - applied to
 * a call of count elements, the flag cleared (profile.c). */
trd_status trd_comm_measured_model(trd_comm *c, const trd_op *op, int64_t count,
                                   trd_coll_opts *opts);

/* The key and plan of a call with these arguments (opts->algo names the
 * algorithm), checked as the call itself; *plan NULL for a dynamic
 * algorithm (src/select/predict.c). */
trd_status trd_comm_plan_call(trd_comm *c, int64_t count, const trd_op *op, int32_t root,
                              trd_collective coll, const trd_coll_opts *opts, trd_comm_key *key,
                              trd_plan **plan);

#endif
