/* virtual.h: the virtual-time transport: the engine's steps run in
 * simulated time under a port model and a cost model. */
#ifndef TRD_SIM_VIRTUAL_H
#define TRD_SIM_VIRTUAL_H

#include <gsl/gsl_rng.h>

#include "engine/transport.h"
#include "sim/costs.h"
#include "sim/event_queue.h"

typedef struct trd_vpending trd_vpending;

typedef struct trd_virtual {
    int32_t n;
    trd_port port;
    const trd_costs *costs;
    gsl_rng *rng_d, *rng_c;  /* common random numbers: one stream per kind */
    double now;
    trd_event_queue events;
    /* per rank */
    uint8_t *busy_send, *busy_recv; /* half duplex uses busy_send for both */
    int32_t *in_head;   /* posted sends waiting for this receiver (list) */
    int32_t *out_head;  /* this rank's sends not yet started (list) */
    int32_t *recv_head; /* posted receives of this rank (list) */
    int32_t *dirty;     /* ranks whose transfers may start once the current */
    uint8_t *is_dirty;  /* instant has settled (ties follow the plan) */
    int32_t ndirty;
    /* records: sends (linked twice) and receives */
    trd_vpending *rec;
    int32_t nrec, caprec, free_rec;
    int32_t done[8][3]; /* completions to hand out: rank, step, from */
    int done_head, done_count;
    int64_t started; /* transfers started this run */
} trd_virtual;

/* Allocates a transport for n ranks; seeds come from trd_virtual_reset. */
trd_status trd_virtual_init(trd_virtual *v, int32_t n, trd_port port, const trd_costs *costs);
void trd_virtual_destroy(trd_virtual *v);
/* Starts run `run` of `seed` at time 0 with its own cost streams. */
void trd_virtual_reset(trd_virtual *v, uint64_t seed, int64_t run);
/* The vtable over v. */
trd_transport trd_virtual_transport(trd_virtual *v);

#endif
