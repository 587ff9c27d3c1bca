/* test_runtime_matrix.c: the runtime's correctness matrix over the threads
 * wire (runtime_matrix.c holds the cases and checks; tests/mpi runs the
 * same source over MPI).  Every registered algorithm (all kinds, iterated
 * from the registry, one cmocka test each) over p in {1,2,3,4,5,7,8,9},
 * counts {0, 1, 7, 4099}, reduce to root 0 and to root p-1, allreduce,
 * reduce-scatter of equal and of uneven parts (some empty), scan, exscan,
 * with int32 sum, int64 prod, uint64 bxor, double sum of small integers
 * (all checked BITWISE against a sequential rank-order fold written in
 * plain C) and the non-commutative checkers matrix2x2 and interval, each
 * with separate buffers, TRD_IN_PLACE and sendbuf == recvbuf.  Then:
 * segmented trees, pipelines and exchanges, and count 0 as a fresh
 * communicator's first call.
 *
 * usage: test_runtime_matrix [PATTERN [SKIP]] (cmocka filters); each test
 * prints its wall time. */
#include "runtime_matrix.h"

static const int32_t ps[] = {1, 2, 3, 4, 5, 7, 8, 9};
#define NPS (sizeof ps / sizeof ps[0])
/* 7 first: a fresh communicator's first call with count 0 is its own test
 * (test_count_zero_first), so that a failure there does not hide the rest. */
static const int64_t counts[] = {7, 0, 1, 4099};
#define NCOUNTS (sizeof counts / sizeof counts[0])

/* ---- The correctness matrix: one cmocka test per algorithm. ---- */

static size_t algo_index[64];

static void test_matrix(void **state)
{
    size_t algo = *(size_t *)*state;
    for (size_t i = 0; i < NPS; i++) {
        /* heterogeneous planners: every other p (their plans run on the
         * same engine; test_hetero_runtime.c runs them too) */
        if (trd_algo_uses_costs(algo) && i % 2 == 0 && i + 1 < NPS)
            continue;
        case_list l = {0};
        rtm_algo_matrix(&l, algo, ps[i], counts, NCOUNTS, 1000 * (uint64_t)ps[i]);
        rtm_threads_cases(&l, ps[i], NULL, NULL, trd_algo_name(algo));
        free(l.v);
    }
}

/* ---- count 0 as the very first call of fresh communicators. ---- */

typedef struct zero_ctx {
    trd_op *op;
    size_t algo;
    trd_collective coll; /* the first its row runs */
    bool null_bufs;
} zero_ctx;

static trd_status zero_rank(trd_comm *comm, int32_t rank, void *arg)
{
    zero_ctx *x = arg;
    (void)rank;
    int32_t send = 5, recv = 6;
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = trd_algo_name(x->algo);
    if (trd_algo_uses_costs(x->algo))
        o.costs = tu_costs(trd_comm_size(comm), 1, 1, 1);
    const void *s = x->null_bufs ? NULL : &send;
    void *r = x->null_bufs ? NULL : &recv;
    int64_t parts[4] = {0, 0, 0, 0};
    trd_status st;
    switch (x->coll) {
    case TRD_COLL_REDUCE: st = trd_reduce(comm, s, r, 0, x->op, trd_comm_size(comm) - 1, &o); break;
    case TRD_COLL_ALLREDUCE: st = trd_allreduce(comm, s, r, 0, x->op, &o); break;
    case TRD_COLL_REDUCE_SCATTER: st = trd_reduce_scatter(comm, s, r, parts, x->op, &o); break;
    case TRD_COLL_SCAN: st = trd_scan(comm, s, r, 0, x->op, &o); break;
    default: st = trd_exscan(comm, s, r, 0, x->op, &o); break;
    }
    if (st == TRD_OK && (send != 5 || recv != 6))
        return TRD_EIO; /* count 0 must read and write nothing */
    return st;
}

