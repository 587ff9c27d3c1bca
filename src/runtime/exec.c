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
#include "core/stream.h"
#include "runtime/op.h"

void trd_exec_range(const trd_exec *x, int32_t block, int32_t blocks, int64_t *lo,
                    int64_t *hi)
{
    int32_t nb = blocks > 1 ? blocks : 1;
    if (x->blocks == 1) { /* unsegmented: no division (two per step otherwise) */
        *lo = 0;
        *hi = x->count;
        return;
    }
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

/* Copies the input into the fresh blocks among [b, b + nb) of slot 0. */
static void fill(trd_exec *x, int32_t b, int32_t nb)
{
    for (int32_t k = b; k < b + nb; k++)
        if (x->fresh[k]) {
            int64_t lo, hi;
            trd_exec_range(x, k, 1, &lo, &hi);
            memcpy(x->slot[0] + (size_t)lo * x->elem, x->input + (size_t)lo * x->elem,
                   (size_t)(hi - lo) * x->elem);
            x->fresh[k] = 0;
        }
}

void trd_exec_fill_slot0(trd_exec *x)
{
    if (x->input)
        fill(x, 0, x->blocks > 1 ? x->blocks : 1);
}

/* Where step s reads slot 0's blocks: the input while they are all fresh
 * (blocks partly fresh are filled first; a COMBINE reading slot 0 as its
 * `in` may clobber it, so it always gets them filled).  A step writing
 * slot 0 whole (RECV, COPY) makes its blocks not fresh. */
static const unsigned char *input_for(trd_exec *x, const trd_step *s)
{
    int32_t b = s->block, nb = s->blocks > 1 ? s->blocks : 1, k = b;
    bool reads = s->kind == TRD_STEP_SEND ? s->buf == 0
                 : s->kind == TRD_STEP_RECV ? false
                 : s->kind == TRD_STEP_COMBINE ? s->buf == 0 || s->src == 0
                                               : s->src == 0;
    bool writes = s->buf == 0 && (s->kind == TRD_STEP_RECV || s->kind == TRD_STEP_COPY);
    if (writes && s->src != 0) {
        memset(x->fresh + b, 0, (size_t)nb);
        return NULL;
    }
    if (!reads)
        return NULL;
    while (k < b + nb && x->fresh[k])
        k++;
    if (k == b + nb && !(s->kind == TRD_STEP_COMBINE && s->src == 0))
        return x->input;
    fill(x, b, nb);
    return NULL;
}

/* A COMBINE into fresh blocks of slot 0 (input_for gave the input): they
 * hold their own value from now on. */
static void filled(trd_exec *x, const trd_step *s)
{
    if (s->buf == 0)
        memset(x->fresh + s->block, 0, (size_t)(s->blocks > 1 ? s->blocks : 1));
}

/* trd_fusion.state: completed; combined on arrival; received straight
 * into slot 0 (its COMBINE then folds the input in); a SEND that reads the
 * input, not slot 0 (a later write of slot 0 need not wait for it); a SEND
 * whose receive its COMBINE claimed and filled; a SEND of the input the
 * engine was told is done before the wire said so. */
enum {
    STEP_DONE = 1,
    STEP_ABSORBED = 2,
    STEP_REDIRECTED = 4,
    STEP_FROM_INPUT = 8,
    STEP_CLAIMED = 16,
    STEP_EARLY = 32
};

/* Combines that fill a claimed receive write both results past the cache
 * (core/stream.h) when the whole buffer has at least this many bytes:
 * more than a core's caches hold, so the result would not stay there. */
#define STREAM_MIN ((size_t)4 << 20)

/* Tries to claim the receive that the producer of COMBINE c (fuse.c) will
 * fill: *dst is its buffer, or NULL while the peer has not posted it. */
static trd_status claim(trd_exec *x, int32_t c, size_t bytes, unsigned char **dst)
{
    trd_fusion *f = x->fusion;
    int32_t p = f->producer[c];
    const trd_step *s = trd_plan_step(x->plan, x->rank, (size_t)p);
    void *d = NULL;
    trd_status st = x->wire->claim_recv(x->wire->ctx, s->peer, s->block, bytes, &d,
                                        &f->claim[p]);
    if (st == TRD_OK && d)
        f->state[p] |= STEP_CLAIMED;
    *dst = d;
    return st;
}

/* COMBINE c of the program (-1: unknown): out = in (+) acc as
 * trd_op_combine_into.  When c has a producer, the wire can claim and the
 * peer has posted the receive, the result also goes straight into it,
 * piece by piece while it is in cache, so neither rank copies it later
 * (a two-rank allreduce then moves 4n bytes instead of 5n, docs/RUNTIME.md,
 * "Memory traffic of large buffers").  Otherwise the SEND will carry it. */
static trd_status combine(trd_exec *x, int32_t c, trd_side side, unsigned char *out,
                          const unsigned char *acc, unsigned char *in, int64_t count)
{
    trd_fusion *f = x->fusion;
    int64_t piece = trd_op_piece(x->op, side);
    unsigned char *dst = NULL;
    trd_status st = TRD_OK;
    if (c >= 0 && f && f->producer[c] >= 0 && x->wire->claim_recv && piece > 0)
        st = claim(x, c, (size_t)count * x->elem, &dst);
    if (st != TRD_OK || !dst)
        return st != TRD_OK ? st : trd_op_combine_into(x->op, side, out, acc, in, count);
    bool stream = (size_t)x->count * x->elem >= STREAM_MIN;
    for (int64_t at = 0; at < count; at += piece) {
        size_t off = (size_t)at * x->elem;
        trd_op_combine_piece(x->op, out + off, dst + off, acc + off, in + off,
                             count - at < piece ? count - at : piece, stream);
    }
    if (stream)
        trd_stream_fence();
    return TRD_OK;
}

static trd_status run_local(trd_exec *x, int32_t id, const trd_step *s, int64_t lo, int64_t hi,
                            const unsigned char *input)
{
    trd_status st = check_slot(x, s->src);
    if (st != TRD_OK)
        return st;
    size_t off = (size_t)lo * x->elem;
    unsigned char *acc = x->slot[s->buf] + off, *in = x->slot[s->src] + off;
    if (s->kind == TRD_STEP_COPY)
        memcpy(acc, input ? input + off : in, (size_t)(hi - lo) * x->elem);
    else if ((st = combine(x, x->fusion ? id - x->base : -1, (trd_side)s->side, acc,
                           input ? input + off : acc, in, hi - lo)) != TRD_OK)
        return st;
    if (input)
        filled(x, s);
    return trd_fifo_push(&x->local, id, -1);
}

/* A consumed message (wire.h) is combined from where the sender keeps
 * it: `in` is only read (post_fused takes left or commutative combines
 * only), and the wire checked its size. */
static trd_status consume(void *arg, const void *data, size_t bytes)
{
    trd_fused *f = arg;
    (void)bytes;
    return combine(f->exec, f->combine, (trd_side)f->side, f->out, f->acc, (void *)data,
                   f->count);
}

static bool all_fresh(const trd_exec *x, const trd_step *s)
{
    for (int32_t k = s->block; k < s->block + (s->blocks > 1 ? s->blocks : 1); k++)
        if (!x->fresh[k])
            return false;
    return true;
}

/* Consumer cs of RECV i combines on arrival (wire.h irecv_consume). */
static trd_status post_consumed(trd_exec *x, int32_t id, int32_t i, const trd_step *s,
                                size_t bytes, int32_t c, const trd_step *cs)
{
    trd_fusion *f = x->fusion;
    int64_t lo, hi;
    trd_exec_range(x, cs->block, cs->blocks, &lo, &hi);
    size_t off = (size_t)lo * x->elem;
    const unsigned char *input = x->input ? input_for(x, cs) : NULL;
    unsigned char *out = x->slot[cs->buf] + off;
    f->pending[i] = (trd_fused){.exec = x, .out = out, .acc = input ? input + off : out,
                                .count = hi - lo, .side = cs->side, .combine = c};
    if (input)
        filled(x, cs);
    f->state[c] |= STEP_ABSORBED;
    trd_wire *w = x->wire;
    return w->irecv_consume(w->ctx, s->peer, s->block, bytes, id, consume, &f->pending[i]);
}

/* RECV s (program step i) handled with its consumer cs (fuse.c) when the
 * consumer's other dependency is done already: the consumer's accumulator
 * is then untouched by anything still running (the IR is race-free).  A
 * SEND that reads the input counts as done: it does not read the
 * accumulator it precedes.  Where the wire can, the message is combined as
 * it arrives (post_consumed) and the consumer completes at once when
 * posted.  Otherwise, when the consumer folds it into fresh blocks of
 * slot 0 (their value is the input, exec.h), it is received straight into
 * slot 0 and the consumer computes input (+) slot 0 in place: one buffer
 * less to stream than receiving into scratch and writing input (+)
 * scratch (MPI).  *posted: whether it was. */
static trd_status post_fused(trd_exec *x, int32_t id, const trd_step *s, size_t bytes,
                             bool *posted)
{
    trd_fusion *f = x->fusion;
    int32_t i = id - x->base, c = f->consumer[i];
    *posted = false;
    if (c < 0)
        return TRD_OK;
    const trd_step *cs = trd_plan_step(x->plan, x->rank, (size_t)c);
    int32_t other = cs->dep[0] == i ? cs->dep[1] : cs->dep[0];
    bool comm = trd_op_is_commutative(x->op);
    if (other >= 0 && !(f->state[other] & (STEP_DONE | STEP_FROM_INPUT)))
        return TRD_OK;
    trd_status st = check_slot(x, cs->buf);
    if (st != TRD_OK)
        return st;
    if (x->wire->irecv_consume && (cs->side == TRD_SIDE_LEFT || comm)) {
        *posted = true;
        return post_consumed(x, id, i, s, bytes, c, cs);
    }
    if (cs->buf != 0 || !x->input || !all_fresh(x, cs) || (cs->side == TRD_SIDE_LEFT && !comm))
        return TRD_OK;
    int64_t lo, hi;
    trd_exec_range(x, cs->block, cs->blocks, &lo, &hi);
    f->state[c] |= STEP_REDIRECTED;
    *posted = true;
    trd_wire *w = x->wire;
    return w->irecv(w->ctx, s->peer, s->block, x->slot[0] + (size_t)lo * x->elem, bytes, id);
}

/* The consumer of a RECV redirected into slot 0: slot 0 = input (+) slot
 * 0 (the input is only read: the left side of trd_op_combine). */
static trd_status run_redirected(trd_exec *x, int32_t id, const trd_step *s)
{
    int64_t lo, hi;
    trd_exec_range(x, s->block, s->blocks, &lo, &hi);
    size_t off = (size_t)lo * x->elem;
    trd_status st = trd_op_combine(x->op, TRD_SIDE_LEFT, x->slot[0] + off,
                                   (void *)(x->input + off), hi - lo);
    if (st != TRD_OK)
        return st;
    filled(x, s);
    return trd_fifo_push(&x->local, id, -1);
}

/* A SEND of the input, not of slot 0, is done for the engine at once: the
 * steps that wait for it only wait for its blocks of slot 0 to be free,
 * and the input is never written (exec.h).  So a RECV into those blocks
 * is posted now, where a peer may claim it.  The wire's own completion
 * comes later and is dropped (wait_any); trd_exec_drain waits for the
 * last ones, so the caller's sendbuf is free when the call returns. */
static trd_status send_early(trd_exec *x, int32_t id)
{
    x->fusion->state[id - x->base] |= STEP_FROM_INPUT | STEP_EARLY;
    x->early++;
    return trd_fifo_push(&x->local, id, -1);
}

static trd_status post(void *ctx, int32_t rank, int32_t id, const trd_step *s)
{
    trd_exec *x = ctx;
    int64_t lo, hi;
    bool posted;
    (void)rank; /* a wire serves one rank */
    trd_status st = check_slot(x, s->buf);
    if (st != TRD_OK)
        return st;
    if (x->fusion && (x->fusion->state[id - x->base] & STEP_ABSORBED))
        return trd_fifo_push(&x->local, id, -1); /* a COMBINE done on arrival */
    if (x->fusion && (x->fusion->state[id - x->base] & STEP_REDIRECTED))
        return run_redirected(x, id, s);
    trd_exec_range(x, s->block, s->blocks, &lo, &hi);
    const unsigned char *input = x->input ? input_for(x, s) : NULL;
    unsigned char *at = x->slot[s->buf] + (size_t)lo * x->elem;
    size_t bytes = (size_t)(hi - lo) * x->elem;
    trd_wire *w = x->wire;
    switch (s->kind) {
    case TRD_STEP_SEND:
        if (x->fusion && (x->fusion->state[id - x->base] & STEP_CLAIMED))
            return w->isend_claimed(w->ctx, x->fusion->claim[id - x->base], id);
        st = w->isend(w->ctx, s->peer, s->block, input ? input + (size_t)lo * x->elem : at,
                      bytes, id);
        return st == TRD_OK && x->fusion && input ? send_early(x, id) : st;
    case TRD_STEP_RECV:
        if (x->fusion && ((st = post_fused(x, id, s, bytes, &posted)) != TRD_OK || posted))
            return st;
        return w->irecv(w->ctx, s->peer, s->block, at, bytes, id);
    default:
        return run_local(x, id, s, lo, hi, input);
    }
}

/* The wire's completion of a SEND the engine was told of early
 * (send_early): dropped. */
static bool drop_early(trd_exec *x, int32_t id)
{
    uint8_t *state = &x->fusion->state[id - x->base];
    if (!(*state & STEP_EARLY))
        return false;
    *state &= (uint8_t)~STEP_EARLY;
    x->early--;
    return true;
}

static trd_status wait_any(void *ctx, int32_t *rank, int32_t *id, int32_t *from)
{
    trd_exec *x = ctx;
    trd_completion c;
    trd_status st = TRD_OK;
    trd_wire *w = x->wire;
    *rank = w->rank;
    for (;;) {
        if (trd_fifo_pop(&x->local, &c)) {
            *id = c.id;
            *from = c.from;
            break;
        }
        st = w->wait(w->ctx, x->timeout_s, id, from);
        if (st != TRD_OK || !x->fusion || !drop_early(x, *id))
            break;
    }
    if (st == TRD_OK && x->fusion)
        x->fusion->state[*id - x->base] |= STEP_DONE;
    return st;
}

trd_status trd_exec_drain(trd_exec *x)
{
    trd_status st = TRD_OK;
    while (x->early > 0 && st == TRD_OK) {
        int32_t id, from;
        if ((st = x->wire->wait(x->wire->ctx, x->timeout_s, &id, &from)) == TRD_OK &&
            !drop_early(x, id))
            st = trd_fail(TRD_EIO, "runtime: rank %ld: step %ld completed after the end of "
                          "its program", (long)x->rank, (long)id);
    }
    return st;
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
