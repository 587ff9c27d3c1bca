/* ir_replay.h: a replay of a plan's schedule IR on symbolic values, written
 * from the IR's definition (treduce.h, "The schedule IR") independently of
 * the engine; shared by the tests of the exchange schedules
 * (test_exchange.c, test_reduce_scatter_plans.c, test_scan_plans.c,
 * test_star.c, ...; header only, like testutil.h).
 *
 *   - well formed: peers are other ranks, slots below IR_SLOTS, ranges
 *     inside the B blocks, deps name earlier steps, no model times;
 *   - matching (ir_match): the k-th SEND a -> b with a given `block` pairs
 *     with the k-th RECV at b from a with that block (MPI order), over the
 *     same range; nothing is left unmatched;
 *   - no race (ir_check_races): two steps of a rank that touch overlapping
 *     blocks of one slot, one of them writing (a RECV's target, a
 *     COMBINE's or COPY's target, the input a RIGHT COMBINE clobbers), are
 *     ordered by the transitive closure of dep[].  A posted RECV may be
 *     written at any time and a SEND read at any time until it completes,
 *     so this covers the sender's and the receiver's WAR/WAW hazards in
 *     every execution;
 *   - channels in order (ir_check_races): two RECVs from one peer (or two
 *     SENDs to one peer) with the same first block are posted in program
 *     order in every execution, as the wire (MPI) matches them in posting
 *     order: the later one waits for the earlier through its deps, or the
 *     earlier has no deps (posted at the start, in program order);
 *   - replay (ir_run) on symbolic values (per block: a bitset of
 *     contributions and a rank interval): each step runs once its deps are
 *     done, a SEND's data is taken when it is posted, a RECV completes when
 *     its matched SEND is posted and the SEND with it; no step may start
 *     while a step of its rank touching the same blocks is in flight; it
 *     must finish (no deadlock) with every block of every rank's slot 0
 *     holding each rank exactly once (a COMBINE of two values that share a
 *     rank fails at once; data read must have been written and not
 *     clobbered), and non-commutative plans must build [0, p-1] by joining
 *     adjacent intervals only (LEFT: in.hi + 1 == acc.lo; RIGHT: acc.hi + 1
 *     == in.lo).
 * Sizes: p <= IR_P_MAX ranks, slots 0 .. IR_SLOTS - 1.
 * Usage: ir_load, ir_check_races per rank, ir_match, ir_run, ir_unload
 * (ir_replay_plan: all but the last); ir_where names the case in the
 * messages. */
#ifndef TRD_TESTS_IR_REPLAY_H
#define TRD_TESTS_IR_REPLAY_H

#include "testutil.h"

#define IR_WORDS 2 /* bitset words per value */
#define IR_P_MAX (64 * IR_WORDS)
#ifndef IR_SLOTS
#define IR_SLOTS 4 /* slot 0 and up to three scratch slots (a test may ask more) */
#endif

enum { IR_WAITING, IR_POSTED, IR_DONE };

typedef struct ir_sym {
    uint64_t mask[IR_WORDS]; /* ranks whose contribution is in */
    int32_t lo, hi;          /* rank interval; lo = -1: not one interval */
    bool valid;
} ir_sym;

typedef struct ir_replay {
    int32_t p, B;
    bool nc;
    size_t total;
    size_t *first;          /* rank r: ids first[r] .. first[r+1]-1 */
    const trd_step **step;  /* by id */
    int32_t *rank;          /* by id */
    size_t *match;          /* partner id of a SEND or RECV */
    size_t *snap_at;        /* a SEND's captured values: snap + snap_at[id] */
    ir_sym *snap, *data;    /* data: rank, slot, block */
    uint8_t *state;
} ir_replay;

static char ir_where[160];

static inline int32_t ir_width(const trd_step *s)
{
    return s->blocks > 1 ? s->blocks : 1;
}

static inline ir_sym *ir_at(const ir_replay *rp, int32_t r, int32_t slot, int32_t b)
{
    return &rp->data[((size_t)r * IR_SLOTS + (size_t)slot) * (size_t)rp->B + (size_t)b];
}

