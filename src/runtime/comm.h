/* comm.h: the layout of trd_comm, shared by comm.c (the calls),
 * check.c (their argument checks) and comm_mpi.c. */
#ifndef TRD_RUNTIME_COMM_H
#define TRD_RUNTIME_COMM_H

#include "engine/engine.h"
#include "runtime/exec.h"
#include "runtime/tune.h"
#include "wire/wire.h"

/* What a plan depends on: the same key gives the same plan on every rank. */
typedef struct trd_comm_key {
    size_t algo;      /* registry index */
    trd_params params;
    double parallelism; /* auto's choice depends on it */
    int64_t count;
    size_t elem;
    bool reproducible; /* auto's candidates depend on it */
    uint64_t costs_version; /* params.costs' (trd_costs_version): a plan for
                               costs loaded again is not reused */
} trd_comm_key;

typedef struct trd_comm_cache {
    bool valid;
    trd_comm_key key;
    trd_plan *plan;       /* static algorithms */
    trd_policy policy;    /* dynamic ones: this rank's copy of the state */
    trd_policy shared;    /* ...as the engine sees it: through the wire */
    trd_engine *engine;
    int32_t nslots;       /* this rank's slots, slot 0 included */
    unsigned char **slots;
    uint8_t *fresh;       /* trd_exec.fresh: one per block */
    trd_step_run *run;    /* trd_exec.run: one per step of this rank's program */
    bool keep_input;      /* the program sends its input (SEND_INPUT) and writes
                             slot 0: an in-place call keeps a copy apart */
    unsigned char *input_copy; /* that copy (count elements), made lazily */
} trd_comm_cache;

/* The last call's arguments but its buffers, once checked (and, for
 * "auto", resolved for good): a call with the same ones takes their key
 * and checks only its buffers.  A one-double allreduce at np 2 spent a
 * fifth of its time on the checks (docs/RUNTIME.md). */
typedef struct trd_comm_memo {
    bool valid;
    trd_tune_key args;
    const char *algo; /* the name asked for: "auto" or the registry's own */
    trd_comm_key key;
    bool other;       /* tuned auto kept the other path (trd_comm_long_path) */
    bool cached;      /* trd_comm_cache holds key's plan */
    trd_call_sig sig; /* key's signature (trd_comm_sign), seq aside */
} trd_comm_memo;

/* The profiles auto measured (trd_coll_opts.measure_model), one per
 * operator, the oldest replaced first. */
typedef struct trd_comm_profiles {
    uint64_t op_serial[TRD_COMM_PROFILES]; /* trd_op_serial; 0: a free slot */
    trd_profile profile[TRD_COMM_PROFILES];
    int32_t next;
    int32_t streams;  /* the node's curve, measured once (trd_comm_node_curve) */
    double stream_bw[TRD_STREAMS_MAX];
} trd_comm_profiles;

struct trd_comm {
    trd_wire wire;
    double timeout_s;
    bool dead;            /* test hook (test_hooks.h) */
    double profile_timeout_s; /* trd_comm_profile's deadline once all are in
                            (TRD_PROFILE_TIMEOUT; a test hook lowers it) */
    int64_t calls;        /* collective calls so far: names a dynamic call */
    trd_call_sig sig;     /* the current call's, as its messages carry it
                             (the wire reads it: wire.h set_call) */
    trd_status status;    /* the wire's status of the last failed decision */
    trd_comm_cache cache;
    trd_comm_memo memo;
    trd_tune_table tune;     /* auto's timed choices (trd_coll_opts.tune) */
    trd_comm_profiles profiles; /* auto's measured models (profile.c) */
    unsigned char *scratch;
    size_t scratch_size;
    trd_exec exec;
    bool in_call;        /* a collective runs (trd_comm_collective, trd_comm_run_plan) */
    trd_exec_log *log;   /* test hook: each call's completed steps (trd_exec_log) */
};

/* Whether a call of `bytes` per rank may send messages longer than the
 * rings' default limit on a communicator whose wire measured their path
 * (an MPI wire on one node, wire/mpi_wire.h), so that tuned auto also
 * times its first candidate the other way (tune.c). */
