/* test_runtime_calibrate.c: calibration and prediction over the threads
 * wire: trd_comm_calibrate (the same model on every rank) and
 * trd_comm_predict for every algorithm, the parallelism k of the
 * prediction and auto's ties, real calls of every algorithm under a
 * calibrated model, and the shared-memory rings' queries on communicators
 * without rings.
 *
 * usage: test_runtime_calibrate [PATTERN [SKIP]] (cmocka filters). */
#include "select/calibrate.h" /* trd_calibrate_saving */
#include "runtime_util.h"

/* ---- Calibrate and predict. ---- */

typedef struct calib_ctx {
    trd_op *op;
    int64_t count;
    trd_coll_opts got[RT_MAX_P];
} calib_ctx;

static trd_status calibrate_rank(trd_comm *comm, int32_t rank, void *arg)
{
    calib_ctx *x = arg;
    trd_coll_opts_init(&x->got[rank]);
    x->got[rank].algo = "greedy";
    return trd_comm_calibrate(comm, x->op, x->count, &x->got[rank]);
}

/* Every rank's calibrated model: finite, latency <= d, parallelism 1..p,
 * bitwise the same on every rank, opts.algo left alone. */
static void check_calibrated(const calib_ctx *x, const rt_result *res, int32_t p)
{
    for (int32_t r = 0; r < p; r++) {
        TU_CHECK(res->status[r] == TRD_OK, "calibrate p=%d rank %d: %s", (int)p, (int)r,
                 res->msg[r]);
        const trd_coll_opts *o = &x->got[r], *o0 = &x->got[0];
        TU_CHECK(isfinite(o->d) && isfinite(o->c) && isfinite(o->latency) && o->d >= 0 &&
                     o->c >= 0 && o->latency >= 0 && o->latency <= o->d,
                 "calibrate p=%d rank %d: d=%g c=%g latency=%g", (int)p, (int)r, o->d, o->c,
                 o->latency);
        TU_CHECK(memcmp(&o->d, &o0->d, sizeof o->d) == 0 &&
                     memcmp(&o->c, &o0->c, sizeof o->c) == 0 &&
                     memcmp(&o->latency, &o0->latency, sizeof o->latency) == 0,
                 "calibrate p=%d: rank %d has d=%.17g c=%.17g latency=%.17g, rank 0 "
                 "d=%.17g c=%.17g latency=%.17g",
                 (int)p, (int)r, o->d, o->c, o->latency, o0->d, o0->c, o0->latency);
        TU_CHECK(strcmp(o->algo, "greedy") == 0, "calibrate changed opts.algo");
        TU_CHECK(o->parallelism >= 1 && o->parallelism <= p &&
                     memcmp(&o->parallelism, &o0->parallelism, sizeof(double)) == 0,
                 "calibrate p=%d rank %d: parallelism %g (rank 0: %g), need 1..p on all",
                 (int)p, (int)r, o->parallelism, o0->parallelism);
        TU_CHECK(o->recv_combine_saving >= 0 && o->recv_combine_saving <= 1 &&
                     memcmp(&o->recv_combine_saving, &o0->recv_combine_saving,
                            sizeof(double)) == 0,
                 "calibrate p=%d rank %d: recv_combine_saving %g (rank 0: %g), need 0..1 on "
                 "all", (int)p, (int)r, o->recv_combine_saving, o0->recv_combine_saving);
    }
    if (p >= 2)
        TU_CHECK(x->got[0].d > 0, "calibrate p=%d: d = %g (a transfer takes time)", (int)p,
                 x->got[0].d);
}

/* Algorithm a's predictions under the calibrated model o (local: on rank
 * 0's and the last rank's handles), and the refusals of its kind. */
