/* layer.h: the internals of libtreduce_mpi.so, the PMPI interposition
 * layer that runs MPI's reductions - MPI_Reduce, MPI_Allreduce,
 * MPI_Reduce_scatter_block, MPI_Reduce_scatter, MPI_Scan, MPI_Exscan, and
 * the local MPI_Reduce_local - with treduce's algorithms and kernels (an
 * adapter of docs/ARCHITECTURE.md's layers; docs/MPI_LAYER.md is the
 * user's side).
 *
 * The layer uses libtreduce's public API only.  A call is classified first
 * (call.c): anything the layer does not run completely - an erroneous or
 * unsupported argument, an intercommunicator, an operator or datatype it
 * does not know - goes to the PMPI_* function of the call with the
 * caller's own arguments, before anything moved.  Every decision depends
 * only on what MPI requires to be the same on every rank of the call
 * (count, recvcounts, datatype, operator, root, communicator; whether
 * sendbuf is MPI_IN_PLACE where MPI requires that on all ranks) and on
 * state that evolves the same way on every rank, so either every rank of
 * a call runs treduce or every rank calls MPI.
 *
 * Threads.  Every state shared by the threads of a process (the list of
 * communicators, the user operators, the kernels, the known platforms, the
 * counters) is behind a lock or atomic, and what belongs to one call is
 * the calling thread's or its communicator's (MPI makes concurrent
 * collectives on one communicator erroneous), so MPI_THREAD_MULTIPLE
 * programs may reduce on distinct communicators from several threads.
 *
 * One file per concern: config.c (TREDUCE_MPI* variables, agreed at
 * MPI_Init), node.c (which processes share a node, learnt at MPI_Init),
 * types.c (datatypes, staging through MPI_Pack), ops.c (MPI operators,
 * user operators), kernels.c (the predefined operators' kernels), comm.c
 * (treduce's communicator, made with the caller's and cached on it),
 * known.c (the platforms measured, by set of processes), choose.c (the
 * model and the algorithm of a call), call.c (one call from its arguments
 * to its result), stats.c (TREDUCE_MPI_STATS and _VERBOSE), entry.c (the
 * MPI functions the layer defines). */
#ifndef TML_LAYER_H
#define TML_LAYER_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "treduce/treduce.h"

/* The layer's own symbols stay inside the library (-fvisibility=hidden);
 * only the MPI functions it defines are seen by the program. */
#define TML_EXPORT __attribute__((visibility("default")))

/* Why a call went to MPI: the enum and the names TREDUCE_MPI_STATS prints.
 * TML_OK: the layer ran it. */
#define TML_REASON_LIST(X)                                                              \
    X(TML_OK, "handled")       /* run by treduce */                                    \
    X(TML_OFF, "off")          /* TREDUCE_MPI=off */                                   \
    X(TML_INVALID, "invalid")  /* an erroneous call: MPI's error handler decides */    \
    X(TML_INTERCOMM, "intercomm")                                                      \
    X(TML_UNSEEN, "unseen")    /* a communicator made by a call the layer does not see */\
    X(TML_TYPE, "type")        /* a predefined datatype or (op, type) pair not run */  \
    X(TML_DERIVED, "derived")  /* a derived datatype the layer cannot run */           \
    X(TML_OP, "op")            /* an operator the layer does not know */              \
    X(TML_ALGO, "algo")        /* TREDUCE_MPI_ALGO cannot run this call */             \
    X(TML_SETUP, "setup")      /* treduce could not be set up on the communicator */  \
    X(TML_FAILED, "failed")    /* an earlier call on the communicator failed */       \
    X(TML_THREADS, "threads")  /* nonblocking below MPI_THREAD_MULTIPLE: no thread of \
                                  the layer may advance it */

#define TML_REASON_ENUM(name, text) name,
typedef enum tml_reason { TML_REASON_LIST(TML_REASON_ENUM) TML_REASONS } tml_reason;
#undef TML_REASON_ENUM
const char *tml_reason_name(tml_reason r);

/* The MPI functions the layer runs: the enum, the name (statistics,
 * TREDUCE_MPI_VERBOSE, messages), the collective treduce runs for it
 * (MPI_Reduce_local: none, it is local; the value is not read) and the
 * blocking function whose arguments and result it has (a nonblocking
 * call's: nonblocking.c). */
