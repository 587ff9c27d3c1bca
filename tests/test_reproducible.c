/* test_reproducible.c: reproducible mode (trd_coll_opts.reproducible).
 *
 * Inputs are doubles with no exact sum (so a different combine order
 * gives different bits); sends are delayed at random so arrival orders
 * vary from run to run.  For every static algorithm (those for
 * heterogeneous costs with random ones) whose registry row says it is
 * order-deterministic (trd_algo_reproducible), reduce and allreduce (the
 * reduce-scatters' and scans' rows: test_collectives_runtime.c): the
 * result is bitwise the same on every run and, for an allreduce, on every
 * rank.  Every other row (the dynamic ones; star, where every rank adds
 * the partial sums in its own order) is refused in this mode, and `auto`
 * picks an algorithm that can.  The expected bits are the first run's:
 * the point is that nothing changes, not what the value is (the value
 * itself is checked against a sequential fold to within rounding). */
#include "testutil.h"
#include "treduce_internal/test_hooks.h" /* random send delays */

#define P 6
#define COUNT 257
#define RUNS 8

typedef struct rank_ctx {
    const char *algo;
    bool allreduce;
    uint64_t seed; /* of the random send delays (test hooks) */
    double out[COUNT];
    trd_status st;
} rank_ctx;

/* Values whose sums round differently in different orders. */
static double value(int r, int i)
{
    return 1.0 / (1.0 + r * 7.0 + i * 0.013) + (r % 3 ? 1e8 : 1e-8);
}

static trd_status rank_main(trd_comm *comm, void *arg)
{
    int r = trd_comm_rank(comm);
    rank_ctx *c = (rank_ctx *)arg + r;
    trd_test_hooks hooks;
    trd_test_hooks_init(&hooks);
    hooks.delay_max_us = 300;
    hooks.delay_seed = c->seed;
    trd_status st = trd_test_hooks_set(comm, &hooks);
    if (st != TRD_OK)
        return st;
    double in[COUNT];
    for (int i = 0; i < COUNT; i++)
        in[i] = value(r, i);
    trd_op *sum;
    trd_op_builtin(&sum, TRD_OP_SUM, TRD_DOUBLE);
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = c->algo;
    size_t index;
    if (trd_algo_find(c->algo, &index) == TRD_OK && trd_algo_uses_costs(index))
        o.costs = tu_costs(P, 1.0, 1.0, 1); /* heterogeneous: random links */
    o.reproducible = true;
    o.segment_bytes = 512; /* several blocks, so segments interleave too */
    memset(c->out, 0, sizeof c->out);
    c->st = c->allreduce ? trd_allreduce(comm, in, c->out, COUNT, sum, &o)
                         : trd_reduce(comm, in, c->out, COUNT, sum, 0, &o);
    trd_op_free(sum);
    return TRD_OK; /* c->st: checked by the caller, refusals included */
}

/* One call on P threads with random send delays (seed); ctx[r].out. */
static void run_once(const char *algo, bool allreduce, uint64_t seed, rank_ctx *ctx)
{
    trd_threads_opts opts;
    trd_threads_opts_init(&opts);
    opts.timeout_s = 20;
    for (int r = 0; r < P; r++)
        ctx[r] = (rank_ctx){.algo = algo, .allreduce = allreduce, .seed = seed};
    assert_int_equal(trd_comm_threads_run(P, &opts, rank_main, ctx), TRD_OK);
}

static void check_algo(const char *algo, bool allreduce)
{
    static rank_ctx first[P], now[P];
    double fold[COUNT];
    for (int i = 0; i < COUNT; i++) {
        fold[i] = value(0, i);
        for (int r = 1; r < P; r++)
            fold[i] += value(r, i);
    }
    run_once(algo, allreduce, 1, first);
    for (int r = 0; r < P; r++)
        TU_CHECK(first[r].st == TRD_OK, "%s rank %d: %s", algo, r, trd_strerror(first[r].st));
    for (int i = 0; i < COUNT; i++)
        TU_CHECK(fabs(first[0].out[i] - fold[i]) <= 1e-12 * fabs(fold[i]),
                 "%s: element %d is %.17g, the fold %.17g", algo, i, first[0].out[i], fold[i]);
    for (int r = 1; allreduce && r < P; r++)
        TU_CHECK(!memcmp(first[r].out, first[0].out, sizeof first[0].out),
                 "%s: rank %d's allreduce result differs from rank 0's", algo, r);
    for (uint64_t run = 2; run <= RUNS; run++) {
        run_once(algo, allreduce, run * 7919, now);
        for (int r = 0; r < (allreduce ? P : 1); r++)
            TU_CHECK(!memcmp(now[r].out, first[r].out, sizeof now[r].out),
                     "%s: run %llu, rank %d: the bits changed", algo,
                     (unsigned long long)run, r);
    }
}

static void test_static_algorithms(void **state)
{
    (void)state;
    for (size_t i = 0; i < trd_algo_count(); i++) {
        if (!trd_algo_reproducible(i))
            continue; /* refused: test_refused */
        if (trd_algo_runs(i, TRD_COLL_REDUCE))
            check_algo(trd_algo_name(i), false);
        if (trd_algo_runs(i, TRD_COLL_ALLREDUCE))
            check_algo(trd_algo_name(i), true);
    }
    check_algo("auto", true);
    check_algo("auto", false);
}

static void test_refused(void **state)
{
    (void)state;
    static rank_ctx ctx[P]; /* P = 6 = 3!: the stars could run it */
    size_t refused = 0;
    for (size_t i = 0; i < trd_algo_count(); i++) {
        if (trd_algo_reproducible(i))
            continue;
        run_once(trd_algo_name(i), trd_algo_kind_of(i) == TRD_KIND_EXCHANGE, 3, ctx);
        for (int r = 0; r < P; r++)
            TU_CHECK(ctx[r].st == TRD_EUNSUPPORTED, "%s rank %d: %s", trd_algo_name(i), r,
                     trd_strerror(ctx[r].st));
        refused++;
    }
    TU_CHECK(refused >= 3, "only %zu rows are not order-deterministic: tree-dyn, nc-tree-dyn "
             "and star are not", refused);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_static_algorithms),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