static void check_predictions(trd_comm **comm, int32_t p, const trd_op *op, size_t a,
                              const trd_coll_opts *o)
{
    for (trd_collective coll = TRD_COLL_REDUCE; coll <= TRD_COLL_EXSCAN; coll++) {
        const char *what = trd_collective_name(coll);
        for (int64_t count = 1; count <= 10000; count *= 100) {
            double t = 1234.5;
            trd_comm *c = comm[coll == TRD_COLL_REDUCE ? 0 : p - 1];
            /* a reduce-scatter's count is its whole input: p parts */
            int64_t n = coll == TRD_COLL_REDUCE_SCATTER ? count * p : count;
            trd_status st = trd_comm_predict(c, n, op, p - 1, coll, o, &t);
            if (!trd_algo_runs(a, coll)) { /* its row's kind refuses it */
                TU_CHECK(st == TRD_EUNSUPPORTED, "predict %s refused %s: status %d", o->algo,
                         what, (int)st);
                continue;
            }
            if (st == TRD_EUNSUPPORTED && rt_plan_refuses_coll(a, p, false, coll))
                continue; /* star, star-reduce-bcast: p is no n! */
            TU_CHECK(st == TRD_OK, "predict %s p=%d count=%lld %s: %s", o->algo, (int)p,
                     (long long)count, what, trd_errmsg());
            TU_CHECK(isfinite(t) && (p == 1 ? t >= 0 : t > 0),
                     "predict %s p=%d count=%lld %s: %g", o->algo, (int)p, (long long)count,
                     what, t);
        }
    }
}

static void test_calibrate_predict(void **state)
{
    (void)state;
    const int32_t sp[] = {1, 2, 4, 7};
    calib_ctx x = {.op = rt_op_create(RT_F64_SUM), .count = 1000};
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++) {
        int32_t p = sp[i];
        trd_comm *comm[RT_MAX_P];
        trd_threads_opts topts = rt_topts(RT_TIMEOUT_S);
        rt_comms_create(comm, p, &topts);
        rt_result res;
        rt_run_on(comm, p, calibrate_rank, &x, &res);
        check_calibrated(&x, &res, p);
        for (size_t a = 0; a < trd_algo_count(); a++) {
            trd_coll_opts o = x.got[0];
            o.algo = trd_algo_name(a);
            if (!trd_algo_uses_costs(a)) /* else costs, not a calibrated latency: test_hetero */
                check_predictions(comm, p, x.op, a, &o);
        }
        rt_comms_free(comm, p);
    }
    trd_op_free(x.op);
}

/* trd_coll_opts.parallelism k (predict.c): with the plan's work W
 * (trd_plan_work, checked on closed forms) and makespan T on n ranks, the
 * prediction is T + (W - T)(n/k - 1)/(n - 1) when W > T: T itself for
 * k = 0 or k >= n, W for k = 1; and auto then stops preferring a pipeline
 * whose n - 1 stages the platform cannot run at once. */
static double predict_k(trd_comm *comm, const char *algo, int64_t count, const trd_op *op,
                        trd_coll_opts o, double k)
{
    double t = NAN;
    o.algo = algo;
    o.parallelism = k;
    TU_CHECK(trd_comm_predict(comm, count, op, 0, false, &o, &t) == TRD_OK,
             "predict %s k=%g: %s", algo, k, trd_errmsg());
    return t;
}

/* trd_calibrate_saving on hand values: a 100 us copy, latency 2 us, a
 * combine of 30 us; the receive-and-combine's time says how much of the
 * copy it paid. */
static void check_saving(void)
{
    static const struct { double rc, want; } cases[] = {
        {132e-6, 0.0},  /* latency + copy + combine: nothing saved */
        {82e-6, 0.5},   /* half the copy */
        {32e-6, 1.0},   /* the combine alone */
        {20e-6, 1.0},   /* faster than that (noise): all, not more */
        {500e-6, 0.0},  /* slower than copying (noise): nothing, not less */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double got = trd_calibrate_saving(cases[i].rc, 2e-6, 100e-6, 30e-6);
        TU_CHECK(fabs(got - cases[i].want) < 1e-12, "saving of %g s: %.17g, want %g",
                 cases[i].rc, got, cases[i].want);
    }
    TU_CHECK(trd_calibrate_saving(1e-3, 1e-6, 0.0, 1e-6) == 0.0, "no copy: nothing to save");
}

/* trd_calibrate_leg keeps the median of a message's legs where ranks
 * outnumber cores and the lower quartile where every rank has one. */
static void check_leg(void)
{
    const double legs[2] = {1e-6, 5e-6}; /* quartile, median */
    TU_CHECK(trd_calibrate_leg(legs, 2.0, 2) == legs[0] && trd_calibrate_leg(legs, 8.0, 8) == legs[0],
             "a core per rank: the quartile, not %g", trd_calibrate_leg(legs, 2.0, 2));
    TU_CHECK(trd_calibrate_leg(legs, 1.5, 2) == legs[1] && trd_calibrate_leg(legs, 2.0, 8) == legs[1],
             "ranks outnumber cores: the median, not %g", trd_calibrate_leg(legs, 1.5, 2));
}

