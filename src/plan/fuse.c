/* fuse.c: the fusion pass that every plan goes through when it is built
 * (plan.c), so that the planner, the simulator and the runtime see one
 * and the same program (the simulator runs exactly what runs:
 * docs/ARCHITECTURE.md).
 *
 * Receive-and-combine.  A RECV into a scratch slot whose bytes one later
 * step alone reads - a COMBINE of exactly its blocks into another slot,
 * depending on it and on nothing else (so the accumulator it folds into is
 * ready from the start: the RECV's arrival is the only thing it waits for)
 * - becomes one RECV_COMBINE at the RECV's place: the message is folded
 * into the accumulator as it arrives.  Steps that waited for the COMBINE
 * wait for it.  A RECV that anything else waits for (a fixed receive
 * order) is left alone: the step after it would otherwise wait for the
 * combine too.  Where the wire can (threads), the receiver combines
 * straight from the sender's buffer and reads the message once instead of
 * writing it to scratch and reading it back (docs/RUNTIME_INTERNALS.md,
 * "Memory traffic of large buffers"); elsewhere the executor lands it in `src`
 * and combines on completion: one step either way, charged as a transfer
 * (less the wire's measured recv_combine_saving) then a combine by the
 * simulator.  A COMBINE whose accumulator an earlier
 * step writes is not fused: folding on arrival would have to wait for
 * that step, and the transfer would start later than the model plans it
 * (canon-antoniu Sec. 3.1: a rank receives its next input while it
 * combines the previous one).
 *
 * Send-from-input.  A SEND of slot 0 blocks that no earlier step of the
 * program writes, and that waits for nothing, sends the rank's input: it
 * becomes a SEND_INPUT, and the steps that waited for it (to write slot 0
 * once the SEND no longer reads it) wait for it no more.  The runtime
 * keeps the input apart (the caller's sendbuf, or a copy made at the start
 * of an in-place call), so no step writes what it sends; it has no deps,
 * so it is posted at the start in program order and no ordering passed
 * through it.  An exchange's first round then overlaps its receive and
 * combine with its send: the receive is posted before the send is done,
 * and a combine that waited for nothing else is fused with it.
 *
 * Combine-into-peer.  A COMBINE or RECV_COMBINE whose blocks a later SEND
 * ships whole, depending on it, with no step writing them in between (so
 * the bytes written are the bytes sent), and no earlier SEND of the
 * program on the same channel (so the receive the result may be written
 * into is the one that SEND matches: channels match in program order)
 * gets `ship` = 1 + that SEND's index.  The runtime then writes the result
 * into the peer's receive as it computes it, when the peer has posted it
 * (wire.h claim_recv), and the SEND completes both ends: the
 * reduce-scatter half of an exchange allreduce leaves each rank's half in
 * both results at once. */
#include "plan/fuse.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

/* A SEND's channel (peer, tag = first block) and its step. */
typedef struct send_key {
    int32_t peer, block, step;
} send_key;

/* What a sweep (sweep_consumers, mark_ships) knows of one (slot, block)
 * of the program at hand: the next step after the current one that
 * touches it, and whether that step overwrites it unread.  Valid only
 * under the program's epoch: a new program starts from nothing without
 * clearing the table. */
typedef struct access {
    uint32_t epoch;
    int32_t next;
    uint8_t overwrite;
} access;

/* The pass's working memory for programs of up to n steps over `slots`
 * slots of `blocks` blocks, allocated once per plan: a plan of 10^6 ranks
 * has 10^6 programs of ~3 steps, and allocating per program doubled the
 * planning time. */
typedef struct fuse_scratch {
    trd_step *sent;               /* the program after send-from-input */
    send_key *keys;               /* mark_first_sends */
    int32_t *waited, *to, *with;  /* fuse_receives */
    int32_t *ship_to;             /* mark_ships */
    uint8_t *input, *gone, *first, *dead; /* per step */
    uint8_t *written;             /* per block */
    access *table;                /* per (slot, block) */
    size_t cells;
    int32_t blocks;
    uint32_t epoch;
} fuse_scratch;

static void scratch_free(fuse_scratch *z)
{
    free(z->sent), free(z->keys), free(z->waited), free(z->to), free(z->with);
    free(z->ship_to), free(z->input), free(z->gone), free(z->first), free(z->dead);
    free(z->written), free(z->table);
}

