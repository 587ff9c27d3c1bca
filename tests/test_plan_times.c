/* test_plan_times.c: trd_plan_step_times and trd_plan_record.
 *
 * The times of a plan's steps must belong to the run whose end
 * trd_plan_makespan gives, for every static algorithm of the registry,
 * reduce and allreduce, unsegmented and in 3 segments, with and without a
 * latency, n = 1..8 (n! ranks for the star graph), and under heterogeneous
 * costs.  They are checked against the model's rules written here, not
 * against the simulator's code:
 *   - the last end is the makespan, and every step ends after it starts;
 *   - a step starts once the steps it depends on have ended;
 *   - a transfer lasts latency + (d - latency) x its share of the buffer
 *     (d[i][j] x share under costs), a combine combine_fixed + (c -
 *     combine_fixed) x share (c[i] x share), a RECV_COMBINE at least both;
 *   - one-port full duplex: a rank's sends never overlap each other, nor
 *     its receives, nor its combines;
 *   - where the tree evaluator timed the plan, they are the steps' own.
 * trd_plan_record of a dynamic algorithm (tree-dyn, nc-tree-dyn): the
 * recorded run ends at trd_simulate's makespan for the same constant
 * costs (port full), obeys the rules above, forms a tree (one SEND per
 * rank but the root, each to a rank closer to it), replays as a static
 * plan in the same time, and - run for real on threads with
 * trd_comm_run_plan and the non-commutative matrix checker - leaves the
 * rank-order product at its root. */
#include "plan/builders.h"
#include "runtime_util.h"
#include "sim/sim.h"

#define EPS 1e-9
#define EPS_SHARE 1e-6 /* a segment's share of the buffer is a float (trd_layout.scale) */

typedef struct timing {
    const trd_plan *plan;
    double *start, *end;
    size_t *first;
} timing;

static timing times_of(const trd_plan *plan)
{
    int32_t n = (int32_t)trd_plan_params(plan)->n;
    size_t total = trd_plan_total_steps(plan);
    timing t = {.plan = plan, .start = tu_alloc(total + 1, sizeof(double)),
                .end = tu_alloc(total + 1, sizeof(double)),
                .first = tu_alloc((size_t)n + 1, sizeof(size_t))};
    for (int32_t r = 0; r < n; r++)
        t.first[r + 1] = t.first[r] + trd_plan_step_count(plan, r);
    TU_CHECK(t.first[n] == total, "%s: trd_plan_total_steps %zu, the ranks' steps %zu",
             trd_plan_algo(plan), total, t.first[n]);
    for (int32_t r = 0; r <= n; r++)
        TU_CHECK(trd_plan_step_offset(plan, r) == t.first[r], "%s: rank %d's steps at %zu, "
                 "not %zu", trd_plan_algo(plan), r, trd_plan_step_offset(plan, r), t.first[r]);
    TU_CHECK(trd_plan_step_times(plan, t.start, t.end) == TRD_OK, "%s: %s",
             trd_plan_algo(plan), trd_errmsg());
    return t;
}

static void times_free(timing *t)
{
    free(t->start);
    free(t->end);
    free(t->first);
}

static bool moves(const trd_step *s)
{
    return s->kind != TRD_STEP_COMBINE && s->kind != TRD_STEP_COPY;
}

static bool combines(const trd_step *s)
{
    return s->kind == TRD_STEP_COMBINE || s->kind == TRD_STEP_RECV_COMBINE;
}

static bool sends(const trd_step *s)
{
    return s->kind == TRD_STEP_SEND || s->kind == TRD_STEP_SEND_INPUT;
}

/* The model's durations of step s of rank r (the rules above). */
static double transfer_time(const trd_params *p, int32_t r, const trd_step *s, double share)
{
    int32_t from = sends(s) ? r : s->peer, to = sends(s) ? s->peer : r;
    if (p->costs)
        return trd_costs_transfer(p->costs, from, to) * share;
    return p->latency + (p->d - p->latency) * share;
}

static double combine_time(const trd_params *p, int32_t r, double share)
{
    if (p->costs)
        return trd_costs_combine(p->costs, r) * share;
    return p->combine_fixed + (p->c - p->combine_fixed) * share;
}

/* Intervals [a0, a1) and [b0, b1) overlap (touching ends do not). */
static bool overlap(double a0, double a1, double b0, double b1)
{
    return a0 < b1 - EPS && b0 < a1 - EPS;
}