/* trd_plan_work on closed forms. */
static void check_plan_work(void)
{
    /* work of a segmented pipeline: n - 1 links, m segments each, every
     * segment sent and combined once per link */
    trd_params pp;
    trd_params_init(&pp);
    pp.n = 5, pp.d = 2, pp.c = 1, pp.latency = 0.5, pp.flight = 0.2, pp.combine_fixed = 0.25;
    pp.segments = 4;
    trd_plan *plan;
    TU_CHECK(trd_plan_create(&plan, "pipeline", &pp) == TRD_OK, "pipeline: %s", trd_errmsg());
    /* a send: latency - flight + copy + the flight up to the copy's length */
    double want = 4 * 4 * ((0.5 - 0.2) + (2 - 0.5) / 4 + 0.2 + 0.25 + (1 - 0.25) / 4);
    TU_CHECK(fabs(trd_plan_work(plan) - want) < 1e-12, "pipeline work %.17g, want %.17g",
             trd_plan_work(plan), want);
    trd_plan_free(plan);
    /* small messages: of the flight, only the copy's length counts */
    trd_params_init(&pp);
    pp.n = 4, pp.d = 1.1, pp.c = 0.5, pp.latency = 1, pp.flight = 0.8;
    TU_CHECK(trd_plan_create(&plan, "flat", &pp) == TRD_OK, "flat: %s", trd_errmsg());
    want = 3 * ((1 - 0.8) + 0.1 + 0.1 + 0.5);
    TU_CHECK(fabs(trd_plan_work(plan) - want) < 1e-12, "flat work %.17g, want %.17g",
             trd_plan_work(plan), want);
    trd_plan_free(plan);
}

/* Ties (to the picosecond) go to static plans before dynamic ones. */
static void check_ties(trd_comm *comm, const trd_op *op)
{
    trd_candidate cand[64];
    size_t n = 0;
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.d = 1e-3, o.c = 1e-3;
    o.measure_model = false;
    TU_CHECK(trd_comm_explain(comm, 1, op, 0, false, &o, cand, &n) == TRD_OK, "explain: %s",
             trd_errmsg());
    size_t ties = 0;
    for (size_t i = 1; i < n && cand[i].status == TRD_OK; i++) {
        size_t ia = 0, ib = 0;
        if (nearbyint(cand[i - 1].predicted * 1e12) != nearbyint(cand[i].predicted * 1e12))
            continue;
        TU_CHECK(trd_algo_find(cand[i - 1].algo, &ia) == TRD_OK &&
                     trd_algo_find(cand[i].algo, &ib) == TRD_OK, "find");
        bool da = trd_algo_kind_of(ia) == TRD_KIND_DYNAMIC;
        bool db = trd_algo_kind_of(ib) == TRD_KIND_DYNAMIC;
        ties += da != db;
        TU_CHECK(!da || db, "tie: dynamic %s before static %s", cand[i - 1].algo, cand[i].algo);
    }
    TU_CHECK(ties > 0, "no tie between a static and a dynamic algorithm: the check is vacuous");
}

