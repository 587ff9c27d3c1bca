/* test_requests.c: nonblocking and persistent calls (treduce/runtime.h,
 * "Requests") over the threads wire, against plain-C rank-order folds:
 *   - every collective, nonblocking, with its default algorithm and with
 *     auto, the non-commutative 2x2 matrix checker and an int32 sum;
 *   - progress without the caller: rank 0 starts an allreduce and then
 *     computes without calling treduce; the other ranks' waits return long
 *     before rank 0 has finished computing (without a progress thread they
 *     could not: rank 0's part would run only in its wait);
 *   - persistent requests started 1,000 times, the inputs changed before
 *     every start, each result checked; two persistent requests in turn;
 *   - order: two started calls waited for in the other order, and a
 *     blocking call after a started one (it waits for it);
 *   - a posted step (trd_comm_post): it runs after the call started
 *     before it, may make a blocking call, and a blocking call waits for it;
 *   - misuse and faults: starting an active request or a finished
 *     nonblocking one, NULL arguments, a bad buffer (the call's status at
 *     the wait, with its message), a dead rank (every survivor's wait
 *     ends with the deadline's error within the deadline, never TRD_OK). */
#include "runtime_util.h"

#define P 4
#define COUNT 37

/* The fold of ranks [lo, hi] of op id's inputs (seed), count elements. */
static bool expect(rt_opid id, void *out, int64_t count, int32_t lo, int32_t hi, uint64_t seed)
{
    return rt_expected_ranks(id, out, count, lo, hi, seed) == TRD_OK;
}

/* Operator id, on a rank thread (no cmocka there); NULL on failure, which
 * the call using it then reports. */
static trd_op *op_of(rt_opid id)
{
    trd_op *op = NULL;
    rt_op_try(id, &op);
    return op;
}

/* ---- Every collective, nonblocking ---- */

typedef struct coll_ctx {
    trd_collective coll;
    rt_opid op;
    const char *algo; /* NULL: the collective's default (opts NULL) */
    rt_log log;
} coll_ctx;

static trd_status start(trd_comm *comm, trd_collective coll, const void *in, void *out,
                        int64_t count, const int64_t *parts, const trd_op *op,
                        const trd_coll_opts *o, trd_request **req)
{
    switch (coll) {
    case TRD_COLL_REDUCE: return trd_ireduce(comm, in, out, count, op, P - 1, o, req);
    case TRD_COLL_ALLREDUCE: return trd_iallreduce(comm, in, out, count, op, o, req);
    case TRD_COLL_REDUCE_SCATTER:
        return parts ? trd_ireduce_scatter(comm, in, out, parts, op, o, req)
                     : trd_ireduce_scatter_block(comm, in, out, count, op, o, req);
    case TRD_COLL_SCAN: return trd_iscan(comm, in, out, count, op, o, req);
    default: return trd_iexscan(comm, in, out, count, op, o, req);
    }
}

/* Whether rank's result of coll (count elements, a reduce-scatter's part
 * count, input p * count) is right; rank 0 of an exscan and a reduce's
 * other ranks have none to check. */
static bool result_ok(trd_collective coll, rt_opid id, const void *out, int64_t count,
                      int32_t rank, uint64_t seed)
{
    size_t elem = rt_elem(id);
    int64_t in_count = coll == TRD_COLL_REDUCE_SCATTER ? count * P : count;
    unsigned char *want = malloc((size_t)in_count * elem);
    int32_t hi = coll == TRD_COLL_SCAN ? rank : coll == TRD_COLL_EXSCAN ? rank - 1 : P - 1;
    size_t at = coll == TRD_COLL_REDUCE_SCATTER ? (size_t)(count * rank) * elem : 0;
    bool none = (coll == TRD_COLL_REDUCE && rank != P - 1) || hi < 0;
    bool ok = none || (want && expect(id, want, in_count, 0, hi, seed) &&
                       rt_first_diff(out, want + at, count, elem) < 0);
    free(want);
    return ok;
}

static trd_status coll_rank(trd_comm *comm, int32_t rank, void *arg)
{
    coll_ctx *x = arg;
    trd_op *op = NULL;
    trd_status st = rt_op_try(x->op, &op);
    size_t elem = rt_elem(x->op), bytes = (size_t)COUNT * P * elem;
    unsigned char *in = malloc(bytes), *out = malloc(bytes);
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = x->algo;
    trd_request *req = NULL;
    if (st == TRD_OK && in && out) {
        rt_fill(x->op, in, COUNT * (x->coll == TRD_COLL_REDUCE_SCATTER ? P : 1), rank, 9);
        st = start(comm, x->coll, in, out, COUNT, NULL, op, x->algo ? &o : NULL, &req);
    }
    if (st == TRD_OK)
        st = trd_request_wait(req);
    if (st == TRD_OK && !result_ok(x->coll, x->op, out, COUNT, rank, 9))
        rt_failf(&x->log, "%s %s %s rank %d: wrong result", trd_collective_name(x->coll),
                 rt_op_names[x->op], x->algo ? x->algo : "(default)", (int)rank);
    trd_request_free(req);
    trd_op_free(op);
    free(in);
    free(out);
    return st;
}