static void check_times(const timing *t, const char *what)
{
    const trd_plan *plan = t->plan;
    const trd_params *p = trd_plan_params(plan);
    double makespan = trd_plan_makespan(plan), last = 0;
    int32_t B = trd_plan_blocks(plan);
    for (int32_t r = 0; r < p->n; r++) {
        size_t count = trd_plan_step_count(plan, r);
        for (size_t i = 0; i < count; i++) {
            const trd_step *s = trd_plan_step(plan, r, i);
            double s0 = t->start[t->first[r] + i], s1 = t->end[t->first[r] + i];
            double share = (double)(s->blocks > 1 ? s->blocks : 1) / B;
            double xfer = transfer_time(p, r, s, share), comb = combine_time(p, r, share);
            last = fmax(last, s1);
            TU_CHECK(s0 >= 0 && s0 <= s1, "%s rank %d step %zu: [%g, %g]", what, r, i, s0, s1);
            for (int k = 0; k < 2; k++)
                TU_CHECK(s->dep[k] < 0 || t->end[t->first[r] + (size_t)s->dep[k]] <= s0 + EPS,
                         "%s rank %d step %zu starts at %g before its dep %d ends", what, r, i,
                         s0, s->dep[k]);
            double want = s->kind == TRD_STEP_COPY ? 0 : moves(s) ? xfer : comb;
            if (s->kind == TRD_STEP_RECV_COMBINE)
                TU_CHECK(s1 - s0 >= (xfer + comb) * (1 - EPS_SHARE), "%s rank %d step %zu: a "
                         "RECV_COMBINE of %g, its transfer and combine take %g", what, r, i,
                         s1 - s0, xfer + comb);
            else
                TU_CHECK(fabs(s1 - s0 - want) <= EPS_SHARE * (1 + want), "%s rank %d step %zu "
                         "(kind %d) lasts %.17g, the model %.17g", what, r, i, s->kind,
                         s1 - s0, want);
            for (size_t j = 0; j < i; j++) { /* one-port full duplex, one combine at once */
                const trd_step *o = trd_plan_step(plan, r, j);
                double o0 = t->start[t->first[r] + j], o1 = t->end[t->first[r] + j];
                double oshare = (double)(o->blocks > 1 ? o->blocks : 1) / B;
                bool both_send = sends(s) && sends(o);
                bool both_recv = moves(s) && !sends(s) && moves(o) && !sends(o);
                if (both_send || both_recv) /* a RECV_COMBINE's transfer comes first */
                    TU_CHECK(!overlap(s0, s0 + xfer, o0, o0 + transfer_time(p, r, o, oshare)),
                             "%s rank %d: steps %zu and %zu transfer at once ([%g, %g], "
                             "[%g, %g])", what, r, j, i, o0, o1, s0, s1);
                if (combines(s) && combines(o))
                    TU_CHECK(!overlap(s1 - comb, s1, o1 - combine_time(p, r, oshare), o1),
                             "%s rank %d: steps %zu and %zu combine at once", what, r, j, i);
            }
        }
    }
    TU_CHECK(last == makespan, "%s: the last step ends at %.17g, the makespan is %.17g", what,
             last, makespan);
}

/* Where the evaluator timed the plan, its steps' own times are given. */
static void check_own_times(const timing *t, const char *what)
{
    const trd_plan *plan = t->plan;
    if (!plan->timed || isnan(plan->makespan))
        return;
    for (size_t k = 0; k < trd_plan_total_steps(plan); k++)
        TU_CHECK(t->start[k] == plan->steps[k].start && t->end[k] == plan->steps[k].end,
                 "%s step %zu: [%g, %g], the plan's own [%g, %g]", what, k, t->start[k],
                 t->end[k], plan->steps[k].start, plan->steps[k].end);
}

static void check_plan(const char *algo, const trd_params *p, const char *what)
{
    trd_plan *plan;
    TU_CHECK(trd_plan_create(&plan, algo, p) == TRD_OK, "%s: %s", what, trd_errmsg());
    timing t = times_of(plan);
    check_times(&t, what);
    check_own_times(&t, what);
    times_free(&t);
    trd_plan_free(plan);
}

