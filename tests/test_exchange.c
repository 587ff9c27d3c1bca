/* test_exchange.c: the exchange allreduce algorithms (recursive-doubling,
 * ring, rabenseifner; docs/ALGORITHMS_ALLREDUCE.md) against a replay of
 * their schedule IR written here from the IR's definition (treduce.h).
 *
 * For p = 1..33 ranks, m = 1..3 segments, commutative and, where the
 * algorithm accepts it, non-commutative:
 *   - well formed: peers are other ranks, slot 1 is the only scratch slot,
 *     ranges lie inside the B blocks, deps name earlier steps, no times;
 *   - matching: the k-th SEND a -> b with a given `block` pairs with the
 *     k-th RECV at b from a with that block (MPI order), over the same
 *     range; nothing is left unmatched;
 *   - no race: two steps of a rank that touch overlapping blocks of one
 *     slot, one of them writing (a RECV's target, a COMBINE's or COPY's
 *     target, the input a RIGHT COMBINE clobbers), are ordered by the
 *     transitive closure of dep[].  A posted RECV may be written at any
 *     time and a SEND read at any time until it completes, so this covers
 *     the sender's and the receiver's WAR/WAW hazards in every execution;
 *   - replay on symbolic values (per block: a bitmask of contributions and
 *     a rank interval): each step runs once its deps are done, a SEND's
 *     data is taken when it is posted, a RECV completes when its matched
 *     SEND is posted and the SEND with it; no step may start while a
 *     step of its rank touching the same blocks is in flight (the same
 *     hazards, seen in this one execution); it must finish (no deadlock)
 *     with every block of
 *     every rank's slot 0 holding each rank exactly once (a COMBINE of two
 *     values that share a rank fails at once; data read must have been
 *     written and not clobbered), and non-commutative plans must build
 *     [0, p-1] by joining adjacent intervals only (LEFT: in.hi + 1 ==
 *     acc.lo; RIGHT: acc.hi + 1 == in.lo);
 *   - the counts behind the cost formulas: B, and per rank the messages
 *     and blocks sent and the blocks combined;
 *   - the plan's makespan (the simulator's) is finite and >= 0, and for
 *     m = 1 equals the alpha-beta-gamma formula with alpha = latency,
 *     n beta = d - latency, n gamma = c.
 * And: reduce (allreduce off) is refused, non-commutative ring too for
 * p >= 3, and a ring too large for the engine is refused before it is
 * built. */
#include "testutil.h"

#define P_LAST 33
#define M_LAST 3
#define NSLOTS 2 /* slot 0 and the one scratch slot */

enum { WAITING, POSTED, DONE };

typedef struct sym {
    uint64_t mask; /* ranks whose contribution is in */
    int32_t lo, hi; /* rank interval; lo = -1: not one interval */
    bool valid;
} sym;

typedef struct replay {
    int32_t p, B;
    bool nc;
    size_t total;
    size_t *first;          /* rank r: ids first[r] .. first[r+1]-1 */
    const trd_step **step;  /* by id */
    int32_t *rank;          /* by id */
    size_t *match;          /* partner id of a SEND or RECV */
    size_t *snap_at;        /* a SEND's captured values: snap + snap_at[id] */
    sym *snap, *data;       /* data: rank, slot, block */
    uint8_t *state;
} replay;

static char where[160];

static int32_t width(const trd_step *s)
{
    return s->blocks > 1 ? s->blocks : 1;
}

static sym *at(const replay *rp, int32_t r, int32_t slot, int32_t b)
{
    return &rp->data[((size_t)r * NSLOTS + (size_t)slot) * (size_t)rp->B + (size_t)b];
}

