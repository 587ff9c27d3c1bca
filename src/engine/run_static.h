/* run_static.h: the engine's loop over static programs, as one inline
 * function.
 *
 * trd_engine_run (engine.c) calls it with the transport's vtable; a
 * transport that runs whole engines itself (the simulator, src/sim/
 * virtual.c) calls it with its own post and wait_any, which the compiler
 * then inlines into the loop.  The loop is written once; the simulator
 * saves the crossing of the vtable on every step (an indirect call, its
 * arguments through memory, the registers saved on each side), a sizeable
 * part of a small simulation's time (docs/BENCHMARKS.md, "bench/sim"). */
#ifndef TRD_ENGINE_RUN_STATIC_H
#define TRD_ENGINE_RUN_STATIC_H

#include <string.h>

#include "engine/transport.h"

#if defined(__GNUC__)
#define TRD_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define TRD_ALWAYS_INLINE static inline
#endif

/* A step in 64 bytes: the address of step g is then a shift, not a
 * multiply, on every post. */
typedef union trd_step_slot {
    trd_step s;
    unsigned char room[64];
} trd_step_slot;

/* What a run of static programs reads (trd_engine_static): the steps by
 * id, the dependents of id g at deps[deps[g] .. deps[g + 1]), the
 * dependency counts (compiled, and per run), the (rank, id) pairs of the
 * steps without deps, and the rank that ends with the result. */
typedef struct trd_static_program {
    const trd_step_slot *steps;
    const int32_t *deps;
    const int32_t *initial;
    const int32_t *waiting0;
    int32_t *waiting;
    int32_t ninitial;
    int32_t total;
    int32_t result;
} trd_static_program;

typedef trd_status (*trd_post_fn)(void *ctx, int32_t rank, int32_t id, const trd_step *s);
typedef trd_status (*trd_wait_any_fn)(void *ctx, int32_t *rank, int32_t *id, int32_t *from);

/* Posts the steps without deps, then on each completion the dependents it
 * released (they belong to the same rank).  The tables are read through
 * locals: the calls would otherwise make the compiler reload them. */
TRD_ALWAYS_INLINE trd_status trd_run_static_loop(const trd_static_program *p, void *ctx,
                                                 trd_post_fn post, trd_wait_any_fn wait_any)
{
    const trd_step_slot *steps = p->steps;
    const int32_t *deps = p->deps, *initial = p->initial;
    int32_t *waiting = p->waiting, left = p->total, ninitial = p->ninitial;
    memcpy(waiting, p->waiting0, (size_t)left * sizeof *waiting);
    trd_status st = TRD_OK;
    for (const int32_t *q = initial, *end = initial + 2 * ninitial; q < end; q += 2)
        if ((st = post(ctx, q[0], q[1], &steps[q[1]].s)) != TRD_OK)
            return st;
    int32_t done[3]; /* rank, id, from (unused here): one base address for the three */
    for (; left > 0; left--) {
        if ((st = wait_any(ctx, &done[0], &done[1], &done[2])) != TRD_OK)
            return st;
        for (const int32_t *d = deps + deps[done[1]], *end = deps + deps[done[1] + 1]; d < end;
             d++)
            if (--waiting[*d] == 0 && (st = post(ctx, done[0], *d, &steps[*d].s)) != TRD_OK)
                return st;
    }
    return TRD_OK;
}

#endif
