/* treduce/plan.h: problem parameters, the algorithm registry, plans and
 * the schedule IR they compile to. */
#ifndef TREDUCE_PLAN_H
#define TREDUCE_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "treduce/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Problem parameters (plain data, so callers can fill them). ---- */

/* Largest rank count a plan accepts (ranks are 32-bit). */
#define TRD_N_MAX ((int64_t)INT32_MAX - 1)
/* Largest segment count a plan accepts. */
#define TRD_SEGMENTS_MAX 65536

/* A cost model for the simulator and, as heterogeneous costs, for the
 * planners (see "Cost models and simulation" below). */
typedef struct trd_costs trd_costs;

/* The collective a plan computes (trd_params.collective).  What each rank
 * holds in its buffer (slot 0) at the end, with x_r rank r's input and (+)
 * the operator, combined in rank order:
 *   TRD_COLL_REDUCE          the root: x_0 (+) ... (+) x_{n-1};
 *   TRD_COLL_ALLREDUCE       every rank: the same;
 *   TRD_COLL_REDUCE_SCATTER  rank r: block r of it (the buffer cut into n
 *                            parts of equal size, each further cut into
 *                            segments: block r m + j is segment j of part r;
 *                            the runtime's uneven counts move the parts'
 *                            bounds, not the blocks);
 *   TRD_COLL_SCAN            rank r: x_0 (+) ... (+) x_r, the whole buffer;
 *   TRD_COLL_EXSCAN          rank r > 0: x_0 (+) ... (+) x_{r-1} (rank 0:
 *                            undefined, as in MPI).
 * REDUCE is 0 and ALLREDUCE 1, so a bool that said "allreduce" still says
 * the same where a trd_collective is asked for. */
typedef enum trd_collective {
    TRD_COLL_REDUCE = 0,
    TRD_COLL_ALLREDUCE = 1,
    TRD_COLL_REDUCE_SCATTER = 2,
    TRD_COLL_SCAN = 3,
    TRD_COLL_EXSCAN = 4
} trd_collective;
/* The collective's name ("reduce", "allreduce", "reduce-scatter", "scan",
 * "exscan"; NULL out of range), and its value from one (TRD_EINVAL naming
 * the valid ones). */
const char *trd_collective_name(trd_collective c);
trd_status trd_collective_parse(const char *name, trd_collective *out);

