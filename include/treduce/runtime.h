/* treduce/runtime.h: data types and reduction operators, communicators
 * over a wire, the collectives, calibration, profiles and the
 * model's predictions for a call; in libtreduce (communicators over MPI:
 * mpi.h, libtreduce_wire_mpi). */
#ifndef TREDUCE_RUNTIME_H
#define TREDUCE_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "treduce/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Data types and reduction operators (MPI semantics) ----
 *
 * The operators the runtime applies to real buffers (docs/OPERATORS.md has
 * the table of which operator takes which type).  A buffer holds `count`
 * elements; applying an operator combines two buffers element-wise:
 * inout[i] = in[i] (+) inout[i], `in` being the left operand, like
 * MPI_Reduce_local(in, inout).  Buffers must not overlap; with count = 0
 * nothing is read or written and NULL buffers are accepted.
 *
 *   - integer sum and prod wrap modulo 2^bits (signed types too: computed in
 *     the unsigned type of the same width, so overflow is never undefined);
 *   - float/double sum and prod are plain IEEE, in = left operand;
 *   - min and max take any type (inputs with NaN: unspecified result);
 *   - land and lor give 0 or 1 (operands count as true when nonzero), band,
 *     bor and bxor act on the bits; as in MPI these five take integer
 *     types only: on float or double, trd_op_builtin fails with TRD_EINVAL
 *     naming the operator and the type. */

/* The element types: enum name, value, name used by trd_type_parse. */
#define TRD_TYPE_LIST(X)             \
    X(TRD_INT32, 0, "int32")         \
    X(TRD_INT64, 1, "int64")         \
    X(TRD_UINT64, 2, "uint64")       \
    X(TRD_FLOAT, 3, "float")         \
    X(TRD_DOUBLE, 4, "double")

/* The built-in operators: enum name, value, name used by trd_op_parse. */
#define TRD_OP_KIND_LIST(X)          \
    X(TRD_OP_SUM, 0, "sum")          \
    X(TRD_OP_PROD, 1, "prod")        \
    X(TRD_OP_MIN, 2, "min")          \
    X(TRD_OP_MAX, 3, "max")          \
    X(TRD_OP_LAND, 4, "land")        \
    X(TRD_OP_LOR, 5, "lor")          \
    X(TRD_OP_BAND, 6, "band")        \
    X(TRD_OP_BOR, 7, "bor")          \
    X(TRD_OP_BXOR, 8, "bxor")

#define TRD_LIST_ENUM_(name, value, text) name = value,
#define TRD_LIST_ONE_(name, value, text) +1
typedef enum trd_type { TRD_TYPE_LIST(TRD_LIST_ENUM_) } trd_type;
typedef enum trd_op_kind { TRD_OP_KIND_LIST(TRD_LIST_ENUM_) } trd_op_kind;
/* Number of types and of built-in operators (values 0 .. count-1). */
enum { TRD_TYPE_COUNT = 0 TRD_TYPE_LIST(TRD_LIST_ONE_) };
enum { TRD_OP_KIND_COUNT = 0 TRD_OP_KIND_LIST(TRD_LIST_ONE_) };
#undef TRD_LIST_ENUM_
#undef TRD_LIST_ONE_

/* Size in bytes of one element of `type`; 0 for a value out of range. */
size_t trd_type_size(trd_type type);
/* Name of a type ("int32") or operator ("sum"); NULL out of range. */
const char *trd_type_name(trd_type type);
const char *trd_op_kind_name(trd_op_kind kind);
/* The type or operator called `name`; TRD_EINVAL naming it and listing the
 * valid names when there is none (*out is then unchanged). */
trd_status trd_type_parse(const char *name, trd_type *out);
trd_status trd_op_parse(const char *name, trd_op_kind *out);

/* A user operator: inout[i] = in[i] (+) inout[i] for i < count (count >= 1
 * when called), elements of the size given to trd_op_user; ctx is passed
 * through.  It must be associative; it need not be commutative.  The
 * buffers never overlap.  An operator may be applied from several threads
 * at once (built-in ones are stateless): fn must then tolerate that. */
typedef void (*trd_user_fn)(const void *in, void *inout, int64_t count, void *ctx);

typedef struct trd_op trd_op;

/* A built-in operator on `type`.  TRD_EINVAL for a value out of range or an
 * operator the type does not take (land, lor, band, bor, bxor on float or
 * double: the message names both).  On failure *out is NULL. */
trd_status trd_op_builtin(trd_op **out, trd_op_kind kind, trd_type type);
/* A user operator over elements of elem_size bytes (> 0); ctx (may be NULL)
 * must outlive the operator.  TRD_EINVAL for a NULL fn or elem_size 0; on
 * failure *out is NULL. */
trd_status trd_op_user(trd_op **out, trd_user_fn fn, size_t elem_size, bool commutative,
                       void *ctx);
/* Releases an operator; NULL is a no-op. */
void trd_op_free(trd_op *op);
/* Built-in operators are commutative; user ones as created.  NULL: false. */
bool trd_op_is_commutative(const trd_op *op);
/* Bytes per element (0 for NULL). */
size_t trd_op_elem_size(const trd_op *op);

/* inout = in (+) inout over count elements (count >= 0; 0 is a no-op).
 * TRD_EINVAL for a NULL op, count < 0, a NULL buffer when count > 0, a byte
 * size that overflows size_t, or overlapping buffers; nothing is written
 * then. */
trd_status trd_op_apply(const trd_op *op, const void *in, void *inout, int64_t count);

