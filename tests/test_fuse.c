/* test_fuse.c: the receives the runtime combines on arrival
 * (src/runtime/fuse.c) against an oracle written here: a replay of each
 * rank's program in program order that tags every block of every slot
 * with the step that last wrote it, and counts which steps read the value
 * each RECV stored.  A RECV may be fused only when exactly one step reads
 * its value, a COMBINE of the same blocks into another slot that depends
 * on it directly.  For every static algorithm of the registry, reduce and
 * allreduce, p = 1..9, 1..3 segments:
 *   - every RECV fuse.c fuses is one the oracle allows, with the same
 *     consumer (soundness: a wrong one would lose or corrupt a message);
 *   - it finds every one the oracle allows (these plans never overwrite
 *     half a received range);
 *   - the exchange algorithms (ring, rabenseifner, recursive-doubling)
 *     have fused receives at all, so the runtime's fast path is reached.
 * The runtime's results with fusion on are checked by test_runtime (every
 * algorithm, non-commutative checkers, the threads wire). */
#include <stdlib.h>

#include "runtime/fuse.h"
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
        if (s->kind != TRD_STEP_SEND)
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
        if (c->kind == TRD_STEP_COMBINE && c->src == r->buf && c->buf != r->buf &&
            c->block == r->block && span(c) == span(r) &&
            (c->dep[0] == (int32_t)i || c->dep[1] == (int32_t)i))
            want[i] = reader[i];
    }
    free(writer);
    free(readers);
    free(reader);
}

/* Fused receives of plan over all ranks, checked against the oracle. */
static int64_t check_plan(const trd_plan *plan, const char *what)
{
    int64_t fused = 0;
    for (int32_t r = 0; r < (int32_t)trd_plan_params(plan)->n; r++) {
        trd_fusion f;
        assert_int_equal(trd_fusion_init(&f, plan, r), TRD_OK);
        int32_t *want = malloc(((size_t)f.steps + 1) * sizeof *want);
        assert_non_null(want);
        oracle(plan, r, want);
        for (int32_t i = 0; i < f.steps; i++) {
            TU_CHECK(f.consumer[i] == want[i], "%s rank %d step %d: fuse.c says consumer %d, "
                     "the oracle %d", what, r, i, f.consumer[i], want[i]);
            fused += f.consumer[i] >= 0;
        }
        free(want);
        trd_fusion_free(&f);
    }
    return fused;
}

static void test_every_static_algorithm(void **state)
{
    (void)state;
    int64_t exchange_fused = 0, plans = 0;
    for (size_t a = 0; a < trd_algo_count(); a++) {
        if (trd_algo_kind_of(a) == TRD_KIND_DYNAMIC)
            continue;
        for (int32_t p = 1; p <= 9; p++)
            for (int32_t m = 1; m <= 3; m++)
                for (int all = 0; all < 2; all++) {
                    trd_params prm;
                    trd_params_init(&prm);
                    prm.n = p;
                    prm.segments = m;
                    prm.allreduce = all;
                    prm.K = 2;
                    trd_plan *plan = NULL;
                    if (trd_plan_create(&plan, trd_algo_name(a), &prm) != TRD_OK)
                        continue; /* refused (exchange reduce, star's p, ...) */
                    char what[96];
                    snprintf(what, sizeof what, "%s p=%d m=%d %s", trd_algo_name(a), p, m,
                             all ? "allreduce" : "reduce");
                    int64_t fused = check_plan(plan, what);
                    if (trd_algo_kind_of(a) == TRD_KIND_EXCHANGE && p > 1)
                        TU_CHECK(fused > 0, "%s: no receive fused", what);
                    exchange_fused += trd_algo_kind_of(a) == TRD_KIND_EXCHANGE ? fused : 0;
                    plans++;
                    trd_plan_free(plan);
                }
    }
    TU_CHECK(plans > 100 && exchange_fused > 0, "%lld plans, %lld fused exchange receives",
             (long long)plans, (long long)exchange_fused);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_every_static_algorithm)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
