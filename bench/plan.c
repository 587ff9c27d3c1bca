/* bench/plan.c: time Algorithm 1 (greedy) at n = 10^6, 10^7, 10^8 with the
 * linear-time two-FIFO queue of the library against the binary-heap version
 * of the paper (tests/oracle), measured in the same run, plus the whole
 * trd_plan_create path (tree + evaluation + numbering + schedule) where it
 * fits in memory.  Prints medians of several runs, per rank and as ratios.
 * `bench_plan hetero` instead times trd_plan_create of hetero-greedy (random
 * heterogeneous costs of both models, spread 10) and of greedy (the same
 * path, homogeneous) at n = 64 and 1024, alternated run by run, in CPU
 * time of the thread.
 *
 * usage: bench_plan [max_exponent (default 8)] [runs (default 5)]
 *        bench_plan hetero [runs (default 5)] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "oracle/oracle.h"
#include "ir/tree.h"

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

/* CPU seconds of this thread: a planner is one thread's computation, and
 * on a machine shared with other jobs its wall time measures them too. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU seconds of one trd_plan_create of algo for p (exits on failure). */
static double time_one(const char *algo, const trd_params *p)
{
    trd_plan *plan;
    double t0 = cpu_now();
    if (trd_plan_create(&plan, algo, p) != TRD_OK) {
        fprintf(stderr, "bench_plan: %s n = %lld: %s\n", algo, (long long)p->n, trd_errmsg());
        exit(1);
    }
    double t = cpu_now() - t0;
    trd_plan_free(plan);
    return t;
}

/* hetero-greedy against greedy, per rank, medians of alternated runs. */
static int bench_hetero(int runs)
{
    static const char *const models[] = {"links", "nodes"};
    static const int32_t ns[] = {64, 1024};
    printf("trd_plan_create, median of %d alternated runs, CPU ns per rank\n", runs);
    printf("%6s %6s %16s %12s %12s\n", "n", "costs", "hetero-greedy", "greedy", "ratio");
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
        for (size_t m = 0; m < 2; m++) {
            trd_costs *k;
            trd_params hp, gp;
            double th[16], tg[16];
            if (trd_costs_create(&k, ns[i], TRD_DIST_CONST, 1.0, 1.0, 0.0) != TRD_OK ||
                trd_costs_random(k, models[m], 10.0, 1) != TRD_OK)
                return 1;
            trd_params_init(&hp);
            hp.n = ns[i];
            hp.costs = k;
            gp = hp;
            gp.costs = NULL;
            for (int r = 0; r < runs; r++) {
                th[r] = time_one("hetero-greedy", &hp);
                tg[r] = time_one("greedy", &gp);
            }
            double h = median(th, runs), g = median(tg, runs);
            printf("%6ld %6s %16.0f %12.1f %11.0fx\n", (long)ns[i], models[m], 1e9 * h / ns[i],
                   1e9 * g / ns[i], h / g);
            trd_costs_free(k);
        }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "hetero")) {
        int runs = argc > 2 ? atoi(argv[2]) : 5;
        if (runs < 1 || runs > 15) {
            fprintf(stderr, "usage: bench_plan hetero [runs 1..15]\n");
            return 2;
        }
        return bench_hetero(runs);
    }
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
