/* transport.h: what the engine needs from a transport (DESIGN.md: a vtable
 * {isend, irecv, progress, now}).  The virtual-time transport of src/sim
 * implements it for simulation; real transports (threads, MPI) implement the
 * same calls, so an algorithm never exists twice.
 *
 * The engine posts the steps of its ranks' programs as their dependencies
 * complete; the transport starts them when the port model allows and reports
 * each completed step, one at a time, through wait_any. */
#ifndef TRD_ENGINE_TRANSPORT_H
#define TRD_ENGINE_TRANSPORT_H

#include <stdint.h>

#include "treduce/treduce.h"

/* A RECV from any rank (dynamic policies: the waiting rank does not know
 * who will send). */
#define TRD_ANY_RANK (-2)

typedef struct trd_transport {
    void *ctx;
    /* Post step `step` of `rank`'s program (a SEND, RECV or COMBINE). */
    trd_status (*post)(void *ctx, int32_t rank, int32_t step, const trd_step *s);
    /* Next completed step: its rank, its index, and for a RECV the rank it
     * came from.  TRD_EIO on deadline or lost peer. */
    trd_status (*wait_any)(void *ctx, int32_t *rank, int32_t *step, int32_t *from);
    /* Current time (virtual or wall-clock seconds). */
    double (*now)(void *ctx);
} trd_transport;

#endif
