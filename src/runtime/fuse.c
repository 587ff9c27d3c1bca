/* fuse.c: which receives the runtime may combine straight from the
 * sender's buffer (wire.h irecv_consume) instead of storing them in
 * scratch and combining them from there: a RECV into a scratch slot whose
 * bytes one later step alone reads, a COMBINE of exactly its blocks that
 * depends on it, before anything else reads them.  The receiving rank then
 * reads the message once instead of writing it to scratch and reading it
 * back (the memory traffic of a large allreduce, docs/RUNTIME.md,
 * "Memory traffic of large buffers").
 *
 * And the other way round, which combines may write their result into the
 * receiver's buffer as they compute it (wire.h claim_recv): a COMBINE
 * whose blocks a later SEND ships whole, depending on it, with no step
 * writing them in between (so the bytes written are the bytes sent), and
 * no earlier SEND of the program on the same channel (so claiming the
 * receive now takes the one that SEND would match: channels match in
 * program order).  The reduce-scatter half of an exchange allreduce then
 * leaves each rank's half in both results at once, and the allgather
 * copies nothing.
 *
 * Which steps may is found here, once per plan and rank; whether one is,
 * at run time in exec.c (the COMBINE's other dependency must be done when
 * the RECV is posted; the receiver must have posted its RECV). */
#include "runtime/fuse.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

/* Steps scanned after a RECV: the scan stays linear on long programs; a
 * RECV whose consumer or last reader lies beyond is simply not fused. */
#define FUSE_WINDOW 4096

static int32_t span(const trd_step *s) { return s->blocks > 1 ? s->blocks : 1; }

static bool overlaps(const trd_step *a, const trd_step *b)
{
    return a->block < b->block + span(b) && b->block < a->block + span(a);
}

static bool touches(const trd_step *s, int32_t slot)
{
    switch (s->kind) {
    case TRD_STEP_SEND:
    case TRD_STEP_RECV:
        return s->buf == slot;
    case TRD_STEP_COMBINE:
    case TRD_STEP_COPY:
        return s->buf == slot || s->src == slot;
    default:
        return false;
    }
}

/* Step s overwrites its blocks of `slot` without reading them. */
static bool overwrites(const trd_step *s, int32_t slot)
{
    return (s->kind == TRD_STEP_RECV || (s->kind == TRD_STEP_COPY && s->src != slot)) &&
           s->buf == slot;
}

/* After the consumer: the blocks of r that no later step has overwritten
 * yet (live[b], *left of them) must not be read.  Whether s reads one;
 * the live blocks s overwrites are dropped. */
static bool reads_live(const trd_step *s, const trd_step *r, int32_t slot, uint8_t *live,
                       int32_t *left)
{
    int32_t lo = s->block > r->block ? s->block : r->block;
    int32_t hi = s->block + span(s) < r->block + span(r) ? s->block + span(s)
                                                         : r->block + span(r);
    bool write = overwrites(s, slot);
    for (int32_t b = lo; b < hi; b++)
        if (live[b - r->block]) {
            if (!write)
                return true;
            live[b - r->block] = 0;
            --*left;
        }
    return false;
}

/* The COMBINE that alone reads what RECV i of a program of n steps
 * stores, or -1.  Slot 0 is left alone: exec.c's lazy input lives there.
 * live: room for the RECV's blocks. */
static int32_t consumer_of(const trd_plan *plan, int32_t rank, size_t n, size_t i,
                           uint8_t *live)
{
    const trd_step *r = trd_plan_step(plan, rank, i);
    int32_t slot = r->buf, c = -1, left = span(r);
    if (r->kind != TRD_STEP_RECV || slot == 0)
        return -1;
    memset(live, 1, (size_t)left);
    size_t end = n - i - 1 > FUSE_WINDOW ? i + 1 + FUSE_WINDOW : n;
    for (size_t j = i + 1; j < end && left > 0; j++) {
        const trd_step *s = trd_plan_step(plan, rank, j);
        if (!touches(s, slot) || !overlaps(r, s))
            continue;
        if (c >= 0) { /* after the consumer: the bytes must be dead */
            if (reads_live(s, r, slot, live, &left))
                return -1;
            continue;
        }
        bool consumes = s->kind == TRD_STEP_COMBINE && s->src == slot && s->buf != slot &&
                        s->block == r->block && span(s) == span(r) &&
                        (s->dep[0] == (int32_t)i || s->dep[1] == (int32_t)i);
        if (!consumes)
            return -1;
        c = (int32_t)j;
    }
    return end == n || left == 0 ? c : -1;
}

