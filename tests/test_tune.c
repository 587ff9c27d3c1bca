/* test_tune.c: auto with tune (src/select/tune.c) over the threads wire:
 * tuning keeps the fastest of the model's best candidates on every rank
 * and stays with it, times distinct programs only, forgets the oldest of
 * its table's argument sets, and (driven by hand) counts rounds 1 on and
 * times the first candidate's long messages the other way too.
 *
 * usage: test_tune [PATTERN [SKIP]] (cmocka filters). */
#include "runtime_util.h"
#include "ir/plan_layout.h" /* trd_plan_same_programs */
#include "select/select.h"   /* trd_comm_plan_call */
#include "select/tune.h"     /* the tuning rounds, driven by hand */

/* ---- auto with tune (src/select/tune.c) ---- */

#define TUNE_P 4
#define TUNE_COUNT 8
#define TUNE_SLEEP_NS 3000000L /* per combine call, whatever its size */

/* A sum of doubles that sleeps 3 ms per call: an operator whose cost the
 * model below (cost per element) gets wrong on purpose. */
static void sleepy_sum(const void *in, void *inout, int64_t count, void *ctx)
{
    (void)ctx;
    const double *a = in;
    double *b = inout;
    for (int64_t i = 0; i < count; i++)
        b[i] += a[i];
    struct timespec ts = {0, TUNE_SLEEP_NS};
    nanosleep(&ts, NULL);
}

typedef struct tune_ctx {
    rt_log log;
    trd_op *op;
    trd_coll_opts opts;
    const char *model_first[TUNE_P], *chosen[TUNE_P], *after[TUNE_P];
    double chosen_s[TUNE_P], model_first_s[TUNE_P];
    int timed[TUNE_P], timed_before[TUNE_P];
} tune_ctx;

static int count_timed(const trd_candidate *c, size_t n)
{
    int k = 0;
    for (size_t i = 0; i < n; i++)
        k += !isnan(c[i].measured);
    return k;
}

/* n reduces to rank 0 with auto, each result checked (small integers:
 * exact). */
static trd_status tune_calls(trd_comm *comm, int32_t rank, tune_ctx *x, int n)
{
    double in[TUNE_COUNT], out[TUNE_COUNT];
    trd_status st = TRD_OK;
    for (int k = 0; k < n && st == TRD_OK; k++) {
        for (int i = 0; i < TUNE_COUNT; i++)
            in[i] = rank + i + k;
        st = trd_reduce(comm, in, out, TUNE_COUNT, x->op, 0, &x->opts);
        for (int i = 0; st == TRD_OK && rank == 0 && i < TUNE_COUNT; i++)
            if (out[i] != TUNE_P * (TUNE_P - 1) / 2 + TUNE_P * (double)(i + k))
                rt_failf(&x->log, "tune: rank %d call %d: element %d is %g", (int)rank, k, i,
                         out[i]);
    }
    return st;
}

static trd_status explain_tuned(trd_comm *comm, tune_ctx *x, trd_candidate *c, size_t *n)
{
    trd_coll_opts o = x->opts;
    return trd_comm_explain(comm, TUNE_COUNT, x->op, 0, false, &o, c, n);
}

static trd_status tune_rank(trd_comm *comm, int32_t rank, void *arg)
{
    tune_ctx *x = arg;
    trd_candidate c[64];
    size_t n;
    trd_status st = explain_tuned(comm, x, c, &n);
    if (st != TRD_OK)
        return st;
    x->model_first[rank] = c[0].algo;
    x->timed_before[rank] = count_timed(c, n);
    st = tune_calls(comm, rank, x, x->opts.tune * TRD_TUNE_CALLS);
    if (st == TRD_OK)
        st = explain_tuned(comm, x, c, &n);
    if (st != TRD_OK)
        return st;
    x->chosen[rank] = c[0].algo;
    x->chosen_s[rank] = c[0].measured;
    x->timed[rank] = count_timed(c, n);
    for (size_t i = 0; i < n; i++)
        if (c[i].algo == x->model_first[rank])
            x->model_first_s[rank] = c[i].measured;
    for (size_t i = 1; i < n; i++)
        if (!isnan(c[i].measured) && c[i].measured < c[0].measured)
            rt_failf(&x->log, "tune: rank %d keeps %s (%g s) but %s took %g s", (int)rank,
                     c[0].algo, c[0].measured, c[i].algo, c[i].measured);
    st = tune_calls(comm, rank, x, 3); /* settled: no more timing */
    if (st == TRD_OK)
        st = explain_tuned(comm, x, c, &n);
    x->after[rank] = st == TRD_OK ? c[0].algo : NULL;
    return st;
}