/* The schedule IR's COMBINE step on count elements:
 *   TRD_SIDE_LEFT:  acc = in (+) acc   (`in` is only read);
 *   TRD_SIDE_RIGHT: acc = acc (+) in   (`in` is CLOBBERED: its content is
 *                   undefined afterwards; a non-commutative operator uses
 *                   it as scratch, so no extra buffer is needed).
 * Works for commutative and non-commutative operators alike.  Errors as in
 * trd_op_apply, plus TRD_EINVAL for a side out of range. */
trd_status trd_op_combine(const trd_op *op, trd_side side, void *acc, void *in,
                          int64_t count);

/* Checker operators: non-commutative, they detect a lost, duplicated or
 * reordered contribution (docs/OPERATORS.md).
 *
 * Each rank r fills its buffer with trd_*_fill(buf, count, r); after a
 * reduction over ranks first..last in rank order, every element equals what
 * trd_*_expected(buf, count, first, last) writes (compare with memcmp).
 * Element i depends on i too, so misplaced segments are caught as well. */

/* 2x2 matrix over the integers mod p = TRD_MATRIX_P = 2^31 - 1, row-major,
 * every entry in [0, p).  The operator is the matrix product:
 * inout = in x inout.  Rank r's element i is a matrix of determinant 1 drawn
 * from a hash of (r, i), never the identity, so products of different rank
 * sequences differ except with probability about 1/p. */
#define TRD_MATRIX_P 2147483647u
typedef struct trd_matrix2x2 {
    uint32_t a, b, c, d; /* [[a, b], [c, d]] */
} trd_matrix2x2;
trd_status trd_op_matrix2x2(trd_op **out);
/* rank >= 0, count >= 0; TRD_EINVAL otherwise or for a NULL buf (count > 0). */
trd_status trd_matrix2x2_fill(trd_matrix2x2 *buf, int64_t count, int64_t rank);
/* The product M(first) x M(first+1) x ... x M(last); 0 <= first <= last. */
trd_status trd_matrix2x2_expected(trd_matrix2x2 *buf, int64_t count, int64_t first,
                                  int64_t last);

/* Interval concatenation: [a, b] (in) (+) [c, d] (inout) = [a, d] when
 * 0 <= a <= b, b + 1 == c and c <= d; anything else yields the poison value
 * TRD_INTERVAL_POISON = [-1, -1], and poison stays poison.  Rank r's element
 * i is [r + i*2^32, r + i*2^32]; ranks lie in [0, 2^32), count <= 2^31 - 1. */
typedef struct trd_interval {
    int64_t lo, hi;
} trd_interval;
#define TRD_INTERVAL_POISON ((int64_t)-1)
trd_status trd_op_interval(trd_op **out);
trd_status trd_interval_fill(trd_interval *buf, int64_t count, int64_t rank);
/* [first + i*2^32, last + i*2^32] for every i; 0 <= first <= last < 2^32. */
trd_status trd_interval_expected(trd_interval *buf, int64_t count, int64_t first,
                                 int64_t last);

/* ---- Runtime: real reductions over a wire ----
 *
 * A communicator (trd_comm) is one rank's handle on a group of p ranks
 * connected by a wire: threads of this process ("threads", the
 * embedded default) or MPI processes ("mpi").  trd_reduce and
 * trd_allreduce run any registered algorithm on real buffers with MPI's
 * semantics: every rank calls them with the same count, op, root and
 * options; each reads its `sendbuf` (count elements) and the result lands
 * in `recvbuf` at the root (reduce) or at every rank (coll).  The
 * reduction is the rank-order fold v0 (+) v1 (+) ... (+) v_{p-1}; with a
 * non-commutative operator only algorithms that combine in rank order run
 * (tree-dyn and ring refuse with TRD_EUNSUPPORTED).
 *
 * Faults and deadlines (docs/RUNTIME.md).  Every wait has a deadline
 * (timeout_s): a rank that never answers gives TRD_ETIMEDOUT, not a hang.
 * A call that fails after it began to communicate (a deadline, a lost
 * peer, calls that do not match across ranks, the operator) fails the
 * communicator for good: every later call on it returns at once the first
 * failure's code with a message containing the first failure's, and
 * touches no buffer; only trd_comm_free is left.  The failing rank tells
 * its peers, which stop waiting and fail the same way (threads: every
 * rank; MPI: every rank the notice reaches).  A call refused by its
 * argument checks sends nothing and leaves the communicator usable.  When
 * a call returns, failed or not, no peer reads or writes its buffers or
 * the communicator's scratch any more: free them at will (MPI: but for
 * what MPI itself cannot cancel, docs/RUNTIME.md).  Each call carries a
 * signature of its algorithm, kind, root, count, element size, operator
 * and model: ranks whose calls differ get TRD_EIO naming the mismatch,
 * not a result mixed from different calls (but over MPI point-to-point,
 * whose tags carry only a few bits of it, for one pair of calls in 256
 * on Open MPI, in 32 on MPICH: docs/RUNTIME.md).
 *
 * Example (threads; see examples/reduce_threads.c): trd_comm_threads_run
 * below, or by hand:
 *
 *     trd_comm *comm[4];
 *     trd_comm_threads_create(comm, 4, NULL);
 *     // thread r:  trd_allreduce(comm[r], in, out, count, op, &opts);
 *     // then:      for each r: trd_comm_free(comm[r]);
 */
typedef struct trd_comm trd_comm;