/* Checks that step i of rank r is well formed. */
static inline void ir_check_step(const ir_replay *rp, int32_t r, size_t i, const trd_step *s)
{
    bool fused = s->kind == TRD_STEP_RECV_COMBINE; /* a transfer, then a combine */
    bool sends = s->kind == TRD_STEP_SEND || s->kind == TRD_STEP_SEND_INPUT;
    bool xfer = sends || s->kind == TRD_STEP_RECV || fused;
    bool calc = s->kind == TRD_STEP_COMBINE || s->kind == TRD_STEP_COPY || fused;
    TU_CHECK(xfer || calc, "%s rank %d step %zu: kind %d", ir_where, r, i, s->kind);
    TU_CHECK((!xfer || (s->peer >= 0 && s->peer < rp->p && s->peer != r)) &&
                 (calc ? s->src >= 0 && s->src < IR_SLOTS && s->src != s->buf : s->src == -1),
             "%s rank %d step %zu: peer %d src %d", ir_where, r, i, s->peer, s->src);
    TU_CHECK(s->buf >= 0 && s->buf < IR_SLOTS && s->block >= 0 && s->blocks >= 0 &&
                 (int64_t)s->block + ir_width(s) <= rp->B,
             "%s rank %d step %zu: slot %d blocks [%d, +%d) of B = %d", ir_where, r, i, s->buf,
             s->block, s->blocks, rp->B);
    for (int k = 0; k < 2; k++)
        TU_CHECK(s->dep[k] >= -1 && s->dep[k] < (int32_t)i, "%s rank %d step %zu: dep %d",
                 ir_where, r, i, s->dep[k]);
    TU_CHECK(s->start == 0 && s->end == 0 && s->release == 0, "%s: model times", ir_where);
}

/* Loads the plan's programs, checking that each step is well formed. */
static inline void ir_load(ir_replay *rp, const trd_plan *plan, bool nc)
{
    *rp = (ir_replay){.p = (int32_t)trd_plan_params(plan)->n, .B = trd_plan_blocks(plan),
                      .nc = nc};
    TU_CHECK(rp->p <= IR_P_MAX, "%s: p = %d above the replay's %d", ir_where, rp->p, IR_P_MAX);
    rp->first = tu_alloc((size_t)rp->p + 1, sizeof *rp->first);
    for (int32_t r = 0; r < rp->p; r++)
        rp->first[r + 1] = rp->first[r] + trd_plan_step_count(plan, r);
    rp->total = rp->first[rp->p];
    rp->step = tu_alloc(rp->total, sizeof *rp->step);
    rp->rank = tu_alloc(rp->total, sizeof *rp->rank);
    rp->snap_at = tu_alloc(rp->total + 1, sizeof *rp->snap_at);
    for (int32_t r = 0; r < rp->p; r++)
        for (size_t i = 0, g = rp->first[r]; g < rp->first[r + 1]; i++, g++) {
            const trd_step *s = rp->step[g] = trd_plan_step(plan, r, i);
            rp->rank[g] = r;
            ir_check_step(rp, r, i, s);
            bool sends = s->kind == TRD_STEP_SEND || s->kind == TRD_STEP_SEND_INPUT;
            size_t sent = sends ? (size_t)ir_width(s) : 0;
            rp->snap_at[g + 1] = rp->snap_at[g] + sent;
        }
    rp->snap = tu_alloc(rp->snap_at[rp->total], sizeof *rp->snap);
    rp->data = tu_alloc((size_t)rp->p * IR_SLOTS * (size_t)rp->B, sizeof *rp->data);
    rp->state = tu_alloc(rp->total, sizeof *rp->state);
    rp->match = tu_alloc(rp->total, sizeof *rp->match);
    for (int32_t r = 0; r < rp->p; r++)
        for (int32_t b = 0; b < rp->B; b++) {
            ir_sym *v = ir_at(rp, r, 0, b);
            *v = (ir_sym){.lo = r, .hi = r, .valid = true};
            v->mask[r / 64] = (uint64_t)1 << (r % 64);
        }
}

static inline void ir_unload(ir_replay *rp)
{
    free(rp->first);
    free(rp->step);
    free(rp->rank);
    free(rp->match);
    free(rp->snap_at);
    free(rp->snap);
    free(rp->data);
    free(rp->state);
}

/* A message end: sender, receiver, tag, id (program order within a rank). */
typedef struct ir_end {
    int32_t from, to, tag;
    size_t id;
} ir_end;