/* Loads the plan's programs, checking that each step is well formed. */
static void load(replay *rp, const trd_plan *plan, bool nc)
{
    *rp = (replay){.p = (int32_t)trd_plan_params(plan)->n,
                   .B = trd_plan_blocks(plan), .nc = nc};
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
            bool xfer = s->kind == TRD_STEP_SEND || s->kind == TRD_STEP_RECV;
            bool calc = s->kind == TRD_STEP_COMBINE || s->kind == TRD_STEP_COPY;
            TU_CHECK(xfer || calc, "%s rank %d step %zu: kind %d", where, r, i, s->kind);
            TU_CHECK(xfer ? s->peer >= 0 && s->peer < rp->p && s->peer != r && s->src == -1
                          : s->src >= 0 && s->src < NSLOTS && s->src != s->buf,
                     "%s rank %d step %zu: peer %d src %d", where, r, i, s->peer, s->src);
            TU_CHECK(s->buf >= 0 && s->buf < NSLOTS && s->block >= 0 && s->blocks >= 0 &&
                         (int64_t)s->block + width(s) <= rp->B,
                     "%s rank %d step %zu: slot %d blocks [%d, +%d) of B = %d", where, r, i,
                     s->buf, s->block, s->blocks, rp->B);
            for (int k = 0; k < 2; k++)
                TU_CHECK(s->dep[k] >= -1 && s->dep[k] < (int32_t)i, "%s rank %d step %zu: "
                         "dep %d", where, r, i, s->dep[k]);
            TU_CHECK(s->start == 0 && s->end == 0 && s->release == 0, "%s: model times", where);
            size_t sent = s->kind == TRD_STEP_SEND ? (size_t)width(s) : 0;
            rp->snap_at[g + 1] = rp->snap_at[g] + sent;
        }
    rp->snap = tu_alloc(rp->snap_at[rp->total], sizeof *rp->snap);
    rp->data = tu_alloc((size_t)rp->p * NSLOTS * (size_t)rp->B, sizeof *rp->data);
    rp->state = tu_alloc(rp->total, sizeof *rp->state);
    rp->match = tu_alloc(rp->total, sizeof *rp->match);
    for (int32_t r = 0; r < rp->p; r++)
        for (int32_t b = 0; b < rp->B; b++)
            *at(rp, r, 0, b) = (sym){.mask = (uint64_t)1 << r, .lo = r, .hi = r, .valid = true};
}

static void unload(replay *rp)
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
typedef struct end {
    int32_t from, to, tag;
    size_t id;
} end;

static int by_key(const void *x, const void *y)
{
    const end *a = x, *b = y;
    if (a->from != b->from)
        return a->from < b->from ? -1 : 1;
    if (a->to != b->to)
        return a->to < b->to ? -1 : 1;
    if (a->tag != b->tag)
        return a->tag < b->tag ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

/* Pairs the k-th SEND and the k-th RECV of every (from, to, tag). */
static void match(replay *rp)
{
    end *sends = tu_alloc(rp->total, sizeof *sends);
    end *recvs = tu_alloc(rp->total, sizeof *recvs);
    size_t ns = 0, nr = 0;
    for (size_t g = 0; g < rp->total; g++) {
        const trd_step *s = rp->step[g];
        if (s->kind == TRD_STEP_SEND)
            sends[ns++] = (end){rp->rank[g], s->peer, s->block, g};
        else if (s->kind == TRD_STEP_RECV)
            recvs[nr++] = (end){s->peer, rp->rank[g], s->block, g};
    }
    TU_CHECK(ns == nr, "%s: %zu SENDs, %zu RECVs", where, ns, nr);
    qsort(sends, ns, sizeof *sends, by_key);
    qsort(recvs, nr, sizeof *recvs, by_key);
    for (size_t k = 0; k < ns; k++) {
        end a = sends[k], b = recvs[k];
        TU_CHECK(a.from == b.from && a.to == b.to && a.tag == b.tag,
                 "%s: SEND %d -> %d block %d has no RECV", where, a.from, a.to, a.tag);
        TU_CHECK(width(rp->step[a.id]) == width(rp->step[b.id]), "%s: SEND %d -> %d block %d "
                 "covers %d blocks, its RECV %d", where, a.from, a.to, a.tag,
                 width(rp->step[a.id]), width(rp->step[b.id]));
        rp->match[a.id] = b.id;
        rp->match[b.id] = a.id;
    }
    free(sends);
    free(recvs);
}

/* The slot ranges step s touches: up to two (slot, write). */
static int accesses(const trd_step *s, int32_t slot[2], bool write[2])
{
    slot[0] = s->buf;
    write[0] = s->kind != TRD_STEP_SEND;
    if (s->kind != TRD_STEP_COMBINE && s->kind != TRD_STEP_COPY)
        return 1;
    slot[1] = s->src;
    write[1] = s->kind == TRD_STEP_COMBINE && s->side == TRD_SIDE_RIGHT;
    return 2;
}

static bool conflict(const trd_step *a, const trd_step *b)
{
    if (a->block >= b->block + width(b) || b->block >= a->block + width(a))
        return false;
    int32_t sa[2], sb[2];
    bool wa[2], wb[2];
    int na = accesses(a, sa, wa), nb = accesses(b, sb, wb);
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nb; j++)
            if (sa[i] == sb[j] && (wa[i] || wb[j]))
                return true;
    return false;
}