typedef struct trd_params {
    int64_t n;           /* number of ranks, 1 <= n <= TRD_N_MAX */
    double d;            /* time of one transfer (finite, >= 0) */
    double c;            /* time of one combine (finite, >= 0) */
    int64_t K;           /* limit of the greedy-k-* planners (>= 1); 0 = unset */
    int64_t root;        /* rank that receives the result, 0 <= root < n */
    bool noncommutative; /* number ranks so every combine joins adjacent rank
                            ranges (canon-antoniu Sec. 4.1) */
    int64_t segments;    /* cut the buffer into this many segments (blocks)
                            so that receiving segment k+1 overlaps combining
                            segment k; 0 = the algorithm's choice (1, or for
                            pipeline / pipelined-fibonacci the optimum of
                            reduce-parallel-pattern Sec. 3/4 from d, c and
                            latency) */
    double latency;      /* the part of d paid per message whatever its size
                            (0 <= latency <= d): a segment of 1/m of the
                            buffer costs latency + (d - latency)/m to send
                            and c/m to combine (but see combine_fixed) */
    double combine_fixed; /* the part of c paid per combine whatever its
                            size (0 <= combine_fixed <= c, e.g. an operator
                            with a cost per call): a segment's combine costs
                            combine_fixed + (c - combine_fixed)/m */
    bool allreduce;      /* every rank ends with the result (tree
                            algorithms: reduce then broadcast over the same
                            tree; exchange algorithms are allreduce only) */
    double flight;       /* the part of latency spent in flight (LogP's L:
                            0 <= flight <= latency): a transfer holds its
                            two ports for d - flight only and is received
                            flight later, so a rank may take its next
                            message while the last one is still on its way.
                            Simulated (plans' makespans are then simulated,
                            never closed forms); the planners ignore it */
    double recv_combine_saving; /* the share of a transfer's size-dependent
                            time (d - latency) that a RECV_COMBINE step does
                            not pay (0 <= it <= 1): a wire that combines a
                            message where the sender keeps it (threads)
                            never copies it, and the combine's slower reads
                            of it are what is left.  0: a transfer then a
                            combine (a wire that lands the message first).
                            Simulated like flight; the planners ignore it */
    const trd_costs *costs; /* NULL: the homogeneous model (d, c).  Else the
                            clairvoyant heterogeneous model of benoit Sec.
                            3.1 for costs' n = n ranks: rank i sends the
                            whole buffer to rank j in d[i][j] and combines
                            in c[i] (trd_costs_load, trd_costs_preset,
                            trd_costs_random; or mean_d, mean_c when it has
                            no bases; its distribution is ignored: costs
                            are constant).  The algorithms that read it
                            (trd_algo_uses_costs) plan for it; the others
                            plan with d and c (e.g. the means,
                            trd_costs_mean).  Every plan is then timed
                            under it: makespan, lower bound and the steps'
                            times (a tree's receives in the order its
                            senders become ready under these costs).
                            latency, combine_fixed and flight must
                            be 0 (each d[i][j] is a whole transfer; a
                            segment of 1/m of the buffer costs d[i][j]/m).
                            Borrowed: it must outlive the plan */
    const int32_t *node_of; /* NULL: every rank a node of its own.  Else the
                            node (host) of each rank, node_of[0 .. n), each
                            in [0, n): ranks of one node share memory, ranks
                            of two talk over the network.  Read by the
                            node-aware algorithms (trd_algo_uses_nodes:
                            node-ring); the costs that make a node's
                            transfers cheap are params.costs'
                            (trd_costs_nodes), or far_d's.  Borrowed: it
                            must outlive the plan */
    double far_d;        /* with node_of and no costs: the time of one
                            transfer between two nodes (0: d, as inside one;
                            finite, >= far_latency).  The simulator then
                            also gives each node one link to the network in
                            each direction, which its ranks' transfers to
                            other nodes take in turn (docs/SIMULATION.md,
                            "Nodes"); the planners ignore it */
    double far_latency;  /* of far_d, the part paid per message (0 <= it <=
                            far_d; used when far_d > 0) */
    trd_collective collective; /* what the plan computes (trd_collective);
                            TRD_COLL_REDUCE with allreduce set means
                            TRD_COLL_ALLREDUCE (trd_params_collective);
                            allreduce with another collective is refused */
} trd_params;

/* The collective params asks for: params->collective, or
 * TRD_COLL_ALLREDUCE where only params->allreduce says so. */
trd_collective trd_params_collective(const trd_params *params);

/* Defaults: n = 1, d = 1, c = 1, K unset, root 0, commutative, segments
 * chosen by the algorithm, latency 0, reduce. */
void trd_params_init(trd_params *params);

/* ---- Algorithm registry (one list, src/plan/registry.def). ---- */

/* Number of registered planning algorithms. */
size_t trd_algo_count(void);
/* Name (e.g. "greedy") and one-line description of algorithm i < count. */
const char *trd_algo_name(size_t i);
const char *trd_algo_describe(size_t i);
/* Whether algorithm i reads params.K. */
bool trd_algo_uses_k(size_t i);
/* Whether algorithm i plans for heterogeneous costs (params.costs): it
 * refuses to plan without them (TRD_EUNSUPPORTED naming the algorithm). */
bool trd_algo_uses_costs(size_t i);
/* Whether algorithm i plans with params.costs when it has them: those
 * that need them, and those that only route around slow links with them
 * (node-ring; without costs every link alike). */