static inline int ir_by_key(const void *x, const void *y)
{
    const ir_end *a = x, *b = y;
    if (a->from != b->from)
        return a->from < b->from ? -1 : 1;
    if (a->to != b->to)
        return a->to < b->to ? -1 : 1;
    if (a->tag != b->tag)
        return a->tag < b->tag ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

/* Pairs the k-th SEND and the k-th RECV of every (from, to, tag). */
static inline void ir_match(ir_replay *rp)
{
    ir_end *sends = tu_alloc(rp->total, sizeof *sends);
    ir_end *recvs = tu_alloc(rp->total, sizeof *recvs);
    size_t ns = 0, nr = 0;
    for (size_t g = 0; g < rp->total; g++) {
        const trd_step *s = rp->step[g];
        if (s->kind == TRD_STEP_SEND || s->kind == TRD_STEP_SEND_INPUT)
            sends[ns++] = (ir_end){rp->rank[g], s->peer, s->block, g};
        else if (s->kind == TRD_STEP_RECV || s->kind == TRD_STEP_RECV_COMBINE)
            recvs[nr++] = (ir_end){s->peer, rp->rank[g], s->block, g};
    }
    TU_CHECK(ns == nr, "%s: %zu SENDs, %zu RECVs", ir_where, ns, nr);
    qsort(sends, ns, sizeof *sends, ir_by_key);
    qsort(recvs, nr, sizeof *recvs, ir_by_key);
    for (size_t k = 0; k < ns; k++) {
        ir_end a = sends[k], b = recvs[k];
        TU_CHECK(a.from == b.from && a.to == b.to && a.tag == b.tag,
                 "%s: SEND %d -> %d block %d has no RECV", ir_where, a.from, a.to, a.tag);
        TU_CHECK(ir_width(rp->step[a.id]) == ir_width(rp->step[b.id]), "%s: SEND %d -> %d "
                 "block %d covers %d blocks, its RECV %d", ir_where, a.from, a.to, a.tag,
                 ir_width(rp->step[a.id]), ir_width(rp->step[b.id]));
        rp->match[a.id] = b.id;
        rp->match[b.id] = a.id;
    }
    free(sends);
    free(recvs);
}

/* The slot ranges step s touches: up to two (slot, write).  A
 * RECV_COMBINE may land its message in src before it combines it. */
static inline int ir_accesses(const trd_step *s, int32_t slot[2], bool write[2])
{
    if (s->kind == TRD_STEP_SEND_INPUT) /* reads the input, kept apart */
        return 0;
    slot[0] = s->buf;
    write[0] = s->kind != TRD_STEP_SEND;
    if (s->kind == TRD_STEP_RECV_COMBINE) {
        slot[1] = s->src;
        write[1] = true;
        return 2;
    }
    if (s->kind != TRD_STEP_COMBINE && s->kind != TRD_STEP_COPY)
        return 1;
    slot[1] = s->src;
    write[1] = s->kind == TRD_STEP_COMBINE && s->side == TRD_SIDE_RIGHT;
    return 2;
}

static inline bool ir_conflict(const trd_step *a, const trd_step *b)
{
    if (a->block >= b->block + ir_width(b) || b->block >= a->block + ir_width(a))
        return false;
    int32_t sa[2], sb[2];
    bool wa[2], wb[2];
    int na = ir_accesses(a, sa, wa), nb = ir_accesses(b, sb, wb);
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nb; j++)
            if (sa[i] == sb[j] && (wa[i] || wb[j]))
                return true;
    return false;
}

/* Whether a and b are two SENDs (or two RECVs) with the same peer and
 * first block: a channel, matched in posting order by the wire (MPI's
 * non-overtaking rule). */
static inline bool ir_same_channel(const trd_step *a, const trd_step *b)
{
    bool ra = a->kind == TRD_STEP_RECV || a->kind == TRD_STEP_RECV_COMBINE;
    bool rb = b->kind == TRD_STEP_RECV || b->kind == TRD_STEP_RECV_COMBINE;
    bool sa = a->kind == TRD_STEP_SEND || a->kind == TRD_STEP_SEND_INPUT;
    bool sends = sa && (b->kind == TRD_STEP_SEND || b->kind == TRD_STEP_SEND_INPUT);
    return (sends || (ra && rb)) && a->peer == b->peer && a->block == b->block;
}

/* Every conflicting pair of rank r's steps is ordered by its deps; and the
 * steps of one channel are posted in program order in every execution:
 * the later waits for the earlier, or the earlier has no deps (the engine
 * posts those first, in program order). */