#define TML_FN_LIST(X)                                                                  \
    X(TML_F_ALLREDUCE, "MPI_Allreduce", TRD_COLL_ALLREDUCE, TML_F_ALLREDUCE)            \
    X(TML_F_REDUCE, "MPI_Reduce", TRD_COLL_REDUCE, TML_F_REDUCE)                        \
    X(TML_F_REDUCE_SCATTER_BLOCK, "MPI_Reduce_scatter_block", TRD_COLL_REDUCE_SCATTER,  \
      TML_F_REDUCE_SCATTER_BLOCK)                                                       \
    X(TML_F_REDUCE_SCATTER, "MPI_Reduce_scatter", TRD_COLL_REDUCE_SCATTER,              \
      TML_F_REDUCE_SCATTER)                                                             \
    X(TML_F_SCAN, "MPI_Scan", TRD_COLL_SCAN, TML_F_SCAN)                                \
    X(TML_F_EXSCAN, "MPI_Exscan", TRD_COLL_EXSCAN, TML_F_EXSCAN)                        \
    X(TML_F_REDUCE_LOCAL, "MPI_Reduce_local", TRD_COLL_REDUCE, TML_F_REDUCE_LOCAL)      \
    X(TML_F_IALLREDUCE, "MPI_Iallreduce", TRD_COLL_ALLREDUCE, TML_F_ALLREDUCE)          \
    X(TML_F_IREDUCE, "MPI_Ireduce", TRD_COLL_REDUCE, TML_F_REDUCE)                      \
    X(TML_F_IREDUCE_SCATTER_BLOCK, "MPI_Ireduce_scatter_block", TRD_COLL_REDUCE_SCATTER,\
      TML_F_REDUCE_SCATTER_BLOCK)                                                       \
    X(TML_F_IREDUCE_SCATTER, "MPI_Ireduce_scatter", TRD_COLL_REDUCE_SCATTER,            \
      TML_F_REDUCE_SCATTER)                                                             \
    X(TML_F_ISCAN, "MPI_Iscan", TRD_COLL_SCAN, TML_F_SCAN)                              \
    X(TML_F_IEXSCAN, "MPI_Iexscan", TRD_COLL_EXSCAN, TML_F_EXSCAN)

#define TML_FN_ENUM(name, text, coll, base) name,
typedef enum tml_fn { TML_FN_LIST(TML_FN_ENUM) TML_FNS } tml_fn;
#undef TML_FN_ENUM
const char *tml_fn_name(tml_fn f);
trd_collective tml_fn_coll(tml_fn f);
/* The blocking function of f (f itself for a blocking one). */
tml_fn tml_fn_base(tml_fn f);

/* ---- Configuration and global state (config.c) ---- */

#define TML_ALGO_MAX 64
typedef struct tml_config {
    bool on;             /* TREDUCE_MPI (default on) */
    bool stats;          /* TREDUCE_MPI_STATS */
    bool verbose;        /* TREDUCE_MPI_VERBOSE */
    bool reproducible;   /* TREDUCE_MPI_REPRODUCIBLE */
    double timeout_s;    /* TREDUCE_MPI_TIMEOUT: treduce's deadline of every wait */
    char algo[TML_ALGO_MAX]; /* TREDUCE_MPI_ALGO: "auto" or a registered name */
} tml_config;

typedef enum tml_state {
    TML_OUT,     /* MPI_Init did not go through the layer: it stays out, uncounted */
    TML_ACTIVE,  /* running calls */
    TML_PASSING, /* every call to MPI, counted under tml_g.passing (off) */
    TML_ASIDE,   /* a malformed TREDUCE_MPI* value: out, uncounted, no report */
    TML_DONE     /* after MPI_Finalize */
} tml_state;

/* Set at MPI_Init, read-only afterwards. */
typedef struct tml_global {
    tml_state state;
    tml_reason passing; /* TML_PASSING: why */
    tml_config cfg;
    int world_rank;
    MPI_Comm world;     /* a private duplicate of MPI_COMM_WORLD (init, report) */
    MPI_Comm self;      /* a private duplicate of MPI_COMM_SELF (MPI_Pack) */
    bool progress;      /* every process is at MPI_THREAD_MULTIPLE: the layer runs
                           nonblocking calls on progress threads (nonblocking.c) */
} tml_global;
extern tml_global tml_g;
/* This thread is inside the layer: the MPI calls it makes meanwhile (a
 * user function's) go to MPI. */
extern _Thread_local bool tml_busy;