/* The model (cost per element, c = 1000 d) puts pipeline first for a
 * reduce: its segments let the ranks combine at once, about c where a
 * tree takes 2 c on 4 ranks; the operator costs 3 ms per call, so
 * pipeline's many segment combines make it the slowest: tuning must time
 * the model's 3 best and keep another, the same on every rank, and stay
 * with it. */
static void test_tune(void **state)
{
    (void)state;
    tune_ctx x = {0};
    rt_log_init(&x.log);
    TU_CHECK(trd_op_user(&x.op, sleepy_sum, sizeof(double), true, NULL) == TRD_OK, "op: %s",
             trd_errmsg());
    trd_coll_opts_init(&x.opts);
    x.opts.algo = "auto";
    x.opts.d = 1e-3;
    x.opts.c = 1.0;
    x.opts.measure_model = false;
    x.opts.tune = 3;
    rt_run_all_ok(TUNE_P, tune_rank, &x, "tune", 0);
    rt_log_check(&x.log, "tune");
    TU_CHECK(!strcmp(x.model_first[0], "pipeline"), "tune: the model's first is %s, the test "
             "needs pipeline", x.model_first[0]);
    for (int32_t r = 0; r < TUNE_P; r++) {
        TU_CHECK(x.timed_before[r] == 0 && x.timed[r] == 3, "tune: rank %d: %d timed before, "
                 "%d after (want 0 and 3)", (int)r, x.timed_before[r], x.timed[r]);
        TU_CHECK(x.chosen[r] == x.chosen[0] && x.after[r] == x.chosen[0],
                 "tune: rank %d keeps %s then %s, rank 0 %s", (int)r, x.chosen[r],
                 x.after[r] ? x.after[r] : "(failed)", x.chosen[0]);
        TU_CHECK(x.chosen_s[r] == x.chosen_s[0], "tune: the ranks disagree on the times");
    }
    TU_CHECK(strcmp(x.chosen[0], "pipeline") && x.chosen_s[0] < x.model_first_s[0],
             "tune: kept %s (%g s), pipeline took %g s", x.chosen[0], x.chosen_s[0],
             x.model_first_s[0]);
    /* reproducible mode ignores tune: the model's first, untimed */
    trd_comm *comm[1];
    trd_threads_opts topts = rt_topts(RT_TIMEOUT_S);
    rt_comms_create(comm, 1, &topts);
    trd_candidate c[64];
    size_t n;
    x.opts.reproducible = true;
    TU_CHECK(trd_comm_explain(comm[0], TUNE_COUNT, x.op, 0, false, &x.opts, c, &n) == TRD_OK &&
                 count_timed(c, n) == 0,
             "tune, reproducible: %s", trd_errmsg());
    rt_comms_free(comm, 1);
    trd_op_free(x.op);
    rt_log_destroy(&x.log);
}

/* Tuning times distinct programs (comm.c, distinct_plans): where some of
 * the model's best candidates build the same programs (several planners
 * build the binomial tree at p = 4), only the best-ranked of them is
 * timed and the next different ones take the others' places. */
#define DISTINCT_COUNT 1024

typedef struct distinct_ctx {
    trd_op *op;
    trd_coll_opts opts;
} distinct_ctx;

/* Whether algorithms a and b run the same programs for a reduce of
 * DISTINCT_COUNT elements under o (false when either has no plan). */
static bool same_call_plans(trd_comm *comm, const distinct_ctx *x, const char *a, const char *b)
{
    trd_coll_opts oa = x->opts, ob = x->opts;
    trd_comm_key key;
    trd_plan *pa = NULL, *pb = NULL;
    oa.algo = a;
    ob.algo = b;
    oa.tune = ob.tune = 0;
    bool same =
        trd_comm_plan_call(comm, DISTINCT_COUNT, x->op, 0, false, &oa, &key, &pa) == TRD_OK &&
        trd_comm_plan_call(comm, DISTINCT_COUNT, x->op, 0, false, &ob, &key, &pb) == TRD_OK &&
        pa && pb && trd_plan_same_programs(pa, pb);
    trd_plan_free(pa);
    trd_plan_free(pb);
    return same;
}