static inline void ir_check_races(const ir_replay *rp, int32_t r)
{
    size_t n = rp->first[r + 1] - rp->first[r], words = (n + 63) / 64;
    uint64_t *before = tu_alloc(n * words, sizeof *before); /* transitive deps */
    const trd_step **s = rp->step + rp->first[r];
    for (size_t j = 0; j < n; j++) {
        uint64_t *bj = before + j * words;
        for (int k = 0; k < 2; k++) {
            int32_t d = s[j]->dep[k];
            if (d < 0)
                continue;
            for (size_t w = 0; w < words; w++)
                bj[w] |= before[(size_t)d * words + w];
            bj[d / 64] |= (uint64_t)1 << (d % 64);
        }
        for (size_t i = 0; i < j; i++) {
            bool ordered = bj[i / 64] >> (i % 64) & 1;
            TU_CHECK(!ir_conflict(s[i], s[j]) || ordered,
                     "%s rank %d: steps %zu and %zu touch blocks [%d, +%d) and [%d, +%d) "
                     "unordered", ir_where, r, i, j, s[i]->block, ir_width(s[i]), s[j]->block,
                     ir_width(s[j]));
            bool first = s[i]->dep[0] < 0 && s[i]->dep[1] < 0;
            TU_CHECK(!ir_same_channel(s[i], s[j]) || ordered || first,
                     "%s rank %d: steps %zu and %zu (%s peer %d block %d) may be posted out "
                     "of program order", ir_where, r, i, j,
                     s[i]->kind == TRD_STEP_SEND ? "SEND to" : "RECV from", s[i]->peer,
                     s[i]->block);
        }
    }
    free(before);
}

static inline bool ir_overlap(const ir_sym *a, const ir_sym *b)
{
    for (int w = 0; w < IR_WORDS; w++)
        if (a->mask[w] & b->mask[w])
            return true;
    return false;
}

static inline void ir_combine(const ir_replay *rp, int32_t r, const trd_step *s)
{
    for (int32_t b = s->block; b < s->block + ir_width(s); b++) {
        ir_sym *in = ir_at(rp, r, s->src, b), *acc = ir_at(rp, r, s->buf, b);
        TU_CHECK(in->valid && acc->valid, "%s rank %d reads block %d of an unwritten or "
                 "clobbered slot", ir_where, r, b);
        if (s->kind == TRD_STEP_COPY) {
            *acc = *in;
            continue;
        }
        TU_CHECK(!ir_overlap(in, acc), "%s rank %d block %d: a contribution counted twice",
                 ir_where, r, b);
        TU_CHECK(s->side == TRD_SIDE_LEFT || s->side == TRD_SIDE_RIGHT, "%s: side", ir_where);
        ir_sym left = s->side == TRD_SIDE_LEFT ? *in : *acc;
        ir_sym right = s->side == TRD_SIDE_LEFT ? *acc : *in;
        ir_sym out = {.lo = -1, .hi = -1, .valid = true};
        for (int w = 0; w < IR_WORDS; w++)
            out.mask[w] = in->mask[w] | acc->mask[w];
        if (left.lo >= 0 && right.lo >= 0 && left.hi + 1 == right.lo) {
            out.lo = left.lo;
            out.hi = right.hi;
        }
        TU_CHECK(!rp->nc || out.lo >= 0, "%s rank %d block %d: [%d, %d] (+) [%d, %d] (side "
                 "%d) is not in rank order", ir_where, r, b, left.lo, left.hi, right.lo,
                 right.hi, s->side);
        *acc = out;
        if (s->side == TRD_SIDE_RIGHT)
            in->valid = false;
    }
}

/* Step g starts (a COMBINE or COPY runs, a SEND or RECV is posted) while
 * a step of its rank that touches the same blocks is in flight: a SEND
 * the transport may still read, or a RECV it may write at any time. */
static inline void ir_check_in_flight(const ir_replay *rp, size_t g)
{
    int32_t r = rp->rank[g];
    for (size_t h = rp->first[r]; h < rp->first[r + 1]; h++)
        TU_CHECK(h == g || rp->state[h] != IR_POSTED || !ir_conflict(rp->step[h], rp->step[g]),
                 "%s rank %d: step %zu starts while step %zu, which touches the same "
                 "blocks, is in flight", ir_where, r, g - rp->first[r], h - rp->first[r]);
}

