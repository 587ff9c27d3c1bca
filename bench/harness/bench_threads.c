/* bench_threads.c: `treduce bench --transport threads`: ranks are threads
 * of this process, and the baseline is the memory-bandwidth bound measured
 * in the same run.
 *
 * The bound: the ranks' inputs lie in one memory, so the least any
 * reduction can do is read them and write one result.  The kernel
 * a[i] += b[i] (a holding rank 0's input, b each other rank's in turn:
 * p - 1 streaming passes, best of several) does exactly that for p = 2:
 * it reads 2n bytes and writes n, which a p = 2 reduce must also do, and
 * an allreduce must do and more (a second result of n bytes).  So for
 * p = 2 it is a lower bound on both kinds, provided one core can draw the
 * machine's memory bandwidth (the two ranks' cores share it).  For p > 2
 * the p - 1 passes are the serial fold of every input by one core, a
 * reference rather than a bound (a tree's combines run in parallel).  It
 * is measured for the sum only: a costly operator's time is not memory's. */
#include "bench_harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


typedef struct bound_shared {
    const double **inputs; /* every rank's input, published before a bound */
    double *acc;           /* rank 0's accumulator */
    trd_status status;     /* rank 0's, read by all after the second barrier */
} bound_shared;

/* acc[i] += b[i] by blocks of 16 unrolled whole, which gcc -O2
 * vectorises: the plain loop stays scalar at -O2 and took 5-8 % longer
 * over 64 MiB, so it was not the bound (docs/BENCHMARKS.md, "Threads:
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

/* One timed fold: acc[i] += inputs[r][i] for r = 1..p-1. */
static double fold_pass(trd_comm *comm, double *acc, const double *const *inputs, int64_t p,
                        int64_t count)
{
    double t0 = trd_comm_now(comm);
    for (int64_t r = 1; r < p; r++)
        add_into(acc, inputs[r], count);
    return trd_comm_now(comm) - t0;
}

/* Rank 0, the others waiting at a barrier: the kernel best of several,
 * then one fold from rank 0's input checked against the expected
 * result. */
static trd_status time_bound(bench_rank *br, const bench_case *c, bound_shared *sh)
{
    int64_t p = trd_comm_size(br->comm);
    size_t bytes = (size_t)c->count * sizeof(double);
    memcpy(sh->acc, sh->inputs[0], bytes);
    double pilot = fold_pass(br->comm, sh->acc, sh->inputs, p, c->count);
    int64_t iters = bench_iters(br->a, pilot);
    double *t = malloc((size_t)iters * sizeof *t);
    if (!t)
        return TRD_ENOMEM;
    for (int64_t k = 0; k < iters; k++) /* values grow, but stay exact small integers */
        t[k] = fold_pass(br->comm, sh->acc, sh->inputs, p, c->count);
    cli_sort(t, (size_t)iters);
    memcpy(sh->acc, sh->inputs[0], bytes);
    fold_pass(br->comm, sh->acc, sh->inputs, p, c->count);
    bench_point pt = {.op = c->op, .kind = c->kind, .bytes = (int64_t)bytes, .iters = iters,
                      .algo = "bound", .median = t[iters / 2], .min = t[0],
                      .predicted = NAN,
                      .verified = memcmp(sh->acc, c->expected, bytes) == 0};
    free(t);
    if (!bench_record(br, &pt))
        return TRD_ENOMEM;
    bench_progress(br, &pt);
    return TRD_OK;
}

/* Collective: publish the inputs, rank 0 measures, everyone learns how it
 * went. */
static trd_status bound_point(bench_rank *br, const bench_case *c)
{
    bound_shared *sh = br->baseline_ctx;
    if (strcmp(br->a->ops[c->op], "sum"))
        return TRD_OK;
    int32_t rank = trd_comm_rank(br->comm);
    sh->inputs[rank] = c->in;
    trd_status st = trd_comm_barrier(br->comm);
    if (st == TRD_OK && rank == 0)
        sh->status = time_bound(br, c, sh);
    if (st == TRD_OK)
        st = trd_comm_barrier(br->comm);
    if (st == TRD_OK && sh->status != TRD_OK)
        st = sh->status;
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
    int64_t p = a->p, most = 8, who = 0;
    for (size_t s = 0; s < a->nsizes; s++)
        most = a->sizes[s] > most ? a->sizes[s] : most;
    bench_table table = {.p = p};
    trd_op *ops[BENCH_MAX_OPS] = {0};
    bound_shared sh = {.inputs = calloc((size_t)p, sizeof *sh.inputs),
                       .acc = malloc((size_t)most)};
    bench_rank *ranks = calloc((size_t)p, sizeof *ranks);
    trd_status st = sh.inputs && sh.acc && ranks ? TRD_OK : TRD_ENOMEM;
    for (size_t i = 0; i < a->nops && st == TRD_OK; i++)
        st = bench_make_op(a, a->ops[i], &ops[i]);
    size_t sums = 0;
    for (size_t i = 0; i < a->nops; i++)
        sums += !strcmp(a->ops[i], "sum");
    for (int64_t r = 0; r < p && st == TRD_OK; r++) {
        ranks[r] = (bench_rank){.a = a, .table = r == 0 ? &table : NULL,
                                .baseline = bound_point, .baseline_ctx = &sh,
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
    free(sh.inputs);
    free(sh.acc);
    free(ranks);
    return rc;
}
