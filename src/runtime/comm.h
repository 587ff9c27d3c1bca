/* comm.h: the collective core - the layout of trd_comm, shared by comm.c
 * (the calls), check.c (their argument checks), comm_state.c and the
 * wires' constructors; and the core's entry points for the layer above
 * it (src/select/: "auto", profiles, tuning), which runs one given
 * algorithm and knows nothing of how it was chosen. */
#ifndef TRD_RUNTIME_COMM_H
#define TRD_RUNTIME_COMM_H

#include "engine/engine.h"
#include "runtime/comm_shared.h"
#include "runtime/exec.h"
#include "wire/wire.h"

/* A call's arguments but its buffers: the operator by identity (and its
 * serial, so another operator at the same address is another), the
 * options by value (algo aside), the costs by version (call_args.c). */
typedef struct trd_call_args {
    const trd_op *op;
    uint64_t op_serial; /* trd_op_serial */
    int64_t count;
    int32_t root;       /* 0 but for a reduce */
    trd_collective coll;
    trd_coll_opts opts; /* algo NULL */
    uint64_t costs_version; /* of opts.costs when the args were taken */
} trd_call_args;
trd_call_args trd_call_args_of(const trd_op *op, int64_t count, int32_t root, trd_collective coll,
                               const trd_coll_opts *opts);
/* Whether a and b are the same arguments. */
bool trd_call_args_same(const trd_call_args *a, const trd_call_args *b);
/* Whether k holds these arguments (not taken). */
bool trd_call_args_match(const trd_call_args *k, const trd_op *op, int64_t count, int32_t root,
                         trd_collective coll, const trd_coll_opts *opts);

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
    uint64_t parts;   /* a reduce-scatter's counts per rank (trd_comm.parts):
                         their hash, in the call's signature; 0: equal */
} trd_comm_key;

typedef struct trd_comm_cache {
    bool valid;
    trd_comm_key key;
    trd_shared_call *shared; /* plan or policy and engine, one per group of ranks
                                (comm_shared.h); NULL for trd_comm_run_plan's */
    const trd_plan *plan;  /* static algorithms: shared's, or the caller's */
    trd_policy *policy;    /* dynamic ones: the state decisions share */
    trd_engine *engine;    /* shared's, or trd_comm_run_plan's own */
    int32_t nslots;       /* this rank's slots, slot 0 included */
    unsigned char **slots;
    uint8_t *fresh;       /* trd_exec.fresh: one per block */
    trd_step_run *run;    /* trd_exec.run: one per step of this rank's program */
    bool keep_input;      /* the program sends its input (SEND_INPUT) and writes
                             slot 0: an in-place call keeps a copy apart */
    unsigned char *input_copy; /* that copy (count elements), made lazily */
} trd_comm_cache;

/* The last call's arguments but its buffers, once checked: a call with
 * the same ones (and the same algorithm name) takes their key and checks
 * only its buffers: the checks were a sizeable part of a one-double
 * allreduce (docs/RUNTIME_INTERNALS.md, "The call's path"). */
typedef struct trd_comm_memo {
    bool valid;
    trd_call_args args;
    const char *algo; /* the registry's name */
    trd_comm_key key;
    uint64_t built;   /* the cache's build key last ran with (trd_comm.built) */
    trd_call_sig sig; /* key's signature (trd_comm_sign), seq aside */
} trd_comm_memo;

/* What the layer above the core keeps with a communicator (the selection
 * layer's tables: src/select/select.h), opaque here; freed with it. */
struct trd_select_state;

/* Test hooks (test_hooks.h): on no communicator but a test's. */
typedef struct trd_comm_test {
    bool dead;           /* its collective calls refuse, as if it had died */
    double profile_timeout_s; /* trd_comm_profile's deadline once all are in */
    trd_exec_log *log;   /* each call's completed steps (trd_exec_log) */
} trd_comm_test;

struct trd_comm {
    trd_wire wire;
    double timeout_s;
    int64_t calls;        /* collective calls so far: names a dynamic call */
    trd_call_sig sig;     /* the current call's, as its messages carry it
                             (the wire reads it: wire.h set_call) */
    trd_status status;    /* the wire's status of the last failed decision */
    trd_comm_cache cache;
    uint64_t built;       /* the cache's builds so far (a key's plan laid out) */
    trd_comm_memo memo;
    unsigned char *scratch;
    size_t scratch_size;
    trd_exec exec;
    bool in_call;         /* a collective runs (trd_comm_enter) */
    /* A reduce-scatter of uneven counts (trd_comm_set_parts): the count of
     * each rank's part, for the call's duration (NULL: p equal parts), its
     * hash, and the bounds of the plan's blocks in elements (blocks + 1). */
    const int64_t *parts;
    uint64_t parts_hash;
    int64_t *bounds;
    int32_t *node_of;     /* the node of each rank (trd_comm_set_nodes), NULL:
                             none given; every plan's params.node_of */
    struct trd_select_state *select; /* the layer above's; NULL until it needs one */
    void (*select_free)(struct trd_select_state *);
    trd_comm_test *test;  /* NULL but in tests (test_hooks.h) */
};

