/* test_faults_mpi.c: faults injected into MPI communicators, for every
 * registered algorithm (treduce.h "Faults and deadlines", docs/RUNTIME.md),
 * on 3 or more processes started by run_mpi.sh, through the shared-memory
 * rings or with TRD_MPI_SHM_MAX=0 (MPI point-to-point, the call signature
 * in the tags).  Per algorithm, each case on a new communicator:
 *   - a stalled rank (rank 1 calls once the others' calls have returned:
 *     each tells it over MPI_COMM_WORLD) and a slow
 *     combine (rank 0's first combine sleeps past the deadline): every
 *     rank ends within its deadline + 1 s, with TRD_OK and the right
 *     result or with TRD_ETIMEDOUT, and every later call fails with the
 *     first failure;
 *   - mismatched calls (rank 0 calls another kind, root, count, algorithm
 *     or operator): every rank ends with an error naming the mismatch, in
 *     that call or in the next call or barrier;
 * no rank returns TRD_OK with a wrong result (the non-commutative 2x2
 * matrix checker where the algorithm takes it), and a rank's buffers are
 * made inaccessible (mprotect) as soon as its call returns.  The star
 * graph's algorithms run on p = n! ranks only: skipped unless p is 6 (they
 * are covered on threads by test_faults and by cli_star_mpi.sh).  Argument
 * "even" or "odd": only the algorithms of even or odd registry index
 * (ctest runs the odd ones through the rings, the even ones through MPI:
 * each path, and each algorithm once, in half the time).
 *
 * "dead ALGO" (under a launcher that keeps the others when one dies:
 * run_mpi.sh with TRD_TEST_RECOVERY=1): the last rank kills itself
 * (SIGKILL) after a barrier and the others call ALGO: each ends within
 * its deadline + 1 s with an error, and its next call fails at once.  Each
 * survivor prints its own count of failed checks and leaves without
 * MPI_Finalize (which would wait for the dead process: Open MPI's fence);
 * cli_dead_rank_mpi.sh reads them. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <mpi.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../faults_calls.h"
#include "treduce/treduce.h"

#define COUNT 37
#define DEADLINE 0.1
#define MISMATCH_DEADLINE 3.0 /* found at once; the deadline only bounds a load spike */
#define SLACK 1.0
#define SLOW_S 0.3
#define STALL_TAG 77 /* on MPI_COMM_WORLD: "my call returned", to the stalled rank */

static int me, nranks;
static int failures;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", me, __FILE__, __LINE__,  \
                    #cond);                                                                \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fputc('\n', stderr);                                                           \
            failures++;                                                                    \
        }                                                                                  \
    } while (0)

typedef enum fault { F_STALL, F_SLOW, F_MISMATCH } fault;

typedef struct call_spec {
    const char *algo;
    const trd_costs *costs; /* the heterogeneous planners' */
    bool allreduce, matrix; /* matrix: the 2x2 checker, else the interval one or int64 prod */
    bool interval;
    int32_t root;
    int64_t count;
} call_spec;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* ---- Operators: the checkers, int64 products, and a slowed one ---- */

static trd_op *matrix_op, *interval_op, *prod_op, *bxor_op, *slow_op;
static const trd_op *slowed; /* what slow_op applies */
static atomic_int slow_uses;

static void slow_fn(const void *in, void *inout, int64_t count, void *ctx)
{
    (void)ctx;
    if (me == 0 && atomic_fetch_add(&slow_uses, 1) == 0)
        sleep_s(SLOW_S);
    trd_op_apply(slowed, in, inout, count);
}

static size_t elem_of(const call_spec *c)
{
    return c->matrix ? sizeof(trd_matrix2x2) : c->interval ? sizeof(trd_interval) : 8;
}

static uint64_t word(int r, int64_t i)
{
    return ((uint64_t)(r + 1) * 0x9E3779B97F4A7C15ULL ^ (uint64_t)i * 0xBF58476D1CE4E5B9ULL) | 1u;
}

static void fill(const call_spec *c, void *buf, int r)
{
    if (c->matrix)
        trd_matrix2x2_fill(buf, c->count, r);
    else if (c->interval)
        trd_interval_fill(buf, c->count, r);
    else
        for (int64_t i = 0; i < c->count; i++)
            ((uint64_t *)buf)[i] = word(r, i);
}

