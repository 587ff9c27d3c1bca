/* reduce_threads.c: the treduce runtime from a C program, ranks as threads.
 *
 * Four threads each hold 1000 doubles; they allreduce them (sum) with the
 * ring algorithm, then reduce a non-commutative checker (2x2 matrix
 * products) to rank 3 with the optimal greedy tree of a calibrated cost
 * model, and check both results.
 *
 *   cc reduce_threads.c -ltreduce    (or build/examples/reduce_threads)
 */
#include <stdio.h>
#include <string.h>

#include "treduce/treduce.h"

#define P 4
#define COUNT 1000

static int allreduce_sum(trd_comm *comm)
{
    int r = trd_comm_rank(comm);
    double in[COUNT], out[COUNT];
    for (int i = 0; i < COUNT; i++)
        in[i] = r + i; /* small integers: exact in any order */
    trd_op *sum;
    trd_op_builtin(&sum, TRD_OP_SUM, TRD_DOUBLE);
    trd_coll_opts opts;
    trd_coll_opts_init(&opts);
    opts.algo = "ring";
    trd_status st = trd_allreduce(comm, in, out, COUNT, sum, &opts);
    trd_op_free(sum);
    if (st != TRD_OK) {
        fprintf(stderr, "rank %d: %s\n", r, trd_errmsg());
        return 0;
    }
    for (int i = 0; i < COUNT; i++) /* sum over r of (r + i) */
        if (out[i] != P * (P - 1) / 2 + (double)P * i)
            return 0;
    return 1;
}

static int reduce_matrices(trd_comm *comm)
{
    int r = trd_comm_rank(comm), root = P - 1;
    trd_matrix2x2 in[COUNT], out[COUNT], want[COUNT];
    trd_op *mat;
    trd_op_matrix2x2(&mat);
    trd_matrix2x2_fill(in, COUNT, r);
    trd_coll_opts opts;
    trd_coll_opts_init(&opts);
    opts.algo = "greedy";
    trd_status st = trd_comm_calibrate(comm, mat, COUNT, &opts); /* sets d, c, latency */
    if (st == TRD_OK)
        st = trd_reduce(comm, in, out, COUNT, mat, root, &opts);
    trd_op_free(mat);
    if (st != TRD_OK) {
        fprintf(stderr, "rank %d: %s\n", r, trd_errmsg());
        return 0;
    }
    if (r != root)
        return 1;
    trd_matrix2x2_expected(want, COUNT, 0, P - 1); /* M(0) x M(1) x ... x M(P-1) */
    return memcmp(out, want, sizeof want) == 0;
}

/* Rank r's part: both collectives, checked; ok[r] says whether both were. */
static trd_status rank_main(trd_comm *comm, void *ctx)
{
    int *ok = ctx;
    ok[trd_comm_rank(comm)] = allreduce_sum(comm) && reduce_matrices(comm);
    return TRD_OK;
}

int main(void)
{
    int ok[P] = {0};
    if (trd_comm_threads_run(P, NULL, rank_main, ok) != TRD_OK) { /* P threads, then joined */
        fprintf(stderr, "%s\n", trd_errmsg());
        return 1;
    }
    int all = 1;
    for (int r = 0; r < P; r++)
        all = all && ok[r];
    printf("%s\n", all ? "ring allreduce and greedy matrix reduce: correct"
                       : "WRONG RESULT");
    return all ? 0 : 1;
}