static void test_parallelism_predict(void **state)
{
    (void)state;
    check_plan_work();
    check_saving();
    check_leg();
    const int32_t p = 8;
    trd_comm *comm[RT_MAX_P];
    trd_threads_opts topts = rt_topts(RT_TIMEOUT_S);
    rt_comms_create(comm, p, &topts);
    trd_op *op = rt_op_create(RT_F64_SUM);
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.d = 1e-3, o.c = 1e-3, o.latency = 1e-6, o.flight = 0.4e-6;
    o.measure_model = false;
    const int64_t small = 1000; /* one segment: binomial's W = 7 (d + c) */
    double t = predict_k(comm[0], "binomial", small, op, o, 0.0);
    double w = 7 * (o.d + o.c);
    TU_CHECK(predict_k(comm[0], "binomial", small, op, o, 8.0) == t &&
                 predict_k(comm[0], "binomial", small, op, o, 100.0) == t,
             "k >= n must leave the makespan %g", t);
    TU_CHECK(fabs(t - 3 * (o.d + o.c)) < 1e-9, "binomial makespan %g", t);
    double k1 = predict_k(comm[0], "binomial", small, op, o, 1.0);
    TU_CHECK(fabs(k1 - w) < 1e-12, "k = 1: %.17g, want the work %.17g", k1, w);
    double k2 = predict_k(comm[0], "binomial", small, op, o, 2.0);
    TU_CHECK(fabs(k2 - (t + (w - t) * 3.0 / 7.0)) < 1e-12, "k = 2: %.17g", k2);
    /* auto: a pipeline wins with a core per rank, not with one for all */
    const int64_t big = 100000;
    trd_candidate cand[64];
    size_t n = 0;
    for (int pass = 0; pass < 2; pass++) {
        o.parallelism = pass ? 1.0 : 0.0;
        TU_CHECK(trd_comm_explain(comm[0], big, op, 0, false, &o, cand, &n) == TRD_OK,
                 "explain: %s", trd_errmsg());
        bool piped = strstr(cand[0].algo, "pipeline") != NULL;
        TU_CHECK(piped == !pass, "k = %g: auto's first choice is %s", o.parallelism,
                 cand[0].algo);
    }
    check_ties(comm[0], op);
    o.algo = "binomial";
    o.parallelism = NAN;
    TU_CHECK(trd_comm_predict(comm[0], small, op, 0, false, &o, &t) == TRD_EINVAL &&
                 strstr(trd_errmsg(), "parallelism"),
             "parallelism NaN: %s", trd_errmsg());
    trd_op_free(op);
    rt_comms_free(comm, p);
}

/* A message's legs under random delays of up to 300 us before every
 * send (trd_calibrate_one_way, on rank 0): their lower quartile is below
 * their median, and both are within the delays' range. */
static trd_status legs_rank(trd_comm *comm, int32_t rank, void *arg)
{
    double *legs = arg;
    double mine[2];
    trd_status st = trd_calibrate_one_way(comm, 0, mine);
    if (rank == 0)
        memcpy(legs, mine, sizeof mine);
    return st;
}

/* ---- A rank that stalls while the others measure. ---- */

/* Rank 1 passes the profile's first barrier, then stalls for 3 s; rank 0
 * measures.  Its waits then end at the profile's deadline (0.3 s here,
 * a test hook), not at the communicator's (10 s). */
static trd_status stalled_profile_rank(trd_comm *comm, int32_t rank, void *arg)
{
    trd_op *op = arg;
    if (rank == 1) {
        trd_status st = trd_comm_barrier(comm);
        struct timespec t = {3, 0};
        nanosleep(&t, NULL);
        return st;
    }
    trd_profile pr;
    return trd_comm_profile(comm, op, &pr);
}

static void test_profile_deadline(void **state)
{
    (void)state;
    trd_op *op = rt_op_create(RT_F64_SUM);
    trd_threads_opts topts = rt_topts(10.0);
    trd_test_hooks hooks;
    trd_test_hooks_init(&hooks);
    hooks.profile_timeout_s = 0.3;
    rt_result res;
    rt_run_hooked(2, &topts, &hooks, stalled_profile_rank, op, &res);
    TU_CHECK(res.status[0] == TRD_ETIMEDOUT && res.seconds[0] < 2.5,
             "profile beside a stalled rank: status %d after %.2f s (%s); want a timeout "
             "within the profile's 0.3 s deadline, long before the communicator's 10 s",
             (int)res.status[0], res.seconds[0], res.msg[0]);
    trd_op_free(op);
}

static void test_legs(void **state)
{
    (void)state;
    double legs[2] = {NAN, NAN};
    rt_run_all_ok(2, legs_rank, legs, "legs", 300.0);
    TU_CHECK(legs[0] > 0 && legs[0] < legs[1] && legs[1] < 1e-3,
             "legs under delays of up to 300 us: quartile %g s, median %g s", legs[0], legs[1]);
}

/* The calibrated model drives real calls of every algorithm (pipelines
 * then choose their segments from measured numbers). */
typedef struct calib_run_ctx {
    trd_op *op;
    rt_log log;
    atomic_int verified; /* results checked, over all ranks */
} calib_run_ctx;

