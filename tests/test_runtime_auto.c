/* test_runtime_auto.c: opts.algo = "auto" over the threads wire: exact
 * results under several models (the checks of runtime_matrix.c), the
 * communicator's memo of the last call's arguments (white box: comm.h),
 * and the model it measures itself (measure_model).
 *
 * usage: test_runtime_auto [PATTERN [SKIP]] (cmocka filters). */
#include "runtime_matrix.h"
#include "plan/registry.h" /* trd_algo_find: the key a call ran */
#include "select/select.h" /* auto's memo, the profiles a communicator keeps */
#include "runtime/op.h"    /* trd_op_serial: the operators of kept profiles */

/* opts.algo = "auto" (treduce.h: "registered name, or auto: the algorithm
 * with the smallest predicted time for this call"): exact results for
 * reduce and allreduce, commutative or not, several models, alone and
 * between other algorithms on the same communicators. */
static void test_auto(void **state)
{
    (void)state;
    const int32_t p = 5;
    const double model[][3] = {{1e-5, 1e-6, 5e-6}, {1e-3, 1e-3, 1e-5}, {1, 1, 0}};
    case_list l = {0};
    for (size_t n = 0; n < 24; n++) {
        trd_coll_opts o;
        trd_coll_opts_init(&o);
        o.d = model[n % 3][0];
        o.c = model[n % 3][1];
        o.latency = model[n % 3][2];
        o.measure_model = false; /* these models, not the communicator's own */
        o.reproducible = n % 5 == 4;
        rt_opid op = (rt_opid)(n % RT_NOPS);
        rt_case k = {.name = "auto", .op = op, .count = n % 4 == 3 ? 4099 : (int64_t)((n + 1) % 8),
                     .root = rt_op_nc(op) ? (n % 2 ? p - 1 : 0) : (int32_t)(n % p),
                     .coll = n % 3 == 1 ? TRD_COLL_ALLREDUCE : TRD_COLL_REDUCE, .mode = (rtm_bufmode)(n % 3), .seed = 5 + n, .opts = o};
        rtm_push(&l, k);
        if (n % 6 == 5) { /* another algorithm in between */
            trd_coll_opts_init(&o);
            rt_case b = {.algo = rt_algo("greedy"), .op = RT_I32_SUM, .count = 100, .root = 1,
                         .mode = RTM_SEPARATE, .seed = 9 + n, .opts = o};
            rtm_push(&l, b);
        }
    }
    rtm_threads_cases(&l, p, NULL, NULL, "auto");
    free(l.v);
}

/* A communicator remembers the last call's checked arguments, buffers
 * aside (comm.h, trd_comm_memo): a call with the same ones takes the
 * remembered key and checks only its buffers; a call that differs in any
 * argument - the algorithm's name changed in the same buffer, another
 * operator, even at the same address - is checked and resolved again. */
typedef struct memo_call {
    int64_t count;
    double c;
    bool allreduce;
} memo_call;

static void add_left(const void *in, void *inout, int64_t count, void *ctx)
{
    (void)ctx;
    for (int64_t i = 0; i < count; i++)
        ((double *)inout)[i] += ((const double *)in)[i];
}

/* A non-commutative operator, at address `was` if malloc gives it back
 * within a few tries (it hands out the chunks freed last first). */
static trd_status op_at(uintptr_t was, trd_op **out)
{
    trd_op *tried[32];
    int n = 0;
    trd_status st = TRD_OK;
    while (st == TRD_OK && n < 32 &&
           (n == 0 || (uintptr_t)tried[n - 1] != was) &&
           (st = trd_op_user(&tried[n], add_left, sizeof(double), false, NULL)) == TRD_OK)
        n++;
    if (n > 0 && (uintptr_t)tried[n - 1] != was)
        rt_note_once("memo: no operator was created at the address of the freed one");
    for (int i = 0; i + 1 < n; i++)
        trd_op_free(tried[i]);
    *out = n > 0 ? tried[n - 1] : NULL;
    return st;
}