/* After PMPI_Init*: reads the TREDUCE_MPI* variables on world rank 0, which
 * every rank then uses, and sets tml_g.state (collective over the world). */
void tml_config_start(void);

/* ---- Nodes (node.c) ---- */

/* Learns which processes of MPI_COMM_WORLD share a node (collective over
 * the world, at MPI_Init); false when it cannot. */
bool tml_nodes_start(void);
void tml_nodes_finish(void);
/* The world ranks of comm's ranks, in comm's rank order (*n of them;
 * malloc'd, NULL when out of memory or when a process is not in the
 * world), and how many of them share this process's node.  Local. */
int *tml_world_ranks(MPI_Comm comm, int *n, int *node_ranks);
/* The node of each of the n ranks whose world ranks are world[] (treduce's
 * trd_comm_set_nodes map: the lowest of those ranks on the same node), in
 * a malloc'd array; NULL when the nodes are not known or out of memory.
 * Local: every rank computes the same map. */
int32_t *tml_node_map(const int *world, int n);
/* How many processes of the world run on this node (0: not known): they
 * share its cores, whichever communicator a call is on. */
int tml_node_procs(void);

/* ---- Element types and datatypes (types.c) ---- */

/* The element types of the layer's kernels (kernels.c). */
typedef enum tml_type {
    TML_I8, TML_U8, TML_I16, TML_U16, TML_I32, TML_U32, TML_I64, TML_U64,
    TML_BOOL, TML_F32, TML_F64, TML_F80, TML_C32, TML_C64, TML_C80,
    TML_FLOAT_INT, TML_DOUBLE_INT, TML_LONG_INT, TML_2INT, TML_SHORT_INT, TML_LDOUBLE_INT,
    TML_NTYPES
} tml_type;

/* The groups of predefined types MPI-3.1 Sec. 5.9.2 allows operators on. */
typedef enum tml_group {
    TML_G_INT,     /* C integer */
    TML_G_MULTI,   /* MPI_AINT, MPI_OFFSET, MPI_COUNT */
    TML_G_FLOAT,   /* floating point */
    TML_G_COMPLEX, /* C complex */
    TML_G_LOGICAL, /* MPI_C_BOOL */
    TML_G_BYTE,    /* MPI_BYTE */
    TML_G_PAIR     /* MINLOC / MAXLOC pairs */
} tml_group;

/* A predefined datatype the kernels run. */
typedef struct tml_named {
    MPI_Datatype handle;
    tml_type type;
    tml_group group;
    const char *name;
} tml_named;
/* The entry of a predefined datatype, or NULL. */
const tml_named *tml_named_find(MPI_Datatype dt);

/* A call's datatype as the layer uses it. */
typedef struct tml_dtype {
    bool named;             /* a predefined datatype (combiner NAMED) */
    const tml_named *leaf;  /* its kernel type, NULL when the kernels do not
                               run it (derived, or unknown to the table) */
    bool dense;             /* element k is bytes [k*size, (k+1)*size) of the
                               buffer, no gap: treduce works in place */
    int size;
    MPI_Aint extent, true_lb, true_extent;
} tml_dtype;
/* What dt is: TML_OK, or TML_INVALID for a handle MPI refuses (an
 * uncommitted datatype: the call is erroneous). */
tml_reason tml_dtype_of(MPI_Datatype dt, tml_dtype *out);

/* Scratch memory grown as needed (a communicator's: one call at a time). */
typedef struct tml_scratch {
    void *p;
    size_t size;
} tml_scratch;
/* At least bytes of s; NULL when out of memory. */
void *tml_scratch_get(tml_scratch *s, size_t bytes);
void tml_scratch_free(tml_scratch *s);
/* Copies `count` elements of `dt` from src to dst (MPI_Pack then
 * MPI_Unpack into packed: only the bytes of dt's type map are read and
 * written).  MPI error code. */
int tml_copy(const void *src, void *dst, int count, MPI_Datatype dt, tml_scratch *packed);

/* ---- Operators (ops.c, kernels.c) ---- */

typedef enum tml_opkind {
    TML_MAX, TML_MIN, TML_SUM, TML_PROD, TML_LAND, TML_BAND, TML_LOR, TML_BOR, TML_LXOR,
    TML_BXOR, TML_MINLOC, TML_MAXLOC, TML_USER, TML_NOPS = TML_USER
} tml_opkind;

