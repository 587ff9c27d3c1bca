/* bench_util.h: timing helpers shared by bench/plan.c and bench/sim.c
 * (header only, so bench/CMakeLists.txt needs no extra source). */
#ifndef TRD_BENCH_UTIL_H
#define TRD_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

/* Seconds on the monotonic clock. */
static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..k-1] (sorts v in place). */
static inline double median(double *v, int k)
{
    qsort(v, (size_t)k, sizeof *v, by_value);
    return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

#endif
