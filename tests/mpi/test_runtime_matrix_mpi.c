/* test_runtime_matrix_mpi.c: the runtime's correctness matrix over the
 * MPI wire, from the same source as the threads test test_runtime_matrix
 * (tests/runtime_matrix.c): one rank per process, communicators made by
 * trd_comm_mpi_create.  Every registered algorithm x every operator
 * (the non-commutative checkers included) x counts {0, 7, 1200} x {root 0,
 * root p-1, allreduce} x {separate buffers, TRD_IN_PLACE, sendbuf ==
 * recvbuf}, checked against the sequential rank-order fold.  Fewer counts
 * than over threads: under ASan one launch costs seconds, and the threads
 * matrix covers the larger counts on the same engine.  1200 elements of
 * the checkers (16 bytes each) are more than the shared-memory rings'
 * 16 KiB where every rank has a core: long messages take MPI's path.
 *
 * usage: test_runtime_matrix_mpi [P...]: the matrix on the first P
 * processes of the launch for each P given (the others wait), or on all of
 * them without arguments.  run_mpi.sh starts it.  Any failure prints the
 * case (algorithm, operator, count, root, buffer mode) and the rank; every
 * rank then exits with status 1. */
#include <mpi.h>

#include "runtime_matrix.h"

static const int64_t counts[] = {0, 7, 1200};
#define NCOUNTS (sizeof counts / sizeof counts[0])

/* The ranks that run the matrix agree after every case: they leave
 * together, and every call stays matched with its peers'. */
static bool mpi_stop(rtm_run *x, bool mine)
{
    int in = mine, any = 0;
    MPI_Allreduce(&in, &any, 1, MPI_INT, MPI_LOR, *(MPI_Comm *)x->wire_ctx);
    return any != 0;
}

static int mpi_failures(rtm_run *x)
{
    int in = x->log.failures, all = 0;
    MPI_Allreduce(&in, &all, 1, MPI_INT, MPI_SUM, *(MPI_Comm *)x->wire_ctx);
    return all;
}

static const rtm_harness mpi_harness = {"mpi", mpi_stop, mpi_failures};

/* Every algorithm's matrix on the p ranks of group; returns the failures
 * of all of them (the same on each). */
static int run_matrix(MPI_Comm group, int32_t p)
{
    case_list l = {0};
    for (size_t a = 0; a < trd_algo_count(); a++)
        rtm_algo_matrix(&l, a, p, counts, NCOUNTS, 1000 * (uint64_t)p + 100 * a);
    int me;
    MPI_Comm_rank(group, &me);
    trd_comm *comm = NULL;
    rtm_run x;
    trd_status st = rtm_run_init(&x, &l, p, &mpi_harness);
    if (st == TRD_OK)
        st = trd_comm_mpi_create(&comm, &group, RT_TIMEOUT_S);
    x.wire_ctx = &group;
    if (st != TRD_OK)
        rt_failf(&x.log, "mpi p=%d rank %d: set-up failed: %s", (int)p, me, trd_errmsg());
    else if ((st = rtm_rank(comm, me, &x)) != TRD_OK)
        rt_failf(&x.log, "mpi p=%d rank %d: %s", (int)p, me, trd_errmsg());
    trd_comm_free(comm);
    int failures = mpi_failures(&x);
    if (me == 0)
        printf("mpi p=%d: %zu cases (%ld refused, %ld skipped), %ld run, %d failure(s)\n",
               (int)p, l.len, atomic_load(&x.refused), atomic_load(&x.skipped),
               atomic_load(&x.done), failures);
    rtm_run_done(&x);
    free(l.v);
    return failures;
}

int main(int argc, char **argv)
{
    int me, size, failures = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int nsizes = argc > 1 ? argc - 1 : 1;
    for (int i = 0; i < nsizes; i++) {
        int p = argc > 1 ? atoi(argv[i + 1]) : size;
        if (p < 1 || p > size) {
            if (me == 0)
                fprintf(stderr, "p = %s: not 1 to %d (the launch's size)\n", argv[i + 1], size);
            failures++;
            continue;
        }
        MPI_Comm group;
        MPI_Comm_split(MPI_COMM_WORLD, me < p ? 0 : MPI_UNDEFINED, me, &group);
        if (me < p) {
            failures += run_matrix(group, p);
            MPI_Comm_free(&group);
        }
        MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    if (me == 0)
        printf("test_runtime_matrix_mpi: %s\n", failures ? "FAILED" : "all cases passed");
    MPI_Finalize();
    return failures ? 1 : 0;
}
