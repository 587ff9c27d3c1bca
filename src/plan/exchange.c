/* exchange.c: the program writer and the fold shared by the exchange
 * builders (exchange.h).
 *
 * A builder states the size of its plan up front (blocks, steps of all
 * ranks together): ring's p (p - 1) steps grow fast, so a plan the engine
 * could not number (it counts steps in 31 bits) is refused before anything
 * is allocated, with the sizes in the message. */
#include "plan/exchange.h"

#include <stdint.h>
#include <stdlib.h>

#include "core/error.h"
#include "core/memory.h"

/* What the engine can number (engine.c: two events per step in 32 bits). */
#define STEPS_LIMIT ((double)(INT32_MAX / 2))

trd_status trd_xb_begin(trd_xbuild *x, trd_plan *plan, double blocks, double steps)
{
    const trd_params *p = &plan->params;
    const char *name = plan->algo->name;
    *x = (trd_xbuild){.plan = plan, .st = TRD_OK};
    if (steps > STEPS_LIMIT || blocks > (double)INT32_MAX)
        return trd_fail(TRD_EINVAL, "%s: p = %lld ranks with %lld segments make %.4g steps "
                        "over %.4g blocks, above the %.4g steps and %ld blocks a plan can "
                        "hold", name, (long long)p->n, (long long)p->segments, steps, blocks,
                        STEPS_LIMIT, (long)INT32_MAX);
    trd_status st = trd_check_memory(p->n, steps / (double)p->n * 2.0 * sizeof(trd_step),
                                     "the exchange schedule");
    if (st != TRD_OK)
        return st;
    plan->blocks = (int32_t)blocks;
    plan->step_first = calloc((size_t)p->n + 1, sizeof *plan->step_first);
    if (!plan->step_first)
        return trd_fail(TRD_ENOMEM, "%s: out of memory for p = %lld", name, (long long)p->n);
    return TRD_OK;
}

void trd_xb_rank(trd_xbuild *x, int32_t r)
{
    x->first = x->list.len;
    x->plan->step_first[r] = x->list.len;
}

static int32_t emit(trd_xbuild *x, trd_step s)
{
    if (x->st != TRD_OK || (x->st = trd_step_push(&x->list, s)) != TRD_OK)
        return -1;
    return (int32_t)(x->list.len - 1 - x->first);
}

static trd_step step(int32_t kind, int32_t peer, int32_t buf, int32_t src, trd_xrange r,
                     int32_t dep0, int32_t dep1)
{
    return (trd_step){.kind = kind, .peer = peer, .buf = buf, .src = src,
                      .side = TRD_SIDE_LEFT, .block = r.block,
                      .blocks = r.blocks > 1 ? r.blocks : 1, .dep = {dep0, dep1}};
}

int32_t trd_xb_send(trd_xbuild *x, int32_t peer, trd_xrange r, int32_t dep0, int32_t dep1)
{
    return trd_xb_send_slot(x, peer, 0, r, dep0, dep1);
}

int32_t trd_xb_send_slot(trd_xbuild *x, int32_t peer, int32_t slot, trd_xrange r, int32_t dep0,
                         int32_t dep1)
{
    return emit(x, step(TRD_STEP_SEND, peer, slot, -1, r, dep0, dep1));
}

int32_t trd_xb_recv(trd_xbuild *x, int32_t peer, int32_t slot, trd_xrange r, int32_t dep0,
                    int32_t dep1)
{
    return emit(x, step(TRD_STEP_RECV, peer, slot, -1, r, dep0, dep1));
}

int32_t trd_xb_combine(trd_xbuild *x, trd_side side, trd_xrange r, int32_t dep0, int32_t dep1)
{
    return trd_xb_combine_from(x, side, 1, r, dep0, dep1);
}

int32_t trd_xb_combine_from(trd_xbuild *x, trd_side side, int32_t src, trd_xrange r,
                            int32_t dep0, int32_t dep1)
{
    return trd_xb_combine_into(x, side, 0, src, r, dep0, dep1);
}

