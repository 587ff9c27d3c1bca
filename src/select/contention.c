/* contention.c: what a plan's memory traffic costs on a node whose
 * streams share one bus (trd_coll_opts.stream_bw; the curve: model/node.h).
 *
 * The simulator gives every rank a memory path of its own: a transfer's
 * bytes and a combine's elements cost what one stream alone costs.  The
 * memory time of a step is the part of its time its bytes take at one
 * stream's bandwidth B(1): a transfer of b bytes reads and writes them
 * (2b), a combine reads two operands and writes one (3b); a step slower
 * than that (a costly operator, a network) streams only part of its time.
 * Over the plan, M is the sum of the steps' memory times and M_r rank r's;
 * the streams at once are on average
 *
 *     k = min(M / T, M / max_r M_r, runnable)
 *
 * (T the makespan: M / T when the memory work fills the whole makespan;
 * M / max M_r when it comes in bursts, at most every rank's at once;
 * never more than the ranks that run at once, trd_coll_opts.parallelism).
 * At k streams each runs at B(k) / (k B(1)) of its speed, so the busiest
 * rank's memory work, which the makespan waits for, takes
 * s = k B(1) / B(k) times as long: the plan is late by
 * (s - 1) min(T, max_r M_r).  A mean over the plan rather than instant by
 * instant: a binomial tree's 8, 4, 2, 1 transfers at once on 16 ranks
 * count as 3.75 throughout. */
#include "select/contention.h"

#include <math.h>
#include <stdlib.h>

#include "model/node.h"

/* The memory time of a step taking `seconds` for `bytes` of traffic. */
static double memory_time(double seconds, double traffic, double b1)
{
    double t = traffic / b1;
    return seconds < t ? seconds : t;
}

/* Rank r's memory time, under p's constant costs for a buffer of `bytes`. */
static double rank_memory(const trd_plan *plan, int32_t r, double bytes, double b1)
{
    const trd_params *p = trd_plan_params(plan);
    int32_t blocks = trd_plan_blocks(plan);
    double m = 0.0;
    for (size_t i = 0; i < trd_plan_step_count(plan, r); i++) {
        const trd_step *s = trd_plan_step(plan, r, i);
        double share = (double)(s->blocks > 1 ? s->blocks : 1) / (double)blocks;
        /* a fused receive's combine reads the message where it lies: its
         * memory traffic is the combine's, the sender's SEND has the copy */
        if (s->kind == TRD_STEP_SEND || s->kind == TRD_STEP_SEND_INPUT)
            m += memory_time((p->d - p->latency) * share, 2 * bytes * share, b1);
        else if (s->kind == TRD_STEP_COMBINE || s->kind == TRD_STEP_RECV_COMBINE)
            m += memory_time((p->c - p->combine_fixed) * share, 3 * bytes * share, b1);
    }
    return m;
}

static double lateness(double total, double busiest, double makespan, int64_t n,
                       const trd_coll_opts *o)
{
    if (!(makespan > 0) || !(busiest > 0))
        return 0.0;
    double runnable = o->parallelism > 0 && o->parallelism < (double)n ? o->parallelism
                                                                       : (double)n;
    double k = total / makespan, bursts = total / busiest;
    k = k < bursts ? k : bursts;
    double s = trd_node_slowdown(o->stream_bw, o->streams, k, runnable);
    return (s - 1.0) * (busiest < makespan ? busiest : makespan);
}

double trd_contention_plan(const trd_plan *plan, double makespan, double bytes,
                           const trd_coll_opts *o)
{
    if (!o->stream_bw || o->streams < 1 || !isfinite(makespan))
        return 0.0;
    const trd_params *p = trd_plan_params(plan);
    if (p->costs)
        return 0.0; /* heterogeneous costs: ranks on other hosts, not one bus */
    double total = 0.0, busiest = 0.0;
    for (int32_t r = 0; r < (int32_t)p->n; r++) {
        double m = rank_memory(plan, r, bytes, o->stream_bw[0]);
        total += m;
        busiest = m > busiest ? m : busiest;
    }
    return lateness(total, busiest, makespan, p->n, o);
}

double trd_contention_tree(const trd_params *p, double makespan, double bytes,
                           const trd_coll_opts *o)
{
    if (!o->stream_bw || o->streams < 1 || !isfinite(makespan) || p->costs || p->n < 2)
        return 0.0;
    double b1 = o->stream_bw[0];
    double one = memory_time(p->d - p->latency, 2 * bytes, b1) +
                 memory_time(p->c - p->combine_fixed, 3 * bytes, b1);
    /* any tree: n - 1 transfers and combines; the busiest rank, the
     * root, combines at least log2 n of them */
    double total = (double)(p->n - 1) * one, levels = ceil(log2((double)p->n));
    return lateness(total, levels * one, makespan, p->n, o);
}
