/* sim.h: one simulator instance (an engine over the virtual transport),
 * owned by one thread; the Monte-Carlo driver makes one per thread. */
#ifndef TRD_SIM_SIM_H
#define TRD_SIM_SIM_H

#include "engine/engine.h"
#include "sim/virtual.h"

typedef struct trd_sim {
    trd_plan *plan;      /* static algorithms */
    trd_policy policy;   /* dynamic algorithms (state NULL otherwise) */
    trd_engine *engine;
    trd_virtual virt;
} trd_sim;

trd_status trd_sim_init(trd_sim *sim, const char *algo, const trd_params *params,
                        const trd_costs *costs, trd_port port);
/* Run `run` of `seed`: its makespan and the rank that holds the result. */
trd_status trd_sim_run(trd_sim *sim, uint64_t seed, int64_t run, double *makespan,
                       int32_t *result_rank);
void trd_sim_destroy(trd_sim *sim);

/* The makespan of plan's programs under constant costs d - latency per
 * whole-buffer transfer (scaled by each step's share) plus latency per
 * message, c per whole-buffer combine - or with params.costs, d[i][j] and
 * c[i] -, one-port full duplex (a pipeline stage receives while it sends,
 * reduce-parallel-pattern Sec. 3): plan_makespan.c, for the plans the
 * tree evaluator does not cover. */
trd_status trd_plan_simulate_makespan(const trd_plan *plan, double *makespan);
/* Those constant costs of p (its d, c, latency and the rest, or the bases
 * of p->costs), which every run of a plan's model is timed under
 * (plan_makespan.c, plan_times.c). */
trd_costs trd_plan_constant_costs(const trd_params *p);

#endif