/* Whether a call of `bytes` per rank may send long messages that have two
 * paths on c's wire (wire.h long_choice), so that tuned auto also times
 * its first candidate the other way; and those messages from now on take
 * the path the wire kept (other false) or the other one (a no-op on a
 * wire with one path). */
bool trd_comm_long_choice(const trd_comm *c, size_t bytes);
trd_status trd_comm_long_path(trd_comm *c, bool other);

/* The deadline of trd_comm_profile once every rank is in. */
double trd_comm_profile_timeout(const trd_comm *c);

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
                               int64_t count, const trd_op *op, int32_t root, trd_collective coll,
                               const trd_coll_opts *opts);
/* The algorithm's own checks (opts->algo: a registered name) and the plan
 * key of arguments that passed trd_comm_check_args. */
trd_status trd_comm_key_for(const trd_comm *c, int64_t count, const trd_op *op, int32_t root,
                            trd_collective coll, const trd_coll_opts *opts, trd_comm_key *key);
/* Both, and the result buffer of this rank (recvbuf where the caller
 * gets the result, else NULL: scratch). */
trd_status trd_comm_check(const trd_comm *c, const void *sendbuf, void *recvbuf, int64_t count,
                          const trd_op *op, int32_t root, trd_collective coll,
                          const trd_coll_opts *opts, trd_comm_key *key, void **acc);

/* The counts of the parts of the next reduce-scatter calls, one per rank
 * (borrowed until trd_comm_set_parts(c, NULL)), or NULL: p equal parts.
 * The checks refuse a negative one. */
void trd_comm_set_parts(trd_comm *c, const int64_t *counts);
/* Part r of a reduce-scatter of count elements in all: its first element
 * and its count (c->parts[r], or count / p). */
int64_t trd_comm_part_start(const trd_comm *c, int64_t count, int32_t r);
int64_t trd_comm_part_count(const trd_comm *c, int64_t count, int32_t r);

/* The checks of the buffers alone (and *acc), for arguments that gave key. */
trd_status trd_comm_check_buffers(const trd_comm *c, const void *sendbuf, void *recvbuf,
                                  const trd_comm_key *key, void **acc);

/* The plan of a call (the same on every rank). */
trd_status trd_comm_plan(const trd_comm_key *key, trd_plan **out);
/* A collective call's public entry (the selection layer's trd_reduce and
 * trd_allreduce, and trd_comm_run_plan): TRD_EINVAL naming `what` when
 * another collective runs on the communicator - no layer of the library
 * re-enters one (an operator that calls a collective on its own
 * communicator gets the error too); trd_comm_leave when it returns. */
trd_status trd_comm_enter(trd_comm *c, const char *what);
void trd_comm_leave(trd_comm *c);
/* Whether two keys give the same plan. */
bool trd_comm_same_key(const trd_comm_key *x, const trd_comm_key *y);

/* How the core runs a call.  other: its long messages take the path the
 * wire's probe did not keep (a tuned candidate, wire.h long_path).
 * timed: it starts from a barrier, and *seconds gets the run's time (the
 * plan's building aside; a candidate must not pay the lateness the
 * previous one left a rank with). */
typedef struct trd_run_opts {
    bool other;
    bool timed;
    double seconds;
} trd_run_opts;

/* The collective core: one registered algorithm (opts->algo; "auto" is the
 * selection layer's) on a call's arguments, checked (trd_comm_check), its
 * plan built or taken from the cache, run.  run NULL: untimed, the kept
 * path. */
trd_status trd_comm_collective(trd_comm *c, const void *sendbuf, void *recvbuf, int64_t count,
                               const trd_op *op, int32_t root, trd_collective coll,
                               const trd_coll_opts *opts, trd_run_opts *run);
/* The same for arguments that gave key and sig once (trd_comm_sign):
 * only the buffers checked.  *built: the cache's build key last ran with
 * (0 at first), kept by the caller with key. */
trd_status trd_comm_collective_keyed(trd_comm *c, const void *sendbuf, void *recvbuf,
                                     const trd_op *op, const trd_comm_key *key,
                                     const trd_call_sig *sig, uint64_t *built,
                                     trd_run_opts *run);

#endif