static void static_plans(void **state)
{
    (void)state;
    static const double dc[][3] = {{1, 1, 0}, {1, 0.5, 0}, {2, 1, 0.5}, {0.5, 2, 0.25}};
    for (size_t a = 0; a < trd_algo_count(); a++) {
        const char *algo = trd_algo_name(a);
        if (trd_algo_is_dynamic(a) || trd_algo_uses_costs(a))
            continue;
        for (int64_t n = 1; n <= 8; n++) {
            if (trd_algo_needs_factorial_p(a) && n != 1 && n != 2 && n != 6)
                continue;
            for (size_t k = 0; k < sizeof dc / sizeof dc[0]; k++)
                for (trd_collective coll = 0; coll <= TRD_COLL_EXSCAN; coll++)
                    for (int64_t m = 0; m <= 3; m += 3) {
                        trd_params p = tu_params(n, dc[k][0], dc[k][1], 2);
                        p.latency = dc[k][2];
                        if (!trd_algo_runs(a, coll))
                            continue;
                        p.collective = coll;
                        p.segments = m;
                        char what[160];
                        snprintf(what, sizeof what, "%s n=%lld d=%g c=%g latency=%g %s m=%lld",
                                 algo, (long long)n, p.d, p.c, p.latency,
                                 trd_collective_name(coll), (long long)m);
                        check_plan(algo, &p, what);
                    }
        }
    }
}

/* Costs: the hetero planners (timed by the evaluator under them), a
 * non-commutative binomial (timed by the simulator under them), a
 * pipeline. */
static void heterogeneous_plans(void **state)
{
    (void)state;
    static const char *const algos[] = {"hetero-greedy", "hetero-exact", "binomial", "pipeline"};
    for (int64_t n = 2; n <= 7; n++) {
        trd_costs *costs;
        assert_int_equal(trd_costs_create(&costs, n, TRD_DIST_CONST, 1, 0.5, 0), TRD_OK);
        assert_int_equal(trd_costs_random(costs, "links", 8, (uint64_t)n), TRD_OK);
        for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++)
            for (int nc = 0; nc < 1 + (a >= 2); nc++) {
                trd_params p = tu_params(n, 1, 0.5, 0);
                p.costs = costs;
                p.noncommutative = nc;
                trd_costs_mean(costs, &p.d, &p.c);
                char what[96];
                snprintf(what, sizeof what, "%s n=%lld costs%s", algos[a], (long long)n,
                         nc ? " non-commutative" : "");
                check_plan(algos[a], &p, what);
            }
        trd_costs_free(costs);
    }
}

/* ---- dynamic algorithms ---- */

/* The recorded plan run for real leaves every contribution once at its
 * root: M(0) x ... x M(n-1) with the matrix checker where the plan keeps
 * rank order, else the sum of 2^r over the ranks (int64). */
static void run_for_real(const trd_plan *plan, const char *what)
{
    int32_t n = (int32_t)trd_plan_params(plan)->n;
    bool nc = trd_plan_params(plan)->noncommutative;
    size_t elem = nc ? sizeof(trd_matrix2x2) : sizeof(int64_t);
    rt_plan_run x = {.plan = plan, .count = 5, .buf = tu_alloc((size_t)n, sizeof *x.buf)};
    if (nc)
        assert_int_equal(trd_op_matrix2x2(&x.op), TRD_OK);
    else
        assert_int_equal(trd_op_builtin(&x.op, TRD_OP_SUM, TRD_INT64), TRD_OK);
    for (int32_t r = 0; r < n; r++) {
        x.buf[r] = tu_alloc((size_t)x.count, elem);
        if (nc)
            assert_int_equal(trd_matrix2x2_fill(x.buf[r], x.count, r), TRD_OK);
        for (int64_t i = 0; !nc && i < x.count; i++)
            ((int64_t *)x.buf[r])[i] = (int64_t)1 << r;
    }
    rt_run_plan_ok(&x, n, what);
    unsigned char want[5 * sizeof(trd_matrix2x2)];
    if (nc)
        assert_int_equal(trd_matrix2x2_expected((trd_matrix2x2 *)want, x.count, 0, n - 1),
                         TRD_OK);
    for (int64_t i = 0; !nc && i < x.count; i++)
        ((int64_t *)want)[i] = ((int64_t)1 << n) - 1;
    TU_CHECK(!memcmp(want, x.buf[trd_plan_result_rank(plan)], (size_t)x.count * elem),
             "%s: the root's result is not every rank's contribution once%s", what,
             nc ? " in rank order" : "");
    rt_plan_run_free(&x, n);
}

/* One SEND per rank but the root, its last step; following the parents
 * reaches the root from every rank. */
