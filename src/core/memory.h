/* memory.h: refusing sizes this machine cannot hold, before allocating. */
#ifndef TRD_CORE_MEMORY_H
#define TRD_CORE_MEMORY_H

#include "treduce/treduce.h"

/* TRD_ENOMEM with a message saying how much `what` would need, when n ranks
 * of bytes_per_rank each exceed 80 % of the physical memory. */
trd_status trd_check_memory(int64_t n, double bytes_per_rank, const char *what);

/* Room for one more item of `size` bytes in the array *items holding len
 * of *cap: the capacity doubles (from `first`) when full.  TRD_ENOMEM
 * naming `what` when it cannot, *items and *cap then unchanged. */
trd_status trd_grow(void **items, size_t len, size_t *cap, size_t size, size_t first,
                    const char *what);

#endif