/* Runs step g if it can; whether anything happened. */
static inline bool ir_advance(ir_replay *rp, size_t g)
{
    const trd_step *s = rp->step[g];
    int32_t r = rp->rank[g];
    if (rp->state[g] == IR_DONE)
        return false;
    for (int k = 0; k < 2; k++)
        if (s->dep[k] >= 0 && rp->state[rp->first[r] + (size_t)s->dep[k]] != IR_DONE)
            return false;
    ir_sym *snap = rp->snap + rp->snap_at[g];
    bool posting = rp->state[g] == IR_WAITING;
    if (posting)
        ir_check_in_flight(rp, g);
    switch (s->kind) {
    case TRD_STEP_SEND:
        for (int32_t b = 0; posting && b < ir_width(s); b++) {
            snap[b] = *ir_at(rp, r, s->buf, s->block + b);
            TU_CHECK(snap[b].valid, "%s rank %d sends an unwritten block %d", ir_where, r,
                     s->block + b);
        }
        rp->state[g] = IR_POSTED; /* DONE when its RECV completes */
        return posting;
    case TRD_STEP_SEND_INPUT: /* the rank's own input, whatever slot 0 holds now */
        for (int32_t b = 0; posting && b < ir_width(s); b++) {
            snap[b] = (ir_sym){.lo = r, .hi = r, .valid = true};
            snap[b].mask[r / 64] = (uint64_t)1 << (r % 64);
        }
        rp->state[g] = IR_POSTED;
        return posting;
    case TRD_STEP_RECV:
    case TRD_STEP_RECV_COMBINE: /* lands in src, then combines into buf */
        rp->state[g] = IR_POSTED;
        if (rp->state[rp->match[g]] == IR_WAITING)
            return posting;
        snap = rp->snap + rp->snap_at[rp->match[g]];
        for (int32_t b = 0; b < ir_width(s); b++)
            *ir_at(rp, r, s->kind == TRD_STEP_RECV ? s->buf : s->src, s->block + b) = snap[b];
        if (s->kind == TRD_STEP_RECV_COMBINE)
            ir_combine(rp, r, s);
        rp->state[g] = rp->state[rp->match[g]] = IR_DONE;
        return true;
    default:
        ir_combine(rp, r, s);
        rp->state[g] = IR_DONE;
        return true;
    }
}

/* Whether v holds ranks lo .. hi and no other. */
static inline bool ir_holds(const ir_sym *v, int32_t lo, int32_t hi)
{
    for (int w = 0; w < IR_WORDS; w++) {
        uint64_t want = 0;
        for (int32_t r = lo > 64 * w ? lo : 64 * w; r <= hi && r < 64 * (w + 1); r++)
            want |= (uint64_t)1 << (r % 64);
        if (v->mask[w] != want)
            return false;
    }
    return true;
}

/* Whether v holds every rank 0 .. p-1 and no other. */
static inline bool ir_complete(const ir_sym *v, int32_t p)
{
    return ir_holds(v, 0, p - 1);
}

/* The ranks [*lo, *hi] block b of rank r must hold at the end of a plan of
 * collective coll (trd_collective); false: no requirement. */
static inline bool ir_expected(const ir_replay *rp, trd_collective coll, int32_t r, int32_t b,
                               int32_t *lo, int32_t *hi)
{
    *lo = 0;
    *hi = rp->p - 1;
    switch (coll) {
    case TRD_COLL_REDUCE_SCATTER: /* part r: blocks [r m, (r + 1) m) */
        return b / (rp->B / rp->p) == r;
    case TRD_COLL_SCAN:
        *hi = r;
        return true;
    case TRD_COLL_EXSCAN:
        *hi = r - 1;
        return r > 0;
    default:
        return true;
    }
}

/* Replays the plan and checks that it ends as coll says (trd_collective):
 * each block that must hold ranks [lo, hi] holds each of them once and no
 * other, as the interval [lo, hi] for a non-commutative plan. */