static trd_status scratch_init(fuse_scratch *z, size_t n, int32_t slots, int32_t blocks)
{
    size_t b = (size_t)(blocks > 0 ? blocks : 0) + 1, cells = (size_t)(slots > 0 ? slots : 1) * b;
    n++;
    *z = (fuse_scratch){.sent = malloc(n * sizeof *z->sent), .keys = malloc(n * sizeof *z->keys),
                        .waited = malloc(n * sizeof *z->waited), .to = malloc(n * sizeof *z->to),
                        .with = malloc(n * sizeof *z->with),
                        .ship_to = malloc(n * sizeof *z->ship_to), .input = malloc(n),
                        .gone = malloc(n), .first = malloc(n), .dead = malloc(n),
                        .written = malloc(b), .table = calloc(cells, sizeof *z->table),
                        .cells = cells, .blocks = (int32_t)b};
    if (z->sent && z->keys && z->waited && z->to && z->with && z->ship_to && z->input &&
        z->gone && z->first && z->dead && z->written && z->table)
        return TRD_OK;
    scratch_free(z);
    *z = (fuse_scratch){0};
    return trd_fail(TRD_ENOMEM, "plan: out of memory fusing programs of %zu steps", n - 1);
}

static int32_t span(const trd_step *s) { return s->blocks > 1 ? s->blocks : 1; }

static bool touches(const trd_step *s, int32_t slot)
{
    return s->buf == slot || ((s->kind == TRD_STEP_COMBINE || s->kind == TRD_STEP_COPY ||
                               s->kind == TRD_STEP_RECV_COMBINE) && s->src == slot);
}

/* Step s overwrites its blocks of `slot` without reading them. */
static bool overwrites(const trd_step *s, int32_t slot)
{
    return (s->kind == TRD_STEP_RECV || (s->kind == TRD_STEP_COPY && s->src != slot)) &&
           s->buf == slot;
}

/* A new program: no (slot, block) has a next access. */
static void new_epoch(fuse_scratch *z)
{
    if (++z->epoch == 0) { /* wrapped: old stamps could pass for new ones */
        memset(z->table, 0, z->cells * sizeof *z->table);
        z->epoch = 1;
    }
}

static access *cell(fuse_scratch *z, int32_t slot, int32_t block)
{
    return &z->table[(size_t)slot * (size_t)z->blocks + (size_t)block];
}

/* The first step after the sweep's position that touches a block of
 * [block, block + nb) of slot, or `none`. */
static int32_t next_touch(fuse_scratch *z, int32_t slot, int32_t block, int32_t nb, int32_t none)
{
    int32_t first = none;
    for (int32_t b = block; b < block + nb; b++) {
        const access *a = cell(z, slot, b);
        if (a->epoch == z->epoch && a->next < first)
            first = a->next;
    }
    return first;
}

/* Whether every block of [block, block + nb) of slot is overwritten
 * unread by its next access after the sweep's position, or never touched
 * again: its value is dead. */
static bool dead_after(fuse_scratch *z, int32_t slot, int32_t block, int32_t nb)
{
    for (int32_t b = block; b < block + nb; b++) {
        const access *a = cell(z, slot, b);
        if (a->epoch == z->epoch && !a->overwrite)
            return false;
    }
    return true;
}

/* Step j (s) is now the next access to the blocks it touches of slot. */
static void touched(fuse_scratch *z, const trd_step *s, int32_t j, int32_t slot)
{
    for (int32_t b = s->block; b < s->block + span(s); b++)
        *cell(z, slot, b) = (access){.epoch = z->epoch, .next = j,
                                     .overwrite = overwrites(s, slot)};
}

/* Whether c is the COMBINE that consumes RECV r (step i): exactly its
 * blocks, from its slot into another, waiting for i and nothing else. */
static bool consumes(const trd_step *c, const trd_step *r, int32_t i)
{
    return c->kind == TRD_STEP_COMBINE && c->src == r->buf && c->buf != r->buf &&
           c->block == r->block && span(c) == span(r) &&
           ((c->dep[0] == i && c->dep[1] < 0) || (c->dep[1] == i && c->dep[0] < 0));
}

/* with[i]: the COMBINE that alone reads what RECV i of prog[0..n) stores
 * and waits for nothing else, or -1 (see the top).  Slot 0 is left alone:
 * the runtime's lazy input lives there (exec.h); waited[i]: how many
 * steps depend on step i.  One sweep from the end: at step k the table
 * holds each (slot, block)'s next access after k, so a RECV's first
 * toucher, and whether a COMBINE leaves its input dead, are look-ups over
 * their blocks: linear in the program's blocks, where a scan forward from
 * every RECV was quadratic in long programs (a pipeline of 65 536
 * segments). */
