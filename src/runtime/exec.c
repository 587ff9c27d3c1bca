/* exec.c: the engine's transport for real runs: a plain interpreter of
 * the steps as the plan writes them (fusion is the plan's, src/plan/
 * fuse.c; nothing here analyses or rewrites a program).  The engine posts
 * the steps of one rank; SEND and RECV go to the wire (threads or MPI) as
 * messages covering their blocks of the slot buffers, tagged by their first
 * block (the IR's matching rule: same pair, same block, program order);
 * COMBINE and COPY run here at once, on this rank's thread, and complete
 * through a local FIFO.  So while a COMBINE runs, the wire keeps moving the
 * messages already posted (the overlap of canon-antoniu Sec. 3.1 and of
 * segmented pipelines).  A RECV_COMBINE is one step whatever the wire:
 * folded into the accumulator from the sender's buffer where the wire can
 * (irecv_consume), else landed first (in slot 0 or its scratch slot) and
 * combined when the wire completes it, before the engine hears of it. */
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
    if (x->bounds) {
        *lo = x->bounds[block];
        *hi = x->bounds[block + nb];
        return;
    }
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

void trd_exec_fill_slot0(trd_exec *x, int32_t block, int32_t blocks)
{
    if (x->input)
        fill(x, block, blocks);
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
                 : s->kind == TRD_STEP_COMBINE || s->kind == TRD_STEP_RECV_COMBINE
                     ? s->buf == 0 || s->src == 0
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

/* How a RECV_COMBINE's message arrives: combined from the sender's
 * buffer (the wire ran consume), landed in slot 0 over fresh input blocks
 * (combined with the input on completion), or landed in the step's scratch
 * slot (combined into the accumulator on completion). */
enum { LAND_CONSUMED, LAND_SLOT0, LAND_SCRATCH };

/* Combines that fill a claimed receive write both results past the cache
 * (core/stream.h) when the whole buffer has at least this many bytes:
 * more than a core's caches hold, so the result would not stay there. */
#define STREAM_MIN ((size_t)4 << 20)

static const trd_step *step_at(const trd_exec *x, int32_t i)
{
    return trd_plan_step(x->plan, x->rank, (size_t)i);
}

static void log_done(trd_exec *x, int32_t id, unsigned work)
{
    trd_exec_log *g = x->log;
    if (g->len == g->cap) {
        int32_t cap = g->cap ? 2 * g->cap : 64;
        int32_t *step = realloc(g->step, (size_t)cap * sizeof *step);
        uint8_t *w = step ? realloc(g->work, (size_t)cap) : NULL;
        if (step)
            g->step = step;
        if (!w)
            return; /* the test sees a short record and fails */
        g->work = w;
        g->cap = cap;
    }
    g->step[g->len] = id - x->base;
    g->work[g->len++] = (uint8_t)work;
}

/* The combine of step i (-1: a dynamic program): out = in (+) acc as
 * trd_op_combine_into.  When the plan says a SEND ships exactly its result
 * (trd_step.ship), the wire can claim and the peer has posted that
 * receive, the result also goes straight into it, piece by piece while it
 * is in cache, so neither rank copies it later (a two-rank allreduce then
 * moves 4n bytes instead of 5n, docs/RUNTIME_INTERNALS.md, "Memory traffic
 * of large buffers"); the SEND then completes both ends (send).  Otherwise the SEND
 * carries it. */
static trd_status combine(trd_exec *x, int32_t i, trd_side side, unsigned char *out,
                          const unsigned char *acc, unsigned char *in, int64_t count)
{
    const trd_step *s = i >= 0 ? step_at(x, i) : NULL;
    int64_t piece = trd_op_piece(x->op, side);
    unsigned char *dst = NULL;
    trd_status st = TRD_OK;
    if (s && s->ship > 0 && x->wire->claim_recv && piece > 0) {
        const trd_step *ship = step_at(x, s->ship - 1);
        void *d = NULL;
        st = x->wire->claim_recv(x->wire->ctx, ship->peer, ship->block,
                                 (size_t)count * x->elem, &d, &x->run[i].claim);
        dst = d;
    }
    if (s && s->ship > 0)
        x->run[i].claimed = dst != NULL;
    if (s)
        x->run[i].did |= TRD_WORK_COMBINED;
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
    if (s->kind == TRD_STEP_COPY) {
        memcpy(acc, input ? input + off : in, (size_t)(hi - lo) * x->elem);
        if (x->plan)
            x->run[id - x->base].did |= TRD_WORK_COPIED;
    } else if ((st = combine(x, x->plan ? id - x->base : -1, (trd_side)s->side, acc,
                           input ? input + off : acc, in, hi - lo)) != TRD_OK)
        return st;
    if (input)
        filled(x, s);
    return trd_fifo_push(&x->local, id, -1);
}

/* A consumed message (wire.h) is combined from where the sender keeps it:
 * `in` is only read (post_recv_combine consumes left or commutative
 * combines only), and the wire checked its size. */
static trd_status consume(void *arg, const void *data, size_t bytes)
{
    trd_step_run *r = arg;
    trd_exec *x = r->exec;
    (void)bytes;
    return combine(x, r->step, (trd_side)step_at(x, r->step)->side, r->out, r->acc,
                   (void *)data, r->count);
}

static bool all_fresh(const trd_exec *x, const trd_step *s)
{
    for (int32_t k = s->block; k < s->block + (s->blocks > 1 ? s->blocks : 1); k++)
        if (!x->fresh[k])
            return false;
    return true;
}

/* RECV_COMBINE s (step i): the accumulator waits for nothing (plan/
 * fuse.c), so the message may be folded in whenever it comes.  Where the
 * wire can, from the sender's buffer (a RIGHT combine of a non-commutative
 * operator writes its `in`, which is the sender's then: it lands first).
 * Otherwise, when it folds into fresh blocks of slot 0 (their value is the
 * input, exec.h), it lands straight in slot 0 and is combined there with
 * the input: one buffer less to stream than landing in scratch and writing
 * input (+) scratch (MPI).  Else it lands in its scratch slot. */
static trd_status post_recv_combine(trd_exec *x, int32_t id, const trd_step *s, size_t off,
                                    size_t bytes)
{
    trd_step_run *r = &x->run[id - x->base];
    trd_wire *w = x->wire;
    bool comm = trd_op_is_commutative(x->op);
    bool consumes = w->irecv_consume && (s->side == TRD_SIDE_LEFT || comm);
    bool fresh = s->buf == 0 && x->input && all_fresh(x, s);
    trd_status st = check_slot(x, s->src);
    if (st != TRD_OK)
        return st;
    *r = (trd_step_run){.exec = x, .out = x->slot[s->buf] + off, .count = (int64_t)(bytes / x->elem),
                        .step = id - x->base, .in = x->slot[s->src] + off};
    if (fresh && !consumes && (s->side == TRD_SIDE_RIGHT || comm)) {
        r->land = LAND_SLOT0;
        memset(x->fresh + s->block, 0, (size_t)(s->blocks > 1 ? s->blocks : 1));
        return w->irecv(w->ctx, s->peer, s->block, r->out, bytes, id);
    }
    const unsigned char *input = x->input ? input_for(x, s) : NULL;
    r->acc = input ? input + off : r->out;
    if (input)
        filled(x, s);
    if (consumes) {
        r->land = LAND_CONSUMED;
        return w->irecv_consume(w->ctx, s->peer, s->block, bytes, id, consume, r);
    }
    r->land = LAND_SCRATCH;
    return w->irecv(w->ctx, s->peer, s->block, r->in, bytes, id);
}

/* A RECV_COMBINE that landed (post_recv_combine) is combined now that
 * the wire has its bytes. */
static trd_status landed(trd_exec *x, int32_t id)
{
    trd_step_run *r = &x->run[id - x->base];
    if (r->land == LAND_SLOT0) { /* slot 0 = input (+) message, the input only read */
        size_t off = (size_t)(r->out - x->slot[0]);
        r->did |= TRD_WORK_COMBINED;
        return trd_op_combine(x->op, TRD_SIDE_LEFT, r->out, (void *)(x->input + off), r->count);
    }
    return combine(x, r->step, (trd_side)step_at(x, r->step)->side, r->out, r->acc, r->in,
                   r->count);
}

/* SEND s (step i): its bytes are already in the peer when the combine
 * that the plan says it ships claimed the peer's receive (combine). */
static trd_status send(trd_exec *x, int32_t id, const trd_step *s, const unsigned char *from,
                       size_t bytes)
{
    trd_wire *w = x->wire;
    for (int k = 0; x->plan && k < 2; k++) {
        int32_t d = s->dep[k];
        if (d >= 0 && step_at(x, d)->ship == id - x->base + 1 && x->run[d].claimed)
            return w->isend_claimed(w->ctx, x->run[d].claim, id);
    }
    return w->isend(w->ctx, s->peer, s->block, from, bytes, id);
}

static trd_status post(void *ctx, int32_t rank, int32_t id, const trd_step *s)
{
    trd_exec *x = ctx;
    int64_t lo, hi;
    (void)rank; /* a wire serves one rank */
    trd_status st = check_slot(x, s->buf);
    if (st != TRD_OK)
        return st;
    if (x->plan)
        x->run[id - x->base].did = 0;
    trd_exec_range(x, s->block, s->blocks, &lo, &hi);
    size_t off = (size_t)lo * x->elem, bytes = (size_t)(hi - lo) * x->elem;
    if (s->kind == TRD_STEP_RECV_COMBINE)
        return x->plan ? post_recv_combine(x, id, s, off, bytes)
                       : trd_fail(TRD_EINVAL, "runtime: a dynamic program has a "
                                  "receive-and-combine step");
    const unsigned char *input = x->input ? input_for(x, s) : NULL;
    unsigned char *at = x->slot[s->buf] + off;
    trd_wire *w = x->wire;
    switch (s->kind) {
    case TRD_STEP_SEND:
        return send(x, id, s, input ? input + off : at, bytes);
    case TRD_STEP_SEND_INPUT: /* the input kept apart, or slot 0 if nothing writes it */
        return w->isend(w->ctx, s->peer, s->block, x->input ? x->input + off : at, bytes, id);
    case TRD_STEP_RECV:
        return w->irecv(w->ctx, s->peer, s->block, at, bytes, id);
    default:
        return run_local(x, id, s, lo, hi, input);
    }
}

static trd_status wait_any(void *ctx, int32_t *rank, int32_t *id, int32_t *from)
{
    trd_exec *x = ctx;
    trd_completion c;
    trd_wire *w = x->wire;
    trd_status st = TRD_OK;
    *rank = w->rank;
    if (trd_fifo_pop(&x->local, &c)) {
        *id = c.id;
        *from = c.from;
    } else {
        st = w->wait(w->ctx, x->timeout_s, id, from);
        if (st == TRD_OK && x->plan)
            x->run[*id - x->base].did |= TRD_WORK_MOVED;
        if (st == TRD_OK && x->plan &&
            step_at(x, *id - x->base)->kind == TRD_STEP_RECV_COMBINE &&
            x->run[*id - x->base].land != LAND_CONSUMED)
            st = landed(x, *id);
    }
    if (st == TRD_OK && x->log && x->plan)
        log_done(x, *id, x->run[*id - x->base].did);
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
