/* reduce_mpi.c: the treduce runtime from an MPI program.
 *
 *   mpirun -np 4 build/examples/reduce_mpi
 *
 * Each process holds 1000 int64; they are reduced to rank 0 with the
 * Fibonacci tree over MPI point-to-point (treduce's own algorithm, not
 * MPI_Reduce), then checked against the closed form. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "treduce/treduce.h"

#define COUNT 1000

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    trd_comm *comm;
    if (trd_comm_mpi_create(&comm, NULL, 30.0) != TRD_OK) { /* NULL: MPI_COMM_WORLD */
        fprintf(stderr, "%s\n", trd_errmsg());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int r = trd_comm_rank(comm), p = trd_comm_size(comm);
    int64_t in[COUNT], out[COUNT];
    for (int i = 0; i < COUNT; i++)
        in[i] = (int64_t)r * i;
    trd_op *sum;
    trd_op_builtin(&sum, TRD_OP_SUM, TRD_INT64);
    trd_coll_opts opts;
    trd_coll_opts_init(&opts);
    opts.algo = "fibonacci";
    int ok = trd_reduce(comm, in, out, COUNT, sum, 0, &opts) == TRD_OK;
    if (!ok)
        fprintf(stderr, "rank %d: %s\n", r, trd_errmsg());
    for (int i = 0; ok && r == 0 && i < COUNT; i++) /* sum over r of r*i */
        ok = out[i] == (int64_t)p * (p - 1) / 2 * i;
    if (r == 0)
        printf("%s\n", ok ? "fibonacci reduce over MPI: correct" : "WRONG RESULT");
    trd_op_free(sum);
    trd_comm_free(comm);
    MPI_Finalize();
    return ok ? 0 : 1;
}