/* sendbuf value meaning "the input is already in recvbuf" (MPI_IN_PLACE). */
#define TRD_IN_PLACE ((const void *)1)

/* Options of the threads wire (zero-initialised fields are NOT
 * defaults: call trd_threads_opts_init). */
typedef struct trd_threads_opts {
    double timeout_s;     /* timeout of every wait (default 30 s) */
} trd_threads_opts;
void trd_threads_opts_init(trd_threads_opts *opts);

/* p communicators comm[0..p-1] over one threads wire: hand comm[r] to
 * the thread playing rank r (each handle is used by one thread at a
 * time).  opts NULL: defaults.  TRD_EINVAL for p < 1 or too large. */
trd_status trd_comm_threads_create(trd_comm **comm, int32_t p, const trd_threads_opts *opts);

/* One rank's part of trd_comm_threads_run: comm is the rank's communicator
 * (trd_comm_rank(comm) its rank), ctx the caller's, the same on every rank. */
typedef trd_status (*trd_rank_fn)(trd_comm *comm, void *ctx);
/* Runs fn on p ranks at once, one thread each, over communicators made by
 * trd_comm_threads_create(p, opts) and freed before it returns.  TRD_OK
 * when every rank's fn returned TRD_OK; else the lowest failing rank's
 * status, trd_errmsg() saying "rank R: " and that rank's message.  When
 * the communicators cannot be made (TRD_EINVAL, TRD_ENOMEM) nothing runs.
 *
 *     static trd_status rank_main(trd_comm *comm, void *ctx) {
 *         double *x = (double *)ctx + 8 * trd_comm_rank(comm);
 *         return trd_allreduce(comm, TRD_IN_PLACE, x, 8, op, NULL);
 *     }
 *     trd_comm_threads_run(4, NULL, rank_main, data);
 */
trd_status trd_comm_threads_run(int32_t p, const trd_threads_opts *opts, trd_rank_fn fn,
                                void *ctx);
/* Releases one rank's handle (threads: the shared wire goes with the
 * last one; MPI: every rank of the communicator frees its handle, in any
 * order with other communicators: the release of the MPI communicator
 * completes without blocking, once no message can still reach it, at the
 * latest in MPI_Finalize).  NULL is a no-op. */
void trd_comm_free(trd_comm *comm);
int32_t trd_comm_rank(const trd_comm *comm);
int32_t trd_comm_size(const trd_comm *comm);
/* How many ranks of comm share this rank's machine and its memory:
 * threads, all of them; MPI, those of this node (counted when the
 * communicator was made).  What a memory check multiplies by.  0 for NULL. */
int32_t trd_comm_node_size(const trd_comm *comm);
/* The node (host) of each rank, for the node-aware algorithms
 * (trd_algo_uses_nodes: node-ring): node_of[0 .. p), each in [0, p), two
 * ranks on one node sharing a value; copied, renumbered by each node's
 * lowest rank.  Local, but every rank must give the same grouping (a rank
 * given another one makes its calls of a node-aware algorithm mismatched
 * calls).  Set once, before the first collective call (TRD_EINVAL after
 * it, or for another map than the one set; the same one again is a
 * no-op), and kept for the communicator's life.  Without it every rank is
 * a node of its own. */
trd_status trd_comm_set_nodes(trd_comm *comm, const int32_t *node_of);
/* The same, learnt from the wire (collective: one trd_comm_allgather):
 * threads, one node; MPI, the ranks that share a node as
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) counted them when the
 * communicator was made.  TRD_EUNSUPPORTED when the wire does not know
 * them (an MPI wire made with setup.node_ranks given, as the MPI layer
 * makes them: the layer sets the map itself); else as trd_comm_allgather
 * and trd_comm_set_nodes. */
trd_status trd_comm_learn_nodes(trd_comm *comm);
/* The node of rank in comm's map (its node's lowest rank), or -1 when no
 * map was set (or for a rank out of range, or a NULL comm). */
int32_t trd_comm_node(const trd_comm *comm, int32_t rank);
/* The name of its wire (trd_wire_info.name): "threads" or "mpi". */
const char *trd_comm_wire(const trd_comm *comm);
/* Deprecated: trd_comm_wire's older name, which said "transport" for the
 * wire; kept, the same function, so that programs written against it
 * still compile and link. */
const char *trd_comm_transport(const trd_comm *comm);

/* The wires - the real point-to-point backends a communicator runs over -
 * in one table (src/runtime/wires.c): what a tool looks up by name instead
 * of knowing them, and asks about by the fields below, never by name. */
typedef struct trd_wire_info {
    const char *name;    /* "threads", "mpi" */
    const char *summary; /* one line, for usage texts */
    /* One rank per process, the processes started by a launcher (mpirun
     * -np P): create makes this process's communicator, comm[0], and the
     * number of ranks is the launcher's.  Otherwise create makes comm[0..p). */
    bool launched;
    int32_t p_max; /* most ranks create makes at once (launched: 1) */
    /* The communicators, with deadline timeout_s; launched wires need their
     * runtime initialised by the caller (MPI_Init).  TRD_EUNSUPPORTED when
     * this build lacks the wire. */
    trd_status (*create)(trd_comm **comm, int32_t p, double timeout_s);
    /* What its ranks are, plural, for reports: "threads", "MPI processes". */
    const char *ranks;
} trd_wire_info;
/* Adds a wire to the table, found by name from then on (the row must live
 * as long as the program uses it; registering the same row again does
 * nothing).  The table holds the threads wire from the start; the MPI
 * wire's row is trd_wire_mpi() (treduce/mpi.h, libtreduce_wire_mpi).
 * Thread-safe.  TRD_EINVAL for a NULL or incomplete row or a name taken
 * by another row; TRD_ENOMEM past 8 wires. */