static void test_every_collective(void **state)
{
    (void)state;
    static const rt_opid ops[] = {RT_MATRIX, RT_I32_SUM};
    static const char *const algos[] = {NULL, "auto"};
    for (trd_collective coll = TRD_COLL_REDUCE; coll <= TRD_COLL_EXSCAN; coll++)
        for (int o = 0; o < 2; o++)
            for (int a = 0; a < 2; a++) {
                coll_ctx x = {.coll = coll, .op = ops[o], .algo = algos[a]};
                rt_log_init(&x.log);
                char what[96];
                snprintf(what, sizeof what, "%s %s %s", trd_collective_name(coll),
                         rt_op_names[ops[o]], algos[a] ? algos[a] : "(default)");
                rt_run_all_ok(P, coll_rank, &x, what, 200);
                rt_log_check(&x.log, what);
                rt_log_destroy(&x.log);
            }
}

/* ---- Progress while rank 0 computes ---- */

#define COMPUTE_S 0.6

typedef struct progress_ctx {
    double waited[P]; /* seconds from the start to the end of the wait */
    rt_log log;
} progress_ctx;

static trd_status progress_rank(trd_comm *comm, int32_t rank, void *arg)
{
    progress_ctx *x = arg;
    trd_op *op = op_of(RT_I32_SUM);
    int32_t in[COUNT], out[COUNT];
    rt_fill(RT_I32_SUM, in, COUNT, rank, 3);
    trd_request *req = NULL;
    double t0 = rt_now();
    trd_status st = trd_iallreduce(comm, in, out, COUNT, op, NULL, &req);
    if (st == TRD_OK && rank == 0) { /* compute, without any call of treduce */
        volatile double sink = 0;
        while (rt_now() - t0 < COMPUTE_S)
            sink += 1e-9;
        (void)sink; /* the loop only burns time */
    }
    if (st == TRD_OK)
        st = trd_request_wait(req);
    x->waited[rank] = rt_now() - t0;
    if (st == TRD_OK && !result_ok(TRD_COLL_ALLREDUCE, RT_I32_SUM, out, COUNT, rank, 3))
        rt_failf(&x->log, "progress: rank %d: wrong result", (int)rank);
    trd_request_free(req);
    trd_op_free(op);
    return st;
}

static void test_progress_without_calls(void **state)
{
    (void)state;
    progress_ctx x = {0};
    rt_log_init(&x.log);
    rt_run_all_ok(P, progress_rank, &x, "progress", 0);
    rt_log_check(&x.log, "progress");
    rt_log_destroy(&x.log);
    for (int32_t r = 1; r < P; r++)
        TU_CHECK(x.waited[r] < COMPUTE_S / 2, "rank %d waited %.3f s: rank 0's part did not "
                 "advance while it computed for %.1f s", (int)r, x.waited[r], COMPUTE_S);
    TU_CHECK(x.waited[0] >= COMPUTE_S, "rank 0: %.3f s", x.waited[0]);
}

/* ---- Persistent requests ---- */

#define STARTS 1000

static trd_status persistent_rank(trd_comm *comm, int32_t rank, void *arg)
{
    rt_log *log = arg;
    trd_op *mat = op_of(RT_MATRIX), *sum = op_of(RT_I32_SUM);
    trd_matrix2x2 min[5], mout[5];
    int32_t sin[COUNT * P], sout[COUNT], want[COUNT * P];
    trd_request *scan = NULL, *rs = NULL;
    trd_status st = trd_scan_init(comm, min, mout, 5, mat, NULL, &scan);
    if (st == TRD_OK)
        st = trd_reduce_scatter_block_init(comm, sin, sout, COUNT, sum, NULL, &rs);
    for (int k = 0; st == TRD_OK && k < STARTS; k++) {
        /* new contents every time: the matrices of ranks k .. k + p - 1 */
        trd_matrix2x2_fill(min, 5, rank + k);
        rt_fill(RT_I32_SUM, sin, COUNT * trd_comm_size(comm), rank, (uint64_t)k);
        if ((st = trd_start(scan)) != TRD_OK || (st = trd_start(rs)) != TRD_OK ||
            (st = trd_request_wait(scan)) != TRD_OK || (st = trd_request_wait(rs)) != TRD_OK)
            break;
        trd_matrix2x2 mwant[5];
        trd_matrix2x2_expected(mwant, 5, k, rank + k);
        rt_expected(RT_I32_SUM, want, COUNT * P, trd_comm_size(comm), (uint64_t)k);
        if (memcmp(mout, mwant, sizeof mout) ||
            memcmp(sout, want + COUNT * rank, sizeof sout)) {
            rt_failf(log, "persistent: rank %d start %d: wrong result", (int)rank, k);
            break;
        }
    }
    trd_request_free(scan);
    trd_request_free(rs);
    trd_op_free(mat);
    trd_op_free(sum);
    return st;
}