static void test_count_zero_first(void **state)
{
    (void)state;
    zero_ctx x = {.op = rt_op_create(RT_I32_SUM)};
    for (size_t a = 0; a < trd_algo_count(); a++) {
        x.algo = a;
        for (x.coll = TRD_COLL_REDUCE; !trd_algo_runs(a, x.coll); x.coll++)
            ;
        for (int nb = 0; nb < 2; nb++) {
            x.null_bufs = nb;
            trd_threads_opts topts = rt_topts(RT_TIMEOUT_S);
            rt_result res;
            rt_run(4, &topts, zero_rank, &x, &res);
            for (int32_t r = 0; r < 4; r++) {
                if (rt_not_yet(res.status[r], res.msg[r]) ||
                    (rt_plan_refuses_coll(a, 4, false, x.coll) &&
                     res.status[r] == TRD_EUNSUPPORTED))
                    continue; /* star and star-reduce-bcast: p = 4 is no n! */
                TU_CHECK(res.status[r] == TRD_OK, "%s count 0 first call (%s buffers) rank %d: "
                         "status %d: %s", trd_algo_name(a), nb ? "NULL" : "real", (int)r,
                         (int)res.status[r], res.msg[r]);
            }
        }
    }
    trd_op_free(x.op);
}

/* ---- Segmentation. ---- */

/* Trees cut into small segments.  Reduce: 129 blocks (int32 sum of 4099
 * elements in 128-byte segments, double sum in 256-byte ones, matrix2x2 of
 * 515 elements in 64-byte ones); allreduce: 33 blocks (4x the segment size).
 * Not more: every rank builds the plan, and a segmented plan's makespan
 * comes from the simulator, whose cost grows like blocks^2..3 (allreduce
 * and greedy-k-transfers worst), which ASan makes slow. */
static void test_segments_trees(void **state)
{
    (void)state;
    const int32_t sp[] = {3, 8};
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++) {
        case_list l = {0};
        for (size_t a = 0; a < trd_algo_count(); a++) {
            if (trd_algo_kind_of(a) != TRD_KIND_TREE)
                continue;
            for (int call = 0; call < 3; call++) /* root 0, root p-1, allreduce */
                for (int j = 0; j < 3; j++) {
                    rt_opid op = j == 0 ? RT_I32_SUM : j == 1 ? RT_F64_SUM : RT_MATRIX;
                    if (op == RT_F64_SUM && call != (int)i + 1)
                        continue; /* p=3: root p-1; p=8: allreduce */
                    trd_coll_opts o;
                    trd_coll_opts_init(&o);
                    o.segment_bytes = (op == RT_F64_SUM ? 256 : op == RT_MATRIX ? 64 : 128) *
                                      (call == 2 ? 4 : 1);
                    if (trd_algo_uses_costs(a))
                        o.costs = tu_costs(sp[i], 1, 1, (uint64_t)sp[i]);
                    rt_case k = {.algo = a, .op = op, .count = op == RT_MATRIX ? 515 : 4099,
                                 .root = call == 1 ? sp[i] - 1 : 0, .coll = call == 2 ? TRD_COLL_ALLREDUCE : TRD_COLL_REDUCE,
                                 .mode = (rtm_bufmode)((call + j) % 3), .seed = 77 + l.len,
                                 .opts = o};
                    rtm_push(&l, k);
                }
        }
        rtm_threads_cases(&l, sp[i], NULL, NULL, "segmented trees");
        free(l.v);
    }
}

/* Pipelines given d, c and latency: the model must choose several
 * segments, and the results must stay exact. */