bool trd_algo_reads_costs(size_t i);
/* Whether algorithm i plans for the node of each rank (params.node_of;
 * without it, every rank is a node of its own). */
bool trd_algo_uses_nodes(size_t i);
/* Whether algorithm i takes commutative operators only: a plan with
 * params.noncommutative, or a collective call with a non-commutative
 * operator, is refused (TRD_EUNSUPPORTED). */
bool trd_algo_commutative_only(size_t i);
/* Whether algorithm i is order-deterministic: it combines in the same
 * order on every run and, for an allreduce, on every rank, so reproducible
 * mode (trd_coll_opts.reproducible) may run it; the others are refused
 * there (TRD_EUNSUPPORTED). */
bool trd_algo_reproducible(size_t i);
/* Whether algorithm i runs on p = n! ranks only (the n-star graph); other
 * p are refused (TRD_EUNSUPPORTED). */
bool trd_algo_needs_factorial_p(size_t i);
/* Whether algorithm i computes collective c (its registry row's kind). */
bool trd_algo_runs(size_t i, trd_collective c);
/* Whether algorithm i is dynamic (tree-dyn, nc-tree-dyn): it decides at run
 * time, so it has no static plan (trd_plan_create refuses it) and is run by
 * the simulator or the runtime. */
bool trd_algo_is_dynamic(size_t i);
/* What an algorithm is (registry.def):
 *   TRD_KIND_TREE       a reduction tree, unsegmented by default: its plan
 *                       has the closed-form makespan of canon-antoniu;
 *   TRD_KIND_PIPELINED  a tree cut into segments chosen from the model
 *                       (pipeline, pipelined-fibonacci);
 *   TRD_KIND_EXCHANGE   writes every rank's program itself: the allreduce
 *                       exchanges (recursive-doubling, ring, rabenseifner),
 *                       the reduce-scatters and the scans;
 *   TRD_KIND_DYNAMIC    decides at run time (no static plan). */
typedef enum trd_algo_kind {
    TRD_KIND_TREE = 0,
    TRD_KIND_PIPELINED = 1,
    TRD_KIND_EXCHANGE = 2,
    TRD_KIND_DYNAMIC = 3
} trd_algo_kind;
/* Kind of algorithm i < count (TRD_KIND_TREE out of range). */
trd_algo_kind trd_algo_kind_of(size_t i);
/* Index of the algorithm called name; TRD_ENOALGO (with the list of valid
 * names in trd_errmsg) when there is none. */
trd_status trd_algo_find(const char *name, size_t *index);

/* ---- Plans: a reduction tree, its schedule and the model behind it. ---- */

typedef struct trd_plan trd_plan;

/* Builds the plan of algorithm `algo` for `params`, evaluates it under the
 * homogeneous one-port model (canon-antoniu Sec. 3.1, Prop. 3) and compiles
 * its schedule.  On success *out owns a plan to release with trd_plan_free;
 * on failure *out is NULL and nothing leaks. */
trd_status trd_plan_create(trd_plan **out, const char *algo,
                           const trd_params *params);
void trd_plan_free(trd_plan *plan);

const char *trd_plan_algo(const trd_plan *plan);
const trd_params *trd_plan_params(const trd_plan *plan);
/* Time at which the root finishes its last combine (0 when n = 1): the
 * tree evaluator's (Prop. 3) for an unsegmented reduce over a tree; for a
 * segmented plan, an allreduce or an exchange algorithm, the simulator's
 * time with these constant costs, one-port full duplex (a rank may send
 * and receive at once, as pipelines need), until every rank that gets the
 * result has it: simulated at each call (the plan is never written after
 * trd_plan_create, so threads may ask at once; keep the value rather than
 * asking again), NaN if the simulation fails. */