static void sweep_consumers(const trd_step *prog, size_t n, fuse_scratch *z)
{
    new_epoch(z);
    for (size_t k = n; k-- > 0;) {
        const trd_step *s = &prog[k];
        z->with[k] = -1;
        if (s->kind == TRD_STEP_COMBINE && s->src >= 0)
            z->dead[k] = dead_after(z, s->src, s->block, span(s));
        if (s->kind == TRD_STEP_RECV && s->buf != 0 && s->peer >= 0 && z->waited[k] == 1) {
            int32_t c = next_touch(z, s->buf, s->block, span(s), (int32_t)n);
            if (c < (int32_t)n && consumes(&prog[c], s, (int32_t)k) && z->dead[c])
                z->with[k] = c;
        }
        if (s->buf >= 0)
            touched(z, s, (int32_t)k, s->buf);
        if (s->src >= 0 && s->src != s->buf && touches(s, s->src))
            touched(z, s, (int32_t)k, s->src);
    }
}

/* Whether step s writes (or clobbers) its blocks of slot 0. */
static bool writes_slot0(const trd_step *s)
{
    if (s->kind == TRD_STEP_SEND || s->kind == TRD_STEP_SEND_INPUT)
        return false;
    return s->buf == 0 ||
           (s->kind == TRD_STEP_COMBINE && s->src == 0 && s->side == TRD_SIDE_RIGHT);
}

/* Send-from-input in prog[0..n) (see the top). */
static void mark_input_sends(trd_step *prog, size_t n, int32_t blocks, fuse_scratch *z)
{
    uint8_t *input = z->input, *written = z->written;
    memset(input, 0, n);
    memset(written, 0, (size_t)blocks);
    for (size_t j = 0; j < n; j++) {
        trd_step *s = &prog[j];
        bool fresh = s->kind == TRD_STEP_SEND && s->buf == 0 && s->dep[0] < 0 && s->dep[1] < 0;
        for (int32_t b = s->block; fresh && b < s->block + span(s); b++)
            fresh = !written[b];
        if (fresh) {
            s->kind = TRD_STEP_SEND_INPUT;
            input[j] = 1;
        }
        if (writes_slot0(s))
            memset(written + s->block, 1, (size_t)span(s));
        for (int k = 0; k < 2; k++)
            if (s->dep[k] >= 0 && input[s->dep[k]])
                s->dep[k] = -1;
    }
}

/* The fused program of prog[0..n) into out (room for n), its length:
 * RECV i and its consumer become one RECV_COMBINE at i. */
static size_t fuse_receives(const trd_step *prog, size_t n, trd_step *out, fuse_scratch *z)
{
    int32_t *waited = z->waited, *to = z->to, *with = z->with;
    uint8_t *gone = z->gone;
    memset(waited, 0, n * sizeof *waited);
    memset(gone, 0, n);
    for (size_t j = 0; j < n; j++)
        for (int k = 0; k < 2; k++)
            if (prog[j].dep[k] >= 0 && (size_t)prog[j].dep[k] < j)
                waited[prog[j].dep[k]]++;
    sweep_consumers(prog, n, z);
    for (size_t i = 0; i < n; i++)
        if (with[i] >= 0)
            gone[with[i]] = 1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (gone[i])
            continue;
        to[i] = (int32_t)k;
        if (with[i] >= 0)
            to[with[i]] = (int32_t)k; /* its dependents now wait for the fused step */
        trd_step s = prog[i];
        for (int d = 0; d < 2; d++)
            s.dep[d] = s.dep[d] >= 0 ? to[s.dep[d]] : -1;
        if (with[i] >= 0) {
            const trd_step *c = &prog[with[i]];
            s.kind = TRD_STEP_RECV_COMBINE;
            s.src = s.buf;
            s.buf = c->buf;
            s.side = c->side;
            s.end = c->end;
        }
        out[k++] = s;
    }
    return k;
}

static bool combines(const trd_step *s)
{
    return s->kind == TRD_STEP_COMBINE || s->kind == TRD_STEP_RECV_COMBINE;
}

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
 * prog[0..n) (a sort by channel: long programs stay n log n). */
static void mark_first_sends(const trd_step *prog, size_t n, uint8_t *first, send_key *k)
{
    size_t m = 0;
    for (size_t j = 0; j < n; j++) {
        first[j] = 0;
        if (prog[j].kind == TRD_STEP_SEND || prog[j].kind == TRD_STEP_SEND_INPUT)
            k[m++] = (send_key){prog[j].peer, prog[j].block, (int32_t)j};
    }
    qsort(k, m, sizeof *k, by_channel);
    for (size_t q = 0; q < m; q++)
        first[k[q].step] = q == 0 || k[q].peer != k[q - 1].peer || k[q].block != k[q - 1].block;
}

