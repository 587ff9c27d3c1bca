/* test_runtime_repeated.c: many calls on the same threads communicators
 * (the checks of runtime_matrix.c on every call): every algorithm in turn
 * with changing parameters (and reproducible mode), 50 calls of each
 * dynamic algorithm, injected random delays before every send, and a
 * model asking for more segments than elements (under a watchdog).
 *
 * usage: test_runtime_repeated [PATTERN [SKIP]] (cmocka filters). */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime_matrix.h"

/* ---- Repeated calls on the same communicators. ---- */

/* Every algorithm in turn, with counts, roots, operators and options that
 * change from call to call: a stale plan, slot layout or scratch size
 * would give a wrong result.  The third round asks for reproducible mode
 * (dynamic algorithms must refuse it). */
static void test_repeated_mixed(void **state)
{
    (void)state;
    const int32_t p = 6;
    const int64_t cnt[] = {3, 4099, 0, 1, 100, 7, 4099, 2};
    trd_comm *comm[RT_MAX_P];
    trd_threads_opts topts = rt_topts(RT_TIMEOUT_S);
    rt_comms_create(comm, p, &topts);
    case_list l = {0};
    size_t n = 0;
    for (int round = 0; round < 3; round++)
        for (size_t a = 0; a < trd_algo_count(); a++, n++) {
            trd_algo_kind kind = trd_algo_kind_of(a);
            trd_coll_opts o;
            trd_coll_opts_init(&o);
            if (n % 4 == 1)
                o.segment_bytes = 256;
            if (kind == TRD_KIND_PIPELINED) {
                o.d = 1e-3;
                o.c = 1e-3;
                o.latency = 1e-5;
            }
            rt_opid op = (rt_opid)(n % RT_NOPS);
            if (trd_algo_commutative_only(a) || rt_plan_refuses(a, p, true))
                op = (rt_opid)(n % 4); /* commutative: so the call is not refused */
            if (trd_algo_uses_costs(a))
                o.costs = tu_costs(p, 1, 1, (uint64_t)n);
            /* a reduce, or an allreduce every third call where it runs one;
             * the other collectives where the row runs no reduce */
            trd_collective coll = !trd_algo_runs(a, TRD_COLL_REDUCE) ? tu_coll_of(a)
                                  : n % 3 == 0 && trd_algo_runs(a, TRD_COLL_ALLREDUCE)
                                      ? TRD_COLL_ALLREDUCE
                                      : TRD_COLL_REDUCE;
            /* noncommutative trees can always put the root on 0 or p-1 */
            int32_t root = rt_op_nc(op) ? (n % 2 ? p - 1 : 0) : (int32_t)(n % (size_t)p);
            o.reproducible = round == 2; /* the dynamic ones must refuse it */
            rt_case k = {.algo = a, .op = op, .count = cnt[n % 8], .root = root,
                         .coll = coll, .mode = (rtm_bufmode)(n % 3), .seed = 31 * n,
                         .opts = o};
            rtm_push(&l, k);
        }
    rtm_threads_cases(&l, p, comm, NULL, "mixed sequence");
    free(l.v);
    rt_comms_free(comm, p);
}

/* 50 calls in a row of each dynamic algorithm on the same communicators. */
static void test_repeated_dynamic(void **state)
{
    (void)state;
    const int32_t p = 7;
    const char *names[] = {"tree-dyn", "nc-tree-dyn"};
    for (int a = 0; a < 2; a++) {
        trd_comm *comm[RT_MAX_P];
        trd_threads_opts topts = rt_topts(RT_TIMEOUT_S);
        rt_comms_create(comm, p, &topts);
        case_list l = {0};
        for (int n = 0; n < 50; n++) {
            rt_opid op = a == 0 ? (rt_opid)(n % 4) : (n % 2 ? RT_MATRIX : RT_INTERVAL);
            trd_coll_opts o;
            trd_coll_opts_init(&o);
            rt_case k = {.algo = rt_algo(names[a]), .op = op, .count = n % 5 == 4 ? 513 : 1 + n % 9,
                         .root = (int32_t)(n % p), .coll = TRD_COLL_REDUCE,
                         .mode = (rtm_bufmode)(n % 3), .seed = 4242 + (uint64_t)n, .opts = o};
            rtm_push(&l, k);
        }
        rtm_threads_cases(&l, p, comm, NULL, names[a]);
        free(l.v);
        rt_comms_free(comm, p);
    }
}

/* ---- Random delays before every send. ---- */

