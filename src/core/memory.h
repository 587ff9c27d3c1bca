/* memory.h: refusing sizes this machine cannot hold, before allocating. */
#ifndef TRD_CORE_MEMORY_H
#define TRD_CORE_MEMORY_H

#include "treduce/treduce.h"

/* TRD_ENOMEM with a message saying how much `what` would need, when n ranks
 * of bytes_per_rank each exceed 80 % of the physical memory. */
trd_status trd_check_memory(int64_t n, double bytes_per_rank, const char *what);

#endif
