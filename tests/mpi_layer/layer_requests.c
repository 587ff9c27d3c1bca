/* layer_requests.c: the nonblocking reductions - MPI_Iallreduce,
 * MPI_Ireduce, MPI_Ireduce_scatter_block, MPI_Ireduce_scatter, MPI_Iscan,
 * MPI_Iexscan - completed by every MPI function on requests, each result
 * compared with a fold the program computes itself in rank order.
 *
 * LEVEL (first argument): `single` (MPI_Init) or `multiple`
 * (MPI_Init_thread, MPI_THREAD_MULTIPLE: where the layer runs them).
 *
 * Every call of every function, at counts 0, 1, 7, 1000 and 100000, with
 * sendbuf and in place, on MPI_COMM_WORLD and on a split whose ranks run
 * in reverse world order, with the product of 2x2 matrices (MPI_Op_create
 * non-commutative: a lost, duplicated or reordered contribution changes
 * it) and MPI_SUM on MPI_DOUBLE, is completed by the next of: MPI_Wait;
 * MPI_Waitall with a point-to-point exchange around the ring; MPI_Waitany
 * with an MPI_Ibarrier (MPI's own request); MPI_Testsome, MPI_Testall,
 * MPI_Testany and MPI_Test loops; MPI_Request_get_status until done, then
 * MPI_Wait.  A status says not cancelled.  Exscan's rank 0 keeps its
 * recvbuf.  Then: two communicators started in opposite orders by odd and
 * even ranks (legal: each keeps its own order), a blocking allreduce on
 * one of them, then both waited together.
 * (MPI_Request_free and MPI_Cancel on a collective's request are
 * erroneous, MPI-3.1 Sec. 5.12: not called.)
 *
 * --progress (layer at `multiple`): rank 0 starts an allreduce and then
 * computes for 0.6 s without calling MPI; the other ranks' waits must end
 * within 0.3 s - the call advanced on rank 0 without it.
 * --deadline (layer, TREDUCE_MPI_TIMEOUT=1): rank 1 starts an allreduce
 * 3 s after the others, whose waits must return MPI_ERR_OTHER within 2.5
 * s, their recvbuf untouched afterwards; the next call runs (by MPI) and is
 * right. */
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "layer_test.h"

enum { ALLREDUCE, REDUCE, RS_BLOCK, RS, SCAN, EXSCAN, NFNS };
static const char *const fn_names[NFNS] = {"MPI_Iallreduce", "MPI_Ireduce",
                                           "MPI_Ireduce_scatter_block", "MPI_Ireduce_scatter",
                                           "MPI_Iscan", "MPI_Iexscan"};
#define SENTINEL 0x5A5A5A5A5A5A5A5Aull
static MPI_Op mat_op;
static int salt, method;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Element i of comm rank r's input: a matrix, or a small integer as a
 * double (exact in any order). */
static uint64_t gen(const on *x, int r, int64_t i, bool matrix)
{
    uint64_t m = t_mat16((uint64_t)x->members[r] * 7919 + (uint64_t)salt, (uint64_t)i);
    return matrix ? m : (uint64_t)(m % 1000);
}

static void put(uint64_t *buf, int64_t k, uint64_t v, bool matrix)
{
    if (matrix)
        buf[k] = v;
    else
        ((double *)buf)[k] = (double)v;
}

/* The fold over comm ranks lo..hi of n elements from element first. */
static void fold(const on *x, uint64_t *buf, int64_t n, int lo, int hi, int64_t first,
                 bool matrix)
{
    for (int64_t k = 0; k < n; k++) {
        uint64_t acc = gen(x, lo, first + k, matrix);
        for (int r = lo + 1; r <= hi; r++)
            acc = matrix ? t_mat16_mul(acc, gen(x, r, first + k, matrix))
                         : acc + gen(x, r, first + k, matrix);
        put(buf, k, acc, matrix);
    }
}