trd_status trd_wire_register(const trd_wire_info *wire);
/* How many wires the table has, and the i-th (NULL past the end). */
size_t trd_wire_count(void);
const trd_wire_info *trd_wire_at(size_t i);
/* The wire called `name`; TRD_EINVAL naming it and listing the wires when
 * there is none (*out is then NULL). */
trd_status trd_wire_find(const char *name, const trd_wire_info **out);
/* Wall-clock seconds on this rank's wire clock. */
double trd_comm_now(const trd_comm *comm);
/* All ranks meet (with the communicator's deadline). */
trd_status trd_comm_barrier(trd_comm *comm);
/* Every rank passes in[0..n) and gets in out[0..n) the largest in[i] of
 * all ranks (collective, every rank with the same n; out may be in): an
 * agreement of the wire's own, with the communicator's deadline per
 * TRD_WIRE_AGREE_MAX values (16), for what a program gathers around its
 * reductions (timings, checks) without a collective of MPI's that has no
 * deadline.  TRD_EINVAL for a NULL argument or n < 0. */
trd_status trd_comm_agree_max(trd_comm *comm, const double *in, double *out, int64_t n);
/* Every rank passes `bytes` bytes at in and gets every rank's in out, rank
 * r's at out + r * bytes (p * bytes in all; collective, every rank with
 * the same bytes; out may overlap in): for what a program gathers around
 * its reductions (names, small results), with the communicator's deadline,
 * as it is built on trd_comm_agree_max (six bytes per value: keep it to a
 * few kilobytes).  TRD_EINVAL for a NULL argument (NULL buffers are fine
 * with bytes 0) or p * bytes beyond memory; a failure after it began, as
 * trd_comm_agree_max's, fails the communicator. */
trd_status trd_comm_allgather(trd_comm *comm, const void *in, void *out, size_t bytes);

/* How a collective call runs.  Initialise with trd_coll_opts_init. */
typedef struct trd_coll_opts {
    const char *algo;        /* registered name, or "auto": the algorithm
                                with the smallest predicted time for this
                                call under the measured model
                                (measure_model, below) or d, c, latency
                                (trd_comm_explain), or the fastest of the
                                model's best when timed (tune, below);
                                default "binomial", a reduce and allreduce
                                algorithm: set another for the other
                                collectives (treduce list says which run
                                what), or pass opts NULL for each
                                collective's default */
    double d, c, latency;    /* the cost model the planners use (trd_params;
                                default 1, 1, 0: only their ratio matters
                                to the tree shapes; "auto" ranks under a
                                measured model instead, measure_model) */
    double combine_fixed;    /* the part of c paid per combine call
                                (trd_params; default 0) */
    double flight;           /* the part of latency in flight (trd_params;
                                default 0) */
    double recv_combine_saving; /* the share of a transfer a receive-and-
                                combine does not pay (trd_params; default 0) */
    double far_d, far_latency; /* a transfer between two nodes of the
                                communicator's map (trd_comm_set_nodes) and
                                its part per message (trd_params; default 0:
                                as d, latency; the measured model sets them
                                where the ranks are on several nodes) */
    double parallelism;      /* how many ranks the platform runs at once
                                (trd_comm_calibrate measures it: fewer
                                cores than ranks; the shared memory bus
                                is stream_bw's);
                                a prediction T of work W on n ranks is
                                then T + (W - T)(n/k - 1)/(n - 1) when
                                W > T (trd_plan_work, docs/RUNTIME.md);
                                default 0 (or >= n): not modelled, every
                                rank has a core of its own */
    const double *stream_bw; /* the node's memory: stream_bw[k - 1] is the
                                aggregate bandwidth of k concurrent streams
                                (bytes per second, k = 1 .. streams,
                                non-decreasing, at most k times one
                                stream's: trd_profile.stream_bw).  A
                                prediction then charges every stretch of
                                the plan's timeline where its transfers and
                                combines stream at once, at most parallelism
                                of them, k B(1) / B(k) of its length
                                (docs/RUNTIME.md, "The node's memory").
                                Must outlive the calls (trd_profile_apply
                                points it into the profile); default NULL */
    int32_t streams;         /* entries of stream_bw (0: not modelled) */
    int64_t K;               /* greedy-k-*: the limit (default 2) */
    const trd_costs *costs;  /* heterogeneous costs of this communicator's
                                ranks (trd_params.costs; default NULL):
                                the algorithms that read them plan for
                                them, every plan is timed under them
                                (predictions, "auto", which then ignores
                                measure_model), and a call whose costs
                                changed (another object, or the same one
                                loaded again) gets a new plan.  latency,
                                combine_fixed and flight must be 0 */
    bool reproducible;       /* bitwise the same result on every run and
                                every rank whatever the arrival order:
                                static plans only (a fixed combine order;
                                allreduce results computed once per block
                                or by commutative pairs); dynamic
                                algorithms and star (every rank adds in
                                its own order) are refused, and `auto`
                                skips them */
    int64_t segment_bytes;   /* cut the buffer into segments of about this
                                size (> 0); 0 = the algorithm's choice:
                                pipeline and pipelined-fibonacci from the
                                model, the others TRD_SEGMENT_BYTES;
                                dynamic algorithms never cut */
    int32_t tune;            /* "auto" only: how many of the model's best
                                candidates to time (0 to TRD_TUNE_MAX),
                                skipping any that repeats the programs of
                                a better-ranked one.
                                The first tune * TRD_TUNE_CALLS calls with
                                the same arguments run them in turn, each
                                TRD_TUNE_CALLS times (rounds of one call
                                each, the first round untimed); every later
                                call runs the one with the smallest median
                                time (the slowest rank's), agreed by all
                                ranks.  On an MPI communicator that timed
                                its long messages' path (trd_comm_shm_probe)
                                a call with more than 16 KiB per rank also
                                times the model's first the other way:
                                (tune + 1) * TRD_TUNE_CALLS calls.
                                Default 0: the model's first, untimed.
                                Ignored in reproducible mode (its result
                                must not depend on timings) */
    bool measure_model;      /* "auto" only: rank the candidates under the
                                communicator's own profile of this platform
                                and operator (trd_comm_profile) applied to
                                the call, instead of d, c, latency,
                                combine_fixed, flight and parallelism.  The
                                first call (or trd_comm_explain) that needs
                                an operator's profile measures it - a
                                collective of ~0.1 s on 2 ranks, more with
                                more ranks or a costly operator - and the
                                communicator keeps it (TRD_COMM_PROFILES
                                operators, the oldest forgotten first).
                                trd_coll_opts_init sets it;
                                trd_profile_apply and trd_comm_calibrate,
                                which fill in a model, clear it.  Ignored
                                in reproducible mode (its algorithm must
                                not depend on timings) */
} trd_coll_opts;
void trd_coll_opts_init(trd_coll_opts *opts);
/* Default segment size of the non-pipelined algorithms, and the most
 * segments that default makes (larger buffers get larger segments). */
