/* test_requests_mpi.c: nonblocking and persistent calls over the MPI wire
 * (treduce/runtime.h, "Requests"), at the thread level given as argv[1]:
 *   multiple  MPI_THREAD_MULTIPLE: a progress thread runs started calls;
 *             rank 0 starts an allreduce then computes 0.6 s without any
 *             call, and the other ranks' waits return well before that;
 *   single    MPI_Init: no other thread may call MPI, so started calls run
 *             inside wait and test, on the caller's thread.
 * Both: every collective nonblocking with the non-commutative 2x2 matrix
 * checker (the result against the checker's rank-order product), and a
 * persistent scan and reduce-scatter started 1,000 times, the inputs
 * changed before every start.  Exit 0 when every check passed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "treduce/mpi.h"
#include "treduce/treduce.h"

#define COUNT 23
#define STARTS 1000

static int me, np, failures;

#define CHECK(cond, ...)                                \
    do {                                                \
        if (!(cond)) {                                  \
            failures++;                                 \
            fprintf(stderr, "rank %d: FAIL: ", me);     \
            fprintf(stderr, __VA_ARGS__);               \
            fputc('\n', stderr);                        \
        }                                               \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static trd_status start(trd_comm *c, trd_collective coll, const void *in, void *out,
                        const trd_op *op, trd_request **req)
{
    switch (coll) {
    case TRD_COLL_REDUCE: return trd_ireduce(c, in, out, COUNT, op, np - 1, NULL, req);
    case TRD_COLL_ALLREDUCE: return trd_iallreduce(c, in, out, COUNT, op, NULL, req);
    case TRD_COLL_REDUCE_SCATTER:
        return trd_ireduce_scatter_block(c, in, out, COUNT, op, NULL, req);
    case TRD_COLL_SCAN: return trd_iscan(c, in, out, COUNT, op, NULL, req);
    default: return trd_iexscan(c, in, out, COUNT, op, NULL, req);
    }
}

/* Every collective, started then waited for (with a test loop first). */
static void every_collective(trd_comm *c, const trd_op *mat)
{
    trd_matrix2x2 *in = malloc(sizeof *in * COUNT * (size_t)np), *out = malloc(sizeof *out * COUNT),
                  *want = malloc(sizeof *want * COUNT * (size_t)np);
    for (trd_collective coll = TRD_COLL_REDUCE; coll <= TRD_COLL_EXSCAN; coll++) {
        int64_t n = coll == TRD_COLL_REDUCE_SCATTER ? COUNT * np : COUNT;
        trd_matrix2x2_fill(in, n, me);
        trd_request *req = NULL;
        bool done = false;
        trd_status st = start(c, coll, in, out, mat, &req);
        while (st == TRD_OK && !done)
            st = trd_request_test(req, &done);
        CHECK(st == TRD_OK, "%s: %s", trd_collective_name(coll), trd_errmsg());
        int hi = coll == TRD_COLL_SCAN ? me : coll == TRD_COLL_EXSCAN ? me - 1 : np - 1;
        bool gets = coll == TRD_COLL_REDUCE ? me == np - 1 : hi >= 0;
        size_t at = coll == TRD_COLL_REDUCE_SCATTER ? (size_t)COUNT * (size_t)me : 0;
        if (st == TRD_OK && gets) {
            trd_matrix2x2_expected(want, n, 0, hi);
            CHECK(!memcmp(out, want + at, sizeof *out * COUNT), "%s: wrong result",
                  trd_collective_name(coll));
        }
        trd_request_free(req);
    }
    free(in);
    free(out);
    free(want);
}

static void persistent(trd_comm *c, const trd_op *mat, const trd_op *sum)
{
    trd_matrix2x2 min[5], mout[5], mwant[5];
    int64_t *sin = malloc(sizeof *sin * COUNT * (size_t)np), sout[COUNT];
    trd_request *scan = NULL, *rs = NULL;
    memset(min, 0, sizeof min); /* filled before every start */
    trd_status st = trd_scan_init(c, min, mout, 5, mat, NULL, &scan);
    if (st == TRD_OK)
        st = trd_reduce_scatter_block_init(c, sin, sout, COUNT, sum, NULL, &rs);
    for (int k = 0; st == TRD_OK && k < STARTS; k++) {
        trd_matrix2x2_fill(min, 5, me + k); /* new contents: ranks k .. k + np - 1 */
        for (int64_t i = 0; i < COUNT * np; i++)
            sin[i] = (int64_t)k * 1000003 + me * 7 + i;
        if ((st = trd_start(scan)) != TRD_OK || (st = trd_start(rs)) != TRD_OK ||
            (st = trd_request_wait(rs)) != TRD_OK || (st = trd_request_wait(scan)) != TRD_OK)
            break;
        trd_matrix2x2_expected(mwant, 5, k, me + k);
        bool ok = !memcmp(mout, mwant, sizeof mout);
        for (int64_t i = 0; i < COUNT; i++) {
            int64_t e = (int64_t)COUNT * me + i, s = 0;
            for (int r = 0; r < np; r++)
                s += (int64_t)k * 1000003 + r * 7 + e;
            ok &= sout[i] == s;
        }
        CHECK(ok, "persistent: start %d: wrong result", k);
        if (!ok)
            break;
    }
    CHECK(st == TRD_OK, "persistent: %s", trd_errmsg());
    trd_request_free(scan);
    trd_request_free(rs);
    free(sin);
}

/* Rank 0 computes after its start; the others' waits end meanwhile. */
static void progress(trd_comm *c, const trd_op *sum)
{
    int64_t in[COUNT] = {0}, out[COUNT];
    trd_request *req = NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_s();
    trd_status st = trd_iallreduce(c, in, out, COUNT, sum, NULL, &req);
    if (st == TRD_OK && me == 0) {
        volatile double sink = 0;
        while (now_s() - t0 < 0.6)
            sink += 1e-9;
        (void)sink; /* the loop only burns time */
    }
    if (st == TRD_OK)
        st = trd_request_wait(req);
    double waited = now_s() - t0;
    CHECK(st == TRD_OK, "progress: %s", trd_errmsg());
    CHECK(me == 0 || waited < 0.3, "progress: waited %.3f s while rank 0 computed 0.6 s",
          waited);
    trd_request_free(req);
}

int main(int argc, char **argv)
{
    bool multiple = argc > 1 && !strcmp(argv[1], "multiple");
    int provided = MPI_THREAD_SINGLE;
    if (multiple)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    trd_comm *c = NULL;
    trd_op *mat = NULL, *sum = NULL;
    if (trd_comm_mpi_create(&c, NULL, 10.0) != TRD_OK || trd_op_matrix2x2(&mat) != TRD_OK ||
        trd_op_builtin(&sum, TRD_OP_SUM, TRD_INT64) != TRD_OK) {
        fprintf(stderr, "rank %d: set-up: %s\n", me, trd_errmsg());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    every_collective(c, mat);
    persistent(c, mat, sum);
    if (multiple && provided == MPI_THREAD_MULTIPLE)
        progress(c, sum);
    else if (multiple && me == 0)
        printf("note: MPI gave thread level %d, not MPI_THREAD_MULTIPLE: no progress test\n",
               provided);
    trd_comm_free(c);
    trd_op_free(mat);
    trd_op_free(sum);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("requests over MPI (%s): %d failed checks\n", multiple ? "multiple" : "single",
               all);
    MPI_Finalize();
    return all ? 1 : 0;
}
