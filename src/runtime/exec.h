/* exec.h: runs one rank's steps on real buffers over a wire
 * (src/runtime/exec.c): the engine's transport for the runtime. */
#ifndef TRD_RUNTIME_EXEC_H
#define TRD_RUNTIME_EXEC_H

#include "core/fifo.h"
#include "engine/transport.h"
#include "transport/wire.h"

typedef struct trd_exec {
    trd_wire *wire;
    const trd_op *op;
    unsigned char **slot; /* slot s of this rank: count elements */
    int32_t nslots;
    int64_t count;
    size_t elem;          /* bytes per element */
    int32_t blocks;       /* B (trd_plan_blocks; 1 for dynamic) */
    double timeout_s;     /* each wait's deadline, from its start */
    trd_fifo local;       /* completed COMBINE/COPY steps */
} trd_exec;

/* The engine's transport over exec (which must outlive it). */
trd_transport trd_exec_transport(trd_exec *exec);
/* The first and one-past-last element of blocks [block, block+blocks). */
void trd_exec_range(const trd_exec *exec, int32_t block, int32_t blocks, int64_t *lo,
                    int64_t *hi);
void trd_exec_free(trd_exec *exec);

#endif
