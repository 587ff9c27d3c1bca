/* exec.h: runs one rank's steps on real buffers over a wire
 * (src/runtime/exec.c): the engine's transport for the runtime. */
#ifndef TRD_RUNTIME_EXEC_H
#define TRD_RUNTIME_EXEC_H

#include "core/fifo.h"
#include "engine/transport.h"
#include "wire/wire.h"

/* What the executor did for a step by the time the engine learnt it was
 * done (trd_exec_log): the wire finished moving its bytes, it combined,
 * it copied.  The simulator charges each kind exactly this
 * (src/sim/virtual.c): SEND and RECV a transfer, COMBINE a combine, COPY
 * nothing, RECV_COMBINE a transfer then a combine. */
enum { TRD_WORK_MOVED = 1, TRD_WORK_COMBINED = 2, TRD_WORK_COPIED = 4 };

/* A test's record of the steps one rank completed, in the order the
 * engine learnt of them: step index in the rank's program and its work. */
typedef struct trd_exec_log {
    int32_t *step;
    uint8_t *work;
    int32_t len, cap;
} trd_exec_log;

/* The run state of one step of a static program: where a RECV_COMBINE's
 * message lands and what its combine reads and writes, and a shipped
 * combine's claim (wire.h claim_recv) for the SEND that ships it. */
typedef struct trd_step_run {
    void *exec;               /* the trd_exec running it (consume's argument) */
    unsigned char *out;       /* the accumulator blocks the combine writes */
    const unsigned char *acc; /* their value before it (out, or the input) */
    unsigned char *in;        /* where the message landed (LAND_SCRATCH) */
    int64_t count;            /* elements */
    int32_t step;             /* the step's index */
    int32_t claim;            /* claimed: the claim's handle */
    uint8_t land;             /* RECV_COMBINE: how its message arrives (exec.c) */
    uint8_t claimed;          /* a shipped combine wrote into the peer's receive */
    uint8_t did;              /* with a log: TRD_WORK_* done so far */
} trd_step_run;

typedef struct trd_exec {
    trd_wire *wire;
    const trd_op *op;
    unsigned char **slot; /* slot s of this rank: count elements */
    int32_t nslots;
    int64_t count;
    size_t elem;          /* bytes per element */
    int32_t blocks;       /* B (trd_plan_blocks; 1 for dynamic) */
    const int64_t *bounds; /* NULL: block b is elements [b count / B, (b + 1)
                             count / B); else [bounds[b], bounds[b + 1]) (a
                             reduce-scatter's uneven parts) */
    double timeout_s;     /* each wait's timeout */
    /* The caller's sendbuf while slot 0 has not been filled from it (NULL
     * once it has, or in place): fresh[b] = 1 while block b of slot 0
     * still stands for the same block of input.  Steps read the input
     * where slot 0 is fresh, and a combine into a fresh block writes
     * input (+) received straight into slot 0: the copy of the input into
     * slot 0 is made only for blocks nothing else writes
     * (trd_exec_fill_slot0). */
    const unsigned char *input;
    uint8_t *fresh;
    /* SEND_INPUT steps send from input when it is set, else from slot 0:
     * the runtime sets input for an in-place call whose program writes
     * slot 0 and sends from the input (a copy made at the start). */
    /* Static programs: rank's program of plan, whose step i the engine
     * posts as id base + i, and a run state per step.  plan NULL: a
     * dynamic policy (no RECV_COMBINE, nothing shipped). */
    const trd_plan *plan;
    trd_step_run *run;
    int32_t rank, base;
    trd_fifo local;       /* completed COMBINE/COPY steps */
    trd_exec_log *log;    /* NULL, or a test's record (trd_exec_log) */
} trd_exec;

/* The engine's transport over exec (which must outlive it). */
trd_transport trd_exec_transport(trd_exec *exec);
/* The first and one-past-last element of blocks [block, block+blocks). */
void trd_exec_range(const trd_exec *exec, int32_t block, int32_t blocks, int64_t *lo,
                    int64_t *hi);
/* Copies the input into the blocks among [block, block + blocks) of slot 0
 * still fresh. */
void trd_exec_fill_slot0(trd_exec *exec, int32_t block, int32_t blocks);
void trd_exec_free(trd_exec *exec);

#endif
