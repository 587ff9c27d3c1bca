/* treduce/simulate.h: cost models, simulation of plans and dynamic
 * policies, Monte-Carlo studies and Markov analysis. */
#ifndef TREDUCE_SIMULATE_H
#define TREDUCE_SIMULATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "treduce/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Cost models and simulation (benoit-canon-marchal) ---- */

/* How each transfer and each combine cost is drawn: base cost times a
 * factor of mean 1 from this distribution. */
typedef enum trd_dist {
    TRD_DIST_CONST = 0, /* factor 1 */
    TRD_DIST_EXP = 1,   /* exponential (CV 1) */
    TRD_DIST_GAMMA = 2  /* gamma with the given coefficient of variation */
} trd_dist;

/* Port model: how many transfers a rank takes part in at once. */
typedef enum trd_port {
    TRD_PORT_HALF = 0,  /* one transfer at a time, send or receive (canon-antoniu) */
    TRD_PORT_FULL = 1,  /* one send and one receive at a time (legrand et al.) */
    TRD_PORT_MULTI = 2  /* unconstrained */
} trd_port;

/* A homogeneous random cost model for n ranks: transfer base mean_d,
 * combine base mean_c (both finite, >= 0), factors from `dist` with
 * coefficient of variation cv (>= 0; must be 1 for TRD_DIST_EXP, is
 * ignored-and-must-be-0 for TRD_DIST_CONST). */
trd_status trd_costs_create(trd_costs **out, int64_t n, trd_dist dist, double mean_d,
                            double mean_c, double cv);
void trd_costs_free(trd_costs *costs);
/* Heterogeneous bases from a file (docs/SIMULATION.md): a line "n N", then
 * N lines of N transfer times d[i][j] (i sends to j), then one line of N
 * combine times c[i]; '#' starts a comment.  N must match.  On failure the
 * model is left homogeneous (any earlier heterogeneous bases are dropped). */
trd_status trd_costs_load(trd_costs *costs, const char *path);
/* A constant model (TRD_DIST_CONST) with the bases of a cost file, for the
 * n its header gives; mean_d and mean_c are the file's means
 * (trd_costs_mean).  On failure *out is NULL. */
trd_status trd_costs_read(trd_costs **out, const char *path);
/* Heterogeneous bases from a named preset (`trd_costs_preset_names`):
 * "lower-to-higher": d[i][j] = mean_d if i < j else D*mean_d (benoit Sec. 4,
 *   worst case of Binomial-stat and Tree-dyn);
 * "fib-root-slow": d[i][0] = D*mean_d, all other transfers mean_d (the
 *   Fibonacci-stat worst case of Sec. 4);
 * "higher-to-lower": d[i][j] = D*mean_d if i > j else mean_d (Figure 3). */
trd_status trd_costs_preset(trd_costs *costs, const char *name, double D);
const char *trd_costs_preset_names(void);
/* Bases of a cluster of nodes (trd_params.node_of, of costs' n ranks):
 * d[i][j] = mean_d between two ranks of one node, D * mean_d between two
 * nodes, d[i][i] = 0, c[i] = mean_c.  TRD_EINVAL naming a bad D or a node
 * out of [0, n); as trd_costs_load on failure. */
trd_status trd_costs_nodes(trd_costs *costs, const int32_t *node_of, double D);
/* Random heterogeneous bases (docs/HETEROGENEOUS.md), reproducible from
 * seed: every factor f below is log-uniform in [1, spread] (spread >= 1).
 * model "links": d[i][j] = mean_d f_ij for every ordered pair (links of
 * their own speeds); "nodes": rank i has a factor f_i and d[i][j] =
 * mean_d max(f_i, f_j) (a transfer runs at its slower end's speed).  Both:
 * c[i] = mean_c g_i, with g_i another factor.  d[i][i] = 0.  TRD_EINVAL
 * naming a bad model or spread; as trd_costs_load on failure. */
trd_status trd_costs_random(trd_costs *costs, const char *model, double spread,
                            uint64_t seed);
/* Writes the bases as a cost file trd_costs_load reads back exactly
 * (homogeneous: mean_d off the diagonal, 0 on it, and mean_c) to path, or
 * to the standard output when path is NULL.  TRD_EIO naming the path when
 * it cannot be written. */