int32_t trd_xb_combine_into(trd_xbuild *x, trd_side side, int32_t dst, int32_t src,
                            trd_xrange r, int32_t dep0, int32_t dep1)
{
    trd_step s = step(TRD_STEP_COMBINE, -1, dst, src, r, dep0, dep1);
    s.side = side;
    return emit(x, s);
}

int32_t trd_xb_copy(trd_xbuild *x, int32_t dst, int32_t src, trd_xrange r, int32_t dep0,
                    int32_t dep1)
{
    return emit(x, step(TRD_STEP_COPY, -1, dst, src, r, dep0, dep1));
}

trd_status trd_xb_end(trd_xbuild *x)
{
    trd_plan *plan = x->plan;
    if (x->st != TRD_OK) { /* trd_step_push has set the message */
        free(x->list.steps);
        return x->st;
    }
    if (!x->list.steps && !(x->list.steps = calloc(1, sizeof *x->list.steps)))
        return trd_fail(TRD_ENOMEM, "%s: out of memory", plan->algo->name); /* p = 1 */
    plan->step_first[plan->params.n] = x->list.len;
    plan->steps = x->list.steps;
    return TRD_OK;
}

trd_status trd_xb_build_ranks(trd_plan *plan, double blocks, double steps, trd_xb_rank_fn *emit,
                              const void *ctx)
{
    trd_xbuild x;
    trd_status st = trd_xb_begin(&x, plan, blocks, steps);
    if (st != TRD_OK)
        return st;
    int32_t p = (int32_t)plan->params.n;
    for (int32_t r = 0; r < p; r++) {
        trd_xb_rank(&x, r);
        if (p > 1)
            emit(&x, ctx, r);
    }
    return trd_xb_end(&x);
}

/* A per-segment builder seen as a per-rank one. */
typedef struct segments {
    trd_xb_segment_fn *emit;
    const void *ctx;
    int32_t m;
} segments;

static void emit_segments(trd_xbuild *x, const void *ctx, int32_t r)
{
    const segments *g = ctx;
    for (int32_t j = 0; j < g->m; j++)
        g->emit(x, g->ctx, r, j);
}

trd_status trd_xb_build_segments(trd_plan *plan, double blocks, double steps,
                                 trd_xb_segment_fn *emit, const void *ctx)
{
    segments g = {.emit = emit, .ctx = ctx, .m = (int32_t)plan->params.segments};
    return trd_xb_build_ranks(plan, blocks, steps, emit_segments, &g);
}

trd_fold trd_fold_make(int32_t p)
{
    trd_fold f = {.p = p, .p2 = 1, .rounds = 0};
    while (f.p2 <= p / 2) {
        f.p2 *= 2;
        f.rounds++;
    }
    f.rem = p - f.p2;
    return f;
}

int32_t trd_fold_newrank(const trd_fold *f, int32_t r)
{
    if (r >= 2 * f->rem)
        return r - f->rem;
    return r % 2 ? r / 2 : -1;
}

int32_t trd_fold_rank(const trd_fold *f, int32_t nr)
{
    return nr < f->rem ? 2 * nr + 1 : nr + f->rem;
}

void trd_fold_out(trd_xbuild *x, int32_t r, trd_xrange seg)
{
    int32_t sent = trd_xb_send(x, r + 1, seg, -1, -1);
    trd_xb_recv(x, r + 1, 0, seg, sent, -1);
}

int32_t trd_fold_in(trd_xbuild *x, const trd_fold *f, int32_t r, trd_xrange seg)
{
    if (r >= 2 * f->rem)
        return -1;
    int32_t got = trd_xb_recv(x, r - 1, 1, seg, -1, -1);
    return trd_xb_combine(x, TRD_SIDE_LEFT, seg, got, -1);
}

void trd_fold_back(trd_xbuild *x, const trd_fold *f, int32_t r, trd_xrange seg, int32_t dep0,
                   int32_t dep1)
{
    if (r < 2 * f->rem)
        trd_xb_send(x, r - 1, seg, dep0, dep1);
}
