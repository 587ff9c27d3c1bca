/* bench/plan.c: time Algorithm 1 (greedy) at n = 10^6, 10^7, 10^8 with the
 * linear-time two-FIFO queue of the library against the binary-heap version
 * of the paper (tests/oracle), measured in the same run, plus the whole
 * trd_plan_create path (tree + evaluation + numbering + schedule) where it
 * fits in memory.  Prints medians of several runs, per rank and as ratios.
 *
 * usage: bench_plan [max_exponent (default 8)] [runs (default 5)] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "oracle/oracle.h"
#include "plan/tree.h"

/* Median seconds of `runs` builds; which = 0 library, 1 heap oracle. */
static double time_greedy(int which, int32_t n, int runs, int32_t *parent)
{
    double t[16];
    for (int r = 0; r < runs; r++) {
        double t0 = now();
        int bad = which == 0 ? trd_greedy_tree(n, 1.0, 1.0, n, parent) != TRD_OK
                             : trd_oracle_greedy_heap(n, 1.0, 1.0, n, parent) != 0;
        t[r] = now() - t0;
        if (bad) {
            fprintf(stderr, "bench_plan: out of memory at n = %ld\n", (long)n);
            exit(1);
        }
    }
    return median(t, runs);
}

static double time_plan_create(int32_t n, int runs)
{
    double t[16];
    trd_params p;
    trd_params_init(&p);
    p.n = n;
    for (int r = 0; r < runs; r++) {
        trd_plan *plan;
        double t0 = now();
        if (trd_plan_create(&plan, "greedy", &p) != TRD_OK)
            return -1.0;
        t[r] = now() - t0;
        trd_plan_free(plan);
    }
    return median(t, runs);
}

int main(int argc, char **argv)
{
    int emax = argc > 1 ? atoi(argv[1]) : 8, runs = argc > 2 ? atoi(argv[2]) : 5;
    if (emax < 1 || emax > 9 || runs < 1 || runs > 15) {
        fprintf(stderr, "usage: bench_plan [max_exponent 1..9] [runs 1..15]\n");
        return 2;
    }
    printf("greedy (Alg. 1, d = c = 1): median of %d runs, ns per rank\n", runs);
    printf("%12s %12s %12s %10s %16s\n", "n", "linear", "heap", "heap/lin", "plan_create");
    for (int e = emax < 6 ? emax : 6; e <= emax; e++) {
        int32_t n = 1;
        for (int i = 0; i < e; i++)
            n *= 10;
        int32_t *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
        if (!a || !b) {
            fprintf(stderr, "bench_plan: out of memory at n = %ld\n", (long)n);
            return 1;
        }
        double lin = time_greedy(0, n, runs, a), heap = time_greedy(1, n, runs, b);
        if (memcmp(a, b, (size_t)n * sizeof *a) != 0)
            printf("warning: linear and heap trees differ at n = %ld\n", (long)n);
        free(a);
        free(b);
        double full = e <= 7 ? time_plan_create(n, runs < 3 ? runs : 3) : -1.0;
        char fullbuf[32] = "(skipped)";
        if (full > 0)
            snprintf(fullbuf, sizeof fullbuf, "%.1f", 1e9 * full / n);
        printf("%12ld %12.2f %12.2f %9.2fx %16s\n", (long)n, 1e9 * lin / n, 1e9 * heap / n,
               heap / lin, fullbuf);
        fflush(stdout);
    }
    return 0;
}
