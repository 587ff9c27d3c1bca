/* layer.h: the internals of libtreduce_mpi.so, the PMPI interposition
 * layer that runs MPI_Reduce and MPI_Allreduce with treduce's algorithms
 * (an adapter of docs/ARCHITECTURE.md's layers; docs/MPI_LAYER.md is the
 * user's side).
 *
 * The layer uses libtreduce's public API only.  A call is classified first
 * (call.c): anything the layer does not run completely - an erroneous or
 * unsupported argument, an intercommunicator, an operator or datatype it
 * does not know - goes to PMPI_Reduce / PMPI_Allreduce with the caller's
 * own arguments, before anything moved.  Every decision depends only on
 * what MPI requires to be the same on every rank of the call (count,
 * datatype, operator, root, communicator) and on state that evolves the
 * same way on every rank, so either every rank of a call runs treduce or
 * every rank calls MPI.
 *
 * One file per concern: config.c (TREDUCE_MPI* variables, agreed at
 * MPI_Init), types.c (datatypes, staging through MPI_Pack), ops.c (MPI
 * operators, user operators), kernels.c (the predefined operators'
 * kernels), comm.c (treduce's communicator cached on the user's),
 * choose.c (the model and the algorithm of a call), call.c (one call from
 * its arguments to its result), stats.c (TREDUCE_MPI_STATS and _VERBOSE),
 * entry.c (the MPI functions the layer defines). */
#ifndef TML_LAYER_H
#define TML_LAYER_H

#include <mpi.h>
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
    X(TML_THREADS, "threads")  /* MPI_THREAD_MULTIPLE: the layer steps aside */        \
    X(TML_INVALID, "invalid")  /* an erroneous call: MPI's error handler decides */    \
    X(TML_INTERCOMM, "intercomm")                                                      \
    X(TML_TYPE, "type")        /* a predefined datatype or (op, type) pair not run */  \
    X(TML_DERIVED, "derived")  /* a derived datatype the layer cannot run */           \
    X(TML_OP, "op")            /* an operator the layer does not know */              \
    X(TML_ALGO, "algo")        /* TREDUCE_MPI_ALGO cannot run this call */             \
    X(TML_SETUP, "setup")      /* treduce could not be set up on the communicator */  \
    X(TML_FAILED, "failed")    /* an earlier call on the communicator failed */

#define TML_REASON_ENUM(name, text) name,
typedef enum tml_reason { TML_REASON_LIST(TML_REASON_ENUM) TML_REASONS } tml_reason;
#undef TML_REASON_ENUM
const char *tml_reason_name(tml_reason r);

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
    TML_UNSEEN,  /* MPI_Init did not go through the layer: it stays out, uncounted */
    TML_ACTIVE,  /* running calls */
    TML_PASSING, /* every call to MPI, counted under tml_g.passing (off, threads) */
    TML_ASIDE,   /* a malformed TREDUCE_MPI* value: out, uncounted, no report */
    TML_DONE     /* after MPI_Finalize */
} tml_state;

typedef struct tml_global {
    tml_state state;
    tml_reason passing; /* TML_PASSING: why */
    tml_config cfg;
    int world_rank;
    MPI_Comm world;     /* a private duplicate of MPI_COMM_WORLD (init, report) */
    MPI_Comm self;      /* a private duplicate of MPI_COMM_SELF (MPI_Pack) */
    bool busy;          /* inside the layer: MPI calls made meanwhile go to MPI */
} tml_global;
extern tml_global tml_g;

/* After PMPI_Init*: reads the TREDUCE_MPI* variables on world rank 0, which
 * every rank then uses, and sets tml_g.state (collective over the world). */
void tml_config_start(void);

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

/* Copies `count` elements of `dt` from src to dst (MPI_Pack then
 * MPI_Unpack: only the bytes of dt's type map are read and written).  MPI
 * error code. */
int tml_copy(const void *src, void *dst, int count, MPI_Datatype dt);
/* Scratch memory of the layer, grown as needed, kept to MPI_Finalize:
 * slot 0 the staged buffer, slot 1 the packed bytes.  NULL when out of
 * memory. */
