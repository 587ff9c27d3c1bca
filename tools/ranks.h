/* ranks.h: running one function on every rank of a communicator, as
 * threads of this process (tools/ranks.c) - what `treduce run`,
 * `treduce calibrate` and `treduce demo` share. */
#ifndef TRD_TOOLS_RANKS_H
#define TRD_TOOLS_RANKS_H

#include <stddef.h>

#include "treduce/treduce.h"

/* fn(comm[r], ctx + r * ctx_size) on p threads at once; returns once all
 * are done.  TRD_EINVAL / TRD_ENOMEM when the communicators cannot be made
 * (nothing ran then). */
typedef void (*trd_rank_fn)(trd_comm *comm, void *ctx);
trd_status trd_ranks_threads(int64_t p, const trd_threads_opts *opts, trd_rank_fn fn,
                             void *ctx, size_t ctx_size);

/* fn(comm, ctx) on this process, one rank of MPI_COMM_WORLD (MPI_Init and
 * MPI_Finalize around it); *rank is this process's rank. */
trd_status trd_ranks_mpi(double timeout_s, trd_rank_fn fn, void *ctx, int *rank);

/* fn on every rank of `transport` ("mpi": this process's rank, as
 * trd_ranks_mpi; otherwise p threads, each on its own copy of ctx, of
 * which rank 0's is copied back into ctx and the others are given to
 * release, if not NULL).  *rank is this process's rank (0 for threads). */
trd_status trd_ranks_run(const char *transport, int64_t p, double timeout_s, trd_rank_fn fn,
                         void *ctx, size_t ctx_size, void (*release)(void *ctx), int *rank);

#endif
