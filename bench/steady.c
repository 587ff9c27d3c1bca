/* bench/steady.c: time of trd_steady_solve (exact LP, period, Fig. 8 trees,
 * matchings and the independent checks) for a Series of Reduces on
 * generated Tiers-like platforms (trd_platform_generate), from the size of
 * Sec. 4.7 (14 nodes, 8 participants) up to about 30 nodes.  Two series per
 * size: the first 8 hosts as participants, and every host (while there are
 * at most max_parts of them: the LP has O(N^3) task columns per node).  The
 * target is P0.  Prints the median wall time and the median CPU time of
 * this process (the solver is single-threaded, so CPU time is the one to
 * trust on a loaded machine) of several runs per row.
 *
 * usage: bench_steady [runs (default 5)] [max_lans (default 7)]
 *                     [max_parts (default 15)] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_util.h"
#include "treduce/steady.h"

/* The first `max` computing nodes of pf. */
static int32_t hosts(const trd_platform *pf, int32_t *ids, int32_t max)
{
    int32_t n = 0;
    for (int32_t i = 0; i < trd_platform_node_count(pf) && n < max; i++)
        if (!trd_platform_node_is_router(pf, i))
            ids[n++] = i;
    return n;
}

/* One row: median seconds of `runs` solves, and what the last one found. */
static int row(const trd_platform *pf, int32_t lans, const int32_t *ids, int32_t n, int runs)
{
    double t[16], cpu[16];
    trd_steady_spec spec;
    trd_steady_spec_init(&spec);
    spec.root = trd_platform_find(pf, "P0");
    spec.members = ids;
    spec.n_members = n;
    trd_steady *st = NULL;
    for (int r = 0; r < runs; r++) {
        trd_steady_free(st);
        double t0 = now();
        clock_t c0 = clock();
        if (trd_steady_solve(pf, &spec, &st) != TRD_OK) {
            fprintf(stderr, "bench_steady: %s\n", trd_errmsg());
            return 1;
        }
        cpu[r] = (double)(clock() - c0) / CLOCKS_PER_SEC;
        t[r] = now() - t0;
    }
    int32_t rows, cols;
    trd_steady_lp_size(st, &rows, &cols);
    printf("%5d %6d %6d %6d %7d %8d %-10s %-8s %6d %6d %10.1f %10.1f\n", (int)lans,
           (int)trd_platform_node_count(pf), (int)trd_platform_link_count(pf), (int)n,
           (int)rows, (int)cols, trd_steady_throughput(st), trd_steady_period(st),
           (int)trd_steady_tree_count(st), (int)trd_steady_matching_count(st),
           1e3 * median(t, runs), 1e3 * median(cpu, runs));
    trd_steady_free(st);
    return 0;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 5, max_lans = argc > 2 ? atoi(argv[2]) : 7,
        max_parts = argc > 3 ? atoi(argv[3]) : 15;
    if (runs < 1 || runs > 15 || max_lans < 3 || max_lans > 20 || max_parts < 8 ||
        max_parts > 64) {
        fprintf(stderr, "usage: bench_steady [runs 1..15] [max_lans 3..20] [max_parts 8..64]\n");
        return 2;
    }
    printf("Series of Reduces to P0 on trd_platform_generate(seed 5, lans): median of %d "
           "runs\n", runs);
    printf("%5s %6s %6s %6s %7s %8s %-10s %-8s %6s %6s %10s %10s\n", "lans", "nodes", "links",
           "parts", "rows", "columns", "TP", "period", "trees", "match", "wall_ms", "cpu_ms");
    for (int32_t lans = 3; lans <= max_lans; lans++) {
        trd_platform *pf = NULL;
        int32_t ids[64];
        if (trd_platform_generate(5, lans, &pf) != TRD_OK) {
            fprintf(stderr, "bench_steady: %s\n", trd_errmsg());
            return 1;
        }
        int32_t all = hosts(pf, ids, 64);
        int bad = row(pf, lans, ids, all < 8 ? all : 8, runs);
        if (!bad && all > 8 && all <= max_parts)
            bad = row(pf, lans, ids, all, runs);
        trd_platform_free(pf);
        if (bad)
            return 1;
    }
    return 0;
}
