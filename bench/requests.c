/* bench_requests: treduce's persistent and nonblocking allreduce over MPI
 * against the blocking call and the MPI library's own, alternated in one
 * program so that every series sees the same moments of a noisy machine.
 *
 *   mpirun -np P build/bench/bench_requests persistent [--bytes B] [--calls K]
 *          [--algo NAME|auto] [--thread single|multiple]
 *   mpirun -np P build/bench/bench_requests overlap [--bytes B] [--rounds R]
 *          [--algo NAME|auto] [--thread single|multiple]
 *
 * Defaults: --bytes 8, --calls 2000, --rounds 7, --algo recursive-doubling,
 * --thread single.  B: bytes of doubles per rank (suffix K or M = x1024);
 * --thread multiple asks for MPI_THREAD_MULTIPLE, where the communicator's
 * progress thread runs started calls (docs/RUNTIME.md, "Nonblocking and
 * persistent calls"); single is plain MPI_Init, where they run inside the
 * wait.
 *
 * persistent: each of K rounds runs, after a barrier each and in an order
 * that rotates round by round, MPI_Allreduce; trd_allreduce on a
 * communicator that never started a request; trd_allreduce on the
 * communicator that holds the persistent request; trd_start +
 * trd_request_wait of that request (trd_allreduce_init once).  A call's
 * time is the slowest rank's, the first tenth of the rounds are warm-up;
 * prints the medians and persistent / blocking, blocking / MPI.
 *
 * overlap: the overlap figure of a started allreduce while every rank
 * computes with no call of treduce or MPI: a compute loop of a fixed
 * number of iterations (calibrated at the start so that all ranks
 * computing at once take about the allreduce's time), then R rounds of,
 * in a rotating order, the allreduce alone (started, then waited), the
 * compute alone, and start + compute + wait, for treduce's trd_iallreduce
 * and for the MPI library's MPI_Iallreduce.  Per round, from the slowest
 * rank's times: overlap = (t_comm + t_compute - t_total) / min(t_comm,
 * t_compute), 1 when the reduction hides entirely behind the computation,
 * 0 when nothing overlaps; printed: the median over the rounds (the times
 * of one round are adjacent, so a VM whose speed drifts between rounds
 * moves all three together), next to each series' median time, and the
 * CPU time all ranks spend during each reduction alone (what a computation
 * that fills every core must give up to it).
 *
 * Every result is checked (each rank's input is rank + 1 + i % 7); a wrong
 * one aborts. */
#include <getopt.h>
#include <limits.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "treduce/mpi.h"
#include "treduce/treduce.h"

typedef struct req_args {
    bool overlap, multiple;
    const char *algo;
    long count, calls, rounds;
} req_args;

static int me, np;

static int usage(const char *why)
{
    if (me == 0) /* every rank parses the same arguments: one message */
        fprintf(stderr, "bench_requests: %s\nusage: mpirun -np P bench_requests "
                "persistent|overlap [--bytes B (multiple of 8; K, M)] [--calls K >= 10] "
                "[--rounds R >= 1] [--algo NAME|auto] [--thread single|multiple]\n", why);
    return 2;
}

static long parse_bytes(const char *s)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (end == s || v < 1)
        return -1;
    long unit = *end == 'K' ? 1L << 10 : *end == 'M' ? 1L << 20 : *end ? -1 : 1;
    if (unit < 0 || (*end && end[1]) || v > LONG_MAX / unit)
        return -1;
    v *= unit;
    return v < 8 || v % 8 || v / 8 > INT_MAX ? -1 : v;
}

static int parse(int argc, char **argv, req_args *a)
{
    static const struct option opts[] = {
        {"bytes", required_argument, 0, 'b'}, {"calls", required_argument, 0, 'k'},
        {"rounds", required_argument, 0, 'r'}, {"algo", required_argument, 0, 'a'},
        {"thread", required_argument, 0, 't'}, {0, 0, 0, 0}};
    *a = (req_args){.algo = "recursive-doubling", .count = 1, .calls = 2000, .rounds = 7};
    if (argc < 2 || (strcmp(argv[1], "persistent") && strcmp(argv[1], "overlap")))
        return usage("the first argument is persistent or overlap");
    a->overlap = !strcmp(argv[1], "overlap");
    opterr = 0; /* usage() says it once, on rank 0 */
    optind = 2;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        char *end = NULL;
        long v = optarg ? strtol(optarg, &end, 10) : 0;
        bool bad = optarg && (end == optarg || *end);
        if (c == 'b' && parse_bytes(optarg) > 0)
            a->count = parse_bytes(optarg) / 8;
        else if (c == 'k' && !bad && v >= 10)
            a->calls = v;
        else if (c == 'r' && !bad && v >= 1)
            a->rounds = v;
        else if (c == 'a')
            a->algo = optarg;
        else if (c == 't' && (!strcmp(optarg, "single") || !strcmp(optarg, "multiple")))
            a->multiple = !strcmp(optarg, "multiple");
        else
            return usage(c == '?' ? "unknown option" : "invalid value");
    }
    return optind < argc ? usage("unexpected argument") : 0;
}

