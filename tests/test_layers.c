/* test_layers.c: the runtime's layers call only downward.
 *
 * Selection ("auto": the measured profile, the model's ranking, the
 * tuner; src/select/) resolves the algorithm above the collective core
 * and talks through the wire's own barrier and agreement, never through a
 * public collective: so it leaves the core's memo and plan cache as the
 * last call left them, and every public call counts once (trd_comm.calls,
 * which also numbers the calls' signatures).  (That selection cannot
 * reach the core's internals at all, the build checks: core_deps.)  And a collective entered while one
 * runs on the same communicator is refused with a clear error, whoever
 * calls it - here an operator. */
#include <string.h>

#include "runtime/comm.h"
#include "runtime_util.h"

#define P 2
#define COUNT 64

static bool same_key(const trd_comm_key *a, const trd_comm_key *b)
{
    return a->algo == b->algo && a->count == b->count && a->elem == b->elem &&
           a->params.allreduce == b->params.allreduce && a->params.d == b->params.d &&
           a->params.c == b->params.c && a->params.segments == b->params.segments;
}

/* Every rank: one named call, then auto's selection on its own - the
 * profile measured and every candidate ranked (trd_comm_explain) - with
 * the core's state compared before and after; then auto calls through
 * the tuning and past it, each counted once. */
static trd_status select_rank(trd_comm *c, int32_t rank, void *arg)
{
    rt_log *log = arg;
    double in[COUNT], out[COUNT];
    trd_op *sum;
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = "recursive-doubling";
    trd_status st = trd_op_builtin(&sum, TRD_OP_SUM, TRD_DOUBLE);
    for (int i = 0; i < COUNT; i++)
        in[i] = rank + i;
    if (st == TRD_OK)
        st = trd_allreduce(c, in, out, COUNT, sum, &o);
    trd_comm_key cached = c->cache.key;
    trd_comm_memo memo = c->memo;
    uint64_t built = c->built;
    int64_t calls = c->calls;
    o.algo = "auto";
    o.tune = 2;
    trd_candidate *cand = malloc(trd_algo_count() * sizeof *cand);
    size_t n_cand = 0;
    if (st == TRD_OK)
        st = cand ? trd_comm_explain(c, COUNT / 2, sum, 0, true, &o, cand, &n_cand) : TRD_ENOMEM;
    free(cand);
    bool cache_kept = c->cache.valid && same_key(&c->cache.key, &cached) && c->built == built;
    bool memo_kept = c->memo.valid && same_key(&c->memo.key, &memo.key) &&
                     c->memo.algo == memo.algo && c->memo.args.count == memo.args.count &&
                     c->memo.sig.hash == memo.sig.hash && c->memo.built == memo.built;
    if (st == TRD_OK && (c->calls != calls || !cache_kept || !memo_kept || n_cand == 0))
        rt_failf(log, "rank %d: selecting auto changed the core's state (calls %lld -> %lld, "
                 "cache %s, memo %s) or ranked nothing", (int)rank, (long long)calls,
                 (long long)c->calls, cache_kept ? "kept" : "changed",
                 memo_kept ? "kept" : "changed");
    int32_t n = 0; /* past the tuning: the candidates' rounds and a decided call */
    for (; st == TRD_OK && n < (TRD_TUNE_MAX + 1) * TRD_TUNE_CALLS + 2; n++)
        st = trd_allreduce(c, in, out, COUNT, sum, &o);
    if (st == TRD_OK && c->calls != calls + n)
        rt_failf(log, "rank %d: %d public calls counted as %lld", (int)rank, (int)n,
                 (long long)(c->calls - calls));
    trd_op_free(sum);
    return st;
}

static void test_selection_leaves_core_alone(void **state)
{
    (void)state;
    rt_run_logged_ok(P, 20, select_rank, "selection");
}

/* An operator that calls a collective on the communicator whose call
 * applies it: the inner call must be refused, the outer one unharmed. */
static _Thread_local trd_comm *reenter_comm;
static _Thread_local trd_status reenter_status;
static _Thread_local char reenter_msg[RT_MSG];

static void reentering_sum(const void *in, void *inout, int64_t count, void *ctx)
{
    (void)ctx;
    const double *a = in;
    double *b = inout, x = 1.0, y;
    for (int64_t i = 0; i < count; i++)
        b[i] += a[i];
    if (reenter_status != TRD_OK)
        return; /* refused once: enough */
    trd_op *sum;
    if (trd_op_builtin(&sum, TRD_OP_SUM, TRD_DOUBLE) != TRD_OK)
        return;
    reenter_status = trd_allreduce(reenter_comm, &x, &y, 1, sum, NULL);
    snprintf(reenter_msg, RT_MSG, "%s", trd_errmsg());
    trd_op_free(sum);
}