/* The rank-order fold (product, or xor for the operator mismatch). */
static void expected(const call_spec *c, void *buf, bool xor)
{
    if (c->matrix) {
        trd_matrix2x2_expected(buf, c->count, 0, nranks - 1);
    } else if (c->interval) {
        trd_interval_expected(buf, c->count, 0, nranks - 1);
    } else {
        for (int64_t i = 0; i < c->count; i++) {
            uint64_t v = xor ? 0 : 1;
            for (int r = 0; r < nranks; r++)
                v = xor ? v ^ word(r, i) : v * word(r, i);
            ((uint64_t *)buf)[i] = v;
        }
    }
}

/* ---- One case on one algorithm ---- */

typedef struct outcome {
    trd_status st;
    char msg[512];
    double seconds;
} outcome;

static size_t page_round(size_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (bytes + page - 1) / page * page + page;
}

/* One call into fresh buffers, made inaccessible when it returns (and
 * unmapped at the end of the case: *keep). */
static outcome one_call(trd_comm *comm, const call_spec *c, const trd_op *op, void *keep[2],
                        size_t *kept)
{
    size_t bytes = (size_t)c->count * elem_of(c), len = page_round(bytes);
    int prot = PROT_READ | PROT_WRITE, flags = MAP_PRIVATE | MAP_ANONYMOUS;
    unsigned char *in = mmap(NULL, len, prot, flags, -1, 0);
    unsigned char *out = mmap(NULL, len, prot, flags, -1, 0);
    unsigned char *want = malloc(bytes);
    outcome o = {.st = TRD_ENOMEM};
    if (in == MAP_FAILED || out == MAP_FAILED || !want)
        exit(2);
    fill(c, in, me);
    memset(out, 0xA5, bytes);
    trd_coll_opts opts;
    trd_coll_opts_init(&opts);
    opts.algo = c->algo;
    opts.costs = c->costs;
    double t0 = now_s();
    o.st = c->allreduce ? trd_allreduce(comm, in, out, c->count, op, &opts)
                        : trd_reduce(comm, in, out, c->count, op, c->root, &opts);
    o.seconds = now_s() - t0;
    snprintf(o.msg, sizeof o.msg, "%s", o.st == TRD_OK ? "" : trd_errmsg());
    if (o.st == TRD_OK && (c->allreduce || me == c->root)) {
        expected(c, want, op == bxor_op);
        CHECK(memcmp(out, want, bytes) == 0, "%s: TRD_OK with a wrong result", c->algo);
    }
    mprotect(in, len, PROT_NONE); /* nobody may touch them any more */
    mprotect(out, len, PROT_NONE);
    keep[0] = in;
    keep[1] = out;
    *kept = len;
    free(want);
    return o;
}

static call_spec spec_of(const call_spec *base, mism m, int rank)
{
    call_spec c = *base;
    if (rank != 0)
        return c;
    switch (m) {
    case M_KIND: c.allreduce = !c.allreduce; c.root = c.allreduce ? 0 : nranks - 1; break;
    case M_ROOT: c.root = 0; break;
    case M_COUNT: c.count = COUNT + 1; break;
    case M_ALGO: c.algo = other_algo(c.algo, c.allreduce); break;
    case M_OP: c.matrix = false; c.interval = base->matrix; break;
    default: break;
    }
    return c;
}

/* The operator of call c: the slowed one, a checker, or int64 products
 * (rank 0's xor in an operator mismatch). */
static const trd_op *op_of(const call_spec *c, fault f, bool other)
{
    if (f == F_SLOW)
        return slow_op;
    if (c->matrix)
        return matrix_op;
    if (c->interval)
        return interval_op;
    return other ? bxor_op : prod_op;
}

/* Runs case (f, m) for the algorithm of base: the faulty call, then a
 * correct one, then a barrier; checks this rank's part. */