static inline void ir_run_collective(ir_replay *rp, trd_collective coll)
{
    for (bool progress = true; progress;) {
        progress = false;
        for (size_t g = 0; g < rp->total; g++)
            progress |= ir_advance(rp, g);
    }
    for (size_t g = 0; g < rp->total; g++)
        TU_CHECK(rp->state[g] == IR_DONE, "%s: deadlock: rank %d step %zu (kind %d) never "
                 "completes", ir_where, rp->rank[g], g - rp->first[rp->rank[g]],
                 rp->step[g]->kind);
    TU_CHECK(coll != TRD_COLL_REDUCE_SCATTER || rp->B % rp->p == 0,
             "%s: a reduce-scatter of %d blocks over %d ranks", ir_where, rp->B, rp->p);
    for (int32_t r = 0; r < rp->p; r++)
        for (int32_t b = 0, lo, hi; b < rp->B; b++) {
            if (!ir_expected(rp, coll, r, b, &lo, &hi))
                continue;
            ir_sym v = *ir_at(rp, r, 0, b);
            TU_CHECK(v.valid && ir_holds(&v, lo, hi), "%s rank %d block %d does not end "
                     "with ranks %d to %d once each (words %#llx %#llx)", ir_where, r, b, lo,
                     hi, (unsigned long long)v.mask[0], (unsigned long long)v.mask[1]);
            TU_CHECK(!rp->nc || (v.lo == lo && v.hi == hi), "%s rank %d block %d ends "
                     "with [%d, %d], not [%d, %d]", ir_where, r, b, v.lo, v.hi, lo, hi);
        }
}

/* The same for an allreduce: every block of every rank holds every rank. */
static inline void ir_run(ir_replay *rp)
{
    ir_run_collective(rp, TRD_COLL_ALLREDUCE);
}

/* The whole replay of plan for collective coll, left loaded in *rp for
 * the caller's own checks (then ir_unload): ir_load, per rank at most
 * max_scratch scratch slots (-1: any) and no race, ir_match, the run. */
static inline void ir_replay_plan(ir_replay *rp, const trd_plan *plan, bool nc,
                                  int32_t max_scratch, trd_collective coll)
{
    ir_load(rp, plan, nc);
    for (int32_t r = 0; r < rp->p; r++) {
        TU_CHECK(max_scratch < 0 || trd_plan_scratch_slots(plan, r) <= max_scratch,
                 "%s rank %d: %d scratch slots", ir_where, r, trd_plan_scratch_slots(plan, r));
        ir_check_races(rp, r);
    }
    ir_match(rp);
    ir_run_collective(rp, coll);
}

/* What rank r's program moves, the counts behind the cost formulas of the
 * builders' heads: messages sent (SEND, SEND_INPUT), blocks sent, blocks
 * combined (COMBINE, RECV_COMBINE). */
static inline void ir_rank_counts(const ir_replay *rp, int32_t r, int64_t out[3])
{
    out[0] = out[1] = out[2] = 0;
    for (size_t g = rp->first[r]; g < rp->first[r + 1]; g++) {
        const trd_step *s = rp->step[g];
        bool sends = s->kind == TRD_STEP_SEND || s->kind == TRD_STEP_SEND_INPUT;
        bool combines = s->kind == TRD_STEP_COMBINE || s->kind == TRD_STEP_RECV_COMBINE;
        out[0] += sends;
        out[1] += sends ? ir_width(s) : 0;
        out[2] += combines ? ir_width(s) : 0;
    }
}

/* The fold of Thakur, Rabenseifner and Gropp (2005) as the builders' heads
 * state it, for the closed forms: p2 the largest power of two <= p, rem =
 * p - p2, rounds = log2 p2. */
typedef struct ir_fold {
    int32_t p2, rem, rounds;
} ir_fold;

static inline ir_fold ir_fold_of(int32_t p)
{
    ir_fold f = {1, 0, 0};
    while (2 * f.p2 <= p) {
        f.p2 *= 2;
        f.rounds++;
    }
    f.rem = p - f.p2;
    return f;
}

/* One case of a test's matrix: algorithm a (the test's own numbering) on p
 * ranks with m segments, non-commutative when nc. */
typedef void ir_case_fn(int a, int32_t p, int32_t m, bool nc);

/* check over p = 1..p_last ranks and m = 1..m_last segments, commutative
 * and, when nc_too (a registry row without the commutative-only flag),
 * non-commutative. */
static inline void ir_each_case(ir_case_fn *check, int a, int32_t p_last, int32_t m_last,
                                bool nc_too)
{
    for (int32_t p = 1; p <= p_last; p++)
        for (int32_t m = 1; m <= m_last; m++) {
            check(a, p, m, false);
            if (nc_too)
                check(a, p, m, true);
        }
}

#endif
