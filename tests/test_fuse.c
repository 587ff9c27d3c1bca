/* test_fuse.c: the fusion pass of plans (src/plan/fuse.c) against an
 * oracle written here: a replay of each rank's program as the algorithm
 * wrote it (trd_plan_create_unfused) in program order that tags every
 * block of every slot with the step that last wrote it, and counts which
 * steps read the value each RECV stored.  A RECV may become a
 * RECV_COMBINE only when exactly one step reads its value, a COMBINE of
 * the same blocks into another slot that depends on it and on nothing
 * else, and no other step waits for the RECV.  For every static algorithm
 * of the registry, reduce and allreduce, p = 1..9, 1..3 segments:
 *   - the fused plan trd_plan_create returns is exactly the unfused one
 *     with every pair the oracle allows (and only those) made one
 *     RECV_COMBINE at the RECV's place, dependencies renumbered;
 *   - every `ship` is the one the producer oracle finds (a replay: the
 *     first later SEND of exactly the combine's blocks depending on it,
 *     the combine still their last writer, the first SEND of its channel);
 *   - ring (whose combines wait for their receive alone) has fused
 *     have fused receives at all, so the runtime's fast path is reached;
 *   - long programs (thousands of segments) too: the pass sees the whole
 *     program, not a window of it, so their first receives are fused as
 *     their last are.
 * The runtime's results on fused plans are checked by test_runtime_matrix
 * (every algorithm, non-commutative checkers, the threads and MPI wires:
 * runtime_matrix.c) and the schedule
 * by test_trace (simulated == executed). */
#include <stdlib.h>
#include <string.h>

#include "core/splitmix.h"
#include "plan/fuse.h"
#include "plan/builders.h"
#include "testutil.h"

static int32_t span(const trd_step *s) { return s->blocks > 1 ? s->blocks : 1; }