static bool writes(const trd_step *s, int32_t slot)
{
    return s->kind != TRD_STEP_SEND && s->buf == slot;
}

/* A SEND's channel (peer, tag = first block) and its step. */
typedef struct send_key {
    int32_t peer, block, step;
} send_key;

static int by_channel(const void *x, const void *y)
{
    const send_key *a = x, *b = y;
    if (a->peer != b->peer)
        return a->peer < b->peer ? -1 : 1;
    if (a->block != b->block)
        return a->block < b->block ? -1 : 1;
    return (a->step > b->step) - (a->step < b->step);
}

/* first[j] = 1 for the SENDs that are the first of their channel in
 * rank's program of n steps (a sort by channel: long programs stay
 * n log n). */
static trd_status mark_first_sends(const trd_plan *plan, int32_t rank, size_t n, uint8_t *first)
{
    send_key *k = malloc((n + 1) * sizeof *k);
    size_t m = 0;
    if (!k)
        return trd_fail(TRD_ENOMEM, "runtime: out of memory for a program of %zu steps", n);
    for (size_t j = 0; j < n; j++) {
        const trd_step *s = trd_plan_step(plan, rank, j);
        first[j] = 0;
        if (s->kind == TRD_STEP_SEND)
            k[m++] = (send_key){s->peer, s->block, (int32_t)j};
    }
    qsort(k, m, sizeof *k, by_channel);
    for (size_t q = 0; q < m; q++)
        first[k[q].step] = q == 0 || k[q].peer != k[q - 1].peer || k[q].block != k[q - 1].block;
    free(k);
    return TRD_OK;
}

/* The SEND that ships what COMBINE i of a program of n steps writes,
 * or -1 (see the top); first: mark_first_sends. */
static int32_t producer_of(const trd_plan *plan, int32_t rank, size_t n, size_t i,
                           const uint8_t *first)
{
    const trd_step *c = trd_plan_step(plan, rank, i);
    if (c->kind != TRD_STEP_COMBINE)
        return -1;
    size_t end = n - i - 1 > FUSE_WINDOW ? i + 1 + FUSE_WINDOW : n;
    for (size_t j = i + 1; j < end; j++) {
        const trd_step *s = trd_plan_step(plan, rank, j);
        bool ships = s->kind == TRD_STEP_SEND && s->buf == c->buf && s->block == c->block &&
                     span(s) == span(c) && (s->dep[0] == (int32_t)i || s->dep[1] == (int32_t)i);
        if (ships)
            return first[j] ? (int32_t)j : -1;
        if (writes(s, c->buf) && overlaps(s, c))
            return -1;
    }
    return -1;
}

trd_status trd_fusion_init(trd_fusion *f, const trd_plan *plan, int32_t rank)
{
    size_t n = trd_plan_step_count(plan, rank);
    *f = (trd_fusion){.steps = (int32_t)n};
    f->consumer = malloc((n + 1) * sizeof *f->consumer);
    f->producer = malloc((n + 1) * sizeof *f->producer);
    f->state = calloc(n + 1, sizeof *f->state);
    f->pending = calloc(n + 1, sizeof *f->pending);
    f->claim = calloc(n + 1, sizeof *f->claim);
    if (!f->consumer || !f->producer || !f->state || !f->pending || !f->claim) {
        trd_fusion_free(f);
        return trd_fail(TRD_ENOMEM, "runtime: out of memory for a program of %zu steps", n);
    }
    uint8_t *live = malloc((size_t)trd_plan_blocks(plan) + 1), *first = malloc(n + 1);
    trd_status st = live && first ? mark_first_sends(plan, rank, n, first)
                                  : trd_fail(TRD_ENOMEM, "runtime: out of memory for a program "
                                             "of %zu steps", n);
    for (size_t i = 0; i < n && st == TRD_OK; i++) {
        f->consumer[i] = consumer_of(plan, rank, n, i, live);
        f->producer[i] = producer_of(plan, rank, n, i, first);
    }
    free(live);
    free(first);
    if (st != TRD_OK)
        trd_fusion_free(f);
    return st;
}

void trd_fusion_free(trd_fusion *f)
{
    free(f->consumer);
    free(f->producer);
    free(f->state);
    free(f->pending);
    free(f->claim);
    *f = (trd_fusion){0};
}
