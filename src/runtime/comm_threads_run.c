/* comm_threads_run.c: trd_comm_threads_run, one thread per rank over a
 * threads communicator - the launcher the CLI, the tests and the examples
 * share. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/error.h"

typedef struct rank_job {
    trd_comm *comm;
    trd_rank_fn fn;
    void *ctx;
    trd_status status;
    char msg[256]; /* trd_errmsg() is per thread: the rank's, kept for the caller */
} rank_job;

static void *rank_main(void *arg)
{
    rank_job *j = arg;
    j->status = j->fn(j->comm, j->ctx);
    if (j->status != TRD_OK)
        snprintf(j->msg, sizeof j->msg, "%s", trd_errmsg());
    return NULL;
}

/* Starts every rank, joins those started; TRD_ENOMEM when a thread could
 * not be started (the ranks started then fail at their deadline, for the
 * missing one never calls). */
static trd_status start_and_join(rank_job *jobs, pthread_t *tid, int32_t p)
{
    int32_t started = 0;
    while (started < p && pthread_create(&tid[started], NULL, rank_main, &jobs[started]) == 0)
        started++;
    for (int32_t r = 0; r < started; r++)
        pthread_join(tid[r], NULL);
    if (started < p)
        return trd_fail(TRD_ENOMEM, "trd_comm_threads_run: cannot start the thread of rank %d "
                        "of %d", (int)started, (int)p);
    for (int32_t r = 0; r < p; r++)
        if (jobs[r].status != TRD_OK)
            return trd_fail(jobs[r].status, "rank %d: %s", (int)r, jobs[r].msg);
    return TRD_OK;
}

trd_status trd_comm_threads_run(int32_t p, const trd_threads_opts *opts, trd_rank_fn fn,
                                void *ctx)
{
    if (!fn)
        return trd_fail(TRD_EINVAL, "trd_comm_threads_run: fn is NULL");
    if (p < 1)
        return trd_fail(TRD_EINVAL, "trd_comm_threads_run: invalid p = %d: need p >= 1",
                        (int)p);
    trd_comm **comm = calloc((size_t)p, sizeof *comm);
    rank_job *jobs = calloc((size_t)p, sizeof *jobs);
    pthread_t *tid = calloc((size_t)p, sizeof *tid);
    trd_status st = comm && jobs && tid ? TRD_OK
                                        : trd_fail(TRD_ENOMEM, "trd_comm_threads_run: p = %d",
                                                   (int)p);
    if (st == TRD_OK)
        st = trd_comm_threads_create(comm, p, opts);
    if (st == TRD_OK) {
        for (int32_t r = 0; r < p; r++)
            jobs[r] = (rank_job){.comm = comm[r], .fn = fn, .ctx = ctx};
        st = start_and_join(jobs, tid, p);
        for (int32_t r = 0; r < p; r++)
            trd_comm_free(comm[r]);
    }
    free(comm);
    free(jobs);
    free(tid);
    return st;
}