double trd_plan_makespan(const trd_plan *plan);
/* The work of the plan: the time its transfers hold the ports (d less the
 * flight, plus as much of the flight as the copy lasts: a receiver that
 * waited through a long copy must be woken) and its combines take, summed
 * over every step of every rank, with the costs of trd_plan_makespan.  A
 * platform that runs only k ranks' work at once (fewer cores than ranks,
 * a shared memory bus) cannot finish in less than work / k. */
double trd_plan_work(const trd_plan *plan);
/* A lower bound on ANY schedule of these parameters (trd_lower_bound). */
double trd_plan_lower_bound(const trd_plan *plan);
/* The paper's proven upper bound on this algorithm's makespan (NaN when
 * none applies: segmented, allreduce, exchange, heterogeneous costs), and
 * the name of the result it comes from ("Prop. 6", ...), or where there is
 * no value "none (why)": "none (heterogeneous costs)", "none (allreduce)",
 * "none (segmented)", "none (exchange)", ... */
double trd_plan_upper_bound(const trd_plan *plan);
const char *trd_plan_upper_bound_source(const trd_plan *plan);
/* Rank that `rank` sends its partial result to; -1 for the root. */
int32_t trd_plan_parent(const trd_plan *plan, int32_t rank);
/* Model start time of rank's transfer to its parent (after any wait for a
 * busy receiver), from the tree evaluator; NaN for the root, and for a
 * plan it does not time (segmented, allreduce, exchange: there the
 * start of rank's first SEND in trd_plan_step_times is the one that goes
 * with trd_plan_makespan). */
double trd_plan_send_start(const trd_plan *plan, int32_t rank);

/* Makespan of algorithm `algo` for `params` without building the schedule:
 * the cheap path for sweeps (same tree and evaluator as trd_plan_create). */
trd_status trd_makespan(const char *algo, const trd_params *params,
                        double *makespan);

/* A lower bound on the makespan of any schedule for these parameters (no
 * validation beyond n >= 1): homogeneous, Lemma 5's ceil(log2 n) max(d, c);
 * with params->costs, the larger of Alg. 1's optimum with every transfer
 * at its smallest cost (into the root: the root's cheapest input) and every
 * combine at the smallest c[i] off the root, and the longest over ranks of
 * the cheapest path to the root, each hop i -> j costing d[i][j] + c[j]
 * (docs/HETEROGENEOUS.md says why both hold).  Both treat the buffer as
 * indivisible: with params->segments = B > 1 they bound any schedule of
 * the same B blocks, with a block's costs (latency + (d - latency)/B,
 * combine_fixed + (c - combine_fixed)/B; the costs over B). */
double trd_lower_bound(const trd_params *params);

/* ---- The schedule IR: per rank, an ordered program of steps. ---- */

typedef enum trd_step_kind {
    TRD_STEP_SEND = 0,    /* send slot `buf` to `peer` */
    TRD_STEP_RECV = 1,    /* receive from `peer` into slot `buf` */
    TRD_STEP_COMBINE = 2, /* slot `buf` = in (+) buf (LEFT) or buf (+) in (RIGHT),
                             with in = slot `src` */
    TRD_STEP_COPY = 3,    /* slot `buf` = slot `src` */
    TRD_STEP_RECV_COMBINE = 4, /* receive from `peer` and combine on arrival:
                             slot `buf` = msg (+) buf (LEFT) or buf (+) msg
                             (RIGHT); `src` is a scratch slot a wire that
                             cannot combine from the sender's buffer lands
                             the message in first */
    TRD_STEP_SEND_INPUT = 5 /* send blocks of the rank's input (slot 0 as it
                             was at the start, never written before this
                             step) to `peer`; the runtime keeps the input
                             apart, so nothing waits for this step */
} trd_step_kind;

typedef enum trd_side { TRD_SIDE_LEFT = 0, TRD_SIDE_RIGHT = 1 } trd_side;