static void test_random_delays(void **state)
{
    (void)state;
    const char *names[] = {"tree-dyn", "nc-tree-dyn", "greedy"};
    const int32_t sp[] = {7, 5, 8};
    for (int a = 0; a < 3; a++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            trd_test_hooks hooks = rt_delays(200, seed * 7919 + (uint64_t)a);
            int32_t p = sp[seed - 1];
            case_list l = {0};
            for (int n = 0; n < 10; n++) {
                rt_opid op;
                if (a == 0)
                    op = n % 2 ? RT_I32_SUM : RT_U64_BXOR;
                else if (a == 1)
                    op = n % 2 ? RT_MATRIX : RT_INTERVAL;
                else
                    op = n % 2 ? RT_MATRIX : RT_I64_PROD;
                bool nc = rt_op_nc(op);
                trd_coll_opts o;
                trd_coll_opts_init(&o);
                rt_case k = {.algo = rt_algo(names[a]), .op = op, .count = 33 + n,
                             .root = nc ? (n % 3 ? p - 1 : 0) : (int32_t)(n % p),
                             .coll = a == 2 && n % 3 == 2 ? TRD_COLL_ALLREDUCE : TRD_COLL_REDUCE, .mode = (rtm_bufmode)(n % 3),
                             .seed = 99 * seed + (uint64_t)n, .opts = o};
                rtm_push(&l, k);
            }
            rtm_threads_cases(&l, p, NULL, &hooks, names[a]);
            free(l.v);
        }
}

/* ---- A model that asks for very many segments, and a tiny buffer. ----
 * With latency << d the pipelines' model picks tens of thousands of
 * segments; the runtime keeps at most one element per block, so a call of
 * one element must cost what a one-block plan costs.  Run in a child
 * process under a watchdog, so that a slow planner fails this test instead
 * of running into ctest's timeout. */

typedef struct many_seg_ctx {
    trd_op *op;
    const char *algo;
    int bad; /* ranks with a wrong result */
} many_seg_ctx;

static trd_status many_seg_rank(trd_comm *comm, int32_t rank, void *arg)
{
    many_seg_ctx *x = arg;
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = x->algo;
    o.d = 1.0;
    o.c = 1.0;
    o.latency = 1e-9;
    int32_t in[3] = {rank + 1, 7, 7}, out[3] = {0, 7, 7};
    int32_t p = trd_comm_size(comm);
    trd_status st = trd_reduce(comm, in, out, 1, x->op, p - 1, &o);
    if (st == TRD_OK && rank == p - 1 && (out[0] != p * (p + 1) / 2 || out[1] != 7))
        x->bad++;
    double t = 0;
    if (st == TRD_OK)
        st = trd_comm_predict(comm, 1, x->op, p - 1, false, &o, &t);
    return st;
}

static void test_many_segments_small_count(void **state)
{
    (void)state;
    for (size_t a = 0; a < trd_algo_count(); a++) {
        if (trd_algo_kind_of(a) != TRD_KIND_PIPELINED)
            continue;
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            many_seg_ctx x = {.op = rt_op_create(RT_I32_SUM), .algo = trd_algo_name(a)};
            rt_result res;
            trd_threads_opts topts = rt_topts(RT_TIMEOUT_S);
            rt_run(4, &topts, many_seg_rank, &x, &res);
            int rc = x.bad ? 3 : 0;
            for (int32_t r = 0; r < 4; r++)
                if (res.status[r] != TRD_OK) {
                    fprintf(stderr, "%s rank %d: %s\n", x.algo, (int)r, res.msg[r]);
                    rc = 2;
                }
            trd_op_free(x.op);
            _exit(rc);
        }
        const double limit = 10.0;
        double t0 = rt_now();
        int status = 0;
        pid_t done = 0;
        while ((done = waitpid(pid, &status, WNOHANG)) == 0 && rt_now() - t0 < limit) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (done == 0) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
        }
        TU_CHECK(done == pid, "%s: a 1-element reduce (and its prediction) with d = c = 1, "
                 "latency = 1e-9 on 4 ranks did not finish in %.0f s", trd_algo_name(a), limit);
        TU_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                 "%s: the 1-element reduce failed (exit status %d%s)", trd_algo_name(a),
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                 WIFEXITED(status) && WEXITSTATUS(status) == 3 ? ": wrong result" : "");
    }
}

int main(int argc, char **argv)
{
    rt_filters(argc, argv);
    const struct CMUnitTest tests[] = {
        RT_TIMED(test_repeated_mixed),
        RT_TIMED(test_repeated_dynamic),
        RT_TIMED(test_random_delays),
        RT_TIMED(test_many_segments_small_count),
    };
    return cmocka_run_group_tests_name("runtime_repeated", tests, NULL, NULL);
}