trd_status trd_costs_save(const trd_costs *costs, const char *path);
/* The model's n; the base of a transfer from rank i to rank j and of a
 * combine on rank i (NaN for a rank out of range). */
int64_t trd_costs_n(const trd_costs *costs);
double trd_costs_transfer(const trd_costs *costs, int64_t from, int64_t to);
double trd_costs_combine(const trd_costs *costs, int64_t rank);
/* The mean base of a transfer between two distinct ranks (0 for n = 1)
 * and of a combine: the homogeneous model that matches the bases, what a
 * planner that does not read heterogeneous costs is given. */
void trd_costs_mean(const trd_costs *costs, double *mean_d, double *mean_c);

/* Statistics of a Monte-Carlo study of one algorithm. */
typedef struct trd_mc_stats {
    int64_t runs;
    double mean, std, q10, q50, q90, min, max;
} trd_mc_stats;

typedef void (*trd_progress_fn)(void *ctx, int64_t done, int64_t total);

/* One simulation run of algorithm `algo` (a planner: its plan, built with
 * d = mean_d, c = mean_c and params->{K, root, noncommutative}; or a dynamic
 * policy) on params->n ranks under `costs` and `port`.  Run r of seed s
 * draws its costs from its own streams, so the k-th started transfer (and
 * combine) has the same cost for every algorithm (common random numbers). */
trd_status trd_simulate(const char *algo, const trd_params *params,
                        const trd_costs *costs, trd_port port, uint64_t seed,
                        int64_t run, double *makespan);

/* `runs` runs (0..runs-1) over `threads` threads (0 = all cores); results
 * are identical for any thread count.  samples (optional) gets every
 * makespan in run order. */
trd_status trd_monte_carlo(const char *algo, const trd_params *params,
                           const trd_costs *costs, trd_port port, uint64_t seed,
                           int64_t runs, int threads, trd_progress_fn progress,
                           void *progress_ctx, trd_mc_stats *stats, double *samples);

/* ---- Timed plans: every step at its model time ---- */

/* The start and end of every step of plan in the run whose end
 * trd_plan_makespan gives (start[k], end[k] for the k-th step in rank
 * order, trd_plan_total_steps entries each): the steps' own times where
 * the tree evaluator timed the plan (or a recorded run, trd_plan_record),
 * else those of one simulation under the plan's constant costs, one-port
 * full duplex, as trd_plan_makespan runs it (a transfer: from when both
 * ports take it to its arrival; a combine: from when its rank is free to
 * its end; a RECV_COMBINE: its transfer and then its combine).  The last
 * end is the makespan.  TRD_EINVAL for a NULL argument; a failed
 * simulation's status. */
trd_status trd_plan_step_times(const trd_plan *plan, double *start, double *end);

/* The plan of algorithm `algo` for params as one run carries it out, its
 * steps timed (trd_plan_step_times): a static algorithm's trd_plan_create;
 * a dynamic one (tree-dyn, nc-tree-dyn, which trd_plan_create refuses)
 * run once in the simulator under params' constant costs, one-port full
 * duplex as trd_plan_makespan's runs, and written down: each rank's
 * programs as its policy gave them (RECV then COMBINE, each step after the
 * one before, ending with the SEND of its partial result), the tree they
 * formed (trd_plan_parent, trd_plan_send_start), and as root the rank
 * that ended with the result (params.root must be 0: the policy, not the
 * caller, chooses it); the makespan is the run's, the bounds those of
 * trd_plan_create.  Such a plan is one run of the policy, not the policy:
 * the runtime runs a dynamic algorithm by its policy. */
trd_status trd_plan_record(trd_plan **out, const char *algo, const trd_params *params);

/* Tree-dyn with exponential transfers of mean mean_d and no computation
 * (benoit Sec. 5): expected makespan and variance by first-step analysis of
 * its Markov chain, any n >= 1. */
trd_status trd_markov_tree_dyn(int64_t n, double mean_d, double *mean, double *variance);

#ifdef __cplusplus
}
#endif
#endif
