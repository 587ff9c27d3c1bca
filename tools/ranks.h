/* ranks.h: one function on every rank of `treduce calibrate`'s wire:
 * threads of this process (trd_comm_threads_run) or, for a launched wire,
 * this process. */
#ifndef TRD_TOOLS_RANKS_H
#define TRD_TOOLS_RANKS_H

#include <stddef.h>

#include "treduce/treduce.h"

/* fn(comm, ctx) on this process, one rank of the launched wire's job
 * (MPI_Init and MPI_Finalize around it); *rank is this process's rank
 * (0 when its communicator cannot be made). */
trd_status cli_ranks_launched(const trd_wire_info *wire, double timeout_s, trd_rank_fn fn,
                              void *ctx, int *rank);

/* fn on every rank of `wire` (launched: this process's rank, as
 * cli_ranks_launched; otherwise p threads, each on its own copy of ctx, of
 * which rank 0's is copied back into ctx and the others are given to
 * release, if not NULL).  *rank is this process's rank (0 for threads). */
trd_status cli_ranks_run(const trd_wire_info *wire, int32_t p, double timeout_s, trd_rank_fn fn,
                         void *ctx, size_t ctx_size, void (*release)(void *ctx), int *rank);

#endif