static void check_tree(const trd_plan *plan, const char *what)
{
    int32_t n = (int32_t)trd_plan_params(plan)->n, root = trd_plan_result_rank(plan);
    for (int32_t r = 0; r < n; r++) {
        int32_t sent = 0;
        size_t count = trd_plan_step_count(plan, r);
        for (size_t i = 0; i < count; i++)
            if (trd_plan_step(plan, r, i)->kind == TRD_STEP_SEND) {
                sent++;
                TU_CHECK(i == count - 1 && trd_plan_step(plan, r, i)->peer ==
                                               trd_plan_parent(plan, r),
                         "%s rank %d: a SEND that is not its last step to its parent", what, r);
            }
        TU_CHECK(sent == (r != root), "%s rank %d sends %d times (root %d)", what, r, sent,
                 root);
        int32_t at = r, hops = 0;
        while (at != root && hops++ <= n)
            at = trd_plan_parent(plan, at);
        TU_CHECK(at == root, "%s: rank %d's parents do not reach the root %d", what, r, root);
    }
}

static void dynamic_plans(void **state)
{
    (void)state;
    static const char *const algos[] = {"tree-dyn", "nc-tree-dyn"};
    static const int64_t ns[] = {1, 2, 3, 5, 8, 13, 16};
    for (size_t a = 0; a < 2; a++)
        for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
            for (size_t q = 0; q < TU_NPAIRS; q++) {
                int64_t n = ns[k];
                trd_params p = tu_params(n, tu_pairs[q][0], tu_pairs[q][1], 0);
                p.noncommutative = a == 1;
                char what[96];
                snprintf(what, sizeof what, "%s n=%lld d=%g c=%g", algos[a], (long long)n,
                         p.d, p.c);
                trd_plan *plan;
                TU_CHECK(trd_plan_record(&plan, algos[a], &p) == TRD_OK, "%s: %s", what,
                         trd_errmsg());
                trd_costs *costs;
                double sim, replay;
                assert_int_equal(trd_costs_create(&costs, n, TRD_DIST_CONST, p.d, p.c, 0),
                                 TRD_OK);
                assert_int_equal(trd_simulate(algos[a], &p, costs, TRD_PORT_FULL, 0, 0, &sim),
                                 TRD_OK);
                trd_costs_free(costs);
                TU_CHECK(trd_plan_makespan(plan) == sim, "%s: recorded makespan %.17g, "
                         "trd_simulate's %.17g", what, trd_plan_makespan(plan), sim);
                assert_int_equal(trd_plan_simulate_makespan(plan, &replay), TRD_OK);
                TU_CHECK(replay == sim, "%s: the recorded programs replay in %.17g, the run "
                         "took %.17g", what, replay, sim);
                TU_CHECK(trd_plan_lower_bound(plan) <= sim + EPS, "%s: lower bound %g above "
                         "the makespan %g", what, trd_plan_lower_bound(plan), sim);
                TU_CHECK(isnan(trd_plan_upper_bound(plan)) ||
                             sim <= trd_plan_upper_bound(plan) + EPS,
                         "%s: makespan %g above the upper bound %g", what, sim,
                         trd_plan_upper_bound(plan));
                timing t = times_of(plan);
                check_times(&t, what);
                times_free(&t);
                check_tree(plan, what);
                if (q == 0 && n <= 8)
                    run_for_real(plan, what);
                trd_plan_free(plan);
            }
}

static void record_refuses(void **state)
{
    (void)state;
    trd_params p = tu_params(4, 1, 1, 0);
    trd_plan *plan = (trd_plan *)1;
    p.root = 2;
    assert_int_equal(trd_plan_record(&plan, "tree-dyn", &p), TRD_EINVAL);
    assert_null(plan);
    assert_non_null(strstr(trd_errmsg(), "decides at run time"));
    p.root = 0;
    p.allreduce = true;
    assert_int_equal(trd_plan_record(&plan, "tree-dyn", &p), TRD_EUNSUPPORTED);
    p.allreduce = false;
    p.noncommutative = true;
    assert_int_equal(trd_plan_record(&plan, "tree-dyn", &p), TRD_EUNSUPPORTED);
    p.noncommutative = false;
    p.n = 0;
    assert_int_equal(trd_plan_record(&plan, "nc-tree-dyn", &p), TRD_EINVAL);
    assert_int_equal(trd_plan_record(&plan, "nosuch", &p), TRD_ENOALGO);
    assert_int_equal(trd_plan_record(NULL, "tree-dyn", &p), TRD_EINVAL);
    p.n = 4;
    assert_int_equal(trd_plan_record(&plan, "greedy", &p), TRD_OK); /* a static one: its plan */
    assert_string_equal(trd_plan_algo(plan), "greedy");
    assert_int_equal(trd_plan_step_times(plan, NULL, NULL), TRD_EINVAL);
    trd_plan_free(plan);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(static_plans),
        cmocka_unit_test(heterogeneous_plans),
        cmocka_unit_test(dynamic_plans),
        cmocka_unit_test(record_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