/* The request completed by the next method, with MPI's own requests around it. */
static void complete(MPI_Request *req, MPI_Comm comm, const char *what)
{
    int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size, token = t_rank;
    int got = -1, flag = 0, index = -1, outcount = 0, idx[3], cancelled = 1;
    MPI_Request r[3] = {*req, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st[3];
    int m = method++ % 8;
    if (m == 1 || m == 3) {
        MPI_Irecv(&got, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &r[1]);
        MPI_Isend(&token, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &r[2]);
    }
    switch (m) {
    case 0: MPI_Wait(&r[0], &st[0]); break;
    case 1: MPI_Waitall(3, r, st); break;
    case 2:
        r[1] = r[0];
        MPI_Ibarrier(comm, &r[0]);
        for (int done = 0; done < 2; done++)
            MPI_Waitany(2, r, &index, &st[0]);
        break;
    case 3:
        for (int pending = 3; pending > 0; pending -= outcount)
            MPI_Testsome(3, r, &outcount, idx, st);
        break;
    case 4: while (!flag) MPI_Testall(1, r, &flag, st); break;
    case 5:
        while (!flag) MPI_Testany(1, r, &index, &flag, &st[0]);
        break;
    case 6: while (!flag) MPI_Test(&r[0], &flag, &st[0]); break;
    default:
        while (!flag)
            MPI_Request_get_status(r[0], &flag, &st[0]);
        MPI_Wait(&r[0], &st[0]);
    }
    if (m != 2 && m != 3)
        MPI_Test_cancelled(&st[0], &cancelled);
    CHECK(m == 2 || m == 3 || !cancelled, "%s: the status says cancelled", what);
    CHECK(r[0] == MPI_REQUEST_NULL, "%s (method %d): the request was not freed", what, m);
    CHECK((m != 1 && m != 3) || got == left, "%s: the exchange beside it got %d", what, got);
    *req = MPI_REQUEST_NULL;
}

/* Starts fn on x: count elements (a reduce-scatter: per rank). */
static void start(int fn, const on *x, const void *send, void *recv, int count,
                  const int *counts, MPI_Datatype dt, MPI_Op op, MPI_Request *req)
{
    switch (fn) {
    case ALLREDUCE: MPI_Iallreduce(send, recv, count, dt, op, x->comm, req); break;
    case REDUCE: MPI_Ireduce(send, recv, count, dt, op, x->n - 1, x->comm, req); break;
    case RS_BLOCK: MPI_Ireduce_scatter_block(send, recv, count, dt, op, x->comm, req); break;
    case RS: MPI_Ireduce_scatter(send, recv, counts, dt, op, x->comm, req); break;
    case SCAN: MPI_Iscan(send, recv, count, dt, op, x->comm, req); break;
    default: MPI_Iexscan(send, recv, count, dt, op, x->comm, req);
    }
}

/* What rank me reads (all elements) and gets (elements [first, first + mine)
 * of the fold over ranks lo..hi; hi < lo: nothing). */
static void shape(int fn, const on *x, int count, int *counts, int64_t *total,
                  int64_t *first, int64_t *mine, int *hi)
{
    *total = *mine = count;
    *first = 0;
    *hi = fn == SCAN ? x->me : fn == EXSCAN ? x->me - 1 : x->n - 1;
    if (fn == REDUCE && x->me != x->n - 1)
        *hi = -1;
    for (int r = 0; r < x->n; r++)
        counts[r] = fn == RS ? (count && (r + count) % 3 ? count / 2 + r : 0) : count;
    if (fn == RS_BLOCK || fn == RS) {
        *total = 0;
        for (int r = 0; r < x->n; r++) {
            *first += r < x->me ? counts[r] : 0;
            *total += counts[r];
        }
        *mine = counts[x->me];
    }
}

static void one_call(int fn, const on *x, int count, bool in_place, bool matrix)
{
    in_place = in_place && (fn != REDUCE || x->me == x->n - 1); /* MPI: at the root only */
    int *counts = malloc((size_t)x->n * sizeof *counts), hi;
    int64_t total, first, mine;
    shape(fn, x, count, counts, &total, &first, &mine, &hi);
    if (t_mpich_breaks_rs_in_place(in_place, fn == RS, total)) {
        free(counts);
        return;
    }
    size_t bytes = (size_t)(total > 0 ? total : 1) * sizeof(uint64_t);
    uint64_t *in = malloc(bytes), *out = malloc(bytes), *want = malloc(bytes);
    for (int64_t k = 0; k < total; k++)
        put(in, k, gen(x, x->me, k, matrix), matrix);
    for (int64_t k = 0; k < total; k++)
        out[k] = want[k] = in_place ? in[k] : SENTINEL;
    if (hi >= 0)
        fold(x, want, mine, 0, hi, first, matrix);
    MPI_Request req;
    char what[160];
    snprintf(what, sizeof what, "%s%s, %s, count %d, on %s", fn_names[fn],
             in_place ? " in place" : "", matrix ? "matrices" : "MPI_SUM", count, x->name);
    start(fn, x, in_place ? MPI_IN_PLACE : in, out, count, counts,
          matrix ? MPI_UINT64_T : MPI_DOUBLE, matrix ? mat_op : MPI_SUM, &req);
    complete(&req, x->comm, what);
    /* in place, the result is at the start; a rank without one keeps its buffer */
    int64_t n = hi >= 0 ? mine : fn == REDUCE ? 0 : in_place ? total : mine;
    CHECK(!memcmp(out, want, (size_t)n * sizeof *out), "%s: wrong", what);
    free(in);
    free(out);
    free(want);
    free(counts);
    salt++;
}

static void all_calls(MPI_Comm comm, const char *name)
{
    static const int sizes[] = {0, 1, 7, 1000, 100000};
    on x = t_on(comm, name);
    for (int fn = 0; fn < NFNS; fn++)
        for (int i = 0; i < 5; i++)
            for (int in_place = 0; in_place < 2; in_place++)
                for (int matrix = 0; matrix < 2; matrix++)
                    one_call(fn, &x, sizes[i], in_place, matrix);
    t_on_free(&x);
}

/* The same product, another function: an operator new to the layer. */
static void mat16_again(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    t_mat16_fn(in, inout, len, dt);
}

/* Even ranks start on a then b, odd ranks b then a. */
static void crossed(MPI_Comm a, MPI_Comm b)
{
    enum { N = 1 << 17 }; /* long enough to be running at the blocking call */
    double *in[2], *out[2];
    MPI_Request r[2];
    for (int i = 0; i < 2; i++) {
        in[i] = malloc(N * sizeof(double));
        out[i] = malloc(N * sizeof(double));
        for (int k = 0; k < N; k++)
            in[i][k] = t_rank + k % 64;
    }
    int first = t_rank % 2;
    MPI_Iallreduce(in[first], out[first], N, MPI_DOUBLE, MPI_SUM, first ? b : a, &r[first]);
    MPI_Iallreduce(in[!first], out[!first], N, MPI_DOUBLE, MPI_SUM, first ? a : b,
                   &r[!first]);
    uint64_t m = t_mat16((uint64_t)t_rank, 5), all[2] = {m, m}, fold = t_mat16(0, 5);
    for (int w = 1; w < t_size; w++)
        fold = t_mat16_mul(fold, t_mat16((uint64_t)w, 5));
    /* a blocking call while both are started: after them on a (MPI's order),
     * with an operator new to the layer (whose cost the ranks agree on) */
    MPI_Op fresh;
    MPI_Op_create(mat16_again, 0, &fresh);
    MPI_Allreduce(MPI_IN_PLACE, all, 2, MPI_UINT64_T, fresh, a);
    MPI_Op_free(&fresh);
    MPI_Status st[2]; /* not MPI_STATUSES_IGNORE: MPICH's trips gcc's access checks */
    MPI_Waitall(2, r, st);
    double want = t_size * (t_size - 1) / 2.0 + 63.0 * t_size;
    CHECK(out[0][N - 1] == want && out[1][N - 1] == want, "two communicators started in "
          "opposite orders: %g, %g, want %g", out[0][N - 1], out[1][N - 1], want);
    for (int i = 0; i < 2; i++) {
        free(in[i]);
        free(out[i]);
    }
    CHECK(all[0] == fold && all[1] == fold, "a blocking allreduce between the starts and "
          "the wait: wrong");
}

static void progress(void)
{
    static double in[1000], out[1000];
    MPI_Request r;
    MPI_Iallreduce(in, out, 1000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r); /* measured, */
    MPI_Wait(&r, MPI_STATUS_IGNORE); /* chosen and set up: the timed call runs alone */
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    MPI_Iallreduce(in, out, 1000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
    volatile double sink = 0;
    while (t_rank == 0 && now() - t0 < 0.6)
        sink += 1.0; /* computing, no MPI call */
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    double waited = now() - t0;
    CHECK(t_rank == 0 || waited < 0.3, "rank 0 computed 0.6 s without MPI calls, and this "
          "rank's wait took %.3f s: the call did not advance meanwhile (%g)", waited, sink);
}

static void deadline(void)
{
    uint64_t in[8], out[8], kept[8];
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    /* a generalized request's error: Open MPI raises it on MPI_COMM_WORLD */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int k = 0; k < 8; k++)
        in[k] = (uint64_t)t_rank + (uint64_t)k;
    MPI_Request r;
    MPI_Iallreduce(in, out, 8, MPI_UINT64_T, MPI_SUM, comm, &r); /* treduce set up */
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (t_rank == 1)
        sleep(3);
    memset(out, 0x33, sizeof out);
    double t0 = now();
    MPI_Iallreduce(in, out, 8, MPI_UINT64_T, MPI_SUM, comm, &r);
    int rc = MPI_Wait(&r, MPI_STATUS_IGNORE), cls = -1;
    double waited = now() - t0;
    memcpy(kept, out, sizeof out);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OTHER, "a passed deadline: error class %d", cls);
    CHECK(t_rank == 1 || waited < 2.5, "a passed deadline: the wait took %.2f s", waited);
    MPI_Barrier(MPI_COMM_WORLD);
    sleep(1);
    CHECK(!memcmp(out, kept, sizeof out), "recvbuf written after the failed wait returned");
    MPI_Iallreduce(in, out, 8, MPI_UINT64_T, MPI_SUM, comm, &r);
    rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS && out[7] == (uint64_t)(t_size * (t_size - 1) / 2 + 7 * t_size),
          "the call after the failure: rc %d, %llu", rc, (unsigned long long)out[7]);
    MPI_Comm_free(&comm);
}

int main(int argc, char **argv)
{
    bool multiple = argc > 1 && !strcmp(argv[1], "multiple");
    const char *mode = argc > 2 ? argv[2] : "";
    int provided = MPI_THREAD_SINGLE;
    if (multiple)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t_size);
    CHECK(!multiple || provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided");
    MPI_Op_create(t_mat16_fn, 0, &mat_op);
    if (!strcmp(mode, "--progress")) {
        progress();
    } else if (!strcmp(mode, "--deadline")) {
        deadline();
    } else {
        MPI_Comm reversed, other;
        MPI_Comm_split(MPI_COMM_WORLD, 0, t_size - t_rank, &reversed);
        MPI_Comm_dup(MPI_COMM_WORLD, &other);
        all_calls(MPI_COMM_WORLD, "MPI_COMM_WORLD");
        all_calls(reversed, "a split in reverse order");
        crossed(MPI_COMM_WORLD, other);
        MPI_Comm_free(&reversed);
        MPI_Comm_free(&other);
    }
    MPI_Op_free(&mat_op);
    return t_finish("layer_requests");
}