/* The model's ranking (untuned): the first `want` runnable candidates,
 * *dups of them repeating an earlier one's programs, and in want_set the
 * first `want` runnable ones with distinct programs. */
static void first_candidates(trd_comm *comm, const distinct_ctx *x, int want, int *dups,
                             const char **want_set)
{
    trd_candidate c[64];
    size_t n;
    trd_coll_opts o = x->opts;
    o.tune = 0;
    TU_CHECK(trd_comm_explain(comm, DISTINCT_COUNT, x->op, 0, false, &o, c, &n) == TRD_OK,
             "explain: %s", trd_errmsg());
    const char *first[8];
    int nfirst = 0, nset = 0;
    *dups = 0;
    for (size_t i = 0; i < n && (nfirst < want || nset < want); i++) {
        if (c[i].status != TRD_OK || !isfinite(c[i].predicted))
            continue;
        bool dup = false;
        for (int k = 0; k < nfirst && !dup; k++)
            dup = same_call_plans(comm, x, first[k], c[i].algo);
        if (nfirst < want) {
            *dups += dup;
            first[nfirst++] = c[i].algo;
        }
        bool dup_set = false;
        for (int k = 0; k < nset && !dup_set; k++)
            dup_set = same_call_plans(comm, x, want_set[k], c[i].algo);
        if (!dup_set && nset < want)
            want_set[nset++] = c[i].algo;
    }
}

static trd_status distinct_rank(trd_comm *comm, int32_t rank, void *arg)
{
    distinct_ctx *x = arg;
    double in[DISTINCT_COUNT], out[DISTINCT_COUNT];
    trd_status st = TRD_OK;
    for (int i = 0; i < DISTINCT_COUNT; i++)
        in[i] = rank + i;
    for (int k = 0; k < x->opts.tune * TRD_TUNE_CALLS && st == TRD_OK; k++)
        st = trd_reduce(comm, in, out, DISTINCT_COUNT, x->op, 0, &x->opts);
    return st;
}

/* The tuning rounds (tune.c), driven by hand on one rank with three
 * made-up candidates: each round runs every candidate once, starting one
 * candidate later than the round before, and the first round's times are
 * not compared.  Round 0 is slow for all (a warm-up: fresh pages), except
 * "c", which it makes far the fastest; later rounds make "b" the fastest
 * and "a" faster round after round.  The agreed medians must be those of
 * rounds 1 on, exactly (counting round 0 in place of the last round moves
 * a's median one round back). */
static double round_time(const char *algo, int32_t round)
{
    if (round == 0)
        return !strcmp(algo, "c") ? 1e-6 : 1.0;
    return !strcmp(algo, "b") ? 2e-3 : !strcmp(algo, "a") ? 3e-3 - 1e-4 * round : 5e-3;
}

/* A tuning entry in `table` for three made-up candidates, `tune` of them
 * timed, with or without the other path's candidate. */
static trd_tune_entry *start_entry(trd_tune_table *table, const trd_op *op, int32_t tune,
                                   const trd_candidate *ranked, bool other_path)
{
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.tune = tune;
    trd_call_args key = trd_call_args_of(op, 10, 0, false, &o);
    return trd_tune_start(table, &key, ranked, 3, other_path);
}

/* With other_path, the model's first candidate ("a") is timed once more
 * with its long messages the other way, as a third candidate; when that
 * one is the fastest, later calls run "a" the other way, and explain puts
 * "a" first with that variant's time (the first variant's stays apart). */
static void test_tune_other_path(trd_comm *comm, const trd_op *op, const trd_candidate *ranked)
{
    trd_tune_table table = {0};
    trd_tune_entry *e = start_entry(&table, op, 2, ranked, true);
    TU_CHECK(e->n == 3 && !strcmp(e->algo[2], "a") && e->other[2] && !e->other[0],
             "the other path's candidate: %d candidates", (int)e->n);
    for (int32_t k = 0; k < 3 * TRD_TUNE_CALLS; k++) {
        bool timed = false, other = false;
        const char *algo = trd_tune_next(e, &timed, &other);
        double t = other ? 1e-3 : !strcmp(algo, "a") ? 4e-3 : 3e-3;
        TU_CHECK(trd_tune_record(comm, e, t) == TRD_OK, "%s", trd_errmsg());
    }
    bool timed = true, other = false;
    const char *kept = trd_tune_next(e, &timed, &other);
    TU_CHECK(!strcmp(kept, "a") && other && !timed, "kept %s (other path %d), want a the "
             "other way", kept, (int)other);
    trd_candidate c[3] = {ranked[1], ranked[0], ranked[2]}; /* b, a, c: explain's order */
    trd_tune_explain(e, c, 3);
    TU_CHECK(!strcmp(c[0].algo, "a") && c[0].measured == 1e-3 && !strcmp(c[1].algo, "b") &&
                 c[1].measured == 3e-3 && isnan(c[2].measured),
             "explain: %s %g, %s %g", c[0].algo, c[0].measured, c[1].algo, c[1].measured);
}

