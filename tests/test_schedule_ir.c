/* test_schedule_ir.c: consistency of the compiled schedule IR (docs/MODEL.md,
 * "The schedule IR") with the plan's tree and the one-port model, as
 * schedule.c compiles it (trd_plan_create_unfused: the fusion pass is
 * checked against these programs by test_fuse).
 *
 * For every registered planner (K in {1, 2, 5} for the K-limited ones),
 * n in {1, 2, 3, 5, 8, 13, 16, 31, 64, 100, 257}, (d, c) in {(1,1), (1,0),
 * (0,1), (2,1), (1,3)}, and three layouts (root 0; root n/2; root n-1 with
 * the non-commutative numbering):
 *   - every SEND r -> p matches exactly one RECV at p from r with the same
 *     start and end, p is r's parent in trd_plan_parent, every non-root
 *     rank sends once and the root never;
 *   - dep[] entries are -1 or indices below the step's own, and a step
 *     starts no earlier than the end of the steps it depends on;
 *   - a COMBINE starts no earlier than the end of the RECV that filled its
 *     input slot; transfers last d and combines c;
 *   - a rank's transfers (RECV and SEND) never overlap (one-port), nor do
 *     its combines;
 *   - the last COMBINE of the root ends at the plan's makespan;
 *   - trd_plan_scratch_slots(r) equals r's number of RECVs, which equals
 *     its number of children in the parent array.
 * Expected values come from the parent array and the model's definition. */
#include "plan/builders.h"
#include "testutil.h"

static const int32_t sizes[] = {1, 2, 3, 5, 8, 13, 16, 31, 64, 100, 257};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static char where[200]; /* the case under test, printed on failure */

static int by_start(const void *a, const void *b)
{
    const trd_step *x = *(const trd_step *const *)a, *y = *(const trd_step *const *)b;
    return (x->start > y->start) - (x->start < y->start);
}

/* Steps of one kind class (transfers, or combines) of rank r never overlap. */
static void check_no_overlap(const trd_plan *plan, int32_t r, int transfers)
{
    size_t count = trd_plan_step_count(plan, r), m = 0;
    const trd_step **list = tu_alloc(count, sizeof *list);
    for (size_t i = 0; i < count; i++) {
        const trd_step *s = trd_plan_step(plan, r, i);
        int is_transfer = s->kind == TRD_STEP_SEND || s->kind == TRD_STEP_RECV;
        if (transfers ? is_transfer : s->kind == TRD_STEP_COMBINE)
            list[m++] = s;
    }
    qsort(list, m, sizeof *list, by_start);
    for (size_t i = 1; i < m; i++)
        TU_CHECK(list[i]->start >= list[i - 1]->end || tu_close(list[i]->start, list[i - 1]->end),
                 "%s rank %d: %s [%g, %g] overlaps [%g, %g]", where, r,
                 transfers ? "transfers" : "combines", list[i - 1]->start, list[i - 1]->end,
                 list[i]->start, list[i]->end);
    free(list);
}

/* Per-rank checks: deps, durations, combine after its RECV, slots. */
static void check_rank(const trd_plan *plan, int32_t r, const int32_t *children)
{
    const trd_params *p = trd_plan_params(plan);
    size_t count = trd_plan_step_count(plan, r);
    int32_t recvs = 0, sends = 0;
    for (size_t i = 0; i < count; i++) {
        const trd_step *s = trd_plan_step(plan, r, i);
        for (int k = 0; k < 2; k++) {
            TU_CHECK(s->dep[k] >= -1 && s->dep[k] < (int32_t)i,
                     "%s rank %d step %zu: dep %d", where, r, i, s->dep[k]);
            if (s->dep[k] >= 0) {
                const trd_step *before = trd_plan_step(plan, r, (size_t)s->dep[k]);
                TU_CHECK(s->start >= before->end || tu_close(s->start, before->end),
                         "%s rank %d step %zu starts at %g before its dep ends at %g",
                         where, r, i, s->start, before->end);
            }
        }
        double len = s->kind == TRD_STEP_COMBINE ? p->c : p->d;
        TU_CHECK(tu_close(s->end - s->start, len), "%s rank %d step %zu (kind %d) lasts %g",
                 where, r, i, s->kind, s->end - s->start);
        recvs += s->kind == TRD_STEP_RECV;
        sends += s->kind == TRD_STEP_SEND;
        if (s->kind != TRD_STEP_COMBINE)
            continue;
        const trd_step *filler = NULL; /* latest RECV into the input slot */
        for (size_t j = 0; j < i; j++) {
            const trd_step *q = trd_plan_step(plan, r, j);
            if (q->kind == TRD_STEP_RECV && q->buf == s->src)
                filler = q;
        }
        TU_CHECK(filler != NULL, "%s rank %d step %zu combines slot %d, never received",
                 where, r, i, s->src);
        TU_CHECK(s->start >= filler->end || tu_close(s->start, filler->end),
                 "%s rank %d step %zu: combine at %g before its RECV ends at %g", where, r,
                 i, s->start, filler->end);
    }
    TU_CHECK(sends == (r == p->root ? 0 : 1), "%s rank %d has %d SENDs", where, r, sends);
    TU_CHECK(recvs == children[r] && trd_plan_scratch_slots(plan, r) == recvs,
             "%s rank %d: %d RECVs, %d children, %d scratch slots", where, r, recvs,
             children[r], trd_plan_scratch_slots(plan, r));
    check_no_overlap(plan, r, 1);
    check_no_overlap(plan, r, 0);
}