/* Every conflicting pair of rank r's steps is ordered by its deps. */
static void check_races(const replay *rp, int32_t r)
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
        for (size_t i = 0; i < j; i++)
            TU_CHECK(!conflict(s[i], s[j]) || (bj[i / 64] >> (i % 64) & 1),
                     "%s rank %d: steps %zu and %zu touch blocks [%d, +%d) and [%d, +%d) "
                     "unordered", where, r, i, j, s[i]->block, width(s[i]), s[j]->block,
                     width(s[j]));
    }
    free(before);
}

static void combine(const replay *rp, int32_t r, const trd_step *s)
{
    for (int32_t b = s->block; b < s->block + width(s); b++) {
        sym *in = at(rp, r, s->src, b), *acc = at(rp, r, s->buf, b);
        TU_CHECK(in->valid && acc->valid, "%s rank %d reads block %d of an unwritten or "
                 "clobbered slot", where, r, b);
        if (s->kind == TRD_STEP_COPY) {
            *acc = *in;
            continue;
        }
        TU_CHECK(!(in->mask & acc->mask), "%s rank %d block %d: a contribution counted "
                 "twice (%#llx, %#llx)", where, r, b, (unsigned long long)in->mask,
                 (unsigned long long)acc->mask);
        TU_CHECK(s->side == TRD_SIDE_LEFT || s->side == TRD_SIDE_RIGHT, "%s: side", where);
        sym left = s->side == TRD_SIDE_LEFT ? *in : *acc;
        sym right = s->side == TRD_SIDE_LEFT ? *acc : *in;
        sym out = {.mask = in->mask | acc->mask, .lo = -1, .hi = -1, .valid = true};
        if (left.lo >= 0 && right.lo >= 0 && left.hi + 1 == right.lo) {
            out.lo = left.lo;
            out.hi = right.hi;
        }
        TU_CHECK(!rp->nc || out.lo >= 0, "%s rank %d block %d: [%d, %d] (+) [%d, %d] (side "
                 "%d) is not in rank order", where, r, b, left.lo, left.hi, right.lo,
                 right.hi, s->side);
        *acc = out;
        if (s->side == TRD_SIDE_RIGHT)
            in->valid = false;
    }
}

/* Step g starts (a COMBINE or COPY runs, a SEND or RECV is posted) while
 * a step of its rank that touches the same blocks is in flight: a SEND
 * the transport may still read, or a RECV it may write at any time. */
static void check_in_flight(const replay *rp, size_t g)
{
    int32_t r = rp->rank[g];
    for (size_t h = rp->first[r]; h < rp->first[r + 1]; h++)
        TU_CHECK(h == g || rp->state[h] != POSTED || !conflict(rp->step[h], rp->step[g]),
                 "%s rank %d: step %zu starts while step %zu, which touches the same "
                 "blocks, is in flight", where, r, g - rp->first[r], h - rp->first[r]);
}

/* Runs step g if it can; whether anything happened. */
static bool advance(replay *rp, size_t g)
{
    const trd_step *s = rp->step[g];
    int32_t r = rp->rank[g];
    if (rp->state[g] == DONE)
        return false;
    for (int k = 0; k < 2; k++)
        if (s->dep[k] >= 0 && rp->state[rp->first[r] + (size_t)s->dep[k]] != DONE)
            return false;
    sym *snap = rp->snap + rp->snap_at[g];
    bool posting = rp->state[g] == WAITING;
    if (posting)
        check_in_flight(rp, g);
    switch (s->kind) {
    case TRD_STEP_SEND:
        for (int32_t b = 0; posting && b < width(s); b++) {
            snap[b] = *at(rp, r, s->buf, s->block + b);
            TU_CHECK(snap[b].valid, "%s rank %d sends an unwritten block %d", where, r,
                     s->block + b);
        }
        rp->state[g] = POSTED; /* DONE when its RECV completes */
        return posting;
    case TRD_STEP_RECV:
        rp->state[g] = POSTED;
        if (rp->state[rp->match[g]] == WAITING)
            return posting;
        snap = rp->snap + rp->snap_at[rp->match[g]];
        for (int32_t b = 0; b < width(s); b++)
            *at(rp, r, s->buf, s->block + b) = snap[b];
        rp->state[g] = rp->state[rp->match[g]] = DONE;
        return true;
    default:
        combine(rp, r, s);
        rp->state[g] = DONE;
        return true;
    }
}