static void test_tune_rounds(void **state)
{
    (void)state;
    trd_comm *comm = NULL;
    trd_op *op = NULL;
    trd_threads_opts topts = rt_topts(RT_TIMEOUT_S);
    TU_CHECK(trd_comm_threads_create(&comm, 1, &topts) == TRD_OK &&
                 trd_op_builtin(&op, TRD_OP_SUM, TRD_DOUBLE) == TRD_OK, "%s", trd_errmsg());
    trd_candidate ranked[3] = {{"a", 1, NAN, TRD_OK}, {"b", 2, NAN, TRD_OK},
                               {"c", 3, NAN, TRD_OK}};
    trd_tune_table table = {0};
    trd_tune_entry *e = start_entry(&table, op, 3, ranked, false);
    for (int32_t k = 0; k < 3 * TRD_TUNE_CALLS; k++) {
        bool timed = false, other = true;
        const char *algo = trd_tune_next(e, &timed, &other);
        const char *want = ranked[(k % 3 + k / 3) % 3].algo;
        TU_CHECK(timed && !other && !strcmp(algo, want), "tuning call %d ran %s (timed %d, "
                 "other path %d), want %s", (int)k, algo, (int)timed, (int)other, want);
        TU_CHECK(trd_tune_record(comm, e, round_time(algo, k / 3)) == TRD_OK, "%s",
                 trd_errmsg());
    }
    bool timed = true, other = true;
    const char *kept = trd_tune_next(e, &timed, &other);
    TU_CHECK(!strcmp(kept, "b") && !timed && !other, "tune kept %s, want b", kept);
    double want_a = 3e-3 - 1e-4 * (1 + (TRD_TUNE_CALLS - 1) / 2); /* median of rounds 1 on */
    TU_CHECK(e->measured[0] == want_a && e->measured[1] == 2e-3 && e->measured[2] == 5e-3,
             "medians %g %g %g, want %g 0.002 0.005 (round 0 not counted)", e->measured[0],
             e->measured[1], e->measured[2], want_a);
    test_tune_other_path(comm, op, ranked);
    trd_op_free(op);
    trd_comm_free(comm);
}

static void test_tune_distinct(void **state)
{
    (void)state;
    static const double costs[][3] = {{1e-4, 1e-6, 5e-5}, {1e-5, 1e-5, 1e-5},
                                      {1e-6, 1e-4, 0},    {2e-4, 1e-4, 1e-4}};
    distinct_ctx x = {0};
    trd_comm *comm[TUNE_P];
    trd_threads_opts topts = rt_topts(RT_TIMEOUT_S);
    const char *want_set[TRD_TUNE_MAX];
    int dups = 0;
    TU_CHECK(trd_op_builtin(&x.op, TRD_OP_SUM, TRD_DOUBLE) == TRD_OK, "%s", trd_errmsg());
    rt_comms_create(comm, TUNE_P, &topts);
    for (size_t k = 0; k < sizeof costs / sizeof costs[0] && dups == 0; k++) {
        trd_coll_opts_init(&x.opts);
        x.opts.algo = "auto";
        x.opts.tune = 4;
        x.opts.d = costs[k][0];
        x.opts.c = costs[k][1];
        x.opts.latency = costs[k][2];
        x.opts.measure_model = false;
        first_candidates(comm[0], &x, x.opts.tune, &dups, want_set);
    }
    TU_CHECK(dups > 0, "no cost model puts two candidates with the same programs among the "
             "model's first 4: the test needs one");
    TU_CHECK(same_call_plans(comm[0], &x, "binomial", "binomial") &&
                 !same_call_plans(comm[0], &x, "binomial", "chain") &&
                 !same_call_plans(comm[0], &x, "binomial", "tree-dyn"),
             "trd_plan_same_programs: a plan is itself, a chain is not a binomial tree, a "
             "dynamic algorithm has no plan");
    rt_result res;
    rt_run_on(comm, TUNE_P, distinct_rank, &x, &res);
    for (int32_t r = 0; r < TUNE_P; r++)
        TU_CHECK(res.status[r] == TRD_OK, "rank %d: %s", (int)r, res.msg[r]);
    trd_candidate c[64];
    size_t n;
    TU_CHECK(trd_comm_explain(comm[0], DISTINCT_COUNT, x.op, 0, false, &x.opts, c, &n) ==
                 TRD_OK, "explain: %s", trd_errmsg());
    int timed = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(c[i].measured))
            continue;
        bool listed = false;
        for (int k = 0; k < x.opts.tune; k++)
            listed |= !strcmp(want_set[k], c[i].algo);
        TU_CHECK(listed, "tune: timed %s, not among the first 4 distinct programs",
                 c[i].algo);
        timed++;
    }
    TU_CHECK(timed == x.opts.tune, "tune: %d candidates timed, want %d", timed, x.opts.tune);
    rt_comms_free(comm, TUNE_P);
    trd_op_free(x.op);
}