#define TRD_SEGMENT_BYTES (1 << 20)
#define TRD_SEGMENTS_DEFAULT 64
/* The default segment of an algorithm that routes around slow links
 * under heterogeneous costs (node-ring, trd_algo_reads_costs without
 * needing them) when it has them, without the TRD_SEGMENTS_DEFAULT cap:
 * a slow host's sends and receives overlap but for one segment
 * (docs/ALGORITHMS_ALLREDUCE.md, "Slow links"). */
#define TRD_LINK_SEGMENT_BYTES (64 << 10)
/* trd_coll_opts.tune: the most candidates, the calls per candidate (the
 * first a warm-up, the others timed), and the argument sets a
 * communicator remembers (the oldest forgotten first: its next call is
 * timed again). */
#define TRD_TUNE_MAX 8
#define TRD_TUNE_CALLS 6
#define TRD_TUNE_KEYS 16
/* trd_coll_opts.measure_model: the operators whose profiles a
 * communicator keeps. */
#define TRD_COMM_PROFILES 4

/* Reduce to rank `root`.  count >= 0 (0: nothing moves); recvbuf is only
 * read or written at the root (it may be NULL elsewhere); sendbuf may be
 * TRD_IN_PLACE at the root.  Buffers of a rank must not overlap.  opts
 * NULL: defaults.  Dynamic algorithms end with the result on whichever
 * rank the pairing leaves it, which then sends it to the root. */
trd_status trd_reduce(trd_comm *comm, const void *sendbuf, void *recvbuf, int64_t count,
                      const trd_op *op, int32_t root, const trd_coll_opts *opts);
/* Allreduce: every rank gets the result in recvbuf.  Tree algorithms
 * reduce then broadcast over the same tree; exchange algorithms
 * (recursive-doubling, ring, rabenseifner) exchange; dynamic ones refuse
 * (TRD_EUNSUPPORTED). */
trd_status trd_allreduce(trd_comm *comm, const void *sendbuf, void *recvbuf, int64_t count,
                         const trd_op *op, const trd_coll_opts *opts);
/* Reduce-scatter: the input (sendbuf) is p parts of recvcount elements;
 * rank r gets part r of the reduction (x_0 (+) ... (+) x_{p-1}, rank
 * order) in recvbuf (recvcount elements).  sendbuf TRD_IN_PLACE: the input
 * is recvbuf (p * recvcount elements) and the result lands at its start.
 * opts NULL: reduce-scatter-pairwise (any operator). */
trd_status trd_reduce_scatter_block(trd_comm *comm, const void *sendbuf, void *recvbuf,
                                    int64_t recvcount, const trd_op *op,
                                    const trd_coll_opts *opts);
/* The same with parts of recvcounts[r] elements (each >= 0; the input is
 * their sum, part r after parts 0 .. r-1); every rank passes the same
 * recvcounts (a rank that passes others gets a mismatched-call error, as
 * a call with other arguments).  The plan cuts each part into segments
 * of its own size; the model prices each as the parts' mean. */
trd_status trd_reduce_scatter(trd_comm *comm, const void *sendbuf, void *recvbuf,
                              const int64_t *recvcounts, const trd_op *op,
                              const trd_coll_opts *opts);
/* Inclusive scan: rank r gets x_0 (+) ... (+) x_r in recvbuf (count
 * elements); sendbuf may be TRD_IN_PLACE (the input in recvbuf).  opts
 * NULL: scan-recursive-doubling (any operator). */
trd_status trd_scan(trd_comm *comm, const void *sendbuf, void *recvbuf, int64_t count,
                    const trd_op *op, const trd_coll_opts *opts);
/* Exclusive scan: rank r > 0 gets x_0 (+) ... (+) x_{r-1}; rank 0's
 * recvbuf is left as it was (MPI leaves it undefined) and may be NULL
 * unless the call is in place. */