static trd_status calibrated_rank(trd_comm *comm, int32_t rank, void *arg)
{
    calib_run_ctx *x = arg;
    int32_t p = trd_comm_size(comm);
    const int64_t count = 2000;
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    trd_status st = trd_comm_calibrate(comm, x->op, count, &o);
    if (st != TRD_OK)
        return st;
    int32_t *in = malloc(count * sizeof *in), *out = malloc(count * sizeof *out),
            *want = malloc(count * sizeof *want);
    for (size_t a = 0; st == TRD_OK && a < trd_algo_count(); a++) {
        o.algo = trd_algo_name(a);
        bool all = trd_algo_runs(a, TRD_COLL_ALLREDUCE) && !trd_algo_runs(a, TRD_COLL_REDUCE);
        if (!trd_algo_runs(a, TRD_COLL_REDUCE) && !all)
            continue; /* the other collectives: their predictions above, runs elsewhere */
        if ((all && rt_plan_refuses(a, p, false)) || trd_algo_uses_costs(a))
            continue; /* star, star-reduce-bcast: p is no n!; hetero-*: need costs */
        rt_fill(RT_I32_SUM, in, count, rank, a);
        memset(out, RT_CANARY, count * sizeof *out);
        st = all ? trd_allreduce(comm, in, out, count, x->op, &o)
                 : trd_reduce(comm, in, out, count, x->op, p / 2, &o);
        if (rt_not_yet(st, trd_errmsg())) {
            st = TRD_OK;
            continue;
        }
        if (st == TRD_OK && (all || rank == p / 2)) {
            rt_expected(RT_I32_SUM, want, count, p, a);
            if (memcmp(out, want, count * sizeof *out) != 0)
                rt_failf(&x->log, "calibrated %s p=%d rank %d: wrong result", o.algo, (int)p,
                         (int)rank);
            atomic_fetch_add(&x->verified, 1);
        }
    }
    free(in);
    free(out);
    free(want);
    return st;
}

static void test_calibrated_runs(void **state)
{
    (void)state;
    calib_run_ctx x = {.op = rt_op_create(RT_I32_SUM)};
    rt_log_init(&x.log);
    rt_run_all_ok(5, calibrated_rank, &x, "calibrated runs", 0);
    rt_log_check(&x.log, "calibrated runs");
    int want = 0; /* one result per static reduce (root 2), five per allreduce */
    for (size_t a = 0; a < trd_algo_count(); a++)
        want += trd_algo_uses_costs(a)               ? 0
                : trd_algo_runs(a, TRD_COLL_REDUCE)     ? 1
                : !trd_algo_runs(a, TRD_COLL_ALLREDUCE) ? 0
                : rt_plan_refuses(a, 5, false)         ? 0
                                                       : 5;
    TU_CHECK(atomic_load(&x.verified) == want, "calibrated runs: %d results checked, expected %d",
             atomic_load(&x.verified), want);
    rt_log_destroy(&x.log);
    trd_op_free(x.op);
}

/* The rings' queries on communicators without rings: threads, and NULL.
 * Nothing was probed, and the times given back are zero, not left as
 * they were. */
static void test_shm_queries(void **state)
{
    (void)state;
    trd_comm *comm = NULL;
    trd_threads_opts topts = rt_topts(RT_TIMEOUT_S);
    TU_CHECK(trd_comm_threads_create(&comm, 1, &topts) == TRD_OK, "%s", trd_errmsg());
    double rings = -1, mpi = -1;
    TU_CHECK(trd_comm_shm_max(comm) == 0 && !trd_comm_shm_probe(comm, &rings, &mpi) &&
                 rings == 0 && mpi == 0, "threads: limit %zu, probe %g %g",
             trd_comm_shm_max(comm), rings, mpi);
    rings = mpi = -1;
    TU_CHECK(trd_comm_shm_max(NULL) == 0 && !trd_comm_shm_probe(NULL, &rings, &mpi) &&
                 rings == 0 && mpi == 0 && !trd_comm_shm_probe(comm, NULL, NULL),
             "NULL: probe %g %g", rings, mpi);
    trd_comm_free(comm);
}

int main(int argc, char **argv)
{
    rt_filters(argc, argv);
    const struct CMUnitTest tests[] = {
        RT_TIMED(test_calibrate_predict),
        cmocka_unit_test(test_parallelism_predict),
        cmocka_unit_test(test_legs),
        cmocka_unit_test(test_profile_deadline),
        RT_TIMED(test_calibrated_runs),
        cmocka_unit_test(test_shm_queries),
    };
    return cmocka_run_group_tests_name("runtime_calibrate", tests, NULL, NULL);
}
