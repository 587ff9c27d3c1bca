/* registry.h: the algorithm table generated from registry.def. */
#ifndef TRD_PLAN_REGISTRY_H
#define TRD_PLAN_REGISTRY_H

#include "model/bounds.h"
#include "plan/algorithms.h"

typedef trd_status (*trd_schedule_fn)(trd_plan *plan);
/* Segment count chosen by a pipelined algorithm from params (d, c,
 * latency, n): reduce-parallel-pattern Sec. 3 and 4. */
typedef int64_t (*trd_segments_fn)(const trd_params *params);

/* What an algorithm can do: its row's flags (registry.def says what each
 * means), and the collectives its kind runs (set by the row macro). */
enum {
    TRD_CAP_K = 1,             /* reads params.K */
    TRD_CAP_COSTS = 2,         /* reads params.costs; refuses to plan without them */
    TRD_CAP_COMMUTATIVE = 4,   /* commutative operators only */
    TRD_CAP_REPRODUCIBLE = 8,  /* order-deterministic: reproducible mode may run it */
    TRD_CAP_FACTORIAL_P = 16,  /* p = n! ranks only */
    TRD_CAP_REDUCE = 32,       /* runs a reduce (kinds tree, pipelined, dynamic) */
    TRD_CAP_ALLREDUCE = 64,    /* runs an allreduce (kinds tree, pipelined, exchange) */
    TRD_CAP_NODES = 128,       /* reads params.node_of */
    TRD_CAP_REDUCE_SCATTER = 256, /* runs a reduce-scatter (kind reduce-scatter) */
    TRD_CAP_SCAN = 512,        /* runs a scan and an exscan (kind scan) */
    TRD_CAP_DEFAULT = 1024,    /* the default of the collectives it runs */
    TRD_CAP_LINKS = 2048       /* reads params.costs when given, to spare slow links */
};

typedef struct trd_algo {
    const char *name;
    trd_algo_kind kind;
    trd_build_fn build;   /* tree planners; NULL otherwise */
    trd_schedule_fn schedule; /* exchange algorithms; NULL otherwise */
    trd_segments_fn segments; /* pipelined trees: their segment count; NULL: 1 */
    trd_status (*policy)(int32_t n, trd_policy *out); /* NULL for planners */
    trd_bound_fn upper_bound;
    const char *bound_source;
    unsigned caps;        /* TRD_CAP_* */
    const char *description;
} trd_algo;

/* The entry of algorithm i < trd_algo_count(). */
const trd_algo *trd_algo_entry(size_t i);

/* TRD_EUNSUPPORTED, naming algorithm a and why, when its flags refuse a
 * non-commutative operator (TRD_CAP_COMMUTATIVE), a plan without
 * heterogeneous costs (TRD_CAP_COSTS), reproducible mode (no
 * TRD_CAP_REPRODUCIBLE), the collective (TRD_CAP_REDUCE,
 * TRD_CAP_ALLREDUCE) or p ranks (TRD_CAP_FACTORIAL_P); else TRD_OK. */
trd_status trd_algo_check_operator(const trd_algo *a, bool noncommutative);
trd_status trd_algo_check_costs(const trd_algo *a, bool has_costs);
trd_status trd_algo_check_reproducible(const trd_algo *a, bool reproducible);
trd_status trd_algo_check_collective(const trd_algo *a, trd_collective c);
trd_status trd_algo_check_ranks(const trd_algo *a, int64_t p);
/* Whether a runs this call: every check above but costs, without a
 * message (auto's candidates). */
bool trd_algo_fits(const trd_algo *a, trd_collective c, bool noncommutative, bool reproducible,
                   int64_t p);
/* The name of the first row flagged TRD_CAP_DEFAULT that runs c (a call
 * with no options runs it), NULL for none. */
const char *trd_algo_default_for(trd_collective c);
/* The TRD_CAP_* flag of the collective c. */
unsigned trd_collective_cap(trd_collective c);

#endif