/* Whether SEND s ships exactly the blocks combine c writes. */
static bool ships(const trd_step *s, const trd_step *c)
{
    return s->kind == TRD_STEP_SEND && s->buf == c->buf && s->block == c->block &&
           span(s) == span(c);
}

/* ship of every step of prog[0..n): for a combine, 1 + the first later
 * SEND that ships exactly its blocks and depends on it, when no step but
 * a SEND writes those blocks of its slot in between and that SEND is the
 * first of its channel; else 0 (see the top).  Each step's first such
 * SEND comes from the SENDs' deps; the first writer after a combine from
 * a sweep from the end as in sweep_consumers, the table then holding the
 * next step that writes each block (SENDs only read theirs). */
static void mark_ships(trd_step *prog, size_t n, fuse_scratch *z)
{
    int32_t *ship_to = z->ship_to;
    mark_first_sends(prog, n, z->first, z->keys);
    for (size_t j = 0; j < n; j++)
        ship_to[j] = -1;
    for (size_t j = 0; j < n; j++)
        for (int k = 0; k < 2; k++) {
            int32_t d = prog[j].dep[k];
            if (d >= 0 && (size_t)d < j && ship_to[d] < 0 && ships(&prog[j], &prog[d]))
                ship_to[d] = (int32_t)j;
        }
    new_epoch(z);
    for (size_t k = n; k-- > 0;) {
        trd_step *s = &prog[k];
        int32_t to = ship_to[k];
        bool first = to >= 0 && z->first[to];
        s->ship = combines(s) && first &&
                  to < next_touch(z, s->buf, s->block, span(s), (int32_t)n) ? to + 1 : 0;
        if (s->kind != TRD_STEP_SEND && s->kind != TRD_STEP_SEND_INPUT && s->buf >= 0)
            touched(z, s, (int32_t)k, s->buf);
    }
}

/* The fused program of prog[0..n) into out: its length. */
static size_t fuse_with(const trd_step *prog, size_t n, int32_t blocks, trd_step *out,
                        fuse_scratch *z)
{
    if (n > 0)
        memcpy(z->sent, prog, n * sizeof *z->sent);
    mark_input_sends(z->sent, n, blocks, z);
    size_t m = fuse_receives(z->sent, n, out, z);
    mark_ships(out, m, z);
    return m;
}

/* 1 + the largest slot that steps[0..n) name. */
static int32_t slots_of(const trd_step *steps, size_t n)
{
    int32_t most = 0;
    for (size_t j = 0; j < n; j++) {
        most = steps[j].buf > most ? steps[j].buf : most;
        most = steps[j].src > most ? steps[j].src : most;
    }
    return most + 1;
}

trd_status trd_fuse_program(const trd_step *prog, size_t n, int32_t blocks, trd_step *out,
                            size_t *m)
{
    fuse_scratch z;
    trd_status st = scratch_init(&z, n, slots_of(prog, n), blocks);
    if (st != TRD_OK)
        return st;
    *m = fuse_with(prog, n, blocks, out, &z);
    scratch_free(&z);
    return TRD_OK;
}

trd_status trd_fuse_plan(size_t nranks, size_t *step_first, trd_step **steps, int32_t blocks)
{
    size_t longest = 0;
    int32_t slots = 1;
    for (size_t r = 0; r < nranks; r++) {
        size_t lo = step_first[r], n = step_first[r + 1] - lo;
        int32_t k = slots_of(*steps + lo, n);
        longest = n > longest ? n : longest;
        slots = k > slots ? k : slots;
    }
    fuse_scratch z;
    trd_status st = scratch_init(&z, longest, slots, blocks);
    if (st != TRD_OK)
        return st;
    /* In place: a fused program is never longer than its source, so rank
     * r's output starts at or before its input, which fuse_with has
     * copied to scratch before it writes (a second array of all the
     * steps cost as much again in page faults). */
    size_t at = 0;
    for (size_t r = 0; r < nranks; r++) {
        size_t lo = step_first[r];
        size_t m = fuse_with(*steps + lo, step_first[r + 1] - lo, blocks, *steps + at, &z);
        step_first[r] = at;
        at += m;
    }
    scratch_free(&z);
    step_first[nranks] = at;
    return TRD_OK;
}