/* The auto calls: the memo follows their arguments; a planted key is what
 * the same arguments then run. */
static trd_status memo_auto(trd_comm *comm, int32_t rank, rt_log *log, const trd_op *sum,
                            double *in, double *out)
{
    static const memo_call calls[] = {{8, 1, false}, {8, 1, false}, {16, 1, false},
                                      {16, 2, false}, {16, 2, true}, {16, 2, true}};
    trd_status st = TRD_OK;
    size_t chain;
    trd_algo_find("chain", &chain);
    for (size_t k = 0; k < sizeof calls / sizeof calls[0] && st == TRD_OK; k++) {
        const memo_call *m = &calls[k];
        trd_coll_opts o;
        trd_coll_opts_init(&o);
        o.algo = "auto";
        o.c = m->c;
        o.measure_model = false;
        st = m->allreduce ? trd_allreduce(comm, in, out, m->count, sum, &o)
                          : trd_reduce(comm, in, out, m->count, sum, 0, &o);
        const trd_select_memo *mm = &trd_select_state_of(comm)->memo;
        trd_collective coll = m->allreduce ? TRD_COLL_ALLREDUCE : TRD_COLL_REDUCE;
        if (st == TRD_OK && (!mm->valid || mm->args.count != m->count ||
                             mm->args.opts.c != m->c || mm->args.coll != coll))
            rt_failf(log, "memo: rank %d call %zu: remembered count %lld, c %g, collective %d",
                     (int)rank, k, (long long)mm->args.count, mm->args.opts.c,
                     (int)mm->args.coll);
        if (st == TRD_OK && k == 0) {
            trd_select_memo *planted = &trd_select_state_of(comm)->memo;
            planted->key.algo = chain; /* planted: a reduce as good as any */
            planted->built = 0;        /* ...whose plan the cache does not hold */
            st = trd_reduce(comm, in, out, m->count, sum, 0, &o);
            if (st != TRD_OK || comm->cache.key.algo != chain)
                rt_failf(log, "memo: rank %d: the same arguments did not take the remembered "
                         "key (status %d: %s)", (int)rank, (int)st, trd_errmsg());
            trd_select_state_of(comm)->memo.valid = false; /* the next call resolves again */
        }
    }
    return st;
}

/* What the memo must not hide: a name changed in place, overlapping
 * buffers, another operator (tree-dyn refuses a non-commutative one). */
static trd_status memo_changes(trd_comm *comm, int32_t rank, rt_log *log, trd_op **sum,
                               double *in, double *out)
{
    char name[32] = "binomial";
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = name;
    size_t chain;
    trd_algo_find("chain", &chain);
    trd_status st = trd_reduce(comm, in, out, 8, *sum, 0, &o);
    strcpy(name, "no-such-algo");
    if (st != TRD_OK || trd_reduce(comm, in, out, 8, *sum, 0, &o) != TRD_ENOALGO)
        rt_failf(log, "memo: rank %d: a name changed in place was not checked", (int)rank);
    strcpy(name, "chain");
    st = trd_reduce(comm, in, out, 8, *sum, 0, &o);
    if (st != TRD_OK || comm->cache.key.algo != chain)
        rt_failf(log, "memo: rank %d: chain named in place ran %zu", (int)rank,
                 comm->cache.key.algo);
    st = trd_allreduce(comm, in, out, 8, *sum, &o);
    if (st != TRD_OK || trd_allreduce(comm, in, in + 1, 8, *sum, &o) != TRD_EINVAL ||
        !strstr(trd_errmsg(), "overlap"))
        rt_failf(log, "memo: rank %d: overlapping buffers passed on a remembered call",
                 (int)rank);
    strcpy(name, "tree-dyn");
    st = trd_reduce(comm, in, out, 8, *sum, 0, &o);
    uintptr_t was = (uintptr_t)*sum;
    trd_op_free(*sum);
    *sum = NULL;
    if (st == TRD_OK)
        st = op_at(was, sum);
    if (st != TRD_OK || trd_reduce(comm, in, out, 8, *sum, 0, &o) != TRD_EUNSUPPORTED)
        rt_failf(log, "memo: rank %d: another operator (%s address) took the remembered key",
                 (int)rank, (uintptr_t)*sum == was ? "same" : "other");
    return st;
}