static void run(replay *rp)
{
    for (bool progress = true; progress;) {
        progress = false;
        for (size_t g = 0; g < rp->total; g++)
            progress |= advance(rp, g);
    }
    for (size_t g = 0; g < rp->total; g++)
        TU_CHECK(rp->state[g] == DONE, "%s: deadlock: rank %d step %zu (kind %d) never "
                 "completes", where, rp->rank[g], g - rp->first[rp->rank[g]],
                 rp->step[g]->kind);
    uint64_t all = ((uint64_t)1 << rp->p) - 1; /* p <= P_LAST < 64 */
    for (int32_t r = 0; r < rp->p; r++)
        for (int32_t b = 0; b < rp->B; b++) {
            sym v = *at(rp, r, 0, b);
            TU_CHECK(v.valid && v.mask == all, "%s rank %d block %d ends with ranks %#llx",
                     where, r, b, (unsigned long long)v.mask);
            TU_CHECK(!rp->nc || (v.lo == 0 && v.hi == rp->p - 1), "%s rank %d block %d ends "
                     "with [%d, %d]", where, r, b, v.lo, v.hi);
        }
}

/* The fold: p2 = largest power of two <= p, rem = p - p2, rounds = log2 p2. */
typedef struct shape {
    int32_t p2, rem, rounds;
} shape;

static shape shape_of(int32_t p)
{
    shape f = {1, 0, 0};
    while (2 * f.p2 <= p) {
        f.p2 *= 2;
        f.rounds++;
    }
    f.rem = p - f.p2;
    return f;
}

typedef enum algo { RD, RING, RAB } algo;
static const char *const names[] = {"recursive-doubling", "ring", "rabenseifner"};
static const algo algos[] = {RD, RING, RAB};

/* Messages, blocks sent and blocks combined by rank r: the cost formulas. */
static void expect_counts(algo a, int32_t p, int32_t m, int32_t r, int64_t out[3])
{
    shape f = shape_of(p);
    bool out_rank = r < 2 * f.rem && r % 2 == 0, folds = r < 2 * f.rem && r % 2 == 1;
    int64_t k = f.rounds, q = f.p2, msgs, blocks, combined;
    if (a == RING) {
        msgs = blocks = 2 * (int64_t)(p - 1);
        combined = p - 1;
    } else if (a == RD) {
        msgs = blocks = out_rank ? 1 : k + folds;
        combined = out_rank ? 0 : k + folds;
    } else {
        msgs = out_rank ? 1 : 2 * k + folds;
        blocks = out_rank ? q : 2 * (q - 1) + folds * q;
        combined = out_rank ? 0 : (q - 1) + folds * q;
    }
    out[0] = msgs * m;
    out[1] = blocks * m;
    out[2] = combined * m;
}

static void check_counts(const replay *rp, algo a, int32_t m)
{
    shape f = shape_of(rp->p);
    int32_t B = a == RING ? rp->p * m : a == RD ? m : f.p2 * m;
    TU_CHECK(rp->B == B, "%s: B = %d, expected %d", where, rp->B, B);
    for (int32_t r = 0; r < rp->p; r++) {
        int64_t got[3] = {0, 0, 0}, want[3];
        for (size_t g = rp->first[r]; g < rp->first[r + 1]; g++) {
            const trd_step *s = rp->step[g];
            got[0] += s->kind == TRD_STEP_SEND;
            got[1] += s->kind == TRD_STEP_SEND ? width(s) : 0;
            got[2] += s->kind == TRD_STEP_COMBINE ? width(s) : 0;
        }
        expect_counts(a, rp->p, m, r, want);
        TU_CHECK(got[0] == want[0] && got[1] == want[1] && got[2] == want[2],
                 "%s rank %d: %lld messages, %lld blocks sent, %lld combined; expected "
                 "%lld, %lld, %lld", where, r, (long long)got[0], (long long)got[1],
                 (long long)got[2], (long long)want[0], (long long)want[1],
                 (long long)want[2]);
    }
}