typedef struct tml_op {
    tml_opkind kind;
    MPI_User_function *fn; /* TML_USER */
    const char *name;
} tml_op;
/* The operator behind handle op; false when the layer does not know it
 * (not created through this layer's MPI_Op_create, MPI_REPLACE, ...). */
bool tml_op_find(MPI_Op op, tml_op *out);
/* Whether MPI defines predefined operator k on group g (Sec. 5.9.2). */
bool tml_op_allows(tml_opkind k, tml_group g);
/* MPI_Op_create and MPI_Op_free went through the layer. */
void tml_ops_record(MPI_Op op, MPI_User_function *fn);
void tml_ops_forget(MPI_Op op);
/* treduce's operator calling a user function on elements of extent bytes,
 * one per (function, commutativity, extent) so that every rank has the
 * same operators whatever their handles.  NULL: no memory. */
const trd_op *tml_user_op(MPI_User_function *fn, bool commutative, size_t extent);
/* The datatype handle the user functions this thread calls are given:
 * the one of the call it runs (set before treduce runs it). */
void tml_user_datatype(MPI_Datatype dt);
/* The cost of a user operator's calls on this rank so far, fitted to
 * fixed + n * per_element seconds; false when it was never called. */
bool tml_user_cost(const trd_op *op, double *fixed, double *per_element);
void tml_ops_finish(void);

/* treduce's operator for predefined op k on kernel type t (k allowed on
 * t's group), and whether it is exactly associative and commutative, so
 * that every order of combines gives the same bits.  NULL: no memory. */
const trd_op *tml_kernel(tml_opkind k, tml_type t);
bool tml_kernel_exact(tml_opkind k, tml_type t);
size_t tml_type_size(tml_type t);
void tml_kernels_finish(void);

/* ---- Communicators (comm.c, known.c, choose.c) ---- */

#define TML_CHOICES 8     /* argument sets whose algorithm a communicator keeps */
#define TML_USER_MODELS 8 /* user operators whose cost it keeps */

/* The options of one argument set (choose.c). */
typedef struct tml_choice {
    bool used;
    bool provisional; /* chosen before a user operator's cost was known */
    const trd_op *op;
    int64_t count;
    int32_t root;
    trd_collective coll;
    tml_reason refused; /* TML_ALGO: the forced algorithm cannot run it */
    trd_coll_opts opts;
    char algo[TML_ALGO_MAX];
    double predicted;        /* the model's time of algo (TREDUCE_MPI_VERBOSE) */
    char next[TML_ALGO_MAX]; /* the next of the ranking that runs the call ("": */
    double next_predicted;   /* none) and its time */
} tml_choice;

/* A user operator's cost, agreed by the ranks: fixed + count * per_element. */
typedef struct tml_user_model {
    const trd_op *op;
    double fixed, per_element;
} tml_user_model;

/* What is measured of a set of processes, once (known.c): the platform
 * under the layer's sum of doubles, and the path of long messages on one
 * node (trd_comm_shm_probe; probe[1] 0: not measured). */
typedef struct tml_known {
    bool have_platform;
    trd_profile platform;
    double probe[2];
} tml_known;

typedef struct tml_comm {
    MPI_Comm user;    /* the caller's communicator, which carries this state */
    int rank, size;
    int *world;       /* the world ranks of its ranks (NULL: not all in the world) */
    trd_comm *tc;     /* treduce on a private duplicate (NULL: one rank, or set-up failed) */
    bool setup_failed;
    atomic_bool failed; /* a call failed after data moved: later ones go to MPI (set
                           by a progress thread too: nonblocking.c) */
    tml_known known;  /* agreed at creation (rank 0's), measured at first need */
    tml_user_model users[TML_USER_MODELS];
    int next_user;
    tml_choice choice[TML_CHOICES];
    int next_choice;
    tml_scratch staged, packed; /* a staged call's buffers */
    tml_scratch parts;          /* MPI_Reduce_scatter's recvcounts, as treduce takes them */
    struct tml_comm *prev, *next; /* every live state, released at MPI_Finalize */
} tml_comm;

/* Starts and ends the cache (the attribute keyval); finish releases every
 * state left (MPI_Finalize). */
bool tml_comm_start(void);
void tml_comm_finish(void);
/* comm was just made (by the interposed call of its parent, or at
 * MPI_Init for the world), on every rank that has it: treduce is set up on
 * a private duplicate, what is known of its processes agreed (collective
 * over comm, where every rank of it is). */