/* Every SEND has exactly one matching RECV at its parent. */
static void check_send(const trd_plan *plan, int32_t r, const trd_step *send)
{
    int32_t p = send->peer, matches = 0;
    TU_CHECK(p == trd_plan_parent(plan, r), "%s rank %d sends to %d, parent %d", where, r,
             p, trd_plan_parent(plan, r));
    for (size_t i = 0; i < trd_plan_step_count(plan, p); i++) {
        const trd_step *s = trd_plan_step(plan, p, i);
        if (s->kind != TRD_STEP_RECV || s->peer != r)
            continue;
        matches++;
        TU_CHECK(tu_close(s->start, send->start) && tu_close(s->end, send->end),
                 "%s SEND %d->%d [%g, %g] but RECV [%g, %g]", where, r, p, send->start,
                 send->end, s->start, s->end);
    }
    TU_CHECK(matches == 1, "%s SEND %d->%d has %d RECVs", where, r, p, matches);
}

static void check_plan(const trd_plan *plan)
{
    const trd_params *p = trd_plan_params(plan);
    int32_t n = (int32_t)p->n, root = (int32_t)p->root;
    int32_t *children = tu_alloc((size_t)n, sizeof *children);
    size_t all_recvs = 0;
    for (int32_t r = 0; r < n; r++)
        if (trd_plan_parent(plan, r) >= 0)
            children[trd_plan_parent(plan, r)]++;
    for (int32_t r = 0; r < n; r++) {
        check_rank(plan, r, children);
        all_recvs += (size_t)children[r];
        for (size_t i = 0; i < trd_plan_step_count(plan, r); i++)
            if (trd_plan_step(plan, r, i)->kind == TRD_STEP_SEND)
                check_send(plan, r, trd_plan_step(plan, r, i));
    }
    TU_CHECK(all_recvs == (size_t)n - 1, "%s %zu RECVs for %d ranks", where, all_recvs, n);
    double last = 0.0; /* n = 1: no combine, makespan 0 */
    for (size_t i = 0; i < trd_plan_step_count(plan, root); i++)
        if (trd_plan_step(plan, root, i)->kind == TRD_STEP_COMBINE)
            last = fmax(last, trd_plan_step(plan, root, i)->end);
    TU_CHECK(tu_close(last, trd_plan_makespan(plan)),
             "%s root's last combine ends at %.17g, makespan %.17g", where, last,
             trd_plan_makespan(plan));
    free(children);
}

static void planner_ir(void **state)
{
    size_t index = *(size_t *)*state;
    const char *algo = trd_algo_name(index);
    static const int64_t ks[] = {1, 2, 5};
    size_t nk = trd_algo_uses_k(index) ? 3 : 1;
    for (size_t i = 0; i < NSIZES; i++)
        for (size_t j = 0; j < TU_NPAIRS; j++)
            for (size_t k = 0; k < nk; k++)
                for (int layout = 0; layout < 3; layout++) {
                    int32_t n = sizes[i];
                    trd_params p = tu_params(n, tu_pairs[j][0], tu_pairs[j][1],
                                             nk > 1 ? ks[k] : 0);
                    p.root = layout == 0 ? 0 : layout == 1 ? n / 2 : n - 1;
                    p.noncommutative = layout == 2;
                    snprintf(where, sizeof where, "%s n=%d d=%g c=%g K=%lld root=%lld nc=%d:",
                             algo, n, p.d, p.c, (long long)p.K, (long long)p.root, layout == 2);
                    trd_plan *plan = NULL;
                    assert_int_equal(trd_plan_create_unfused(&plan, algo, &p), TRD_OK);
                    check_plan(plan);
                    trd_plan_free(plan);
                }
}

int main(void)
{
    return tu_run_per_planner(
        &(struct tu_per_planner){.group = "schedule_ir", .fn = planner_ir});
}
