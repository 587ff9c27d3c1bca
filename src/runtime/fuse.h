/* fuse.h: receives the runtime combines on arrival (src/runtime/fuse.c). */
#ifndef TRD_RUNTIME_FUSE_H
#define TRD_RUNTIME_FUSE_H

#include "treduce/treduce.h"

/* A RECV combined on arrival: where its COMBINE writes and reads. */
typedef struct trd_fused {
    void *exec;              /* the trd_exec running it */
    unsigned char *out;      /* the COMBINE's accumulator blocks */
    const unsigned char *acc; /* their value before it (out, or the input) */
    int64_t count;           /* elements */
    int32_t side;
} trd_fused;

/* Per rank and plan: consumer[i] is the step of the program that alone
 * reads what RECV i stores (a COMBINE of the same blocks depending on it),
 * or -1; state[i] and pending[i] are the runtime's, per run. */
typedef struct trd_fusion {
    int32_t steps;
    int32_t *consumer;
    uint8_t *state;
    trd_fused *pending;
} trd_fusion;

/* Fills f for rank's program of plan (f zeroed first). */
trd_status trd_fusion_init(trd_fusion *f, const trd_plan *plan, int32_t rank);
void trd_fusion_free(trd_fusion *f);

#endif
