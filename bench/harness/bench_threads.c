/* bench_threads.c: `treduce bench --wire threads`: ranks are threads
 * of this process, and the baseline is the memory-bandwidth bound measured
 * in the same run.
 *
 * The bound: the ranks' inputs lie in one memory, so the least any
 * reduction of n bytes per rank can do is read the p inputs and write its
 * results: (p + 1) n bytes for a reduce (one result), 2 p n for an
 * allreduce and a scan (p results), (2 p - 1) n for an exscan (p - 1),
 * and p (p + 1) n for a reduce-scatter of parts of n (inputs of p n).  At best those bytes cross memory at the
 * aggregate bandwidth of p concurrent streams, measured here at every
 * point: every rank runs a[i] += b[i] over its own input at once (a
 * stream that reads 2n bytes and writes n), from the first stream's start
 * to the last one's end, the best repetition kept: A = 3 p n / that time.
 * The bound is the bytes over A: no schedule of any algorithm moves them
 * faster on this machine, whatever its cores (ranks beyond them take
 * turns, and the streams' time shows it).  It is measured for the sum
 * only: a costly operator's time is not memory's. */
#include "bench_harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


/* acc[i] += b[i] by blocks of 16 unrolled whole, which gcc -O2
 * vectorises: the plain loop stays scalar at -O2 and is slower over
 * 64 MiB, so it would not be the bound (docs/BENCHMARKS.md, "Threads:
 * 64 MiB allreduce").  Written here
 * rather than taken from the library, so that the baseline does not share
 * a flaw of the kernel it judges. */
static void add_into(double *restrict acc, const double *restrict b, int64_t count)
{
    int64_t i = 0;
    for (; i + 16 <= count; i += 16)
        _Pragma("GCC unroll 16") for (int j = 0; j < 16; j++)
            acc[i + j] += b[i + j];
    for (; i < count; i++)
        acc[i] += b[i];
}

/* One repetition on every rank at once: from the first stream's start to
 * the last one's end (threads: one clock).  Not each rank's own time:
 * streams that do not overlap (ranks leaving the barrier apart, or taking
 * turns on fewer cores) would each show one stream's speed. */
static trd_status stream_all(bench_rank *br, double *acc, const bench_case *c, double *span)
{
    trd_status st = trd_comm_barrier(br->comm);
    double at[2], most[2] = {0, 0};
    at[0] = -trd_comm_now(br->comm);
    add_into(acc, c->in, c->count);
    at[1] = trd_comm_now(br->comm);
    if (st == TRD_OK)
        st = trd_comm_agree_max(br->comm, at, most, 2);
    *span = most[0] + most[1];
    return st;
}

/* Whether acc holds (1 + passes) times in: the kernel added every time. */
static bool streamed(const double *acc, const double *in, int64_t count, int64_t passes)
{
    for (int64_t i = 0; i < count; i++)
        if (acc[i] != (double)(1 + passes) * in[i])
            return false;
    return true;
}

/* The bytes a call of kind on p ranks must move, in multiples of n (the
 * bytes of the call's count). */
static double must_move(trd_collective kind, int64_t p)
{
    double n = (double)p;
    switch (kind) {
    case TRD_COLL_REDUCE: return n + 1.0;
    case TRD_COLL_REDUCE_SCATTER: return n * (n + 1.0);
    case TRD_COLL_EXSCAN: return 2.0 * n - 1.0;
    default: return 2.0 * n;
    }
}

/* The aggregate stream's best repetition (collective), the point on rank
 * 0 (the bytes a reduction must move, at that bandwidth). */
