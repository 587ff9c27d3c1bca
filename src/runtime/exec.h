/* exec.h: runs one rank's steps on real buffers over a wire
 * (src/runtime/exec.c): the engine's transport for the runtime. */
#ifndef TRD_RUNTIME_EXEC_H
#define TRD_RUNTIME_EXEC_H

#include "core/fifo.h"
#include "engine/transport.h"
#include "runtime/fuse.h"
#include "wire/wire.h"

typedef struct trd_exec {
    trd_wire *wire;
    const trd_op *op;
    unsigned char **slot; /* slot s of this rank: count elements */
    int32_t nslots;
    int64_t count;
    size_t elem;          /* bytes per element */
    int32_t blocks;       /* B (trd_plan_blocks; 1 for dynamic) */
    double timeout_s;     /* each wait's timeout */
    /* The caller's sendbuf while slot 0 has not been filled from it (NULL
     * once it has, or in place): fresh[b] = 1 while block b of slot 0
     * still stands for the same block of input.  Steps read the input
     * where slot 0 is fresh, and a COMBINE into a fresh block writes
     * input (+) received straight into slot 0: the copy of the input into
     * slot 0 is made only for blocks nothing else writes
     * (trd_exec_fill_slot0). */
    const unsigned char *input;
    uint8_t *fresh;
    /* Receives combined on arrival (fuse.h) where the wire offers it:
     * the fusion of this rank's program of plan, whose step i the engine
     * posts as id base + i.  NULL: none (dynamic policies). */
    trd_fusion *fusion;
    const trd_plan *plan;
    int32_t rank, base;
    trd_fifo local;       /* completed COMBINE/COPY steps */
    int32_t early;        /* SENDs done for the engine, not yet for the wire */
} trd_exec;

/* The engine's transport over exec (which must outlive it). */
trd_transport trd_exec_transport(trd_exec *exec);
/* The first and one-past-last element of blocks [block, block+blocks). */
void trd_exec_range(const trd_exec *exec, int32_t block, int32_t blocks, int64_t *lo,
                    int64_t *hi);
/* After the engine's run: waits for the wire to finish the SENDs of the
 * input it reported done early (exec.c send_early). */
trd_status trd_exec_drain(trd_exec *exec);
/* Copies the input into every block of slot 0 still fresh. */
void trd_exec_fill_slot0(trd_exec *exec);
void trd_exec_free(trd_exec *exec);

#endif
