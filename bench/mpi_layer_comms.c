/* mpi_layer_comms.c: what a new communicator costs, a plain MPI program
 * run with and without libtreduce_mpi.so by run_mpi_layer_comms.sh.
 *
 * The world is measured first (one MPI_Allreduce on it: with the layer,
 * its platform), then ROUNDS times, between barriers: MPI_Comm_dup of
 * the world (the world stays: a fresh duplicate of a measured
 * communicator), CALLS MPI_Allreduce of COUNT doubles on the duplicate,
 * MPI_Comm_free.  Each step is timed on every rank, the slowest rank's
 * kept; the first ROUNDS / 5 rounds are dropped (warm-up).  Prints, per
 * step, the median over the rounds in microseconds:
 *   dup US  first US  later US  free US  (later: the median of calls 2..CALLS)
 * usage: bench_mpi_layer_comms [--count N] [--rounds R] [--calls C]
 * [--keep-last] (--keep-last: each round frees the last round's
 * duplicate, after making its own: no duplicate finds the rings of a
 * freed one to go on with, docs/MPI_LAYER.md "Communicators"). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The slowest rank's time of a step. */
static double slowest(double t)
{
    double max;
    MPI_Allreduce(&t, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return max;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, count = 1, rounds = 50, calls = 5, overlap = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--count") && i + 1 < argc)
            count = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
            calls = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--keep-last"))
            overlap = 1;
        else {
            if (rank == 0)
                fprintf(stderr, "usage: bench_mpi_layer_comms [--count N] [--rounds R] "
                        "[--calls C] [--keep-last]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (count < 1 || rounds < 5 || calls < 2) {
        if (rank == 0)
            fprintf(stderr, "bench_mpi_layer_comms: need --count >= 1, --rounds >= 5, "
                    "--calls >= 2\n");
        MPI_Finalize();
        return 2;
    }
    double *x = calloc((size_t)count, sizeof *x), *y = calloc((size_t)count, sizeof *y);
    double *dup = malloc((size_t)rounds * sizeof *dup), *first = malloc((size_t)rounds * sizeof *first);
    double *later = malloc((size_t)rounds * sizeof *later), *fr = malloc((size_t)rounds * sizeof *fr);
    double *each = malloc((size_t)calls * sizeof *each);
    MPI_Allreduce(x, y, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* the world measured */
    MPI_Comm previous = MPI_COMM_NULL;
    for (int r = 0; r < rounds; r++) {
        MPI_Comm c;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        dup[r] = slowest(MPI_Wtime() - t0);
        for (int k = 0; k < calls; k++) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            MPI_Allreduce(x, y, count, MPI_DOUBLE, MPI_SUM, c);
            each[k] = slowest(MPI_Wtime() - t0);
        }
        first[r] = each[0];
        later[r] = median(each + 1, calls - 1);
        MPI_Comm *gone = overlap ? &previous : &c;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        if (*gone != MPI_COMM_NULL)
            MPI_Comm_free(gone);
        fr[r] = slowest(MPI_Wtime() - t0);
        if (overlap)
            previous = c;
    }
    if (previous != MPI_COMM_NULL)
        MPI_Comm_free(&previous);
    int skip = rounds / 5, n = rounds - skip;
    if (rank == 0)
        printf("dup %.2f first %.2f later %.2f free %.2f\n", 1e6 * median(dup + skip, n),
               1e6 * median(first + skip, n), 1e6 * median(later + skip, n),
               1e6 * median(fr + skip, n));
    free(x);
    free(y);
    free(dup);
    free(first);
    free(later);
    free(fr);
    free(each);
    MPI_Finalize();
    return 0;
}