static trd_status time_bound(bench_rank *br, const bench_case *c, double *acc)
{
    int64_t p = trd_comm_size(br->comm), bytes = c->count * (int64_t)sizeof(double);
    memcpy(acc, c->in, (size_t)bytes);
    double pilot = 0.0, best = INFINITY, t;
    trd_status st = stream_all(br, acc, c, &pilot); /* the same on every rank */
    int64_t iters = bench_iters(br->a, pilot);
    for (int64_t k = 0; k < iters && st == TRD_OK; k++) {
        st = stream_all(br, acc, c, &t);
        best = t < best ? t : best;
    }
    double ok = streamed(acc, c->in, c->count, iters + 1) ? 0.0 : 1.0, bad = ok;
    if (st == TRD_OK)
        st = trd_comm_agree_max(br->comm, &ok, &bad, 1);
    if (st != TRD_OK || trd_comm_rank(br->comm) != 0)
        return st;
    double bound = best * must_move(c->kind, p) / (3.0 * (double)p); /* at 3 p n / best */
    bench_point pt = {.op = c->op, .kind = c->kind, .bytes = bytes, .iters = iters,
                      .algo = "bound", .median = bound, .min = bound, .predicted = NAN,
                      .verified = bad == 0.0};
    if (!bench_record(br, &pt))
        return TRD_ENOMEM;
    bench_progress(br, &pt);
    return TRD_OK;
}

/* Collective: every rank streams its input at once into a scratch copy. */
static trd_status bound_point(bench_rank *br, const bench_case *c)
{
    if (strcmp(br->a->ops[c->op], "sum"))
        return TRD_OK;
    double *acc = malloc((size_t)(c->count > 0 ? c->count : 1) * sizeof *acc);
    double none = acc ? 0.0 : 1.0, any = none;
    trd_status st = trd_comm_agree_max(br->comm, &none, &any, 1);
    if (st == TRD_OK && any != 0.0)
        st = TRD_ENOMEM;
    if (st == TRD_OK)
        st = time_bound(br, c, acc);
    free(acc);
    return st == TRD_OK ? st : bench_fail(br, st, "bound");
}

/* Errors stay in the rank's state (first_error reports them). */
static trd_status rank_main(trd_comm *comm, void *ctx)
{
    bench_rank *br = (bench_rank *)ctx + trd_comm_rank(comm);
    br->comm = comm;
    bench_rank_main(br);
    return TRD_OK;
}

/* The first failing rank's message, or NULL. */
static const char *first_error(const bench_rank *ranks, int64_t p, int64_t *who)
{
    for (int64_t r = 0; r < p; r++)
        if (ranks[r].status != TRD_OK) {
            *who = r;
            return ranks[r].error;
        }
    return NULL;
}

int bench_threads(const bench_args *a)
{
    int64_t p = a->p, who = 0;
    bench_table table = {.p = p};
    trd_op *ops[BENCH_MAX_OPS] = {0};
    bench_rank *ranks = calloc((size_t)p, sizeof *ranks);
    trd_status st = ranks ? TRD_OK : TRD_ENOMEM;
    for (size_t i = 0; i < a->nops && st == TRD_OK; i++)
        st = bench_make_op(a, a->ops[i], &ops[i]);
    size_t sums = 0;
    for (size_t i = 0; i < a->nops; i++)
        sums += !strcmp(a->ops[i], "sum");
    for (int64_t r = 0; r < p && st == TRD_OK; r++) {
        ranks[r] = (bench_rank){.a = a, .table = r == 0 ? &table : NULL,
                                .baseline = bound_point,
                                .total = bench_series_total(a, sums)};
        for (size_t i = 0; i < a->nops; i++)
            ranks[r].ops[i] = ops[i];
    }
    trd_threads_opts topts;
    trd_threads_opts_init(&topts);
    topts.timeout_s = a->timeout;
    if (st == TRD_OK)
        st = trd_comm_threads_run((int32_t)p, &topts, rank_main, ranks);
    int rc;
    const char *err = st == TRD_OK ? first_error(ranks, p, &who) : NULL;
    if (st != TRD_OK)
        rc = cli_lib_error("bench", st);
    else if (err) {
        fprintf(stderr, "treduce bench: rank %lld: %s\n", (long long)who, err);
        rc = CLI_FAILED;
    } else
        rc = bench_report(a, &table);
    for (size_t i = 0; i < a->nops; i++)
        trd_op_free(ops[i]);
    free(table.pt);
    free(ranks);
    return rc;
}
