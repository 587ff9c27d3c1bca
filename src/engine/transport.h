/* transport.h: what the engine needs from a transport: a vtable {post,
 * wait_any, now, attach} (docs/ARCHITECTURE.md, "Two words").  The
 * virtual-time transport of src/sim
 * implements it for simulation; real transports (threads, MPI) implement the
 * same calls, so an algorithm never exists twice.
 *
 * The engine posts the steps of its ranks' programs as their dependencies
 * complete; the transport starts them when the port model allows and reports
 * each completed step, one at a time, through wait_any.
 *
 * Step ids.  The engine numbers all the steps it may post 0 .. steps-1
 * (trd_layout.steps; the steps of one rank are consecutive): the id is the
 * engine's handle for a step, as a request handle is for MPI.  A transport
 * hands it back unchanged in wait_any and may use it to index per-step
 * tables (a posted receive, a send waiting for its receiver) instead of
 * allocating records; the engine posts each id at most once per run. */
#ifndef TRD_ENGINE_TRANSPORT_H
#define TRD_ENGINE_TRANSPORT_H

#include <stdint.h>

#include "ir/policy.h" /* TRD_ANY_RANK */
#include "treduce/treduce.h"

/* What the engine knows of its steps before running them. */
typedef struct trd_layout {
    int32_t steps; /* ids are 0 .. steps-1 */
    /* NULL, or for every id: the id of the only step that can match it (a
     * SEND's RECV, a RECV's SEND), or -1.  Messages of one channel (sender
     * a, receiver b, tag = first block) match in program order (treduce.h),
     * so when a's SENDs and b's RECVs on a channel are as many, and b never
     * receives from TRD_ANY_RANK, the k-th SEND can only meet the k-th
     * RECV whatever the order of events: a transport may pair them without
     * searching (an MPI wire could use it as a tag). */
    const int32_t *partner;
    /* NULL (every step moves or combines the whole buffer), or for every
     * id the share of the buffer the step covers: blocks / B (treduce.h,
     * trd_step.blocks).  A cost model scales a transfer's size-dependent
     * part and a combine's cost by it. */
    const float *scale;
} trd_layout;

typedef struct trd_transport {
    void *ctx;
    /* Post the step of `rank`'s program whose id is `id` (a SEND, RECV or
     * COMBINE; `s` stays valid until it completes). */
    trd_status (*post)(void *ctx, int32_t rank, int32_t id, const trd_step *s);
    /* Next completed step: its rank, its id, and for a RECV the rank it
     * came from.  TRD_EIO on deadline or lost peer. */
    trd_status (*wait_any)(void *ctx, int32_t *rank, int32_t *id, int32_t *from);
    /* Current time (virtual or wall-clock seconds). */
    double (*now)(void *ctx);
    /* Optional (NULL: none).  Called by the engine before the first post of
     * every run with its layout, which stays valid and unchanged while the
     * engine lives, so a transport may size its tables once and keep them
     * across runs.  A transport must also work when it is never called
     * (a wrapper that does not forward it): it then gets no partners and
     * learns ids as they are posted. */
    trd_status (*attach)(void *ctx, const trd_layout *layout);
} trd_transport;

/* A transport that watches another (a recorder, a trace) keeps it as the
 * first member of its context, `trd_transport inner`, and hands it what it
 * does not watch: its clock and its layout. */
static inline double trd_transport_inner_now(void *ctx)
{
    const trd_transport *inner = ctx;
    return inner->now(inner->ctx);
}

static inline trd_status trd_transport_inner_attach(void *ctx, const trd_layout *layout)
{
    const trd_transport *inner = ctx;
    return inner->attach ? inner->attach(inner->ctx, layout) : TRD_OK;
}

#endif
