/* sim.c: simulation of any registered algorithm: its plan (built with the
 * mean costs) or its dynamic policy, run by the engine over the
 * virtual-time transport. */
#include "sim/sim.h"

#include <math.h>
#include <stdlib.h>

#include "core/error.h"
#include "core/memory.h"
#include "plan/builders.h"

/* Rough memory of a dynamic simulation per rank: two steps and counters in
 * the engine (~120 bytes), the policy's tables (~16), and in the transport
 * two step records, flags and partners (~80), room for four events in the
 * heap and in each of two lanes (~200) and the rank's lists and their idle
 * copy (~36). */
#define SIM_BYTES_PER_RANK 450.0

static trd_status check_inputs(const trd_algo *a, const trd_params *p, const trd_costs *k,
                               trd_port port)
{
    trd_status st;
    if (!p || !k)
        return trd_fail(TRD_EINVAL, "simulate: NULL argument");
    if (k->n != p->n)
        return trd_fail(TRD_EINVAL, "simulate: the cost model is for n = %lld ranks but the "
                        "simulation has n = %lld", (long long)k->n, (long long)p->n);
    if (port != TRD_PORT_HALF && port != TRD_PORT_FULL && port != TRD_PORT_MULTI)
        return trd_fail(TRD_EINVAL, "simulate: unknown port model %d", (int)port);
    if (a->kind == TRD_KIND_DYNAMIC && (p->n < 1 || p->n > TRD_N_MAX))
        return trd_fail(TRD_EINVAL, "n = %lld is out of range: need 1 <= n <= %lld",
                        (long long)p->n, (long long)TRD_N_MAX);
    if (a->kind == TRD_KIND_DYNAMIC && (st = trd_check_memory(p->n, SIM_BYTES_PER_RANK,
                                            "a simulation per thread")) != TRD_OK)
        return st;
    return trd_algo_check_operator(a, p->noncommutative);
}

trd_status trd_sim_init(trd_sim *sim, const char *algo_name, const trd_params *params,
                        const trd_costs *costs, trd_port port)
{
    size_t index;
    *sim = (trd_sim){0};
    trd_status st = trd_algo_find(algo_name, &index);
    if (st != TRD_OK)
        return st;
    const trd_algo *a = trd_algo_entry(index);
    if ((st = check_inputs(a, params, costs, port)) != TRD_OK)
        return st;
    int32_t n = (int32_t)params->n;
    if (a->kind == TRD_KIND_DYNAMIC) {
        if ((st = a->policy(n, &sim->policy)) == TRD_OK)
            st = trd_engine_create(&sim->engine, NULL, n, &sim->policy);
    } else {
        trd_params p = *params;
        p.d = costs->mean_d; /* planners are clairvoyant of the means only, */
        p.c = costs->mean_c;
        if ((a->caps & (TRD_CAP_COSTS | TRD_CAP_LINKS)) && !p.costs)
            p.costs = costs; /* but those that read the bases get them */
        if ((st = trd_plan_create(&sim->plan, algo_name, &p)) == TRD_OK)
            st = trd_engine_create(&sim->engine, sim->plan, n, NULL);
    }
    if (st == TRD_OK)
        st = trd_virtual_init(&sim->virt, n, port, costs);
    if (st == TRD_OK)
        st = trd_virtual_set_nodes(&sim->virt, params->node_of, params->far_d,
                                   params->far_latency);
    if (st != TRD_OK)
        trd_sim_destroy(sim);
    return st;
}

trd_status trd_sim_run(trd_sim *sim, uint64_t seed, int64_t run, double *makespan,
                       int32_t *result_rank)
{
    trd_virtual_reset(&sim->virt, seed, run);
    trd_status st = trd_virtual_run(&sim->virt, sim->engine, result_rank);
    *makespan = sim->virt.now;
    if (st == TRD_OK && !isfinite(*makespan))
        return trd_fail(TRD_EINVAL, "run %lld: the simulated makespan is not finite (%g): the "
                        "costs (mean d %g, mean c %g, cv %g) overflow a double", (long long)run,
                        *makespan, sim->virt.costs->mean_d, sim->virt.costs->mean_c,
                        sim->virt.costs->cv);
    return st;
}

void trd_sim_destroy(trd_sim *sim)
{
    trd_engine_free(sim->engine);
    trd_plan_free(sim->plan);
    if (sim->policy.state)
        sim->policy.destroy(sim->policy.state);
    if (sim->virt.ranks)
        trd_virtual_destroy(&sim->virt);
    *sim = (trd_sim){0};
}

trd_status trd_simulate(const char *algo, const trd_params *params, const trd_costs *costs,
                        trd_port port, uint64_t seed, int64_t run, double *makespan)
{
    trd_sim sim;
    if (!makespan)
        return trd_fail(TRD_EINVAL, "simulate: NULL argument (makespan)");
    trd_status st = trd_sim_init(&sim, algo, params, costs, port);
    if (st != TRD_OK)
        return st;
    st = trd_sim_run(&sim, seed, run, makespan, NULL);
    trd_sim_destroy(&sim);
    return st;
}

trd_costs trd_plan_constant_costs(const trd_params *p)
{
    if (p->costs) /* constant heterogeneous bases (latency and the rest are 0) */
        return (trd_costs){.n = p->n, .dist = TRD_DIST_CONST, .mean_d = p->costs->mean_d,
                           .mean_c = p->costs->mean_c, .dmat = p->costs->dmat,
                           .cvec = p->costs->cvec, .draw = TRD_DRAW_ONE};
    return (trd_costs){.n = p->n, .dist = TRD_DIST_CONST, .mean_d = p->d - p->latency,
                       .mean_c = p->c - p->combine_fixed, .latency = p->latency,
                       .flight = p->flight, .recv_combine_saving = p->recv_combine_saving,
                       .combine_fixed = p->combine_fixed, .draw = TRD_DRAW_ONE};
}

trd_status trd_plan_simulate_makespan(const trd_plan *plan, double *makespan)
{
    const trd_params *p = trd_plan_params(plan);
    trd_costs costs = trd_plan_constant_costs(p);
    trd_engine *engine = NULL;
    trd_virtual virt = {0};
    trd_status st = trd_engine_create(&engine, plan, (int32_t)p->n, NULL);
    if (st == TRD_OK)
        st = trd_virtual_init(&virt, (int32_t)p->n, TRD_PORT_FULL,
                              &costs);
    if (st == TRD_OK)
        st = trd_virtual_set_nodes(&virt, p->node_of, p->far_d, p->far_latency);
    if (st == TRD_OK) {
        trd_virtual_reset(&virt, 0, 0);
        st = trd_virtual_run(&virt, engine, NULL);
        *makespan = virt.now;
    }
    if (virt.ranks)
        trd_virtual_destroy(&virt);
    trd_engine_free(engine);
    return st;
}