/* Fusion (the simulator runs exactly what runs).  Every plan
 * trd_plan_create returns has been through one pass at plan time
 * (src/plan/fuse.c) that writes down what the runtime really does with a
 * message: a RECV into scratch whose only reader is a COMBINE of the same
 * blocks into an accumulator no earlier step writes becomes one
 * RECV_COMBINE (the message is folded into the accumulator as it arrives,
 * never stored first), a SEND of slot 0 blocks nothing wrote yet becomes a
 * SEND_INPUT that nothing waits for (the input is never written, so the
 * steps that write slot 0 need not wait for it to leave), and a combine
 * whose result a SEND ships whole gets `ship` (the result may be written
 * into the receiver as it is computed).
 * The simulator charges a RECV_COMBINE its transfer (less
 * recv_combine_saving of its size-dependent part) and then its combine;
 * the runtime's executor interprets the steps as written, without
 * analysing or rewriting them. */

/* One step.  Slot 0 is the rank's own buffer (its accumulator); slots >= 1
 * are scratch buffers of the same size.  A step may start once the steps
 * of the same rank listed in dep[] (indices, -1 = none) have completed;
 * the IR states data dependencies only: how many transfers a rank may take
 * part in at once is the port model's business (one-port in the planners'
 * model), so a rank's RECVs have no dependencies.  `start` and `end` are the
 * step's times in the model the plan was built with where the tree
 * evaluator timed it (an unsegmented tree reduce), else 0: the times that
 * go with trd_plan_makespan are trd_plan_step_times'; `release` (SEND only,
 * else 0) is a time before which the transfer must not start, used by
 * planners that delay transfers on purpose (greedy-k-transfers). */
typedef struct trd_step {
    int32_t kind;  /* trd_step_kind */
    int32_t peer;  /* SEND/RECV: the other rank; otherwise -1 */
    int32_t buf;   /* slot written (RECV, COMBINE, COPY) or read (SEND) */
    int32_t src;   /* COMBINE/COPY: slot read; otherwise -1 */
    int32_t side;  /* COMBINE: trd_side */
    int32_t block; /* first block of the buffer the step covers (the buffer
                      is cut into trd_plan_blocks() blocks: block b holds
                      elements [b*count/B, (b+1)*count/B)); 0 unsegmented */
    int32_t blocks; /* number of consecutive blocks from `block` (0 means 1) */
    int32_t dep[2];
    /* COMBINE, RECV_COMBINE: 0, or 1 + the index of the SEND that ships
     * exactly this step's result (its first on that channel, depending on
     * this step): the runtime may write the result straight into the
     * peer's posted receive as it combines (combine-into-peer). */
    int32_t ship;
    double start;
    double end;
    double release;
} trd_step;

/* Number of steps of rank's program, and a pointer to step i of it.  The
 * pointers stay valid until trd_plan_free. */
size_t trd_plan_step_count(const trd_plan *plan, int32_t rank);
const trd_step *trd_plan_step(const trd_plan *plan, int32_t rank, size_t i);
/* Number of steps of every rank's program together, and where rank's
 * step 0 is among them: in rank order, rank r's step i is number
 * trd_plan_step_offset(plan, r) + i (the order of trd_plan_step_times). */
size_t trd_plan_total_steps(const trd_plan *plan);
size_t trd_plan_step_offset(const trd_plan *plan, int32_t rank);
/* Number of scratch slots (besides slot 0) rank's program uses. */
int32_t trd_plan_scratch_slots(const trd_plan *plan, int32_t rank);
/* Number of blocks B the buffer is cut into (1 when unsegmented).
 * Messages between two ranks that cover the same first block are matched
 * in the order of the two programs (MPI's non-overtaking rule). */
int32_t trd_plan_blocks(const trd_plan *plan);
/* The rank that ends with the reduced value (params.root; every rank holds
 * it too when params.allreduce; for the other collectives, every rank holds
 * its part of the result: trd_collective). */
int32_t trd_plan_result_rank(const trd_plan *plan);

#ifdef __cplusplus
}
#endif
#endif