trd_status trd_exscan(trd_comm *comm, const void *sendbuf, void *recvbuf, int64_t count,
                      const trd_op *op, const trd_coll_opts *opts);
/* ---- Requests: nonblocking and persistent calls ---- */

/* A started or startable collective call.  The nonblocking calls
 * (trd_i*) make one and start it; the persistent ones (*_init) make one
 * to start again and again with trd_start (the same arguments: the plan
 * and buffers laid out at the first run serve the next ones).  A started
 * call runs on its communicator's progress thread (made at the first
 * start), in start order - every rank must start the same calls in the
 * same order, as in MPI - so it advances while the program computes
 * without calling treduce.  Its buffers belong to the call until it is
 * done (trd_request_wait returned, or trd_request_test said done).  The
 * arguments are checked when the call runs: a bad one, or any failure,
 * is the status wait and test return, with its message.  A blocking call
 * on the communicator waits first for its started requests.  While a
 * request is active, the communicator takes no other call but the request
 * functions and collective calls (which wait).  Where the wire allows no
 * other thread (MPI below MPI_THREAD_MULTIPLE), the calls run inside
 * trd_request_wait and trd_request_test instead, on the caller's thread
 * (test then waits for the call). */
typedef struct trd_request trd_request;
trd_status trd_ireduce(trd_comm *comm, const void *sendbuf, void *recvbuf, int64_t count,
                       const trd_op *op, int32_t root, const trd_coll_opts *opts,
                       trd_request **req);
trd_status trd_iallreduce(trd_comm *comm, const void *sendbuf, void *recvbuf, int64_t count,
                          const trd_op *op, const trd_coll_opts *opts, trd_request **req);
trd_status trd_ireduce_scatter_block(trd_comm *comm, const void *sendbuf, void *recvbuf,
                                     int64_t recvcount, const trd_op *op,
                                     const trd_coll_opts *opts, trd_request **req);
trd_status trd_ireduce_scatter(trd_comm *comm, const void *sendbuf, void *recvbuf,
                               const int64_t *recvcounts, const trd_op *op,
                               const trd_coll_opts *opts, trd_request **req);
trd_status trd_iscan(trd_comm *comm, const void *sendbuf, void *recvbuf, int64_t count,
                     const trd_op *op, const trd_coll_opts *opts, trd_request **req);
trd_status trd_iexscan(trd_comm *comm, const void *sendbuf, void *recvbuf, int64_t count,
                       const trd_op *op, const trd_coll_opts *opts, trd_request **req);
/* The persistent forms: *req is made inactive; recvcounts are copied. */
trd_status trd_reduce_init(trd_comm *comm, const void *sendbuf, void *recvbuf, int64_t count,
                           const trd_op *op, int32_t root, const trd_coll_opts *opts,
                           trd_request **req);
trd_status trd_allreduce_init(trd_comm *comm, const void *sendbuf, void *recvbuf,
                              int64_t count, const trd_op *op, const trd_coll_opts *opts,
                              trd_request **req);
trd_status trd_reduce_scatter_block_init(trd_comm *comm, const void *sendbuf, void *recvbuf,
                                         int64_t recvcount, const trd_op *op,
                                         const trd_coll_opts *opts, trd_request **req);
trd_status trd_reduce_scatter_init(trd_comm *comm, const void *sendbuf, void *recvbuf,
                                   const int64_t *recvcounts, const trd_op *op,
                                   const trd_coll_opts *opts, trd_request **req);
trd_status trd_scan_init(trd_comm *comm, const void *sendbuf, void *recvbuf, int64_t count,
                         const trd_op *op, const trd_coll_opts *opts, trd_request **req);
trd_status trd_exscan_init(trd_comm *comm, const void *sendbuf, void *recvbuf, int64_t count,
                           const trd_op *op, const trd_coll_opts *opts, trd_request **req);
/* Starts an inactive persistent request (TRD_EINVAL for an active one or
 * a nonblocking call's, which runs once). */
trd_status trd_start(trd_request *req);
/* Waits until req's call is done and returns its status (TRD_OK for an
 * inactive request); the request is inactive again.  The call's own
 * deadlines bound the wait. */
trd_status trd_request_wait(trd_request *req);
/* *done: whether req's call is done (then its status is returned, as by
 * wait) or req is inactive. */
trd_status trd_request_test(trd_request *req, bool *done);
/* Frees req (NULL: nothing), after waiting for its call if it is active. */
void trd_request_free(trd_request *req);
/* Waits until every call started on comm is done: what each blocking call
 * on comm does first.  For a caller that communicates on comm by other
 * means in between (the MPI layer's choices) and wants the same order. */
void trd_comm_drain(trd_comm *comm);
/* Queues step(arg) on comm's progress thread as if it were a started call:
 * it runs after the calls started before it, and the calls started after
 * it, blocking ones included, wait for it.  The step may make treduce's
 * blocking calls on comm (they do not wait for their own queue); its
 * status is not kept (nobody waits for a step: the step itself reports
 * its end, e.g. the MPI layer completes a generalized request).
 * TRD_EUNSUPPORTED where the wire allows no progress thread (MPI below
 * MPI_THREAD_MULTIPLE). */
trd_status trd_comm_post(trd_comm *comm, trd_status (*step)(void *arg), void *arg);

