/* mpi_layer.c: bench_mpi_layer, an ordinary MPI program (mpi.h only) that
 * times MPI_Reduce or MPI_Allreduce; bench/run_mpi_layer.sh runs it with
 * and without LD_PRELOAD=libtreduce_mpi.so (docs/BENCHMARKS.md).
 *
 *   bench_mpi_layer --kind reduce|allreduce [--op sum|costly] [--cost-us U]
 *                   [--sizes 8,32,...] [--seconds S] [--reps N]
 *
 * sum: MPI_SUM on doubles.  costly: a commutative user operator (MPI_Op_create)
 * that adds doubles and sleeps U microseconds per call (default 200), as an
 * operator that costs per call.  Per size: three warm-up calls (the first
 * pays any set-up), then repetitions of barrier, time, call, time - as many
 * as fit in about S seconds (default 0.3; 5 to 500, decided by rank 0) -
 * the slowest rank's time per repetition (--reps: exactly N; for
 * instruction counts under callgrind), the median printed in
 * microseconds: "SIZE_BYTES MEDIAN_US" per line.  The result is checked
 * (every rank contributes 1 per element); a wrong one exits 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS_MIN 5
#define REPS_MAX 500

static long cost_ns = 200000;

static void costly_sum(void *in, void *io, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((double *)io)[i] += ((double *)in)[i];
    struct timespec t = {cost_ns / 1000000000L, cost_ns % 1000000000L};
    nanosleep(&t, NULL);
}

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static long parse_size(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    return *end == 'K' ? v << 10 : *end == 'M' ? v << 20 : v;
}

typedef struct args {
    int allreduce;
    MPI_Op op;
    double seconds;
    int reps; /* 0: from seconds */
    long sizes[32];
    int nsizes;
} args;

/* One call, and whether its result is right (p in every element). */
static int call(const args *a, const double *in, double *out, int n, int rank, int size)
{
    int rc = a->allreduce ? MPI_Allreduce(in, out, n, MPI_DOUBLE, a->op, MPI_COMM_WORLD)
                          : MPI_Reduce(in, out, n, MPI_DOUBLE, a->op, 0, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS && ((!a->allreduce && rank != 0) || n == 0 ||
                                 (out[0] == size && out[n - 1] == size));
}

/* The median over repetitions of the slowest rank's time of one call. */
static double time_size(const args *a, int n, int rank, int size, double *in, double *out)
{
    int ok = 1, reps;
    double t0 = MPI_Wtime();
    for (int w = 0; w < 3; w++) {
        if (w == 1)
            t0 = MPI_Wtime(); /* the first warm-up may set things up */
        ok &= call(a, in, out, n, rank, size);
    }
    reps = (int)(a->seconds / ((MPI_Wtime() - t0) / 2 + 1e-6));
    reps = reps < REPS_MIN ? REPS_MIN : reps > REPS_MAX ? REPS_MAX : reps;
    reps = a->reps > 0 ? a->reps : reps;
    MPI_Bcast(&reps, 1, MPI_INT, 0, MPI_COMM_WORLD);
    double *mine = malloc((size_t)reps * sizeof *mine), *all = NULL;
    for (int r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t = MPI_Wtime();
        ok &= call(a, in, out, n, rank, size);
        mine[r] = MPI_Wtime() - t;
    }
    if (rank == 0)
        all = malloc((size_t)reps * (size_t)size * sizeof *all);
    MPI_Gather(mine, reps, MPI_DOUBLE, all, reps, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double median = 0;
    for (int r = 0; rank == 0 && r < reps; r++) {
        mine[r] = 0;
        for (int p = 0; p < size; p++)
            mine[r] = all[p * reps + r] > mine[r] ? all[p * reps + r] : mine[r];
    }
    if (rank == 0) {
        qsort(mine, (size_t)reps, sizeof *mine, by_value);
        median = mine[reps / 2];
    }
    if (!ok) {
        fprintf(stderr, "rank %d: wrong result at %ld bytes\n", rank, (long)n * 8);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    free(mine);
    free(all);
    return median;
}

static void parse(int argc, char **argv, args *a)
{
    static const char *defaults = "8,32,128,512,2K,8K,32K,128K,512K,2M,8M,16M";
    const char *sizes = defaults;
    *a = (args){.op = MPI_SUM, .seconds = 0.3};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--kind"))
            a->allreduce = !strcmp(argv[i + 1], "allreduce");
        else if (!strcmp(argv[i], "--op") && !strcmp(argv[i + 1], "costly"))
            MPI_Op_create(costly_sum, 1, &a->op);
        else if (!strcmp(argv[i], "--cost-us"))
            cost_ns = (long)(atof(argv[i + 1]) * 1000);
        else if (!strcmp(argv[i], "--sizes"))
            sizes = argv[i + 1];
        else if (!strcmp(argv[i], "--seconds"))
            a->seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps"))
            a->reps = atoi(argv[i + 1]);
    }
    char *copy = strdup(sizes);
    for (char *t = strtok(copy, ","); t && a->nsizes < 32; t = strtok(NULL, ","))
        a->sizes[a->nsizes++] = parse_size(t);
    free(copy);
}

int main(int argc, char **argv)
{
    int rank, size;
    args a;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    parse(argc, argv, &a);
    for (int s = 0; s < a.nsizes; s++) {
        int n = (int)(a.sizes[s] / 8);
        double *in = malloc((size_t)n * 8 + 8), *out = malloc((size_t)n * 8 + 8);
        for (int i = 0; i < n; i++)
            in[i] = 1.0;
        double t = time_size(&a, n, rank, size, in, out);
        if (rank == 0)
            printf("%ld %.3f\n", a.sizes[s], t * 1e6);
        fflush(stdout);
        free(in);
        free(out);
    }
    if (a.op != MPI_SUM)
        MPI_Op_free(&a.op);
    MPI_Finalize();
    return 0;
}
