/* fuse.h: receives the runtime combines on arrival, and combines it
 * writes into the peer they are sent to (src/runtime/fuse.c). */
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
    int32_t combine;         /* the COMBINE's step */
} trd_fused;

/* Per rank and plan: consumer[i] is the step of the program that alone
 * reads what RECV i stores (a COMBINE of the same blocks depending on it),
 * or -1; producer[i] is the SEND that ships exactly what COMBINE i wrote,
 * the first send on its channel (peer, first block) in the program, with
 * nothing writing those blocks in between, or -1; state[i], pending[i]
 * and claim[i] are the runtime's, per run. */
typedef struct trd_fusion {
    int32_t steps;
    int32_t *consumer;
    int32_t *producer;
    uint8_t *state;
    trd_fused *pending;
    int32_t *claim;
} trd_fusion;

/* Fills f for rank's program of plan (f zeroed first). */
trd_status trd_fusion_init(trd_fusion *f, const trd_plan *plan, int32_t rank);
void trd_fusion_free(trd_fusion *f);

#endif