static void test_persistent(void **state)
{
    (void)state;
    rt_run_logged_ok(3, RT_TIMEOUT_S, persistent_rank, "persistent");
}

/* ---- Order: waits in the other order, then a blocking call ---- */

static trd_status order_rank(trd_comm *comm, int32_t rank, void *arg)
{
    rt_log *log = arg;
    trd_op *mat = op_of(RT_MATRIX);
    trd_matrix2x2 in[COUNT], a[COUNT], b[COUNT], c[COUNT], want[COUNT];
    trd_matrix2x2_fill(in, COUNT, rank);
    trd_request *ra = NULL, *rb = NULL;
    trd_status st = trd_iexscan(comm, in, a, COUNT, mat, NULL, &ra);
    if (st == TRD_OK)
        st = trd_iallreduce(comm, in, b, 3, mat, NULL, &rb);
    if (st == TRD_OK) /* blocking: runs after both */
        st = trd_scan(comm, in, c, COUNT, mat, NULL);
    if (st == TRD_OK && (st = trd_request_wait(rb)) == TRD_OK)
        st = trd_request_wait(ra);
    if (st == TRD_OK) {
        bool ok = true;
        trd_matrix2x2_expected(want, COUNT, 0, rank);
        ok &= !memcmp(c, want, sizeof c);
        trd_matrix2x2_expected(want, 3, 0, P - 1);
        ok &= !memcmp(b, want, 3 * sizeof *b);
        if (rank > 0) {
            trd_matrix2x2_expected(want, COUNT, 0, rank - 1);
            ok &= !memcmp(a, want, sizeof a);
        }
        if (!ok)
            rt_failf(log, "order: rank %d: wrong result", (int)rank);
    }
    trd_request_free(ra);
    trd_request_free(rb);
    trd_op_free(mat);
    return st;
}

static void test_order(void **state)
{
    (void)state;
    rt_run_logged_ok(P, RT_TIMEOUT_S, order_rank, "order");
}

/* ---- A posted step: in start order, on the progress thread ---- */

typedef struct posted {
    trd_comm *comm;
    trd_op *mat;
    int32_t rank;
    const trd_matrix2x2 *started; /* the started allreduce's result */
    trd_matrix2x2 in[COUNT], mine[COUNT];
    bool after_started, ran;
} posted;

/* The started call before it is done; a blocking call from the step runs. */
static trd_status step(void *arg)
{
    posted *x = arg;
    trd_matrix2x2 want[COUNT];
    trd_matrix2x2_expected(want, COUNT, 0, P - 1);
    x->after_started = !memcmp(x->started, want, sizeof want);
    x->ran = true;
    return trd_allreduce(x->comm, x->in, x->mine, COUNT, x->mat, NULL);
}

static trd_status posted_rank(trd_comm *comm, int32_t rank, void *arg)
{
    rt_log *log = arg;
    posted x = {.comm = comm, .mat = op_of(RT_MATRIX), .rank = rank};
    trd_matrix2x2 a[COUNT], c[COUNT], want[COUNT];
    trd_matrix2x2_fill(x.in, COUNT, rank);
    x.started = a;
    trd_request *ra = NULL;
    trd_status st = trd_iallreduce(comm, x.in, a, COUNT, x.mat, NULL, &ra);
    if (st == TRD_OK)
        st = trd_comm_post(comm, step, &x);
    if (st == TRD_OK) /* blocking: after the step, which runs after the start */
        st = trd_scan(comm, x.in, c, COUNT, x.mat, NULL);
    if (st == TRD_OK)
        st = trd_request_wait(ra);
    if (st == TRD_OK) {
        trd_matrix2x2_expected(want, COUNT, 0, P - 1);
        bool ok = x.ran && x.after_started && !memcmp(x.mine, want, sizeof want);
        trd_matrix2x2_expected(want, COUNT, 0, rank);
        if (!ok || memcmp(c, want, sizeof want))
            rt_failf(log, "posted step: rank %d: ran %d, after the started call %d, results "
                     "wrong", (int)rank, x.ran, x.after_started);
    }
    if (trd_comm_post(comm, NULL, NULL) != TRD_EINVAL)
        rt_failf(log, "posted step: a NULL step accepted");
    trd_request_free(ra);
    trd_op_free(x.mat);
    return st;
}