void *tml_scratch(int slot, size_t bytes);
void tml_types_finish(void);

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
/* treduce's operator calling a user function on elements of dt (extent
 * bytes each), one per (function, commutativity, extent) so that every
 * rank has the same operators whatever their handles.  NULL: no memory. */
const trd_op *tml_user_op(MPI_User_function *fn, bool commutative, size_t extent,
                          MPI_Datatype dt);
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

/* ---- Communicators (comm.c, choose.c) ---- */

#define TML_CHOICES 8     /* argument sets whose algorithm a communicator keeps */
#define TML_USER_MODELS 8 /* user operators whose cost it keeps */

/* The options of one argument set (choose.c). */
typedef struct tml_choice {
    bool used;
    bool provisional; /* chosen before a user operator's cost was known */
    const trd_op *op;
    int64_t count;
    int32_t root;
    bool allreduce;
    tml_reason refused; /* TML_ALGO: the forced algorithm cannot run it */
    trd_coll_opts opts;
    char algo[TML_ALGO_MAX];
} tml_choice;

/* A user operator's cost, agreed by the ranks: fixed + count * per_element. */
typedef struct tml_user_model {
    const trd_op *op;
    double fixed, per_element;
} tml_user_model;

typedef struct tml_comm {
    MPI_Comm user;    /* the caller's communicator, which carries this state */
    bool inter;       /* an intercommunicator: nothing else is set */
    int rank, size;
    MPI_Comm priv;    /* the same group without the caller's attributes, for
                         treduce and the layer's agreements; MPI_COMM_NULL
                         until set up */
    trd_comm *tc;     /* treduce on priv; NULL until set up */
    bool setup_failed;
    bool failed;      /* a call failed after data moved: later ones go to MPI */
    bool have_platform;
    trd_profile platform; /* measured with the layer's sum of doubles */
    tml_user_model users[TML_USER_MODELS];
    int next_user;
    tml_choice choice[TML_CHOICES];
    int next_choice;
    struct tml_comm *prev, *next; /* every live state, released at MPI_Finalize */
} tml_comm;

/* Starts and ends the cache (the attribute keyval). */
bool tml_comm_start(void);
void tml_comm_finish(void);
/* The layer's state of comm (not MPI_COMM_NULL), made on first use without
 * communicating; NULL when out of memory. */
tml_comm *tml_comm_of(MPI_Comm comm);
/* treduce's communicator on c, set up on first use (collective over c,
 * agreed by every rank): TML_OK, or TML_SETUP on every rank. */
tml_reason tml_comm_ready(tml_comm *c);

/* One call's arguments as the layer runs them (call.c fills it). */
typedef struct tml_run {
    bool allreduce;
    int32_t root;
    const trd_op *op;
    int64_t n;       /* elements treduce reduces */
    size_t elem;     /* bytes per element */
    bool exact;      /* every combine order gives the same bits */
    bool user;       /* a user operator */
} tml_run;
/* The options (algorithm and model) a call runs with: TML_OK with *opts
 * set, or TML_ALGO when TREDUCE_MPI_ALGO names an algorithm that cannot
 * run it.  Measures the communicator's profile, or agrees on a user
 * operator's cost, the first time it needs it (collective); *err is then
 * the failure, if any (TML_OK returned). */
tml_reason tml_choose(tml_comm *c, const tml_run *r, const trd_coll_opts **opts,
                      trd_status *err);

/* ---- One call (call.c) and the counters (stats.c) ---- */

typedef struct tml_args {
    bool allreduce;
    const void *sendbuf;
    void *recvbuf;
    int count;
    MPI_Datatype dt;
    MPI_Op op;
    int root;
    MPI_Comm comm;
} tml_args;
/* MPI_Reduce / MPI_Allreduce: run by treduce or passed to MPI. */
int tml_collective(const tml_args *a);

void tml_stats_count(bool allreduce, tml_reason r);
/* Rank 0 of the world prints the totals over every process (collective). */
void tml_stats_report(void);
/* TREDUCE_MPI_VERBOSE: one line about a call - the algorithm that ran it
 * (why TML_OK) or why it went to MPI - printed by rank 0 of its
 * communicator (rank; -1: unknown, world rank 0 prints). */
void tml_verbose(const tml_args *a, int rank, tml_reason why, const char *algo);

#endif
