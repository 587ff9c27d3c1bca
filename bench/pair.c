/* bench_pair: one treduce collective and the MPI library's own, alternated
 * call by call in one program, so that both see the same moments of a
 * noisy machine (treduce bench times them in separate series).
 *
 *   mpirun -np P build/bench/bench_pair [--algo NAME|auto] [--allreduce]
 *          [--count N] [--calls K] [--tune=T]
 *
 * Each of the K rounds: MPI_Barrier, time trd_reduce (or trd_allreduce) of
 * N doubles (sum, to rank 0); MPI_Barrier, time MPI_Reduce (MPI_Allreduce).
 * A call's time is the slowest rank's; the first tenth of the rounds are
 * warm-up.  Prints both medians and their ratio, the baseline measured in
 * the same run (docs/BENCHMARKS.md quotes it for per-call costs and the
 * two-rank reduce of the combine kernels). */
#include <getopt.h>
#include <limits.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "treduce/treduce.h"

typedef struct pair_args {
    const char *algo;
    int allreduce;
    long count, calls, tune;
} pair_args;

static int usage(const char *why)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) /* every rank parses the same arguments: one message */
        fprintf(stderr, "bench_pair: %s\nusage: mpirun -np P bench_pair [--algo NAME|auto] "
                "[--allreduce] [--count N, 1 to INT_MAX] [--calls K >= 10] [--tune=T (0 to "
                "%d)]\n", why, TRD_TUNE_MAX);
    return 2;
}

static int parse(int argc, char **argv, pair_args *a)
{
    static const struct option opts[] = {
        {"algo", required_argument, 0, 'a'}, {"allreduce", no_argument, 0, 'r'},
        {"count", required_argument, 0, 'n'}, {"calls", required_argument, 0, 'k'},
        {"tune", required_argument, 0, 't'},  {0, 0, 0, 0}};
    *a = (pair_args){.algo = "binomial", .count = 1, .calls = 2000};
    opterr = 0; /* usage() says it once, on rank 0 */
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        char *end = NULL;
        long v = optarg ? strtol(optarg, &end, 10) : 0;
        bool bad = optarg && (end == optarg || *end);
        if (c == 'a')
            a->algo = optarg;
        else if (c == 'r')
            a->allreduce = 1;
        else if (c == 'n' && !bad && v >= 1 && v <= INT_MAX)
            a->count = v;
        else if (c == 'k' && !bad && v >= 10)
            a->calls = v;
        else if (c == 't' && !bad && v >= 0 && v <= TRD_TUNE_MAX)
            a->tune = v;
        else
            return usage(c == '?' ? "unknown option" : "invalid value");
    }
    return optind < argc ? usage("unexpected argument") : 0;
}

/* One timed call of treduce (which = 0) or of the MPI library (1). */
static double time_call(int which, trd_comm *comm, const trd_op *sum, const trd_coll_opts *o,
                        const pair_args *a, const double *in, double *out, trd_status *st)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (which == 0)
        *st = a->allreduce ? trd_allreduce(comm, in, out, a->count, sum, o)
                           : trd_reduce(comm, in, out, a->count, sum, 0, o);
    else if (a->allreduce)
        MPI_Allreduce(in, out, (int)a->count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    else
        MPI_Reduce(in, out, (int)a->count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

/* The median of the slowest rank's times, warm-up dropped (rank 0). */
static double slowest_median(double *t, long calls, int rank)
{
    double *all = rank == 0 ? malloc((size_t)calls * sizeof *all) : NULL;
    MPI_Reduce(t, all, (int)calls, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    double m = rank == 0 && all ? median(all + calls / 10, (int)(calls - calls / 10)) : 0.0;
    free(all);
    return m;
}

static int run(const pair_args *a, int rank)
{
    trd_comm *comm = NULL;
    trd_op *sum = NULL;
    double *in = malloc((size_t)a->count * sizeof *in);
    double *out = malloc((size_t)a->count * sizeof *out);
    double *t[2] = {malloc((size_t)a->calls * sizeof(double)),
                    malloc((size_t)a->calls * sizeof(double))};
    trd_status st = !in || !out || !t[0] || !t[1] ? TRD_ENOMEM : TRD_OK;
    if (st == TRD_OK)
        st = trd_comm_mpi_create(&comm, NULL, 60);
    if (st == TRD_OK)
        st = trd_op_builtin(&sum, TRD_OP_SUM, TRD_DOUBLE);
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = a->algo;
    o.tune = (int32_t)a->tune;
    for (long i = 0; i < a->count && in; i++)
        in[i] = rank + 1 + (double)(i % 7);
    for (long k = 0; k < a->calls && st == TRD_OK; k++)
        for (int which = 0; which < 2 && st == TRD_OK; which++)
            t[which][k] = time_call(which, comm, sum, &o, a, in, out, &st);
    if (st != TRD_OK) {
        fprintf(stderr, "bench_pair: rank %d: %s\n", rank, trd_errmsg());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double mt = slowest_median(t[0], a->calls, rank), mm = slowest_median(t[1], a->calls, rank);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0)
        printf("%s of %ld doubles, %s%s, %d ranks, %ld calls each, rings up to %zu bytes: "
               "treduce %.3f us, MPI %.3f us, treduce / MPI %.3f\n",
               a->allreduce ? "allreduce" : "reduce", a->count, a->algo,
               a->tune ? " (tuned)" : "", size, a->calls, trd_comm_shm_max(comm), mt * 1e6,
               mm * 1e6, mt / mm);
    trd_op_free(sum);
    trd_comm_free(comm);
    free(in);
    free(out);
    free(t[0]);
    free(t[1]);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    pair_args a;
    int rc = parse(argc, argv, &a);
    if (rc == 0)
        rc = run(&a, rank);
    MPI_Finalize();
    return rc;
}