static void test_segments_pipelined(void **state)
{
    (void)state;
    const int32_t sp[] = {2, 5, 9};
    const int64_t cnt[] = {7, 4099};
    for (size_t a = 0; a < trd_algo_count(); a++) {
        if (trd_algo_kind_of(a) != TRD_KIND_PIPELINED)
            continue;
        for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++) {
            trd_params prm;
            trd_params_init(&prm);
            prm.n = sp[i];
            prm.d = 1e-3;
            prm.c = 1e-3;
            prm.latency = 1e-5;
            trd_plan *plan = tu_plan(trd_algo_name(a), &prm);
            int32_t blocks = trd_plan_blocks(plan);
            trd_plan_free(plan);
            /* (for p = 2 both choose 1 segment: their model charges every
             * segment a whole transfer-plus-combine stage) */
            TU_CHECK(sp[i] < 5 || blocks > 2, "%s p=%d chose %d segments; expected several",
                     trd_algo_name(a), (int)sp[i], (int)blocks);
            case_list l = {0};
            trd_coll_opts o;
            trd_coll_opts_init(&o);
            o.d = prm.d;
            o.c = prm.c;
            o.latency = prm.latency;
            rtm_add_matrix(&l, a, sp[i], &o, cnt, 2, 5000 + (uint64_t)sp[i]);
            /* and with explicit 64-byte segments: int32 sum of 1031 elements
             * (65 blocks), matrix2x2 of 515 (129 blocks) */
            o.segment_bytes = 64;
            for (int call = 0; call < 3; call++)
                for (int j = 0; j < 2; j++) {
                    rt_case k = {.algo = a, .op = j ? RT_MATRIX : RT_I32_SUM,
                                 .count = j ? 515 : 1031,
                                 .root = call == 1 ? sp[i] - 1 : 0, .coll = call == 2 ? TRD_COLL_ALLREDUCE : TRD_COLL_REDUCE,
                                 .mode = (rtm_bufmode)((call + j) % 3), .seed = 6000 + l.len,
                                 .opts = o};
                    rtm_push(&l, k);
                }
            rtm_threads_cases(&l, sp[i], NULL, NULL, "pipelined");
            free(l.v);
        }
    }
}

/* Exchange algorithms with segments too (fewer, bigger ones). */
static void test_segments_exchange(void **state)
{
    (void)state;
    const int32_t sp[] = {3, 4, 6};
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++) {
        case_list l = {0};
        for (size_t a = 0; a < trd_algo_count(); a++) {
            if (trd_algo_kind_of(a) != TRD_KIND_EXCHANGE)
                continue;
            trd_coll_opts o;
            trd_coll_opts_init(&o);
            o.segment_bytes = 1024;
            for (int op = 0; op < RT_NOPS; op++) {
                rt_case k = {.algo = a, .op = (rt_opid)op, .count = 4099, .root = 0,
                             .coll = tu_coll_of(a), .mode = (rtm_bufmode)(op % 3),
                             .seed = 900 + l.len, .opts = o};
                rtm_push(&l, k);
            }
        }
        rtm_threads_cases(&l, sp[i], NULL, NULL, "segmented exchange");
        free(l.v);
    }
}

int main(int argc, char **argv)
{
    rt_filters(argc, argv);
    size_t n = trd_algo_count();
    if (n > sizeof algo_index / sizeof algo_index[0]) {
        fprintf(stderr, "too many algorithms (%zu)\n", n);
        return 1;
    }
    const struct CMUnitTest more[] = {
        RT_TIMED(test_segments_trees),
        RT_TIMED(test_segments_pipelined),
        RT_TIMED(test_segments_exchange),
        /* last: under UBSan a failure here aborts the program */
        RT_TIMED(test_count_zero_first),
    };
    size_t kinds[4] = {0}, nmore = sizeof more / sizeof more[0];
    struct CMUnitTest *tests = calloc(n + nmore, sizeof *tests);
    size_t m = 0;
    assert_non_null(tests);
    for (size_t i = 0; i < n; i++) {
        algo_index[i] = i;
        kinds[trd_algo_kind_of(i)]++;
        tests[m++] = (struct CMUnitTest){.name = trd_algo_name(i), .test_func = test_matrix,
                                         .initial_state = &algo_index[i],
                                         .setup_func = rt_timing_setup,
                                         .teardown_func = rt_timing_teardown};
    }
    if (!kinds[TRD_KIND_TREE] || !kinds[TRD_KIND_PIPELINED] || !kinds[TRD_KIND_EXCHANGE] ||
        !kinds[TRD_KIND_DYNAMIC]) {
        fprintf(stderr, "the registry lacks a kind of algorithm\n");
        return 1;
    }
    for (size_t i = 0; i < nmore; i++)
        tests[m++] = more[i];
    int rc = _cmocka_run_group_tests("runtime_matrix", tests, m, NULL, NULL);
    free(tests);
    return rc;
}
