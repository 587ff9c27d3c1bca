/* exec.c: the engine's transport for real runs.  The engine posts the
 * steps of one rank; SEND and RECV go to the wire (threads or MPI) as
 * messages covering their blocks of the slot buffers, tagged by their first
 * block (the IR's matching rule: same pair, same block, program order);
 * COMBINE and COPY run here at once, on this rank's thread, and complete
 * through a local FIFO.  So while a COMBINE runs, the wire keeps moving the
 * messages already posted (the overlap of canon-antoniu Sec. 3.1 and of
 * segmented pipelines). */
#include "runtime/exec.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

void trd_exec_range(const trd_exec *x, int32_t block, int32_t blocks, int64_t *lo,
                    int64_t *hi)
{
    int32_t nb = blocks > 1 ? blocks : 1;
    /* count * block fits in 64 bits: count < 2^62 / TRD_SEGMENTS_MAX (comm.c) */
    *lo = x->count * block / x->blocks;
    *hi = x->count * (block + nb) / x->blocks;
}

static trd_status check_slot(const trd_exec *x, int32_t slot)
{
    if (slot < 0 || slot >= x->nslots)
        return trd_fail(TRD_EINVAL, "runtime: a step names slot %ld; this rank has %ld",
                        (long)slot, (long)x->nslots);
    return TRD_OK;
}

static trd_status run_local(trd_exec *x, int32_t id, const trd_step *s, int64_t lo, int64_t hi)
{
    trd_status st = check_slot(x, s->src);
    if (st != TRD_OK)
        return st;
    unsigned char *acc = x->slot[s->buf] + (size_t)lo * x->elem;
    unsigned char *in = x->slot[s->src] + (size_t)lo * x->elem;
    if (s->kind == TRD_STEP_COPY)
        memcpy(acc, in, (size_t)(hi - lo) * x->elem);
    else if ((st = trd_op_combine(x->op, (trd_side)s->side, acc, in, hi - lo)) != TRD_OK)
        return st;
    return trd_fifo_push(&x->local, id, -1);
}

static trd_status post(void *ctx, int32_t rank, int32_t id, const trd_step *s)
{
    trd_exec *x = ctx;
    int64_t lo, hi;
    (void)rank; /* a wire serves one rank */
    trd_status st = check_slot(x, s->buf);
    if (st != TRD_OK)
        return st;
    trd_exec_range(x, s->block, s->blocks, &lo, &hi);
    unsigned char *at = x->slot[s->buf] + (size_t)lo * x->elem;
    size_t bytes = (size_t)(hi - lo) * x->elem;
    trd_wire *w = x->wire;
    switch (s->kind) {
    case TRD_STEP_SEND:
        return w->isend(w->ctx, s->peer, s->block, at, bytes, id);
    case TRD_STEP_RECV:
        return w->irecv(w->ctx, s->peer, s->block, at, bytes, id);
    default:
        return run_local(x, id, s, lo, hi);
    }
}

static trd_status wait_any(void *ctx, int32_t *rank, int32_t *id, int32_t *from)
{
    trd_exec *x = ctx;
    trd_completion c;
    *rank = x->wire->rank;
    if (trd_fifo_pop(&x->local, &c)) {
        *id = c.id;
        *from = c.from;
        return TRD_OK;
    }
    trd_wire *w = x->wire;
    return w->wait(w->ctx, w->now(w->ctx) + x->timeout_s, id, from);
}

static double now(void *ctx)
{
    trd_exec *x = ctx;
    return x->wire->now(x->wire->ctx);
}

trd_transport trd_exec_transport(trd_exec *x)
{
    x->local.head = x->local.len = 0;
    return (trd_transport){.ctx = x, .post = post, .wait_any = wait_any, .now = now,
                           .attach = NULL};
}

void trd_exec_free(trd_exec *x)
{
    free(x->local.items);
    x->local = (trd_fifo){0};
}