/* A remembered call after trd_comm_run_plan, which borrows the cache and
 * leaves it empty: the call must build its plan again, and sum right. */
static trd_status memo_after_run_plan(trd_comm *comm, int32_t rank, rt_log *log,
                                      const trd_op *sum, double *in, double *out)
{
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    trd_params p;
    trd_params_init(&p);
    p.n = 2;
    trd_plan *plan = NULL;
    double buf[8];
    for (int i = 0; i < 8; i++)
        buf[i] = in[i];
    trd_status st = trd_reduce(comm, in, out, 8, sum, 0, &o);
    if (st == TRD_OK)
        st = trd_plan_create(&plan, "binomial", &p);
    if (st == TRD_OK)
        st = trd_comm_run_plan(comm, plan, buf, 8, sum);
    if (st == TRD_OK)
        st = trd_reduce(comm, in, out, 8, sum, 0, &o);
    for (int i = 0; st == TRD_OK && rank == 0 && i < 8; i++)
        if (out[i] != 2.0 * i + 1)
            rt_failf(log, "memo: after trd_comm_run_plan, element %d = %g, not %d", i, out[i],
                     2 * i + 1);
    trd_plan_free(plan);
    return st;
}

#define MEMO_P 2 /* ranks of test_auto_memo */

/* The same arguments with other buffers: a call that takes the memo and
 * the plan of the last one must still write its own result buffer, read
 * its own input, and leave the last call's buffers alone. */
static trd_status memo_buffers(trd_comm *comm, int32_t rank, rt_log *log, const trd_op *sum)
{
    double in[2][8], out[2][8];
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    trd_status st = TRD_OK;
    for (int call = 0; call < 6 && st == TRD_OK; call++) {
        int b = call % 2; /* buffers A, B, A, ... with the same arguments */
        bool all = call >= 3;
        for (int i = 0; i < 8; i++) {
            in[b][i] = rank + i + 100.0 * call;
            out[b][i] = out[1 - b][i] = -1.0;
        }
        st = all ? trd_allreduce(comm, in[b], out[b], 8, sum, &o)
                 : trd_reduce(comm, in[b], out[b], 8, sum, 0, &o);
        bool gets = all || rank == 0;
        for (int i = 0; st == TRD_OK && i < 8; i++) {
            double want = gets ? MEMO_P * (MEMO_P - 1) / 2 + MEMO_P * (i + 100.0 * call) : -1.0;
            if (out[b][i] != want || out[1 - b][i] != -1.0)
                rt_failf(log, "memo: rank %d call %d: element %d is %g in the buffer given "
                         "(want %g), %g in the other", (int)rank, call, i, out[b][i], want,
                         out[1 - b][i]);
        }
    }
    return st;
}

static trd_status memo_rank(trd_comm *comm, int32_t rank, void *arg)
{
    rt_log *log = arg;
    double in[17], out[17];
    trd_op *sum;
    trd_status st = trd_op_builtin(&sum, TRD_OP_SUM, TRD_DOUBLE);
    for (int i = 0; i < 17; i++)
        in[i] = rank + i;
    if (st == TRD_OK)
        st = memo_auto(comm, rank, log, sum, in, out);
    if (st == TRD_OK)
        st = memo_after_run_plan(comm, rank, log, sum, in, out);
    if (st == TRD_OK)
        st = memo_changes(comm, rank, log, &sum, in, out);
    if (st == TRD_OK)
        st = memo_buffers(comm, rank, log, sum);
    trd_op_free(sum);
    return st;
}

