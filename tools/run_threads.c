/* run_threads.c: `treduce run --wire threads`: one thread per rank. */
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "treduce_internal/test_hooks.h"

typedef struct rank_job {
    const cli_run_args *args;
    const trd_op *op;
    cli_run_result res;
} rank_job;

/* Errors stay in the rank's result (merge reports the first).
 * --inject-delay and --dead-rank go through the library's test hooks,
 * which each rank sets on its own handle before its first call. */
static trd_status rank_main(trd_comm *comm, void *arg)
{
    rank_job *j = (rank_job *)arg + trd_comm_rank(comm);
    trd_test_hooks hooks;
    trd_test_hooks_init(&hooks);
    hooks.delay_max_us = j->args->delay_us;
    hooks.dead_rank = (int32_t)j->args->dead_rank;
    trd_status st = trd_test_hooks_set(comm, &hooks);
    if (st == TRD_OK) {
        cli_run_rank(j->args, comm, j->op, &j->res);
        return TRD_OK;
    }
    j->res.status = st;
    snprintf(j->res.error, sizeof j->res.error, "%s", cli_errmsg(st));
    return TRD_OK;
}

/* Rank 0's result with each iteration's time made the slowest rank's, the
 * check made every rank's, and the first failure's message. */
static void merge(const cli_run_args *a, rank_job *jobs, int64_t p)
{
    cli_run_result *res = &jobs[0].res;
    for (int64_t r = 1; r < p; r++) {
        const cli_run_result *o = &jobs[r].res;
        for (int64_t k = 0; k < a->iters; k++)
            if (o->times[k] > res->times[k])
                res->times[k] = o->times[k];
        res->verified = res->verified && o->verified;
        if (res->status == TRD_OK && o->status != TRD_OK) {
            res->status = o->status;
            /* Through a local copy: gcc -O0 cannot tell jobs[0] from jobs[r]
             * (-Wrestrict) and wants room for the prefix (-Wformat-truncation). */
            char why[sizeof o->error];
            memcpy(why, o->error, sizeof why);
            snprintf(res->error, sizeof res->error, "rank %lld: %.480s", (long long)r, why);
        }
    }
}

trd_status cli_run_threads_collect(const cli_run_args *a, cli_run_result *out)
{
    trd_threads_opts topts;
    trd_threads_opts_init(&topts);
    topts.timeout_s = a->timeout;
    int64_t p = a->p;
    trd_op *op = NULL;
    rank_job *jobs = calloc((size_t)p, sizeof *jobs);
    double *times = calloc((size_t)(p * a->iters), sizeof *times);
    trd_status st = jobs && times ? TRD_OK : TRD_ENOMEM;
    if (st == TRD_OK)
        st = cli_run_make_op(a, &op);
    for (int64_t r = 0; st == TRD_OK && r < p; r++) {
        jobs[r] = (rank_job){.args = a, .op = op};
        jobs[r].res.times = times + r * a->iters;
    }
    if (st == TRD_OK)
        st = trd_comm_threads_run((int32_t)p, &topts, rank_main, jobs);
    if (st == TRD_OK) {
        merge(a, jobs, p);
        double *keep = out->times;
        *out = jobs[0].res;
        out->times = keep;
        for (int64_t k = 0; k < a->iters; k++)
            out->times[k] = times[k];
    }
    trd_op_free(op);
    free(jobs);
    free(times);
    return st;
}

int cli_run_threads(const cli_run_args *a)
{
    cli_run_result res = {.times = calloc((size_t)a->iters, sizeof(double))};
    trd_status st = res.times ? cli_run_threads_collect(a, &res) : TRD_ENOMEM;
    int rc = st == TRD_OK ? cli_run_report(a, a->p, &res) : cli_lib_error("run", st);
    free(res.times);
    return rc;
}