static void run_case(const call_spec *base, fault f, mism m)
{
    double deadline = f == F_MISMATCH ? MISMATCH_DEADLINE : DEADLINE;
    trd_comm *comm = NULL;
    if (trd_comm_mpi_create(&comm, NULL, deadline) != TRD_OK) {
        CHECK(false, "create: %s", trd_errmsg());
        return;
    }
    atomic_store(&slow_uses, 0);
    slowed = base->matrix ? matrix_op : prod_op;
    call_spec c = spec_of(base, f == F_MISMATCH ? m : M_NONE, me);
    void *keep[2][2];
    size_t kept[2];
    for (int r = 0; f == F_STALL && me == 1 && r < nranks; r++) /* stalled until they are done */
        if (r != 1)
            MPI_Recv(NULL, 0, MPI_BYTE, r, STALL_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    outcome o[3];
    bool other_op = f == F_MISMATCH && m == M_OP && me == 0;
    o[0] = one_call(comm, &c, op_of(&c, f, other_op), keep[0], &kept[0]);
    if (f == F_STALL && me != 1)
        MPI_Send(NULL, 0, MPI_BYTE, 1, STALL_TAG, MPI_COMM_WORLD);
    o[1] = one_call(comm, base, op_of(base, f, false), keep[1], &kept[1]);
    double t0 = now_s();
    o[2].st = trd_comm_barrier(comm);
    o[2].seconds = now_s() - t0;
    snprintf(o[2].msg, sizeof o[2].msg, "%s", o[2].st == TRD_OK ? "" : trd_errmsg());
    const char *what = f == F_STALL ? "stalled rank" : f == F_SLOW ? "slow combine"
                                                                   : mism_names[m];
    const char *key = f == F_MISMATCH ? "mismatched collective calls" : "deadline";
    bool ended = false;
    for (int k = 0; k < 3; k++) {
        CHECK(o[k].seconds <= deadline + SLACK, "%s, %s: step %d took %.3f s: %s", base->algo,
              what, k, o[k].seconds, o[k].msg);
        ended |= o[k].st != TRD_OK;
        CHECK(o[k].st == TRD_OK || strstr(o[k].msg, key), "%s, %s: step %d: %d: %s",
              base->algo, what, k, (int)o[k].st, o[k].msg);
    }
    /* a slow combine at a rank nobody waits for (a reduce's root) may fail nothing */
    CHECK(ended || f == F_SLOW, "%s, %s: no error on this rank", base->algo, what);
    CHECK(o[2].st != TRD_OK || (f == F_SLOW && o[0].st == TRD_OK),
          "%s, %s: the failed communicator passed a barrier", base->algo, what);
    trd_comm_free(comm);
    for (int k = 0; k < 2; k++)
        for (int b = 0; b < 2; b++)
            munmap(keep[k][b], kept[k]);
    if (me == 0 && getenv("TRD_FAULTS_VERBOSE"))
        printf("%-20s %-13s %.3f %.3f %.3f s: %s\n", base->algo, what, o[0].seconds,
               o[1].seconds, o[2].seconds, o[0].msg);
}

/* Whether algorithm a takes the non-commutative checker on nranks ranks
 * (ring, for one, only up to 2). */
static bool takes_matrix(size_t a, bool allreduce)
{
    if (trd_algo_commutative_only(a))
        return false;
    if (!allreduce)
        return true;
    trd_params prm;
    trd_params_init(&prm);
    prm.n = nranks;
    prm.allreduce = true;
    prm.noncommutative = true;
    trd_plan *plan = NULL;
    trd_status st = trd_plan_create(&plan, trd_algo_name(a), &prm);
    trd_plan_free(plan);
    return st != TRD_EUNSUPPORTED;
}

/* A rank dies: the survivors' calls end within the deadline + 1 s, with an
 * error wherever they need the dead rank (a reduce's other ranks may
 * finish their part); a barrier then fails within that too, and the next
 * call at once, with the first failure's message, which names the dead
 * rank (its process is gone: the ranks of one node know each other's). */
static int dead_rank(const char *algo)
{
    trd_comm *comm = NULL;
    if (trd_comm_mpi_create(&comm, NULL, 0.5) != TRD_OK || trd_comm_barrier(comm) != TRD_OK) {
        fprintf(stderr, "rank %d: set-up: %s\n", me, trd_errmsg());
        return 2;
    }
    if (me == nranks - 1)
        raise(SIGKILL);
    size_t a = 0;
    bool allreduce =
        trd_algo_find(algo, &a) == TRD_OK && trd_algo_kind_of(a) == TRD_KIND_EXCHANGE;
    call_spec c = {.algo = algo, .allreduce = allreduce, .root = 0, .count = COUNT};
    void *keep[2][2];
    size_t kept[2];
    outcome o[3];
    o[0] = one_call(comm, &c, prod_op, keep[0], &kept[0]);
    double t0 = now_s();
    o[1].st = trd_comm_barrier(comm);
    o[1].seconds = now_s() - t0;
    snprintf(o[1].msg, sizeof o[1].msg, "%s", o[1].st == TRD_OK ? "" : trd_errmsg());
    o[2] = one_call(comm, &c, prod_op, keep[1], &kept[1]);
    for (int k = 0; k < 3; k++)
        CHECK(o[k].seconds <= 0.5 + SLACK, "%s: step %d took %.3f s: %s", algo, k,
              o[k].seconds, o[k].msg);
    CHECK(o[0].st != TRD_OK || (!allreduce && me != 0), "%s: TRD_OK without the dead rank",
          algo);
    CHECK(o[1].st != TRD_OK && strstr(o[1].msg, "deadline"), "%s: barrier: %s", algo, o[1].msg);
    CHECK(o[2].st != TRD_OK && o[2].seconds < 0.1 && strstr(o[2].msg, "deadline"),
          "%s: the next call: %d after %.3f s: %s", algo, (int)o[2].st, o[2].seconds, o[2].msg);
    char dead[32];
    snprintf(dead, sizeof dead, "rank %d (pid ", nranks - 1);
    CHECK(strstr(o[2].msg, dead) && strstr(o[2].msg, ") is dead"), "%s: the dead rank is not "
          "named: %s", algo, o[2].msg);
    printf("rank %d: dead rank, %s: %.3f s: %s\nrank %d: dead rank, %s: %d failed checks\n", me,
           algo, o[0].seconds, o[0].st == TRD_OK ? "TRD_OK" : o[0].msg, me, algo, failures);
    fflush(stdout);
    _exit(failures ? 1 : 0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (trd_op_matrix2x2(&matrix_op) || trd_op_interval(&interval_op) ||
        trd_op_builtin(&prod_op, TRD_OP_PROD, TRD_INT64) ||
        trd_op_builtin(&bxor_op, TRD_OP_BXOR, TRD_UINT64) ||
        trd_op_user(&slow_op, slow_fn, 16, false, NULL))
        MPI_Abort(MPI_COMM_WORLD, 2);
    trd_op *slow_prod = NULL;
    trd_costs *costs = NULL; /* the same random bases on every rank */
    if (trd_op_user(&slow_prod, slow_fn, 8, true, NULL) ||
        trd_costs_create(&costs, nranks, TRD_DIST_CONST, 1, 1, 0) ||
        trd_costs_random(costs, "links", 10.0, 7))
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (argc > 2 && !strcmp(argv[1], "dead"))
        return dead_rank(argv[2]);
    int part = argc > 1 ? (strcmp(argv[1], "odd") ? 0 : 1) : -1; /* -1: all */
    double t0 = now_s();
    for (size_t a = 0; a < trd_algo_count(); a++) {
        const char *name = trd_algo_name(a);
        if (part >= 0 && (int)(a % 2) != part)
            continue;
        trd_algo_kind kind = trd_algo_kind_of(a);
        const char *only = getenv("TRD_FAULTS_ALGO"); /* one algorithm: while debugging */
        if ((!strncmp(name, "star", 4) && nranks != 6) || (only && strcmp(only, name)))
            continue;
        if (!trd_algo_runs(a, TRD_COLL_REDUCE) && !trd_algo_runs(a, TRD_COLL_ALLREDUCE))
            continue; /* the other collectives' faults: the same engine, test_faults.c */
        bool allreduce = kind == TRD_KIND_EXCHANGE;
        bool matrix = takes_matrix(a, allreduce);
        call_spec base = {.algo = name, .allreduce = allreduce, .matrix = matrix,
                          .root = allreduce ? 0 : nranks - 1, .count = COUNT,
                          .costs = trd_algo_uses_costs(a) ? costs : NULL};
        run_case(&base, F_STALL, M_NONE);
        trd_op *keep = slow_op;
        if (!matrix)
            slow_op = slow_prod;
        run_case(&base, F_SLOW, M_NONE);
        slow_op = keep;
        for (mism m = M_KIND; m <= M_OP; m++) {
            if ((m == M_KIND && kind != TRD_KIND_TREE && kind != TRD_KIND_PIPELINED) ||
                (m == M_ROOT && allreduce))
                continue;
            run_case(&base, F_MISMATCH, m);
        }
    }
    trd_op_free(matrix_op);
    trd_op_free(interval_op);
    trd_op_free(prod_op);
    trd_op_free(bxor_op);
    trd_op_free(slow_op);
    trd_op_free(slow_prod);
    trd_costs_free(costs);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("test_faults_mpi: %d ranks, %s, %.1f s: %d failed checks\n", nranks,
               getenv("TRD_MPI_SHM_MAX") ? "TRD_MPI_SHM_MAX set" : "rings", now_s() - t0, all);
    MPI_Finalize();
    return all == 0 ? 0 : 1;
}