static void test_posted_step(void **state)
{
    (void)state;
    rt_run_logged_ok(P, RT_TIMEOUT_S, posted_rank, "posted step");
}

/* ---- Misuse ---- */

static trd_status misuse_rank(trd_comm *comm, int32_t rank, void *arg)
{
    rt_log *log = arg;
    trd_op *sum = op_of(RT_I32_SUM);
    int32_t in[COUNT] = {0}, out[COUNT];
    trd_request *req = NULL, *per = NULL;
    bool done = false;
    if (trd_iallreduce(comm, in, out, COUNT, NULL, NULL, &req) != TRD_EINVAL || req)
        rt_failf(log, "rank %d: a NULL operator was taken", (int)rank);
    if (trd_iallreduce(comm, in, out, COUNT, sum, NULL, NULL) != TRD_EINVAL)
        rt_failf(log, "rank %d: a NULL request pointer was taken", (int)rank);
    trd_status st = trd_allreduce_init(comm, in, out, COUNT, sum, NULL, &per);
    if (st == TRD_OK && (trd_request_wait(per) != TRD_OK ||
                         trd_request_test(per, &done) != TRD_OK || !done))
        rt_failf(log, "rank %d: an inactive request is not done", (int)rank);
    if (st == TRD_OK && (st = trd_start(per)) == TRD_OK) {
        if (trd_start(per) != TRD_EINVAL || !strstr(trd_errmsg(), "active"))
            rt_failf(log, "rank %d: an active request started again", (int)rank);
        st = trd_request_wait(per);
    }
    /* a bad buffer: every rank's call refuses it at the wait, naming it */
    if (st == TRD_OK && (st = trd_iallreduce(comm, in, NULL, COUNT, sum, NULL, &req)) == TRD_OK) {
        trd_status w = trd_request_wait(req);
        if (w != TRD_EINVAL || !strstr(trd_errmsg(), "recvbuf"))
            rt_failf(log, "rank %d: NULL recvbuf: %d (%s)", (int)rank, (int)w, trd_errmsg());
        if (trd_start(req) != TRD_EINVAL || !strstr(trd_errmsg(), "runs once"))
            rt_failf(log, "rank %d: a nonblocking request started again", (int)rank);
    }
    trd_request_free(req);
    trd_request_free(per);
    trd_op_free(sum);
    return st;
}

static void test_misuse(void **state)
{
    (void)state;
    rt_run_logged_ok(P, RT_TIMEOUT_S, misuse_rank, "misuse");
}

/* ---- A dead rank ---- */

#define DEADLINE_S 0.5

typedef struct dead_ctx {
    trd_status st[P];
    double seconds[P];
} dead_ctx;

static trd_status dead_rank(trd_comm *comm, int32_t rank, void *arg)
{
    dead_ctx *x = arg;
    if (rank == P - 1)
        return TRD_OK; /* dead: it never takes part */
    trd_op *sum = op_of(RT_I32_SUM);
    int32_t in[COUNT] = {0}, out[COUNT];
    trd_request *req = NULL;
    double t0 = rt_now();
    x->st[rank] = trd_iallreduce(comm, in, out, COUNT, sum, NULL, &req);
    if (x->st[rank] == TRD_OK)
        x->st[rank] = trd_request_wait(req);
    x->seconds[rank] = rt_now() - t0;
    trd_request_free(req);
    trd_op_free(sum);
    return TRD_OK;
}

static void test_dead_rank(void **state)
{
    (void)state;
    dead_ctx x;
    memset(&x, 0, sizeof x);
    trd_threads_opts topts = rt_topts(DEADLINE_S);
    rt_result res;
    rt_run(P, &topts, dead_rank, &x, &res);
    for (int32_t r = 0; r < P - 1; r++) {
        TU_CHECK(x.st[r] == TRD_ETIMEDOUT, "rank %d: %d, expected the deadline's error",
                 (int)r, (int)x.st[r]);
        TU_CHECK(x.seconds[r] < DEADLINE_S + 1.0, "rank %d: %.2f s", (int)r, x.seconds[r]);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        RT_TIMED(test_every_collective), RT_TIMED(test_progress_without_calls),
        RT_TIMED(test_persistent),       RT_TIMED(test_order),
        RT_TIMED(test_posted_step),      RT_TIMED(test_misuse),
        RT_TIMED(test_dead_rank),
    };
    rt_filters(argc, argv);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