/* The tuning table: TRD_TUNE_KEYS + 1 argument sets (counts 1..17) tuned
 * in turn on 2 ranks; the first is then forgotten (timed again from
 * scratch: nothing measured), the last remembered, and different
 * arguments never share an entry. */
typedef struct table_ctx {
    rt_log log;
    trd_op *op;
    int timed_first[2], timed_last[2], timed_fresh[2];
} table_ctx;

static int timed_for(trd_comm *comm, const trd_op *op, int64_t count, const trd_coll_opts *o)
{
    trd_candidate c[64];
    size_t n = 0;
    if (trd_comm_explain(comm, count, op, 0, true, o, c, &n) != TRD_OK)
        return -1;
    return count_timed(c, n);
}

static trd_status table_rank(trd_comm *comm, int32_t rank, void *arg)
{
    table_ctx *x = arg;
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = "auto";
    o.d = 1e-6;
    o.c = 1e-8;
    o.measure_model = false;
    o.tune = 2;
    int32_t in[32], out[32];
    for (int i = 0; i < 32; i++)
        in[i] = rank + i;
    trd_status st = TRD_OK;
    for (int64_t count = 1; count <= TRD_TUNE_KEYS + 1 && st == TRD_OK; count++) {
        for (int k = 0; k < 2 * TRD_TUNE_CALLS && st == TRD_OK; k++)
            st = trd_allreduce(comm, in, out, count, x->op, &o);
        for (int64_t i = 0; st == TRD_OK && i < count; i++)
            if (out[i] != 1 + 2 * (int32_t)i)
                rt_failf(&x->log, "tune table: rank %d count %lld: element %lld is %d",
                         (int)rank, (long long)count, (long long)i, (int)out[i]);
        if (count == 1)
            x->timed_fresh[rank] = timed_for(comm, x->op, 2, &o); /* not called yet */
    }
    x->timed_first[rank] = timed_for(comm, x->op, 1, &o);
    x->timed_last[rank] = timed_for(comm, x->op, TRD_TUNE_KEYS + 1, &o);
    return st;
}

static void test_tune_table(void **state)
{
    (void)state;
    table_ctx x = {.op = rt_op_create(RT_I32_SUM)};
    rt_log_init(&x.log);
    rt_run_all_ok(2, table_rank, &x, "tune table", 0);
    for (int32_t r = 0; r < 2; r++) {
        TU_CHECK(x.timed_fresh[r] == 0 && x.timed_first[r] == 0 && x.timed_last[r] == 2,
                 "tune table: rank %d: %d timed for arguments never called, %d for the "
                 "forgotten first, %d for the last (want 0, 0, 2)", (int)r, x.timed_fresh[r],
                 x.timed_first[r], x.timed_last[r]);
    }
    rt_log_check(&x.log, "tune table");
    rt_log_destroy(&x.log);
    trd_op_free(x.op);
}

int main(int argc, char **argv)
{
    rt_filters(argc, argv);
    const struct CMUnitTest tests[] = {
        RT_TIMED(test_tune),
        RT_TIMED(test_tune_table),
        RT_TIMED(test_tune_distinct),
        cmocka_unit_test(test_tune_rounds),
    };
    return cmocka_run_group_tests_name("tune", tests, NULL, NULL);
}