/* The alpha-beta-gamma makespan of an unsegmented plan (the files' heads). */
static double formula(algo a, const trd_params *prm)
{
    int32_t p = (int32_t)prm->n;
    shape f = shape_of(p);
    double al = prm->latency, be = prm->d - prm->latency, ga = prm->c, fold = f.rem > 0;
    double share = (p - 1.0) / p, share2 = (f.p2 - 1.0) / f.p2;
    if (a == RING)
        return 2 * (p - 1) * al + 2 * share * be + share * ga;
    if (a == RD)
        return (f.rounds + 2 * fold) * (al + be) + (f.rounds + fold) * ga;
    return (2 * f.rounds + 2 * fold) * al + (2 * share2 + 2 * fold) * be + (share2 + fold) * ga;
}

static void check_case(algo a, int32_t p, int32_t m, bool nc)
{
    snprintf(where, sizeof where, "%s p=%d m=%d%s", names[a], p, m, nc ? " nc" : "");
    trd_params prm = tu_params(p, 1.0, 0.5, 0);
    prm.latency = 0.25;
    prm.segments = m;
    prm.allreduce = true;
    prm.noncommutative = nc;
    trd_plan *plan = tu_plan(names[a], &prm);
    replay rp;
    load(&rp, plan, nc);
    for (int32_t r = 0; r < p; r++) {
        TU_CHECK(trd_plan_scratch_slots(plan, r) <= 1, "%s rank %d: %d scratch slots", where,
                 r, trd_plan_scratch_slots(plan, r));
        check_races(&rp, r);
    }
    match(&rp);
    run(&rp);
    check_counts(&rp, a, m);
    double t = trd_plan_makespan(plan);
    TU_CHECK(isfinite(t) && t >= 0, "%s: makespan %g", where, t);
    double want = formula(a, &prm); /* the engine keeps block shares as floats */
    TU_CHECK(m > 1 || fabs(t - want) <= 1e-6 * fmax(1.0, want), "%s: makespan %.12g, "
             "formula %.12g", where, t, want);
    unload(&rp);
    trd_plan_free(plan);
}

/* One algorithm (*state) over the whole matrix. */
static void test_algo(void **state)
{
    algo a = *(const algo *)*state;
    for (int32_t p = 1; p <= P_LAST; p++)
        for (int32_t m = 1; m <= M_LAST; m++) {
            check_case(a, p, m, false);
            if (a != RING || p <= 2)
                check_case(a, p, m, true);
        }
}

/* Reduce, non-commutative ring (p >= 3), a ring too large: refused. */
static void test_refusals(void **state)
{
    (void)state;
    for (algo a = RD; a <= RAB; a++) {
        size_t index;
        assert_int_equal(trd_algo_find(names[a], &index), TRD_OK);
        assert_int_equal(trd_algo_kind_of(index), TRD_KIND_EXCHANGE);
        trd_params prm = tu_params(8, 1, 1, 0);
        trd_plan *plan = NULL;
        assert_int_equal(trd_plan_create(&plan, names[a], &prm), TRD_EUNSUPPORTED);
        assert_null(plan);
    }
    trd_params prm = tu_params(3, 1, 1, 0);
    prm.allreduce = prm.noncommutative = true;
    trd_plan *plan = NULL;
    assert_int_equal(trd_plan_create(&plan, "ring", &prm), TRD_EUNSUPPORTED);
    TU_CHECK(plan == NULL && strstr(trd_errmsg(), "non-commutative"), "%s", trd_errmsg());
    prm = tu_params(100000, 1, 1, 0);
    prm.allreduce = true;
    assert_int_equal(trd_plan_create(&plan, "ring", &prm), TRD_EINVAL);
    TU_CHECK(plan == NULL && strstr(trd_errmsg(), "steps"), "%s", trd_errmsg());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refusals),
        {"recursive-doubling", test_algo, NULL, NULL, (void *)&algos[RD]},
        {"ring", test_algo, NULL, NULL, (void *)&algos[RING]},
        {"rabenseifner", test_algo, NULL, NULL, (void *)&algos[RAB]},
    };
    return cmocka_run_group_tests_name("exchange", tests, NULL, NULL);
}