static void test_auto_memo(void **state)
{
    (void)state;
    rt_run_logged_ok(MEMO_P, 20, memo_rank, "memo");
}

/* trd_coll_opts.measure_model (trd_coll_opts_init's default): auto ranks
 * under the communicator's own profile of the operator, measured by the
 * first call that needs it - not by a refused call, nor a reproducible
 * one - the same on every rank, kept for TRD_COMM_PROFILES operators,
 * and exactly the model trd_profile_apply gives from it. */
#define MEASURED_P 3
#define MEASURED_OPS (TRD_COMM_PROFILES + 1)

typedef struct measured_ctx {
    rt_log log;
    trd_op *op[MEASURED_OPS];
    trd_profile kept[MEASURED_P]; /* op[0]'s, as each rank keeps it */
} measured_ctx;

/* The slot of op's profile, or -1; *n the operators kept. */
static int profile_slot(const trd_comm *comm, const trd_op *op, int *n)
{
    int at = -1;
    *n = 0;
    for (int i = 0; i < TRD_COMM_PROFILES; i++) {
        const trd_comm_profiles *t = &trd_select_state_of((trd_comm *)comm)->profiles;
        *n += t->op_serial[i] != 0u;
        if (t->op_serial[i] == trd_op_serial(op))
            at = i;
    }
    return at;
}

/* What a refused or a reproducible call must leave: no profile. */
static void check_unmeasured(trd_comm *comm, measured_ctx *x, int32_t rank, const char *after)
{
    int n;
    profile_slot(comm, x->op[0], &n);
    if (n != 0)
        rt_failf(&x->log, "measured: rank %d: %d profiles after %s", (int)rank, n, after);
}

/* The untouched calls first: a reproducible auto call and two refused ones. */
static trd_status measured_untouched(trd_comm *comm, int32_t rank, measured_ctx *x,
                                     const double *in, double *out)
{
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = "auto";
    o.reproducible = true;
    trd_status st = trd_allreduce(comm, in, out, 4, x->op[0], &o);
    check_unmeasured(comm, x, rank, "a reproducible call");
    o.reproducible = false;
    trd_candidate c[64];
    size_t n;
    if (st == TRD_OK && (trd_reduce(comm, in, out, 4, x->op[0], MEASURED_P, &o) != TRD_EINVAL ||
                         trd_comm_explain(comm, 4, x->op[0], -1, false, &o, c, &n) != TRD_EINVAL))
        rt_failf(&x->log, "measured: rank %d: a bad root was not refused", (int)rank);
    check_unmeasured(comm, x, rank, "refused calls");
    return st;
}

/* auto's ranking under the kept profile equals explain's under the model
 * trd_profile_apply makes of it: the same first candidate and time. */
static void check_applied(trd_comm *comm, int32_t rank, measured_ctx *x, const trd_profile *p)
{
    trd_candidate measured[64], given[64];
    size_t n;
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = "auto";
    trd_status st = trd_comm_explain(comm, 4, x->op[0], 0, true, &o, measured, &n);
    if (st == TRD_OK && (st = trd_profile_apply(p, 4, sizeof(double), &o)) == TRD_OK &&
        o.measure_model)
        rt_failf(&x->log, "measured: trd_profile_apply left measure_model set");
    if (st == TRD_OK)
        st = trd_comm_explain(comm, 4, x->op[0], 0, true, &o, given, &n);
    const trd_comm_key *key = &trd_select_state_of(comm)->memo.key; /* what auto ran */
    const char *ran = trd_algo_entry(key->algo)->name;
    if (st == TRD_OK && (key->params.d != o.d || key->params.c != o.c ||
                         key->params.latency != o.latency))
        rt_failf(&x->log, "measured: rank %d: auto's plan has d %g, c %g, latency %g; the "
                 "profile gives %g, %g, %g", (int)rank, key->params.d, key->params.c,
                 key->params.latency, o.d, o.c, o.latency);
    if (st != TRD_OK || strcmp(measured[0].algo, given[0].algo) ||
        memcmp(&measured[0].predicted, &given[0].predicted, sizeof(double)) ||
        strcmp(ran, measured[0].algo))
        rt_failf(&x->log, "measured: rank %d: auto ran %s; ranked first %s (%g s), under the "
                 "applied profile %s (%g s)", (int)rank, ran, measured[0].algo,
                 measured[0].predicted, given[0].algo, given[0].predicted);
}