bool trd_comm_long_choice(const trd_comm *c, size_t bytes);
/* Long messages from now on take the path the wire's probe kept (other
 * false) or the other one.  Every rank of a call sets the same before it,
 * so both ends of each message agree (a no-op without a probe). */
trd_status trd_comm_long_path(trd_comm *c, bool other);

/* With opts->measure_model (and not reproducible): the communicator's
 * profile of op - measured now if it has none, a collective - applied to
 * a call of count elements, the flag cleared (profile.c). */
trd_status trd_comm_measured_model(trd_comm *c, const trd_op *op, int64_t count,
                                   trd_coll_opts *opts);

/* A communicator over wire (comm.c): its calls' signature bound to it. */
trd_comm *trd_comm_new(trd_wire wire, double timeout_s);

/* TRD_OK, or the failure that failed the communicator (comm_state.c):
 * the first thing every call that communicates checks. */
static inline trd_status trd_comm_usable(const trd_comm *c)
{
    return c->wire.failed(c->wire.ctx);
}
/* st (not TRD_OK: returned unchanged) failed a call that had begun to
 * communicate: the communicator becomes failed (the wire tells the peers
 * and takes back this rank's sends and receives, wire.h abort), keeping
 * st and its message.  TRD_OK passes through. */
trd_status trd_comm_fail(trd_comm *c, trd_status st);
/* The signature of a call of algorithm algo with key and op, seq 0. */
void trd_comm_sign(const char *algo, const trd_comm_key *key, const trd_op *op,
                   trd_call_sig *sig);

/* The checks of a collective call's arguments that hold for every
 * algorithm (src/runtime/check.c): "auto" is checked by them alone before
 * it measures or ranks anything. */
trd_status trd_comm_check_args(const trd_comm *c, const void *sendbuf, const void *recvbuf,
                               int64_t count, const trd_op *op, int32_t root, bool allreduce,
                               const trd_coll_opts *opts);
/* The algorithm's own checks (opts->algo: a registered name) and the plan
 * key of arguments that passed trd_comm_check_args. */
trd_status trd_comm_key_for(const trd_comm *c, int64_t count, const trd_op *op, int32_t root,
                            bool allreduce, const trd_coll_opts *opts, trd_comm_key *key);
/* Both, and the result buffer of this rank (recvbuf where the caller
 * gets the result, else NULL: scratch). */
trd_status trd_comm_check(const trd_comm *c, const void *sendbuf, void *recvbuf, int64_t count,
                          const trd_op *op, int32_t root, bool allreduce,
                          const trd_coll_opts *opts, trd_comm_key *key, void **acc);

/* The checks of the buffers alone (and *acc), for arguments that gave key. */
trd_status trd_comm_check_buffers(const trd_comm *c, const void *sendbuf, void *recvbuf,
                                  const trd_comm_key *key, void **acc);

/* The plan of a call (the same on every rank). */
trd_status trd_comm_plan(const trd_comm_key *key, trd_plan **out);
/* The key and plan of a call with these arguments (opts->algo names the
 * algorithm), checked as the call itself; *plan NULL for a dynamic
 * algorithm (src/runtime/predict.c). */
trd_status trd_comm_plan_call(trd_comm *c, int64_t count, const trd_op *op, int32_t root,
                              bool allreduce, const trd_coll_opts *opts, trd_comm_key *key,
                              trd_plan **plan);

/* The selection layer (src/runtime/select.c): "auto" resolved for a call
 * whose arguments passed trd_comm_check_args - opts->algo then names a
 * registered algorithm, the measured model applied to *opts; *timed: the
 * tuning entry this call is timed for (or NULL), *other: its long
 * messages take the other path.  Never runs a public collective. */
trd_status trd_comm_select(trd_comm *c, const trd_tune_key *args, trd_coll_opts *opts,
                           trd_tune_entry **timed, bool *other);

/* trd_reduce and trd_allreduce: the collective core, with "auto" resolved
 * by trd_comm_select first.  Refuses (TRD_EINVAL) a call made while
 * another collective runs on the same communicator: no layer of the
 * library re-enters one (an operator that calls a collective on its own
 * communicator gets the error too). */
trd_status trd_comm_collective(trd_comm *c, const void *sendbuf, void *recvbuf, int64_t count,
                               const trd_op *op, int32_t root, bool allreduce,
                               const trd_coll_opts *opts);

#endif
