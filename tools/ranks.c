/* ranks.c: one thread per rank over the threads transport. */
#include "ranks.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct job {
    trd_rank_fn fn;
    trd_comm *comm;
    void *ctx;
} job;

static void *rank_main(void *arg)
{
    job *j = arg;
    j->fn(j->comm, j->ctx);
    return NULL;
}

trd_status trd_ranks_threads(int64_t p, const trd_threads_opts *opts, trd_rank_fn fn,
                             void *ctx, size_t ctx_size)
{
    size_t n = p > 0 ? (size_t)p : 1;
    trd_comm **comm = calloc(n, sizeof *comm);
    job *jobs = calloc(n, sizeof *jobs);
    pthread_t *tid = calloc(n, sizeof *tid);
    trd_status st = comm && jobs && tid ? TRD_OK : TRD_ENOMEM;
    if (st == TRD_OK)
        st = trd_comm_threads_create(comm, (int32_t)(p > INT32_MAX ? -1 : p), opts);
    if (st == TRD_OK) {
        for (int64_t r = 0; r < p; r++) {
            jobs[r] = (job){.fn = fn, .comm = comm[r], .ctx = (char *)ctx + r * ctx_size};
            pthread_create(&tid[r], NULL, rank_main, &jobs[r]);
        }
        for (int64_t r = 0; r < p; r++)
            pthread_join(tid[r], NULL);
        for (int64_t r = 0; r < p; r++)
            trd_comm_free(comm[r]);
    }
    free(comm);
    free(jobs);
    free(tid);
    return st;
}

trd_status trd_ranks_run(const char *transport, int64_t p, double timeout_s, trd_rank_fn fn,
                         void *ctx, size_t ctx_size, void (*release)(void *ctx), int *rank)
{
    *rank = 0;
    if (!strcmp(transport, "mpi"))
        return trd_ranks_mpi(timeout_s, fn, ctx, rank);
    char *all = calloc(p > 0 ? (size_t)p : 1, ctx_size);
    if (!all)
        return TRD_ENOMEM;
    for (int64_t r = 0; r < p; r++)
        memcpy(all + (size_t)r * ctx_size, ctx, ctx_size);
    trd_status st = trd_ranks_threads(p, NULL, fn, all, ctx_size);
    memcpy(ctx, all, ctx_size);
    for (int64_t r = 1; release && r < p; r++)
        release(all + (size_t)r * ctx_size);
    free(all);
    return st;
}

#ifdef TRD_HAVE_MPI
#include <mpi.h>

trd_status trd_ranks_mpi(double timeout_s, trd_rank_fn fn, void *ctx, int *rank)
{
    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    trd_comm *comm = NULL;
    trd_status st = trd_comm_mpi_create(&comm, NULL, timeout_s);
    if (st == TRD_OK)
        fn(comm, ctx);
    trd_comm_free(comm);
    MPI_Finalize();
    return st;
}
#else
trd_status trd_ranks_mpi(double timeout_s, trd_rank_fn fn, void *ctx, int *rank)
{
    (void)timeout_s;
    (void)fn;
    (void)ctx;
    *rank = 0;
    return TRD_EUNSUPPORTED; /* the caller says: built without MPI */
}
#endif
