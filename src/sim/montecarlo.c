/* montecarlo.c: many simulation runs over all cores.  Run i always uses the
 * cost streams of (seed, i) and writes slot i, so the numbers are the same
 * whatever the thread count; statistics come from GSL. */
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "sim/sim.h"

#define THREADS_MAX 256

typedef struct mc_job {
    const char *algo;
    const trd_params *params;
    const trd_costs *costs;
    trd_port port;
    uint64_t seed;
    int64_t runs;
    double *samples;
    atomic_llong next; /* next run to take (blocks of BLOCK runs) */
    atomic_llong done;
    atomic_int failed;
} mc_job;

typedef struct mc_worker {
    mc_job *job;
    trd_status status;
    char message[512];
} mc_worker;

#define BLOCK 256

static void *work(void *arg)
{
    mc_worker *w = arg;
    mc_job *job = w->job;
    trd_sim sim;
    w->status = trd_sim_init(&sim, job->algo, job->params, job->costs, job->port);
    while (w->status == TRD_OK && !atomic_load(&job->failed)) {
        int64_t lo = atomic_fetch_add(&job->next, BLOCK);
        if (lo >= job->runs)
            break;
        int64_t hi = lo + BLOCK < job->runs ? lo + BLOCK : job->runs;
        for (int64_t r = lo; r < hi && w->status == TRD_OK; r++)
            w->status = trd_sim_run(&sim, job->seed, r, &job->samples[r], NULL);
        atomic_fetch_add(&job->done, hi - lo);
    }
    if (w->status != TRD_OK) {
        atomic_store(&job->failed, 1);
        strncpy(w->message, trd_errmsg(), sizeof w->message - 1);
    }
    trd_sim_destroy(&sim);
    return NULL;
}

static void summarise(double *samples, int64_t runs, trd_mc_stats *stats)
{
    size_t n = (size_t)runs;
    stats->runs = runs;
    stats->mean = gsl_stats_mean(samples, 1, n);
    stats->std = n > 1 ? gsl_stats_sd_m(samples, 1, n, stats->mean) : 0.0;
    gsl_sort(samples, 1, n);
    stats->min = samples[0];
    stats->max = samples[n - 1];
    stats->q10 = gsl_stats_quantile_from_sorted_data(samples, 1, n, 0.10);
    stats->q50 = gsl_stats_quantile_from_sorted_data(samples, 1, n, 0.50);
    stats->q90 = gsl_stats_quantile_from_sorted_data(samples, 1, n, 0.90);
}

/* Runs the workers; the calling thread reports progress while they work. */
static trd_status run_workers(mc_job *job, int threads, trd_progress_fn progress, void *ctx)
{
    pthread_t tid[THREADS_MAX];
    mc_worker w[THREADS_MAX];
    int started = 0;
    for (int i = 0; i < threads; i++) {
        w[i] = (mc_worker){.job = job};
        if (pthread_create(&tid[i], NULL, work, &w[i]) != 0)
            break;
        started++;
    }
    if (started == 0)
        return trd_fail(TRD_EBACKEND, "monte carlo: cannot start a thread");
    /* Polls 1 ms after the start, then twice as long each time up to
     * 100 ms: a study of a few runs (a sweep's every point) is not held
     * for a whole period. */
    for (long wait_ns = 1000000; progress && atomic_load(&job->done) < job->runs &&
                                 !atomic_load(&job->failed);
         wait_ns = wait_ns < 50000000 ? 2 * wait_ns : 100000000) {
        progress(ctx, atomic_load(&job->done), job->runs);
        nanosleep(&(struct timespec){.tv_nsec = wait_ns}, NULL);
    }
    trd_status st = TRD_OK;
    for (int i = 0; i < started; i++) {
        pthread_join(tid[i], NULL);
        if (w[i].status != TRD_OK && st == TRD_OK)
            st = trd_fail(w[i].status, "%s", w[i].message);
    }
    if (progress && st == TRD_OK)
        progress(ctx, job->runs, job->runs);
    return st;
}

trd_status trd_monte_carlo(const char *algo, const trd_params *params, const trd_costs *costs,
                           trd_port port, uint64_t seed, int64_t runs, int threads,
                           trd_progress_fn progress, void *progress_ctx, trd_mc_stats *stats,
                           double *samples)
{
    if (!stats)
        return trd_fail(TRD_EINVAL, "monte carlo: NULL argument (stats)");
    if (runs < 1)
        return trd_fail(TRD_EINVAL, "runs = %lld is invalid: need at least 1 run",
                        (long long)runs);
    if (threads < 0 || threads > THREADS_MAX)
        return trd_fail(TRD_EINVAL, "threads = %d is invalid: need 0 (all cores) to %d",
                        threads, THREADS_MAX);
    if (threads == 0)
        threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1)
        threads = 1;
    if (threads > runs)
        threads = (int)runs;
    double *buf = malloc((size_t)runs * sizeof *buf);
    if (!buf)
        return trd_fail(TRD_ENOMEM, "monte carlo: cannot store %lld results", (long long)runs);
    mc_job job = {.algo = algo, .params = params, .costs = costs, .port = port,
                  .seed = seed, .runs = runs, .samples = buf};
    trd_status st = run_workers(&job, threads, progress, progress_ctx);
    if (st == TRD_OK) {
        if (samples)
            memcpy(samples, buf, (size_t)runs * sizeof *buf);
        summarise(buf, runs, stats);
        if (!isfinite(stats->mean) || !isfinite(stats->std))
            st = trd_fail(TRD_EINVAL, "the makespans (up to %g) are too large for their mean "
                          "and standard deviation to fit in a double (mean-d %g, cv %g)",
                          stats->max, costs->mean_d, costs->cv);
    }
    free(buf);
    return st;
}