static void fail(const char *what)
{
    fprintf(stderr, "bench_requests: rank %d: %s: %s\n", me, what, trd_errmsg());
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* The result every rank gets: sum over r of (r + 1 + i % 7). */
static void check(const double *out, long count, const char *what)
{
    for (long i = 0; i < count; i++)
        if (out[i] != (double)np * (np + 1) / 2 + (double)np * (double)(i % 7)) {
            fprintf(stderr, "bench_requests: rank %d: %s: wrong result at %ld\n", me, what, i);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
}

/* The median of the slowest rank's times t[from..n-1] (on rank 0). */
static double slowest_median(const double *t, long n, long from)
{
    double *all = malloc((size_t)n * sizeof *all);
    if (!all)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Allreduce(t, all, (int)n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double m = median(all + from, (int)(n - from));
    free(all);
    return m;
}

/* ---- persistent ---- */

enum { S_MPI, S_BLOCK_FRESH, S_BLOCK_SAME, S_PERSISTENT, S_COUNT };

static void persistent(const req_args *a, const trd_op *sum, const trd_coll_opts *o,
                       double *in, double *out)
{
    trd_comm *fresh = NULL, *same = NULL;
    trd_request *req = NULL;
    if (trd_comm_mpi_create(&fresh, NULL, 60) != TRD_OK ||
        trd_comm_mpi_create(&same, NULL, 60) != TRD_OK)
        fail("trd_comm_mpi_create");
    if (trd_allreduce_init(same, in, out, a->count, sum, o, &req) != TRD_OK)
        fail("trd_allreduce_init");
    double *t[S_COUNT];
    for (int s = 0; s < S_COUNT; s++)
        if (!(t[s] = malloc((size_t)a->calls * sizeof(double))))
            MPI_Abort(MPI_COMM_WORLD, 1);
    static const char *names[S_COUNT] = {"MPI_Allreduce", "trd_allreduce (fresh comm)",
                                         "trd_allreduce (request's comm)", "trd_start + wait"};
    for (long k = 0; k < a->calls; k++)
        for (int j = 0; j < S_COUNT; j++) {
            int s = (int)((j + k) % S_COUNT); /* no series always first after another */
            memset(out, 0, (size_t)a->count * sizeof *out);
            trd_status st = TRD_OK;
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (s == S_MPI)
                MPI_Allreduce(in, out, (int)a->count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            else if (s == S_BLOCK_FRESH)
                st = trd_allreduce(fresh, in, out, a->count, sum, o);
            else if (s == S_BLOCK_SAME)
                st = trd_allreduce(same, in, out, a->count, sum, o);
            else if ((st = trd_start(req)) == TRD_OK)
                st = trd_request_wait(req);
            t[s][k] = MPI_Wtime() - t0;
            if (st != TRD_OK)
                fail(names[s]);
            check(out, a->count, names[s]);
        }
    double m[S_COUNT];
    for (int s = 0; s < S_COUNT; s++)
        m[s] = slowest_median(t[s], a->calls, a->calls / 10);
    if (me == 0) {
        printf("allreduce of %ld B, %s, %d ranks, %s, %ld rounds:", a->count * 8, a->algo, np,
               a->multiple ? "MPI_THREAD_MULTIPLE" : "MPI_Init", a->calls);
        for (int s = 0; s < S_COUNT; s++)
            printf(" %s %.3f us;", names[s], m[s] * 1e6);
        printf(" persistent / blocking %.3f (same comm %.3f), blocking / MPI %.3f, "
               "persistent / MPI %.3f\n", m[S_PERSISTENT] / m[S_BLOCK_FRESH],
               m[S_PERSISTENT] / m[S_BLOCK_SAME], m[S_BLOCK_FRESH] / m[S_MPI],
               m[S_PERSISTENT] / m[S_MPI]);
    }
    trd_request_free(req);
    for (int s = 0; s < S_COUNT; s++)
        free(t[s]);
    trd_comm_free(same);
    trd_comm_free(fresh);
}

/* ---- overlap ---- */

/* Work without any call: a dependent chain the compiler cannot shorten
 * (the result is kept), a fixed amount of it, so that a progress thread
 * taking the core shows as a longer computation. */
static double volatile sink;
static void compute(long iters)
{
    double x = 1.0;
    for (long i = 0; i < iters; i++)
        x = x * 1.0000001 + 1e-9;
    sink = x;
}

/* All ranks compute iters at once: the slowest rank's time. */
static double compute_alone(long iters)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    compute(iters);
    double t = MPI_Wtime() - t0, worst = 0;
    MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

enum { O_COMPUTE, O_TRD_ALONE, O_TRD_BOTH, O_MPI_ALONE, O_MPI_BOTH, O_COUNT };

/* This process's CPU time, every thread's (the progress thread's too). */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One timed series step: start, compute (iters, 0: none), wait; *cpu:
 * this process's CPU time over the step. */
static double overlap_step(int s, trd_comm *c, const trd_op *sum, const trd_coll_opts *o,
                           const req_args *a, const double *in, double *out, long iters,
                           double *cpu)
{
    memset(out, 0, (size_t)a->count * sizeof *out);
    trd_request *req = NULL;
    MPI_Request mreq = MPI_REQUEST_NULL;
    bool trd = s == O_TRD_ALONE || s == O_TRD_BOTH, mpi = s == O_MPI_ALONE || s == O_MPI_BOTH;
    bool work = s == O_COMPUTE || s == O_TRD_BOTH || s == O_MPI_BOTH;
    MPI_Barrier(MPI_COMM_WORLD);
    double c0 = cpu_now(), t0 = MPI_Wtime();
    if (trd && trd_iallreduce(c, in, out, a->count, sum, o, &req) != TRD_OK)
        fail("trd_iallreduce");
    if (mpi)
        MPI_Iallreduce(in, out, (int)a->count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &mreq);
    if (work)
        compute(iters);
    if (trd && trd_request_wait(req) != TRD_OK)
        fail("trd_request_wait");
    if (mpi)
        MPI_Wait(&mreq, MPI_STATUS_IGNORE);
    double t = MPI_Wtime() - t0;
    *cpu = cpu_now() - c0;
    trd_request_free(req);
    if (trd || mpi)
        check(out, a->count, trd ? "trd_iallreduce" : "MPI_Iallreduce");
    return t;
}

static void overlap(const req_args *a, const trd_op *sum, const trd_coll_opts *o, double *in,
                    double *out)
{
    trd_comm *c = NULL;
    if (trd_comm_mpi_create(&c, NULL, 600) != TRD_OK)
        fail("trd_comm_mpi_create");
    /* The reduction alone (a warm-up first: plans, rings, connections),
     * then iterations scaled three times to match it (rank 0 decides). */
    double tc[3];
    for (int k = 0; k < 4; k++) {
        double cpu, t = overlap_step(O_TRD_ALONE, c, sum, o, a, in, out, 0, &cpu), w = 0;
        MPI_Allreduce(&t, &w, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (k)
            tc[k - 1] = w;
    }
    double target = median(tc, 3);
    long iters = 1000000;
    for (int k = 0; k < 3; k++) {
        /* the median of 3: one slow moment of the VM must not set the loop */
        double tk[3];
        for (int j = 0; j < 3; j++)
            tk[j] = compute_alone(iters);
        double t = median(tk, 3);
        double scaled = (double)iters * target / (t > 1e-6 ? t : 1e-6);
        iters = scaled < 1 ? 1 : scaled > 1e12 ? (long)1e12 : (long)scaled;
        MPI_Bcast(&iters, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    }
    double *t[O_COUNT], *cpu[O_COUNT];
    for (int s = 0; s < O_COUNT; s++)
        if (!(t[s] = malloc((size_t)a->rounds * sizeof(double))) ||
            !(cpu[s] = malloc((size_t)a->rounds * sizeof(double))))
            MPI_Abort(MPI_COMM_WORLD, 1);
    for (long k = 0; k < a->rounds; k++)
        for (int j = 0; j < O_COUNT; j++) {
            int s = (int)((j + k) % O_COUNT);
            t[s][k] = overlap_step(s, c, sum, o, a, in, out, iters, &cpu[s][k]);
        }
    /* What each reduction alone takes of the machine's cores: the CPU
     * time of all ranks (kernel work on their behalf in softirqs is not
     * counted), which a computation filling every core must give up. */
    double cpu_comm[2];
    for (int w = 0; w < 2; w++) {
        int alone = w ? O_MPI_ALONE : O_TRD_ALONE;
        MPI_Allreduce(MPI_IN_PLACE, cpu[alone], (int)a->rounds, MPI_DOUBLE, MPI_SUM,
                      MPI_COMM_WORLD);
        cpu_comm[w] = median(cpu[alone], (int)a->rounds);
    }
    double m[O_COUNT], *worst[O_COUNT], *ov[2];
    for (int s = 0; s < O_COUNT; s++) {
        worst[s] = malloc((size_t)a->rounds * sizeof(double));
        if (!worst[s])
            MPI_Abort(MPI_COMM_WORLD, 1);
        MPI_Allreduce(t[s], worst[s], (int)a->rounds, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        m[s] = slowest_median(t[s], a->rounds, 0);
    }
    for (int w = 0; w < 2; w++) {
        int alone = w ? O_MPI_ALONE : O_TRD_ALONE, both = w ? O_MPI_BOTH : O_TRD_BOTH;
        if (!(ov[w] = malloc((size_t)a->rounds * sizeof(double))))
            MPI_Abort(MPI_COMM_WORLD, 1);
        for (long k = 0; k < a->rounds; k++) {
            double tc = worst[alone][k], tw = worst[O_COMPUTE][k];
            ov[w][k] = (tc + tw - worst[both][k]) / (tc < tw ? tc : tw);
        }
    }
    if (me == 0) {
        double tw = m[O_COMPUTE], ot = median(ov[0], (int)a->rounds),
               om = median(ov[1], (int)a->rounds);
        printf("iallreduce of %ld B, %s, %d ranks, %s, %ld rounds, %ld iterations of compute: "
               "compute %.2f ms; treduce alone %.2f ms, with compute %.2f ms, overlap %.3f; "
               "MPI alone %.2f ms, with compute %.2f ms, overlap %.3f; CPU of the ranks "
               "during the reduction alone: treduce %.2f ms, MPI %.2f ms\n",
               a->count * 8, a->algo, np, a->multiple ? "MPI_THREAD_MULTIPLE" : "MPI_Init",
               a->rounds, iters, tw * 1e3, m[O_TRD_ALONE] * 1e3, m[O_TRD_BOTH] * 1e3, ot,
               m[O_MPI_ALONE] * 1e3, m[O_MPI_BOTH] * 1e3, om, cpu_comm[0] * 1e3,
               cpu_comm[1] * 1e3);
    }
    for (int s = 0; s < O_COUNT; s++) {
        free(t[s]);
        free(cpu[s]);
        free(worst[s]);
    }
    free(ov[0]);
    free(ov[1]);
    trd_comm_free(c);
}

int main(int argc, char **argv)
{
    bool multiple = false; /* decided before MPI starts: every rank reads the same argv */
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--thread") && !strcmp(argv[i + 1], "multiple"))
            multiple = true;
        else if (!strcmp(argv[i], "--thread=multiple"))
            multiple = true;
    int provided = MPI_THREAD_SINGLE;
    if (multiple)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    req_args a;
    int rc = parse(argc, argv, &a);
    if (rc == 0 && a.multiple && provided != MPI_THREAD_MULTIPLE && me == 0)
        printf("note: MPI gave thread level %d, not MPI_THREAD_MULTIPLE: started calls run "
               "inside the wait\n", provided);
    trd_op *sum = NULL;
    double *in = NULL, *out = NULL;
    if (rc == 0) {
        in = malloc((size_t)a.count * sizeof *in);
        out = malloc((size_t)a.count * sizeof *out);
        if (!in || !out || trd_op_builtin(&sum, TRD_OP_SUM, TRD_DOUBLE) != TRD_OK)
            fail("set-up");
        for (long i = 0; i < a.count; i++)
            in[i] = me + 1 + (double)(i % 7);
        trd_coll_opts o;
        trd_coll_opts_init(&o);
        o.algo = a.algo;
        if (a.overlap)
            overlap(&a, sum, &o, in, out);
        else
            persistent(&a, sum, &o, in, out);
    }
    trd_op_free(sum);
    free(in);
    free(out);
    MPI_Finalize();
    return rc;
}
