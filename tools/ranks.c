/* ranks.c: one function on every rank of a wire (ranks.h). */
#include "ranks.h"

#include <stdlib.h>
#include <string.h>

/* The threads run: each rank on its own copy of the caller's context. */
typedef struct copies {
    trd_rank_fn fn;
    char *all;
    size_t ctx_size;
} copies;

static trd_status on_copy(trd_comm *comm, void *arg)
{
    const copies *c = arg;
    return c->fn(comm, c->all + (size_t)trd_comm_rank(comm) * c->ctx_size);
}

trd_status cli_ranks_run(const trd_wire_info *wire, int32_t p, double timeout_s, trd_rank_fn fn,
                         void *ctx, size_t ctx_size, void (*release)(void *ctx), int *rank)
{
    *rank = 0;
    if (wire->launched)
        return cli_ranks_launched(wire, timeout_s, fn, ctx, rank);
    copies c = {.fn = fn, .all = calloc(p > 0 ? (size_t)p : 1, ctx_size), .ctx_size = ctx_size};
    if (!c.all)
        return TRD_ENOMEM;
    for (int32_t r = 0; r < p; r++)
        memcpy(c.all + (size_t)r * ctx_size, ctx, ctx_size);
    trd_status st = trd_comm_threads_run(p, NULL, on_copy, &c);
    memcpy(ctx, c.all, ctx_size);
    for (int32_t r = 1; release && r < p; r++)
        release(c.all + (size_t)r * ctx_size);
    free(c.all);
    return st;
}

/* A launched wire's runtime is MPI's (trd_wire_info.launched). */
#ifdef TRD_HAVE_MPI
#include <mpi.h>

trd_status cli_ranks_launched(const trd_wire_info *wire, double timeout_s, trd_rank_fn fn,
                              void *ctx, int *rank)
{
    MPI_Init(NULL, NULL);
    trd_comm *comm = NULL;
    trd_status st = wire->create(&comm, 1, timeout_s);
    *rank = st == TRD_OK ? trd_comm_rank(comm) : 0; /* a failure: every rank says it */
    if (st == TRD_OK)
        fn(comm, ctx);
    trd_comm_free(comm);
    MPI_Finalize();
    return st;
}
#else
trd_status cli_ranks_launched(const trd_wire_info *wire, double timeout_s, trd_rank_fn fn,
                              void *ctx, int *rank)
{
    (void)wire, (void)timeout_s, (void)fn, (void)ctx;
    *rank = 0;
    return TRD_EUNSUPPORTED; /* the caller says: built without MPI */
}
#endif