/* Runs any plan (collective: every rank calls it with the same plan,
 * count and op): this rank's program on buf, which is its slot 0 - its
 * input at the start, and at trd_plan_result_rank its result at the end
 * (e.g. the series of treduce/steady_series.h, one operation per block).
 * count elements of op, cut into trd_plan_blocks(plan) blocks; scratch
 * slots come from the communicator.  TRD_EINVAL for a NULL argument, a
 * plan for another number of ranks than the communicator's, or count
 * below the number of blocks (each needs an element) or too large; then
 * as trd_reduce.  The plan must outlive the call; the communicator's
 * cached plan for trd_reduce and trd_allreduce is dropped. */
trd_status trd_comm_run_plan(trd_comm *comm, const trd_plan *plan, void *buf, int64_t count,
                             const trd_op *op);

/* Measures this platform for a call of `count` elements of op (collective:
 * every rank calls it): the latency of a message and the time per byte
 * (messages between ranks 0 and 1 that both leave a barrier, each timed
 * by its receiver, both directions averaged), and the time of one combine of count
 * elements (on every rank, the slowest kept), then sets opts->latency,
 * opts->flight (latency minus the time rank 0 takes per message of a burst
 * from rank 1), opts->d = latency + bytes * time per byte, opts->c and
 * opts->parallelism (p when every rank has a core of its own, else p times
 * a combine's time alone over its time when every rank combines at once,
 * at the messages' probe size), opts->recv_combine_saving (the same
 * message combined as it arrives, trd_params), the same on
 * every rank (combine_fixed 0: one size cannot tell the per-call part),
 * opts->stream_bw and streams to the communicator's memory bandwidth
 * curve (trd_profile.stream_bw, measured on its first calibration and
 * kept: it lives as long as the communicator), and clears
 * opts->measure_model (the model is given).  Takes a few milliseconds
 * plus a few combines (and the curve's streams, the first time). */
trd_status trd_comm_calibrate(trd_comm *comm, const trd_op *op, int64_t count,
                              trd_coll_opts *opts);
/* The most concurrent streams a profile's bandwidth curve holds. */
#define TRD_STREAMS_MAX 256
/* A platform's cost profile: what `treduce calibrate` writes.  A transfer
 * of b bytes costs latency + b * per_byte; a combine of m elements with
 * the operator it was measured with costs combine_fixed + m * per_element. */
typedef struct trd_profile {
    double latency;       /* seconds per message */
    double per_byte;      /* seconds per byte moved */
    double combine_fixed; /* seconds per combine call */
    double per_element;   /* seconds per element combined */
    double flight;        /* the part of latency in flight (trd_params.flight):
                             latency minus the time a rank spends per message
                             when many arrive at once */
    double parallelism;   /* trd_coll_opts.parallelism: how many ranks run
                             at once (0: not modelled) */
    double recv_combine_saving; /* trd_params.recv_combine_saving, measured
                             with a 1 MiB message (0: not modelled) */
    int32_t streams;      /* entries of stream_bw (0: not measured) */
    double far_latency;   /* the same two between ranks of two nodes (rank
                             0 and the lowest rank on another node of the */
    double far_per_byte;  /* communicator's map, trd_comm_set_nodes); 0, 0:
                             one node, or not measured */
    double stream_bw[TRD_STREAMS_MAX]; /* aggregate bytes per second of k
                             ranks streaming a[i] += b[i] at once,
                             stream_bw[k - 1], k = 1 .. min(p, cores):
                             non-decreasing and at most k stream_bw[0] */
} trd_profile;
/* Measures a profile (collective): messages of 0 B to 8 MiB between
 * ranks 0 and 1, and where the communicator's node map puts ranks on
 * several nodes, of 0 B to 256 KiB between rank 0 and the lowest rank on
 * another node (far_latency, far_per_byte), and combines of 1 Ki to 1 Mi elements of op on every rank
 * (the slowest kept), each fitted by least squares (GSL) to a line, and
 * the parallelism (as trd_comm_calibrate's, with 256 Ki elements), the
 * receive-and-combine saving (1 MiB messages), and the aggregate memory bandwidth of 1 to min(p, cores) ranks streaming
 * a[i] += b[i] over 8 MiB arrays at once (median of 5 rounds, each from
 * the first start to the last end; made non-decreasing and at most k times one stream:
 * noise, not the node, breaks either), measured once per communicator;
 * every rank gets the same values.  A few tens of milliseconds plus the
 * operator's own time.  It starts with a barrier, which waits for late
 * ranks as long as the communicator's deadline; every wait after it has a
 * deadline of at most TRD_PROFILE_TIMEOUT seconds: a stall while every
 * rank measures is a fault, and ends in TRD_ETIMEDOUT soon. */
#define TRD_PROFILE_TIMEOUT 60.0
trd_status trd_comm_profile(trd_comm *comm, const trd_op *op, trd_profile *profile);
/* Sets opts->latency, flight, d, c, combine_fixed, parallelism and
 * recv_combine_saving for a
 * call of count elements of elem_size bytes under profile, and clears
 * opts->measure_model (the model is given).  TRD_EINVAL for negative or
 * non-finite values. */
trd_status trd_profile_apply(const trd_profile *profile, int64_t count, size_t elem_size,
                             trd_coll_opts *opts);
/* A platform measured pair by pair, for the heterogeneous model (what
 * `treduce calibrate --matrix` writes as a cost file): a transfer of b
 * bytes from rank i to rank j costs latency[i * p + j] + b *
 * per_byte[i * p + j], a combine of m elements of the operator on rank i
 * combine_fixed[i] + m * per_element[i]; diagonal entries are 0. */