/* Oracle: for every step of rank's program, the RECV consumer or -1. */
static void oracle(const trd_plan *plan, int32_t rank, int32_t *want)
{
    size_t n = trd_plan_step_count(plan, rank);
    int32_t B = trd_plan_blocks(plan), slots = trd_plan_scratch_slots(plan, rank) + 1;
    int32_t *writer = malloc((size_t)slots * (size_t)B * sizeof *writer);
    int32_t *readers = calloc(n + 1, sizeof *readers), *reader = malloc((n + 1) * sizeof *reader);
    assert_non_null(writer);
    assert_non_null(readers);
    assert_non_null(reader);
    for (int32_t k = 0; k < slots * B; k++)
        writer[k] = -1;
    for (size_t j = 0; j < n; j++) {
        const trd_step *s = trd_plan_step(plan, rank, j);
        int32_t read[2] = {-1, -1}, nread = 0, wrote = -1;
        if (s->kind == TRD_STEP_SEND)
            read[nread++] = s->buf;
        if (s->kind == TRD_STEP_COMBINE || s->kind == TRD_STEP_COPY)
            read[nread++] = s->src;
        if (s->kind == TRD_STEP_COMBINE)
            read[nread++] = s->buf;
        if (s->kind != TRD_STEP_SEND && s->kind != TRD_STEP_SEND_INPUT)
            wrote = s->buf;
        for (int32_t b = s->block; b < s->block + span(s); b++) {
            for (int32_t q = 0; q < nread; q++) {
                int32_t w = writer[read[q] * B + b];
                if (w >= 0 && trd_plan_step(plan, rank, (size_t)w)->kind == TRD_STEP_RECV &&
                    !(readers[w] > 0 && reader[w] == (int32_t)j)) {
                    readers[w]++;
                    reader[w] = (int32_t)j;
                }
            }
            if (wrote >= 0)
                writer[wrote * B + b] = (int32_t)j;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const trd_step *r = trd_plan_step(plan, rank, i);
        want[i] = -1;
        if (r->kind != TRD_STEP_RECV || r->buf == 0 || readers[i] != 1)
            continue;
        const trd_step *c = trd_plan_step(plan, rank, (size_t)reader[i]);
        bool alone = (c->dep[0] == (int32_t)i && c->dep[1] < 0) ||
                     (c->dep[1] == (int32_t)i && c->dep[0] < 0);
        int32_t waiting = 0; /* steps that wait for the RECV */
        for (size_t j = i + 1; j < n; j++) {
            const trd_step *q = trd_plan_step(plan, rank, j);
            waiting += (q->dep[0] == (int32_t)i) + (q->dep[1] == (int32_t)i);
        }
        if (c->kind == TRD_STEP_COMBINE && c->src == r->buf && c->buf != r->buf &&
            c->block == r->block && span(c) == span(r) && alone && waiting == 1)
            want[i] = reader[i];
    }
    free(writer);
    free(readers);
    free(reader);
}

/* Whether step j of rank's program is the first SEND of its channel
 * (peer, first block) in the program. */
static bool first_on_channel(const trd_plan *plan, int32_t rank, size_t j)
{
    const trd_step *s = trd_plan_step(plan, rank, j);
    for (size_t k = 0; k < j; k++) {
        const trd_step *e = trd_plan_step(plan, rank, k);
        bool sends = e->kind == TRD_STEP_SEND || e->kind == TRD_STEP_SEND_INPUT;
        if (sends && e->peer == s->peer && e->block == s->block)
            return false;
    }
    return true;
}

/* Oracle for producers: for COMBINE i, the first later SEND of the same
 * slot and blocks that depends on it, when a replay finds i the last
 * writer of every one of those blocks at that SEND and the SEND is the
 * first of its channel; else -1. */
static void oracle_producers(const trd_plan *plan, int32_t rank, int32_t *want)
{
    size_t n = trd_plan_step_count(plan, rank);
    int32_t B = trd_plan_blocks(plan), slots = trd_plan_scratch_slots(plan, rank) + 1;
    int32_t *writer = malloc((size_t)slots * (size_t)B * sizeof *writer);
    assert_non_null(writer);
    for (size_t i = 0; i < n; i++)
        want[i] = -1;
    for (size_t i = 0; i < n; i++) {
        const trd_step *c = trd_plan_step(plan, rank, i);
        if (c->kind != TRD_STEP_COMBINE && c->kind != TRD_STEP_RECV_COMBINE)
            continue;
        for (int32_t k = 0; k < slots * B; k++)
            writer[k] = -1;
        for (size_t j = 0; j < n; j++) {
            const trd_step *s = trd_plan_step(plan, rank, j);
            bool ships = j > i && s->kind == TRD_STEP_SEND && s->buf == c->buf &&
                         s->block == c->block && span(s) == span(c) &&
                         (s->dep[0] == (int32_t)i || s->dep[1] == (int32_t)i);
            if (ships) {
                bool last = true;
                for (int32_t b = s->block; b < s->block + span(s); b++)
                    last = last && writer[s->buf * B + b] == (int32_t)i;
                want[i] = last && first_on_channel(plan, rank, j) ? (int32_t)j : -1;
                break;
            }
            if (s->kind != TRD_STEP_SEND && s->kind != TRD_STEP_SEND_INPUT)
                for (int32_t b = s->block; b < s->block + span(s); b++)
                    writer[s->buf * B + b] = (int32_t)j;
        }
    }
    free(writer);
}

static const trd_algo oracle_algo = {.name = "test-fuse", .bound_source = "none"};

/* Whether s writes (or, a RIGHT combine's input, clobbers) block b of
 * slot 0, by the IR's definition (treduce.h). */
static bool writes_block0(const trd_step *s, int32_t b)
{
    bool in = b >= s->block && b < s->block + span(s);
    bool buf0 = s->kind != TRD_STEP_SEND && s->kind != TRD_STEP_SEND_INPUT && s->buf == 0;
    bool clobbers = s->kind == TRD_STEP_COMBINE && s->side == TRD_SIDE_RIGHT && s->src == 0;
    return in && (buf0 || clobbers);
}

/* raw's programs with send-from-input applied as the oracle sees it: a
 * SEND of slot 0 without deps whose blocks no earlier step writes sends
 * the input; no step waits for it.  A custom plan (the fusion pass is
 * not applied to those). */
static trd_plan *input_sends(const trd_plan *raw)
{
    const trd_params *p = trd_plan_params(raw);
    int32_t n = (int32_t)p->n;
    size_t *first = malloc(((size_t)n + 1) * sizeof *first), total = 0;
    assert_non_null(first);
    for (int32_t r = 0; r < n; r++)
        total += trd_plan_step_count(raw, r);
    trd_step *steps = malloc((total + 1) * sizeof *steps);
    assert_non_null(steps);
    first[0] = 0;
    for (int32_t r = 0; r < n; r++) {
        size_t m = trd_plan_step_count(raw, r);
        trd_step *prog = steps + first[r];
        for (size_t j = 0; j < m; j++) {
            prog[j] = *trd_plan_step(raw, r, j);
            prog[j].start = prog[j].end = prog[j].release = 0;
            bool input = prog[j].kind == TRD_STEP_SEND && prog[j].buf == 0 &&
                         prog[j].dep[0] < 0 && prog[j].dep[1] < 0;
            for (size_t i = 0; input && i < j; i++)
                for (int32_t b = prog[j].block; b < prog[j].block + span(&prog[j]); b++)
                    input = input && !writes_block0(&prog[i], b);
            if (input)
                prog[j].kind = TRD_STEP_SEND_INPUT;
        }
        for (size_t j = 0; j < m; j++)
            for (int k = 0; k < 2; k++)
                if (prog[j].dep[k] >= 0 && prog[prog[j].dep[k]].kind == TRD_STEP_SEND_INPUT)
                    prog[j].dep[k] = -1;
        first[r + 1] = first[r] + m;
    }
    trd_params q = *p;
    q.segments = trd_plan_blocks(raw);
    trd_plan *out = NULL;
    TU_CHECK(trd_plan_custom(&out, &oracle_algo, &q, first, steps, 1.0) == TRD_OK,
             "input_sends: %s", trd_errmsg());
    return out;
}

/* The program the oracle expects of rank: raw's with each allowed pair
 * (want) made one RECV_COMBINE at the RECV's place; *m steps. */
static trd_step *expected(const trd_plan *raw, int32_t rank, const int32_t *want, size_t *m)
{
    size_t n = trd_plan_step_count(raw, rank), k = 0;
    trd_step *out = calloc(n + 1, sizeof *out);
    int32_t *to = malloc((n + 1) * sizeof *to);
    uint8_t *gone = calloc(n + 1, 1);
    assert_non_null(out);
    assert_non_null(to);
    assert_non_null(gone);
    for (size_t i = 0; i < n; i++)
        if (want[i] >= 0)
            gone[want[i]] = 1;
    for (size_t i = 0; i < n; i++) {
        if (gone[i])
            continue;
        to[i] = (int32_t)k;
        trd_step s = *trd_plan_step(raw, rank, i);
        s.start = s.end = s.release = 0; /* custom plans (input_sends) keep none */
        if (want[i] >= 0) {
            const trd_step *c = trd_plan_step(raw, rank, (size_t)want[i]);
            to[want[i]] = (int32_t)k;
            s.kind = TRD_STEP_RECV_COMBINE;
            s.src = s.buf;
            s.buf = c->buf;
            s.side = c->side;
        }
        for (int d = 0; d < 2; d++)
            s.dep[d] = s.dep[d] >= 0 ? to[s.dep[d]] : -1;
        out[k++] = s;
    }
    free(to);
    free(gone);
    *m = k;
    return out;
}

static bool same_step(const trd_step *a, const trd_step *b)
{
    return a->kind == b->kind && a->peer == b->peer && a->buf == b->buf && a->src == b->src &&
           a->side == b->side && a->block == b->block && a->blocks == b->blocks &&
           a->dep[0] == b->dep[0] && a->dep[1] == b->dep[1];
}

/* The fused plan against the oracle's, rank by rank; returns the fused
 * receives (*produced: the shipped combines). */
static int64_t check_plan(const trd_plan *plan, const trd_plan *raw, const char *what,
                          int64_t *produced)
{
    int64_t fused = 0;
    trd_plan *mid = input_sends(raw);
    raw = mid;
    for (int32_t r = 0; r < (int32_t)trd_plan_params(plan)->n; r++) {
        size_t n = trd_plan_step_count(raw, r), m = 0, got = trd_plan_step_count(plan, r);
        int32_t *want = malloc((n + 1) * sizeof *want);
        assert_non_null(want);
        oracle(raw, r, want);
        trd_step *exp = expected(raw, r, want, &m);
        TU_CHECK(got == m, "%s rank %d: %zu steps fused, the oracle expects %zu", what, r,
                 got, m);
        for (size_t i = 0; i < m && i < got; i++)
            TU_CHECK(same_step(trd_plan_step(plan, r, i), &exp[i]), "%s rank %d step %zu: "
                     "kind %d buf %d src %d dep %d,%d; the oracle: kind %d buf %d src %d "
                     "dep %d,%d", what, r, i, trd_plan_step(plan, r, i)->kind,
                     trd_plan_step(plan, r, i)->buf, trd_plan_step(plan, r, i)->src,
                     trd_plan_step(plan, r, i)->dep[0], trd_plan_step(plan, r, i)->dep[1],
                     exp[i].kind, exp[i].buf, exp[i].src, exp[i].dep[0], exp[i].dep[1]);
        int32_t *prod = malloc((got + 1) * sizeof *prod);
        assert_non_null(prod);
        oracle_producers(plan, r, prod);
        for (size_t i = 0; i < got; i++) {
            int32_t ship = trd_plan_step(plan, r, i)->ship - 1;
            TU_CHECK(ship == prod[i], "%s rank %d step %zu: fuse.c ships it by %d, the "
                     "oracle by %d", what, r, i, ship, prod[i]);
            *produced += ship >= 0;
            fused += trd_plan_step(plan, r, i)->kind == TRD_STEP_RECV_COMBINE;
        }
        free(prod);
        free(exp);
        free(want);
    }
    trd_plan_free(mid);
    return fused;
}

static void test_every_static_algorithm(void **state)
{
    (void)state;
    int64_t exchange_fused = 0, exchange_produced = 0, plans = 0;
    for (size_t a = 0; a < trd_algo_count(); a++) {
        if (trd_algo_kind_of(a) == TRD_KIND_DYNAMIC)
            continue;
        for (int32_t p = 1; p <= 9; p++)
            for (int32_t m = 1; m <= 3; m++)
                for (trd_collective coll = 0; coll <= TRD_COLL_EXSCAN; coll++) {
                    bool all = coll == TRD_COLL_ALLREDUCE;
                    trd_params prm;
                    trd_params_init(&prm);
                    prm.n = p;
                    prm.segments = m;
                    prm.collective = coll;
                    prm.K = 2;
                    trd_plan *plan = NULL, *raw = NULL;
                    if (trd_plan_create(&plan, trd_algo_name(a), &prm) != TRD_OK)
                        continue; /* refused (exchange reduce, star's p, ...) */
                    assert_int_equal(trd_plan_create_unfused(&raw, trd_algo_name(a), &prm),
                                     TRD_OK);
                    char what[96];
                    snprintf(what, sizeof what, "%s p=%d m=%d %s", trd_algo_name(a), p, m,
                             trd_collective_name(coll));
                    int64_t produced = 0, fused = check_plan(plan, raw, what, &produced);
                    /* ring's combines wait for their receive alone; recursive doubling's
                     * also wait for the SEND of their accumulator */
                    if (!strcmp(trd_algo_name(a), "ring") && p > 1)
                        TU_CHECK(fused > 0, "%s: no receive fused", what);
                    bool halves = p == 2 && all && (!strcmp(trd_algo_name(a), "ring") ||
                                                    !strcmp(trd_algo_name(a), "rabenseifner"));
                    if (halves)
                        TU_CHECK(produced == 2 * m, "%s: %lld combines sent whole, "
                                 "expected one per segment and rank, %d", what,
                                 (long long)produced, 2 * m);
                    exchange_produced += produced;
                    exchange_fused += trd_algo_kind_of(a) == TRD_KIND_EXCHANGE ? fused : 0;
                    plans++;
                    trd_plan_free(plan);
                    trd_plan_free(raw);
                }
    }
    TU_CHECK(plans > 100 && exchange_fused > 0 && exchange_produced > 0,
             "%lld plans, %lld fused exchange receives, %lld combines sent whole",
             (long long)plans, (long long)exchange_fused, (long long)exchange_produced);
}

/* Programs of thousands of steps: every receive the oracle allows is
 * fused, the first ones too (a pass that looked only a few thousand steps
 * ahead left them apart). */
static void test_long_programs(void **state)
{
    (void)state;
    static const struct {
        const char *algo;
        int32_t p, segments;
        bool allreduce;
    } cases[] = {{"pipeline", 3, 2500, false},
                 {"pipelined-fibonacci", 5, 1200, false},
                 {"binomial", 4, 2000, true},
                 {"ring", 3, 1000, true}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        trd_params prm;
        trd_params_init(&prm);
        prm.n = cases[k].p;
        prm.segments = cases[k].segments;
        prm.allreduce = cases[k].allreduce;
        trd_plan *plan = NULL, *raw = NULL;
        assert_int_equal(trd_plan_create(&plan, cases[k].algo, &prm), TRD_OK);
        assert_int_equal(trd_plan_create_unfused(&raw, cases[k].algo, &prm), TRD_OK);
        char what[96];
        snprintf(what, sizeof what, "%s p=%d m=%d", cases[k].algo, (int)cases[k].p,
                 (int)cases[k].segments);
        int64_t produced = 0, fused = check_plan(plan, raw, what, &produced);
        TU_CHECK(fused > 0, "%s: no receive fused", what);
        trd_plan_free(plan);
        trd_plan_free(raw);
    }
}

/* An earlier step of a program at step i, or -1. */
static int32_t random_dep(uint64_t *rng, int i)
{
    return (int32_t)(trd_splitmix64(rng) % (uint64_t)(i + 1)) - 1;
}

/* Random programs of rank 0 (3 ranks, 3 blocks, 3 slots), fused by
 * trd_fuse_program: they have what the registry's plans never have - a
 * block written again before it is sent, two sends on one channel,
 * partial overlaps, a combine that waits for two steps - so each
 * condition of the pass is tested.  The fused program must be the
 * oracle's, and its ships the producer oracle's. */
static void test_random_programs(void **state)
{
    (void)state;
    uint64_t rng = 0x9E3779B97F4A7C15ULL;
    int64_t produced = 0, fused = 0;
    enum { STEPS = 10, PROGRAMS = 4000 };
    for (int k = 0; k < PROGRAMS; k++) {
        trd_params prm;
        trd_params_init(&prm);
        prm.n = 3;
        prm.segments = 3;
        size_t *first = malloc(4 * sizeof *first);
        trd_step *steps = malloc(STEPS * sizeof *steps);
        assert_true(first && steps);
        first[0] = 0;
        first[1] = first[2] = first[3] = STEPS;
        for (int i = 0; i < STEPS; i++) {
            int32_t kind = (int32_t)(trd_splitmix64(&rng) % 4);
            int32_t b = (int32_t)(trd_splitmix64(&rng) % 3), buf = (int32_t)(trd_splitmix64(&rng) % 3);
            trd_step *s = &steps[i];
            *s = (trd_step){.kind = kind, .peer = kind <= TRD_STEP_RECV ? 1 + b % 2 : -1,
                            .buf = buf, .src = kind >= TRD_STEP_COMBINE ? (buf + 1) % 3 : -1,
                            .block = b, .blocks = b < 2 ? (int32_t)(trd_splitmix64(&rng) % 2) : 0,
                            .dep = {random_dep(&rng, i), random_dep(&rng, i)}};
            int32_t e = random_dep(&rng, i); /* half the time, the step uses an earlier one */
            const trd_step *q = e >= 0 ? &steps[e] : NULL;
            if (q && trd_splitmix64(&rng) % 2 == 0 && kind == TRD_STEP_SEND &&
                q->kind == TRD_STEP_COMBINE)
                *s = (trd_step){.kind = kind, .peer = s->peer, .buf = q->buf, .src = -1,
                                .block = q->block, .blocks = q->blocks, .dep = {s->dep[0], e}};
            if (q && trd_splitmix64(&rng) % 2 == 0 && kind == TRD_STEP_COMBINE &&
                q->kind == TRD_STEP_RECV && q->buf != 0)
                *s = (trd_step){.kind = kind, .peer = -1, .buf = 0, .src = q->buf,
                                .block = q->block, .blocks = q->blocks,
                                .dep = {e, trd_splitmix64(&rng) % 2 ? s->dep[1] : -1}};
        }
        trd_step fz[STEPS];
        int32_t want[STEPS], prod[STEPS], ship[STEPS];
        size_t m = 0, e = 0;
        assert_int_equal(trd_fuse_program(steps, STEPS, 3, fz, &m), TRD_OK);
        trd_plan *given = NULL, *plan = NULL;
        size_t *f1 = malloc(4 * sizeof *f1);
        trd_step *s1 = malloc(STEPS * sizeof *s1);
        assert_true(f1 && s1);
        memcpy(f1, first, 4 * sizeof *f1);
        memcpy(s1, steps, STEPS * sizeof *s1);
        assert_int_equal(trd_plan_custom(&given, &oracle_algo, &prm, f1, s1, 1.0), TRD_OK);
        trd_plan *raw = input_sends(given);
        trd_plan_free(given);
        free(first);
        free(steps);
        oracle(raw, 0, want);
        trd_step *exp = expected(raw, 0, want, &e);
        TU_CHECK(m == e, "program %d: %zu steps fused, the oracle expects %zu", k, m, e);
        for (size_t i = 0; i < m && i < e; i++) {
            TU_CHECK(same_step(&fz[i], &exp[i]), "program %d step %zu: fused kind %d dep "
                     "%d,%d, the oracle kind %d dep %d,%d", k, i, fz[i].kind, fz[i].dep[0],
                     fz[i].dep[1], exp[i].kind, exp[i].dep[0], exp[i].dep[1]);
            fused += fz[i].kind == TRD_STEP_RECV_COMBINE;
        }
        size_t *f2 = malloc(4 * sizeof *f2);
        trd_step *s2 = malloc((m + 1) * sizeof *s2);
        assert_true(f2 && s2);
        f2[0] = 0;
        f2[1] = f2[2] = f2[3] = m;
        for (size_t i = 0; i < m; i++) { /* custom plans take no ship: kept aside */
            ship[i] = fz[i].ship - 1;
            s2[i] = fz[i];
            s2[i].ship = 0;
        }
        assert_int_equal(trd_plan_custom(&plan, &oracle_algo, &prm, f2, s2, 1.0), TRD_OK);
        oracle_producers(plan, 0, prod);
        for (size_t i = 0; i < m; i++) {
            TU_CHECK(ship[i] == prod[i], "program %d step %zu: fuse.c ships it by %d, the "
                     "oracle by %d", k, i, ship[i], prod[i]);
            produced += ship[i] >= 0;
        }
        free(exp);
        trd_plan_free(raw);
        trd_plan_free(plan);
    }
    TU_CHECK(produced > PROGRAMS / 10 && fused > PROGRAMS / 200, "%lld producers, %lld fused "
             "receives in %d programs: the generator misses the cases", (long long)produced,
             (long long)fused, PROGRAMS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_every_static_algorithm),
                                       cmocka_unit_test(test_long_programs),
                                       cmocka_unit_test(test_random_programs)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