static trd_status reenter_rank(trd_comm *c, int32_t rank, void *arg)
{
    rt_log *log = arg;
    double in[COUNT], out[COUNT];
    trd_op *op;
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = "recursive-doubling"; /* every rank combines */
    reenter_comm = c;
    reenter_status = TRD_OK;
    for (int i = 0; i < COUNT; i++)
        in[i] = rank + i;
    trd_status st = trd_op_user(&op, reentering_sum, sizeof(double), true, NULL);
    if (st == TRD_OK)
        st = trd_allreduce(c, in, out, COUNT, op, &o);
    if (reenter_status != TRD_EINVAL || !strstr(reenter_msg, "while a collective call runs"))
        rt_failf(log, "rank %d: the inner call returned %d (%s), not a refusal", (int)rank,
                 (int)reenter_status, reenter_msg);
    for (int i = 0; st == TRD_OK && i < COUNT; i++)
        if (out[i] != (double)(0 + 1 + 2 * i))
            rt_failf(log, "rank %d: element %d is %g, not %d", (int)rank, i, out[i], 1 + 2 * i);
    if (st == TRD_OK) /* and the communicator still works */
        st = trd_allreduce(c, in, out, COUNT, op, &o);
    trd_op_free(op);
    return st;
}

static void test_reentry_refused(void **state)
{
    (void)state;
    rt_run_logged_ok(P, 5, reenter_rank, "re-entry");
}

/* The wire registry: the threads wire from the start, the MPI wire once
 * registered (once: again is a no-op; another row of its name refused);
 * each wire by name, with every field the tools read (what its ranks
 * are), its communicators named after it; an unknown name or an
 * incomplete row refused with the reason. */
static void test_wire_registry(void **state)
{
    (void)state;
    const trd_wire_info *w = NULL;
    assert_int_equal(trd_wire_count(), 1);
    assert_int_equal(trd_wire_find("mpi", &w), TRD_EINVAL);
    assert_int_equal(trd_wire_register(trd_wire_mpi()), TRD_OK);
    assert_int_equal(trd_wire_register(trd_wire_mpi()), TRD_OK);
    assert_int_equal(trd_wire_count(), 2);
    trd_wire_info twin = *trd_wire_mpi();
    assert_int_equal(trd_wire_register(&twin), TRD_EINVAL);
    TU_CHECK(strstr(trd_errmsg(), "'mpi' is registered already"), "%s", trd_errmsg());
    twin.name = "mpi2";
    twin.create = NULL;
    assert_int_equal(trd_wire_register(&twin), TRD_EINVAL);
    assert_int_equal(trd_wire_register(NULL), TRD_EINVAL);
    assert_int_equal(trd_wire_count(), 2);
    assert_null(trd_wire_at(trd_wire_count()));
    for (size_t i = 0; i < trd_wire_count(); i++) {
        assert_int_equal(trd_wire_find(trd_wire_at(i)->name, &w), TRD_OK);
        assert_ptr_equal(w, trd_wire_at(i));
        TU_CHECK(w->summary && *w->summary && w->ranks && *w->ranks && w->create,
                 "wire '%s' lacks a field the tools read", w->name);
    }
    assert_int_equal(trd_wire_find("mpi", &w), TRD_OK);
    assert_true(w->launched && w->p_max == 1);
    assert_string_equal(w->ranks, "MPI processes");
    assert_int_equal(trd_wire_find("tcp", &w), TRD_EINVAL);
    assert_null(w);
    TU_CHECK(strstr(trd_errmsg(), "'tcp'") && strstr(trd_errmsg(), "threads, mpi"), "%s",
             trd_errmsg());
    assert_int_equal(trd_wire_find(NULL, &w), TRD_EINVAL);
    assert_int_equal(trd_wire_find("threads", &w), TRD_OK);
    assert_false(w->launched);
    assert_string_equal(w->ranks, "threads");
    trd_comm *comm[3];
    assert_int_equal(w->create(comm, 3, 5.0), TRD_OK);
    for (int r = 0; r < 3; r++) {
        assert_string_equal(trd_comm_wire(comm[r]), "threads");
        assert_int_equal(trd_comm_rank(comm[r]), r);
    }
    rt_comms_free(comm, 3);
    assert_int_equal(w->create(comm, w->p_max + 1, 5.0), TRD_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_selection_leaves_core_alone),
        cmocka_unit_test(test_reentry_refused),
        cmocka_unit_test(test_wire_registry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