typedef struct trd_pair_profile {
    int32_t p;
    double *latency;       /* p * p, seconds */
    double *per_byte;      /* p * p, seconds per byte */
    double *probe_bytes;   /* p * p: the message size per_byte was measured with */
    double *combine_fixed; /* p, seconds per combine call */
    double *per_element;   /* p, seconds per element */
} trd_pair_profile;
/* Measures it (collective; every rank gets the same values): every ordered
 * pair (i, j) in turn, one pair at a time so that no two measurements
 * share a link, by round trips timed on i: small messages (the latency is
 * half their median) and messages grown from 4 KiB by 2x until they add
 * 60 ms to the round trip (at most 64 MiB); per_byte is the fastest of
 * five round trips of that size, less the fastest small one, over the size
 * (the fastest: stalls of a busy machine only add time; if it adds less
 * than 30 ms, a stall stopped the growth: the size doubles on); then each
 * rank's combines of 64 Ki and 1 Mi elements of op, the ranks in turn.
 * About 1 s per ordered pair on links of 10 to 1000 Mbit/s.  The arrays
 * of out are allocated here: release them with trd_pair_profile_free
 * (also on failure, which leaves them NULL). */
trd_status trd_comm_profile_pairs(trd_comm *comm, const trd_op *op, trd_pair_profile *out);
void trd_pair_profile_free(trd_pair_profile *profile);
/* What a profile was measured on.  A profile describes one wire and
 * one operator on one element type: applied to another it predicts
 * another machine (`treduce run --profile` refuses such a mismatch, and
 * warns when only the rank count differs: the parallelism is measured for
 * p ranks).  Names are C strings of fewer than TRD_PROFILE_NAME_MAX bytes. */
#define TRD_PROFILE_NAME_MAX 32
typedef struct trd_profile_meta {
    union {
        char wire[TRD_PROFILE_NAME_MAX];      /* trd_comm_wire: "threads", "mpi" */
        char transport[TRD_PROFILE_NAME_MAX]; /* deprecated: wire's older name */
    };
    int32_t p;                            /* ranks it was measured on */
    char op[TRD_PROFILE_NAME_MAX];        /* the operator: "sum", "matrix", ... */
    char type[TRD_PROFILE_NAME_MAX];      /* the element type: "double", ... */
    size_t elem_size;                     /* bytes per element (0: not recorded) */
    size_t shm_max;                       /* trd_comm_shm_max when measured */
} trd_profile_meta;
/* Writes profile and meta to path as JSON (docs/RUNTIME.md, "Profiles":
 * the format of `treduce calibrate --out`).  TRD_EINVAL for a negative or
 * non-finite value, flight above latency, or missing metadata; TRD_EIO
 * naming path when it cannot be written. */
trd_status trd_profile_save(const char *path, const trd_profile *profile,
                            const trd_profile_meta *meta);
/* Reads a profile written by trd_profile_save or `treduce calibrate --out`
 * into *profile and *meta (meta may be NULL).  TRD_EIO when path cannot be
 * read; TRD_EINVAL naming the file and the line (malformed JSON) or the
 * key when it is not a profile: a key missing, unknown or of the wrong
 * type, a value negative or not finite, flight_s above latency_s, a
 * bandwidth_GBps that disagrees with seconds_per_byte, another format
 * version.  flight_s and parallelism, which older profiles lack, are then
 * 0 (elem_size too: not recorded). */
trd_status trd_profile_load(const char *path, trd_profile *profile, trd_profile_meta *meta);

/* The time the model predicts for this call (same arguments as the call,
 * opts->d, c, latency as from trd_comm_calibrate): the plan's makespan
 * (evaluator or simulator, plan.c), or for a dynamic algorithm one
 * simulation with constant costs.  Local: no communication.  A plan of
 * any size is simulated (in O(steps log steps) time); *seconds is NaN
 * only where the simulation fails (trd_plan_makespan). */
trd_status trd_comm_predict(trd_comm *comm, int64_t count, const trd_op *op, int32_t root,
                            trd_collective coll, const trd_coll_opts *opts, double *seconds);
/* (For a reduce-scatter, count is the whole input: p times a part.) */

/* One algorithm considered by "auto": its name, the model's time for the
 * call (seconds), its measured time (seconds: the slowest rank's median
 * over its tuning calls; NaN when it was not timed) and TRD_OK or why it
 * cannot run the call (then predicted is +inf). */
typedef struct trd_candidate {
    const char *algo;
    double predicted;
    double measured;
    trd_status status;
} trd_candidate;
/* Every registered algorithm for this call (same arguments as the call),
 * sorted by predicted time, those that cannot run it last; out has room
 * for trd_algo_count() entries.  The first is what "auto" runs; the choice
 * depends only on the arguments and the model (opts->d, c, latency, or
 * with opts->measure_model the communicator's profile of op, agreed by
 * every rank), so every rank makes the same one.  With opts->tune > 0,
 * once this communicator has timed the candidates for these arguments
 * (trd_coll_opts.tune), the one it keeps comes first and the timed ones
 * carry their measured time; the others stay in the model's order.
 * Local - no communication - except where opts->measure_model needs a
 * profile of op that the communicator does not have yet: then every rank
 * must call it (it measures one, trd_comm_profile). */
trd_status trd_comm_explain(trd_comm *comm, int64_t count, const trd_op *op, int32_t root,
                            trd_collective coll, const trd_coll_opts *opts, trd_candidate *out,
                            size_t *n);

#ifdef __cplusplus
}
#endif
#endif
