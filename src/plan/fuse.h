/* fuse.h: the fusion pass of plans (src/plan/fuse.c): receive-and-combine
 * and combine-into-peer written into the programs as explicit steps. */
#ifndef TRD_PLAN_FUSE_H
#define TRD_PLAN_FUSE_H

#include <stddef.h>

#include "treduce/treduce.h"

/* The fused program of prog[0..n) (B = blocks) into out (room for n
 * steps): *m steps. */
trd_status trd_fuse_program(const trd_step *prog, size_t n, int32_t blocks, trd_step *out,
                            size_t *m);

/* Fuses the programs of nranks ranks in place: rank r's program is
 * (*steps)[step_first[r] .. step_first[r + 1]) before and after (the
 * array keeps its size; the programs may end earlier). */
trd_status trd_fuse_plan(size_t nranks, size_t *step_first, trd_step **steps, int32_t blocks);

#endif
