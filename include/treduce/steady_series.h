/* treduce/steady_series.h: running the periodic schedule of a solved
 * Series of Reduces (Legrand, Marchal and Robert 2004, Sec. 4.3-4.5).  In
 * libtreduce_steady (pkg-config treduce-steady).
 *
 * trd_steady_series_plan compiles `ops` consecutive reductions that follow
 * the weighted trees of a trd_steady into ONE ordinary plan (the schedule
 * IR of treduce.h): one rank per platform node (routers receive and
 * forward, never combine), the buffer cut into one block per operation.
 * The plan is then simulated by the library's engine over the virtual-time
 * transport (trd_steady_series_simulate), or run for real on any
 * communicator of as many ranks (trd_comm_run_plan) - the same plan both
 * ways.  docs/STEADY.md ("Running a steady-state schedule") describes the
 * schedule and shows measurements.
 *
 * Example: simulate 1000 reductions and compare with the throughput TP.
 *
 *     trd_steady_series_stats s;
 *     if (trd_steady_series_simulate(st, pf, 1000, &s) == TRD_OK)
 *         printf("%g of TP = %g\n", s.steady_throughput, s.tp);
 */
#ifndef TREDUCE_STEADY_SERIES_H
#define TREDUCE_STEADY_SERIES_H

#include <stdint.h>

#include "treduce/plan.h"
#include "treduce/platform.h"
#include "treduce/steady.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most operations one plan holds (one block each). */
#define TRD_SERIES_OPS_MAX TRD_SEGMENTS_MAX

/* The plan of operations 0 .. ops-1 of the series solved in st (pf: the
 * platform it was solved on).  Rank i is node i; trd_plan_result_rank is
 * the target; block b holds operation b: at the start, participant k's
 * value for it on the rank of node k's position (trd_steady_series_node),
 * at the end the reduction v_0 (+) ... (+) v_N at the target.  Operation b
 * enters period floor(b / W) (W operations per period, spread over the
 * trees by their weights) and each of its transfers and computations
 * happens a fixed number of periods later (its depth in the tree); SENDs
 * carry the release time of their slot in the period's matchings.
 * Errors: TRD_EUNSUPPORTED for a scatter or gossip, or a series whose
 * throughput is 0 (a participant cannot reach the target) or whose period
 * is too long to write out; TRD_EINVAL for ops outside
 * 1..TRD_SERIES_OPS_MAX, NULL arguments, or another platform. */
trd_status trd_steady_series_plan(const trd_steady *st, const trd_platform *pf, int64_t ops,
                                  trd_plan **out);

/* What a simulation of the series measured (times in the platform's time
 * units). */
typedef struct trd_steady_series_stats {
    int64_t ops;
    double tp;             /* the LP's throughput TP (operations per time unit) */
    double period;         /* length of one period of the schedule */
    int64_t period_ops;    /* operations entering per period */
    int32_t depth;         /* periods from an operation's first transfer to its
                              result: the initialisation phase lasts depth - 1
                              periods, the clean-up phase as long */
    double makespan;       /* the last result's time */
    double throughput;     /* ops / makespan */
    double steady_throughput; /* results per time unit in the steady state:
                              over the most whole periods that fit between the
                              first-quarter and the last-quarter result, which
                              are in the steady state when ops >= 4 *
                              period_ops * (depth + 2); below that, too few
                              operations to measure one: throughput */
    double ratio_to_tp;    /* steady_throughput / tp */
} trd_steady_series_stats;

/* Simulates the plan of trd_steady_series_plan with the platform's costs:
 * a message of v[k,m] on link e takes size(v[k,m]) * cost(e), a task on
 * node i task_size / speed_i; one-port full duplex (a node sends one
 * message and receives one at a time), computations overlap
 * communications, one computation at a time per node.  Errors as
 * trd_steady_series_plan, and TRD_EUNSUPPORTED when the messages the
 * trees send have different sizes. */
trd_status trd_steady_series_simulate(const trd_steady *st, const trd_platform *pf, int64_t ops,
                                      trd_steady_series_stats *out);

/* Participants of st (N + 1 of them), and the node of participant k
 * (0 <= k < count; -1 otherwise). */
int32_t trd_steady_series_participants(const trd_steady *st);
int32_t trd_steady_series_node(const trd_steady *st, int32_t k);

#ifdef __cplusplus
}
#endif

#endif