static trd_status measured_rank(trd_comm *comm, int32_t rank, void *arg)
{
    measured_ctx *x = arg;
    double in[4], out[4];
    for (int i = 0; i < 4; i++)
        in[i] = rank + i;
    trd_status st = measured_untouched(comm, rank, x, in, out);
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = "auto";
    if (st == TRD_OK)
        st = trd_allreduce(comm, in, out, 4, x->op[0], &o);
    for (int i = 0; st == TRD_OK && i < 4; i++)
        if (out[i] != MEASURED_P * (MEASURED_P - 1) / 2 + MEASURED_P * i)
            rt_failf(&x->log, "measured: rank %d: element %d is %g", (int)rank, i, out[i]);
    int n, at = profile_slot(comm, x->op[0], &n);
    if (st == TRD_OK && (at < 0 || n != 1))
        rt_failf(&x->log, "measured: rank %d: %d profiles, op 0's at %d", (int)rank, n, at);
    if (st != TRD_OK || at < 0)
        return st;
    x->kept[rank] = trd_select_state_of(comm)->profiles.profile[at];
    check_applied(comm, rank, x, &x->kept[rank]);
    for (int k = 1; k < MEASURED_OPS && st == TRD_OK; k++)
        st = trd_allreduce(comm, in, out, 2, x->op[k], &o);
    at = profile_slot(comm, x->op[0], &n);
    if (st == TRD_OK && (at >= 0 || n != TRD_COMM_PROFILES))
        rt_failf(&x->log, "measured: rank %d: after %d operators, %d profiles and op 0's at %d "
                 "(want %d, forgotten)", (int)rank, MEASURED_OPS, n, at, TRD_COMM_PROFILES);
    return st;
}

static void test_measured_model(void **state)
{
    (void)state;
    measured_ctx x = {0};
    rt_log_init(&x.log);
    for (int k = 0; k < MEASURED_OPS; k++)
        x.op[k] = rt_op_create(RT_F64_SUM);
    rt_run_all_ok(MEASURED_P, measured_rank, &x, "measured", 0);
    rt_log_check(&x.log, "measured");
    const trd_profile *p = &x.kept[0];
    TU_CHECK(p->latency > 0 && p->per_byte > 0 && isfinite(p->latency) &&
                 isfinite(p->per_byte) && isfinite(p->per_element) && p->parallelism > 0,
             "measured: latency %g, per byte %g, per element %g, parallelism %g", p->latency,
             p->per_byte, p->per_element, p->parallelism);
    for (int32_t r = 1; r < MEASURED_P; r++)
        TU_CHECK(!memcmp(&x.kept[r], p, sizeof *p), "measured: rank %d keeps another profile",
                 (int)r);
    rt_log_destroy(&x.log);
    for (int k = 0; k < MEASURED_OPS; k++)
        trd_op_free(x.op[k]);
}

int main(int argc, char **argv)
{
    rt_filters(argc, argv);
    const struct CMUnitTest tests[] = {
        RT_TIMED(test_auto),
        RT_TIMED(test_auto_memo),
        RT_TIMED(test_measured_model),
    };
    return cmocka_run_group_tests_name("runtime_auto", tests, NULL, NULL);
}
