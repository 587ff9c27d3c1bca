/* bench_op: the built-in sum of doubles in place (trd_op_apply), against
 * the same loop compiled here the way op.c compiled it before its blocks
 * were unrolled (a 16-element block as an inner loop), placed at eight
 * offsets from a 64-byte line.  Before each call the accumulator is
 * overwritten, as a received message would have been.  Prints the medians
 * (µs) and trd / the fastest placement.  The spread over placements is
 * what once made a two-rank MPI reduce of 2 MiB slower than Open MPI's
 * (docs/BENCHMARKS.md, "bench/op"): the library's kernel must not depend
 * on it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "treduce/treduce.h"

#define REPS 201
#define BLOCK 16

/* `.skip pad` bytes of no-ops before the loop (GNU assembler syntax). */
#if defined(__x86_64__) && defined(__GNUC__)
#define PAD(pad) __asm__ volatile(".skip " #pad ", 0x90")
#else
#define PAD(pad) (void)0
#endif

#define REFERENCE(pad)                                                                  \
    __attribute__((noinline, aligned(64))) static void ref_##pad(                       \
        const double *restrict in, double *restrict io, int64_t n)                      \
    {                                                                                   \
        PAD(pad);                                                                       \
        int64_t i = 0;                                                                  \
        for (; i + BLOCK <= n; i += BLOCK)                                              \
            for (int j = 0; j < BLOCK; j++)                                             \
                io[i + j] = in[i + j] + io[i + j];                                      \
        for (; i < n; i++)                                                              \
            io[i] = in[i] + io[i];                                                      \
    }
REFERENCE(1)
REFERENCE(8)
REFERENCE(16)
REFERENCE(24)
REFERENCE(32)
REFERENCE(40)
REFERENCE(48)
REFERENCE(56)

typedef void (*ref_fn)(const double *, double *, int64_t);
static const ref_fn refs[] = {ref_1, ref_8, ref_16, ref_24, ref_32, ref_40, ref_48, ref_56};
enum { NREF = sizeof refs / sizeof refs[0] };

/* Call k of the variants: the library (k = NREF) or reference k. */
static void call(const trd_op *sum, int k, const double *in, double *io, int64_t n)
{
    if (k == NREF)
        trd_op_apply(sum, in, io, n);
    else
        refs[k](in, io, n);
}

/* t[k]: the median time of variant k, one call per repetition, the
 * variants taking turns so that the machine's noise falls on all alike;
 * the accumulator is refreshed from `fresh` before each call. */
static void time_all(const trd_op *sum, const double *in, double *io, const double *fresh,
                     int64_t n, double t[NREF + 1])
{
    static double samples[NREF + 1][REPS];
    for (int r = 0; r < REPS; r++)
        for (int k = 0; k <= NREF; k++) {
            memcpy(io, fresh, (size_t)n * sizeof *io);
            double t0 = now();
            call(sum, k, in, io, n);
            samples[k][r] = now() - t0;
        }
    for (int k = 0; k <= NREF; k++)
        t[k] = median(samples[k], REPS);
}

static int run_size(const trd_op *sum, size_t bytes)
{
    int64_t n = (int64_t)(bytes / sizeof(double));
    double *in = malloc(bytes), *io = malloc(bytes), *fresh = malloc(bytes);
    if (!in || !io || !fresh) {
        fprintf(stderr, "bench_op: out of memory for %zu bytes\n", bytes);
        return 1;
    }
    for (int64_t i = 0; i < n; i++) {
        in[i] = (double)i;
        fresh[i] = 1.0;
    }
    double t[NREF + 1], best = 1e30, worst = 0, lib;
    time_all(sum, in, io, fresh, n, t);
    lib = t[NREF];
    for (int k = 0; k < NREF; k++) {
        best = t[k] < best ? t[k] : best;
        worst = t[k] > worst ? t[k] : worst;
    }
    printf("%9zu %12.2f %12.2f %12.2f %10.3f %10.3f\n", bytes, lib * 1e6, best * 1e6,
           worst * 1e6, lib / best, worst / best);
    free(in);
    free(io);
    free(fresh);
    return 0;
}

int main(void)
{
    static const size_t sizes[] = {16384, 131072, 2097152};
    trd_op *sum;
    if (trd_op_builtin(&sum, TRD_OP_SUM, TRD_DOUBLE) != TRD_OK) {
        fprintf(stderr, "bench_op: %s\n", trd_errmsg());
        return 1;
    }
    printf("sum of doubles in place, median of %d calls (us); reference: the loop with an "
           "inner block loop at %d placements\n", REPS, NREF);
    printf("%9s %12s %12s %12s %10s %10s\n", "bytes", "trd_op_apply", "ref fastest",
           "ref slowest", "trd/fast", "slow/fast");
    int rc = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0] && rc == 0; s++)
        rc = run_size(sum, sizes[s]);
    trd_op_free(sum);
    return rc;
}