void tml_comm_created(MPI_Comm comm);
/* States that MPI detached from their communicators (MPI_Comm_free,
 * MPI_Comm_disconnect, MPI_Finalize) are released: called after the MPI
 * call that freed them (none of it runs inside MPI's callback). */
void tml_comm_release(void);
/* The layer's state of comm (not MPI_COMM_NULL): NULL when the layer did
 * not see it made (an intercommunicator, or a call it does not
 * interpose).  Local. */
tml_comm *tml_comm_of(MPI_Comm comm);

/* What rank 0 of a communicator of these world ranks knows of them (the
 * platform of a measured communicator holding them all); false: nothing. */
bool tml_known_find(const int *world, int n, tml_known *out);
/* A communicator of these world ranks measured k. */
void tml_known_add(const int *world, int n, const tml_known *k);
/* After a call on c: what its treduce measured meanwhile (the path of long
 * messages, at its first call) is kept for the communicators to come. */
void tml_known_learn(tml_comm *c);
void tml_known_finish(void);

/* One call's arguments as the layer runs them (call.c fills it). */
typedef struct tml_run {
    trd_collective coll;
    int32_t root;
    const trd_op *op;
    int64_t n;       /* elements treduce reduces (a reduce-scatter: its whole input) */
    size_t elem;     /* bytes per element */
    bool exact;      /* every combine order gives the same bits */
    bool user;       /* a user operator */
} tml_run;
/* The choice (algorithm and model, choice->opts) a call runs with: TML_OK
 * with *choice set, or TML_ALGO when TREDUCE_MPI_ALGO names an algorithm that cannot
 * run it.  Measures the communicator's profile, or agrees on a user
 * operator's cost, the first time it needs it (collective); *err is then
 * the failure, if any (TML_OK returned). */
tml_reason tml_choose(tml_comm *c, const tml_run *r, const tml_choice **choice,
                      trd_status *err);

/* ---- One call (call.c) and the counters (stats.c) ---- */

/* The arguments of one call, as the program gave them. */
typedef struct tml_args {
    tml_fn fn;
    const void *sendbuf;   /* MPI_Reduce_local: inbuf */
    void *recvbuf;         /* MPI_Reduce_local: inoutbuf */
    int count;             /* MPI_Reduce_scatter_block: recvcount; MPI_Reduce_scatter: 0 */
    const int *recvcounts; /* MPI_Reduce_scatter only */
    MPI_Datatype dt;
    MPI_Op op;
    int root;              /* MPI_Reduce only */
    MPI_Comm comm;         /* MPI_Reduce_local: MPI_COMM_NULL */
} tml_args;
/* A collective reduction: run by treduce or passed to MPI. */
int tml_collective(const tml_args *a);
/* MPI_Reduce_local: run by the layer's kernels or user function wrapper,
 * or passed to MPI. */
int tml_reduce_local(const tml_args *a);

/* A nonblocking call that treduce runs (call.c), in two halves: */
typedef struct tml_job tml_job;
/* On the caller's thread, without communicating: TML_OK with *job, its
 * arguments and decisions kept (NULL: the call moved nothing and is done,
 * with *rc its result), or why MPI runs it (counted, told). */
tml_reason tml_job_begin(const tml_args *a, tml_job **job, int *rc);
/* On the communicator's progress thread, after the calls started before
 * it: the call run (MPI_SUCCESS, or the error, told on stderr). */
int tml_job_run(tml_job *job);
trd_comm *tml_job_comm(const tml_job *job);
void tml_job_free(tml_job *job);
/* An MPI_I* call (a->fn): run by treduce and completed as a generalized
 * request in *req, or passed to MPI (nonblocking.c). */
int tml_icollective(const tml_args *a, MPI_Request *req);
/* The calls started on every communicator done (before MPI_Finalize). */
void tml_comm_drain_all(void);

void tml_stats_count(tml_fn fn, tml_reason r);
/* Rank 0 of the world prints the totals over every process (collective). */
void tml_stats_report(void);
/* TREDUCE_MPI_VERBOSE: one line about a call of count elements (-1: not
 * known, not said) - the algorithm that ran it (why TML_OK: choice's, with
 * the time the model predicted and the next of its ranking; `otherwise`
 * where there was no choice to make) or why it went to MPI - printed by
 * rank 0 of its communicator (rank; -1: unknown or no communicator, world
 * rank 0 prints). */
void tml_verbose(const tml_args *a, int64_t count, int rank, tml_reason why,
                 const tml_choice *choice, const char *otherwise);

#endif
