/* bench/sim.c: time of one complete simulation at n = 64, for every
 * algorithm of the registry, with deterministic costs (d = 1, c = 0 and
 * d = c = 1), exponential costs (d = 1, c = 0: `treduce simulate --dist
 * exp`'s defaults; d = c = 1) and gamma costs (d = c = 1, CV 0.5 and 2:
 * the two gamma samplers), half-duplex one-port.
 *
 * One simulator per case (trd_sim_init: plan, engine and transport built
 * once), then R back-to-back trd_sim_run calls (run index 0..R-1 of seed 1,
 * so random cases draw fresh costs every run); R is calibrated so that one
 * measurement takes about 0.2 s; the figure is the median over 5
 * measurements, in microseconds per simulation.  Targets: <= 2 us for
 * binomial-64 with deterministic costs (d = 1, c = 0), <= 5 us with
 * exponential costs (d = 1, c = 0).
 *
 * Then a Monte-Carlo throughput line (trd_monte_carlo of tree-dyn, gamma
 * CV 1, n = 64, 10^5 runs over all cores), and with --simgrid PATH the
 * SimGrid harness (bench/simgrid_binomial.cpp) is run in the same run on
 * the same binomial-64 reduction, and the ratio SimGrid / treduce printed.
 *
 * With --cpu the simulations are timed on the thread's CPU clock instead
 * of the wall clock: on a shared, loaded machine that leaves out the time
 * the thread waits for a core (not the caches and cores it shares).
 *
 * usage: bench_sim [--quick] [--cpu] [--only ALGO] [--simgrid PATH] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "sim/sim.h"

#define N 64
#define MAX_REPEAT 5
#define TARGET_US 2.0
#define TARGET_EXP_US 5.0

typedef struct cost_case {
    const char *label;
    trd_dist dist;
    double mean_d, mean_c, cv;
} cost_case;

static const cost_case CASES[] = {
    {"const d=1 c=0", TRD_DIST_CONST, 1.0, 0.0, 0.0},
    {"const d=1 c=1", TRD_DIST_CONST, 1.0, 1.0, 0.0},
    {"exp d=1 c=0", TRD_DIST_EXP, 1.0, 0.0, 1.0},
    {"exp d=c=1", TRD_DIST_EXP, 1.0, 1.0, 1.0},
    {"gamma d=c=1 cv=0.5", TRD_DIST_GAMMA, 1.0, 1.0, 0.5},
    {"gamma d=c=1 cv=2", TRD_DIST_GAMMA, 1.0, 1.0, 2.0},
};
enum { CASE_CONST = 0, CASE_EXP = 2 }; /* the cases with a target */
#define NCASES (sizeof CASES / sizeof CASES[0])

static volatile double sink; /* keeps the makespans alive */
static bool cpu_clock;       /* --cpu */

/* Seconds on the wall clock, or with --cpu on this thread's CPU clock. */
static double clock_s(void)
{
    if (!cpu_clock)
        return now();
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Seconds for `reps` runs of sim; exits on a simulation error. */
static double time_runs(trd_sim *sim, int64_t reps, const char *algo)
{
    double acc = 0.0, m;
    int bad = 0;
    double t0 = clock_s();
    for (int64_t r = 0; r < reps; r++) {
        bad |= trd_sim_run(sim, 1, r, &m, NULL) != TRD_OK;
        acc += m;
    }
    double t = clock_s() - t0;
    if (bad) {
        fprintf(stderr, "bench_sim: %s: %s\n", algo, trd_errmsg());
        exit(1);
    }
    sink = acc;
    return t;
}

/* Median microseconds per simulation; *makespan gets run 0's makespan. */
static double bench_case(const char *algo, bool uses_k, const cost_case *cc, double target_s,
                         int repeat, double *makespan)
{
    trd_params p;
    trd_params_init(&p);
    p.n = N;
    p.d = cc->mean_d;
    p.c = cc->mean_c;
    if (uses_k)
        p.K = 4;
    trd_costs *costs;
    trd_sim sim;
    if (trd_costs_create(&costs, N, cc->dist, cc->mean_d, cc->mean_c, cc->cv) != TRD_OK ||
        trd_sim_init(&sim, algo, &p, costs, TRD_PORT_HALF) != TRD_OK) {
        fprintf(stderr, "bench_sim: %s, %s: %s\n", algo, cc->label, trd_errmsg());
        exit(1);
    }
    if (trd_sim_run(&sim, 1, 0, makespan, NULL) != TRD_OK) {
        fprintf(stderr, "bench_sim: %s, %s: %s\n", algo, cc->label, trd_errmsg());
        exit(1);
    }
    /* Calibrate: double R until a batch takes >= 1/10 of the target. */
    int64_t reps = 16;
    double t;
    while ((t = time_runs(&sim, reps, algo)) < 0.1 * target_s)
        reps *= 2;
    reps = (int64_t)((double)reps * target_s / t) + 1;
    double us[MAX_REPEAT];
    for (int k = 0; k < repeat; k++)
        us[k] = 1e6 * time_runs(&sim, reps, algo) / (double)reps;
    trd_sim_destroy(&sim);
    trd_costs_free(costs);
    return median(us, repeat);
}

/* Runs the SimGrid harness with `args`; its "simgrid_us_per_sim" figure,
 * or -1 on failure.  Its output is echoed, indented. */
static double run_simgrid(const char *path, const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", path, args);
    printf("$ %s\n", cmd);
    fflush(stdout);
    FILE *f = popen(cmd, "r");
    if (!f) {
        perror("bench_sim: popen");
        return -1.0;
    }
    char line[4096];
    double us = -1.0;
    while (fgets(line, sizeof line, f)) {
        printf("    %s", line);
        double v;
        if (sscanf(line, "simgrid_us_per_sim %lf", &v) == 1)
            us = v;
    }
    int rc = pclose(f);
    if (rc != 0) {
        fprintf(stderr, "bench_sim: the SimGrid harness failed (status %d)\n", rc);
        return -1.0;
    }
    return us;
}

static void monte_carlo_line(int repeat)
{
    const int64_t runs = 100000;
    trd_params p;
    trd_params_init(&p);
    p.n = N;
    trd_costs *costs;
    trd_mc_stats stats;
    double t[MAX_REPEAT];
    if (trd_costs_create(&costs, N, TRD_DIST_GAMMA, 1.0, 1.0, 1.0) != TRD_OK) {
        fprintf(stderr, "bench_sim: %s\n", trd_errmsg());
        exit(1);
    }
    for (int k = 0; k < repeat; k++) {
        double t0 = now();
        if (trd_monte_carlo("tree-dyn", &p, costs, TRD_PORT_HALF, 1, runs, 0, NULL, NULL, &stats,
                            NULL) != TRD_OK) {
            fprintf(stderr, "bench_sim: monte carlo: %s\n", trd_errmsg());
            exit(1);
        }
        t[k] = now() - t0;
    }
    trd_costs_free(costs);
    double s = median(t, repeat);
    printf("\nMonte-Carlo: trd_monte_carlo tree-dyn, n = %d, gamma d = c = 1 cv = 1, "
           "%lld runs, threads = 0 (all cores): %.3f s (median of %d), %.0f runs/s "
           "(mean makespan %.4f)\n",
           N, (long long)runs, s, repeat, (double)runs / s, stats.mean);
}

int main(int argc, char **argv)
{
    bool quick = false;
    const char *simgrid = NULL, *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = true;
        else if (strcmp(argv[i], "--cpu") == 0)
            cpu_clock = true;
        else if (strcmp(argv[i], "--simgrid") == 0 && i + 1 < argc)
            simgrid = argv[++i];
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else {
            fprintf(stderr, "usage: bench_sim [--quick] [--cpu] [--only ALGO] [--simgrid PATH]\n");
            return 2;
        }
    }
    int repeat = quick ? 3 : 5;
    double target_s = quick ? 0.05 : 0.2;

    printf("one simulation, n = %d, half-duplex one-port: median of %d measurements of "
           "~%.2f s each (%s), us per simulation (greedy-k-*: K = 4)\n",
           N, repeat, target_s, cpu_clock ? "thread CPU time" : "wall clock");
    printf("%-20s", "algorithm");
    for (size_t c = 0; c < NCASES; c++)
        printf(" %18s", CASES[c].label);
    printf("   makespans\n");

    double binomial_us = -1.0, binomial_exp_us = -1.0;
    for (size_t a = 0; a < trd_algo_count(); a++) {
        const char *name = trd_algo_name(a);
        if (only && strcmp(only, name) != 0)
            continue;
        if (trd_algo_kind_of(a) == TRD_KIND_EXCHANGE || trd_algo_kind_of(a) == TRD_KIND_PIPELINED ||
            trd_algo_uses_costs(a))
            continue; /* allreduce, segmented, heterogeneous: not what this table compares */
        double us[NCASES], mk[NCASES];
        for (size_t c = 0; c < NCASES; c++)
            us[c] = bench_case(name, trd_algo_uses_k(a), &CASES[c], target_s, repeat, &mk[c]);
        printf("%-20s", name);
        for (size_t c = 0; c < NCASES; c++)
            printf(" %18.3f", us[c]);
        printf("  ");
        for (size_t c = 0; c < NCASES; c++)
            printf(" %s%.4g", c ? "/ " : "", mk[c]);
        printf("\n");
        fflush(stdout);
        if (strcmp(name, "binomial") == 0) {
            binomial_us = us[CASE_CONST];
            binomial_exp_us = us[CASE_EXP];
            if (mk[0] != 6.0) {
                fprintf(stderr, "bench_sim: binomial-64 makespan %g, expected 6\n", mk[0]);
                return 1;
            }
        }
    }
    if (binomial_us >= 0)
        printf("\nbinomial-64, deterministic (d = 1, c = 0): %.3f us per simulation; "
               "target <= %.1f us: %s\n",
               binomial_us, TARGET_US, binomial_us <= TARGET_US ? "met" : "NOT met");
    if (binomial_exp_us >= 0)
        printf("binomial-64, exponential (d = 1, c = 0): %.3f us per simulation; "
               "target <= %.1f us: %s\n",
               binomial_exp_us, TARGET_EXP_US,
               binomial_exp_us <= TARGET_EXP_US ? "met" : "NOT met");

    if (!only)
        monte_carlo_line(quick ? 1 : 3);

    if (simgrid && binomial_us >= 0) {
        char args[256];
        int reps = quick ? 500 : 2000;
        printf("\nSimGrid, the same binomial-64 reduction (d = 1, c = 0), same run:\n");
        snprintf(args, sizeof args, "--mode loop --model Constant --reps %d --repeat %d", reps,
                 repeat);
        double sg = run_simgrid(simgrid, args);
        snprintf(args, sizeof args, "--mode loop --model CM02 --reps %d --repeat %d", reps,
                 repeat);
        double sg_cm02 = run_simgrid(simgrid, args);
        snprintf(args, sizeof args, "--mode barrier --model Constant --reps %d --repeat %d",
                 reps, repeat);
        double sg_barrier = run_simgrid(simgrid, args);
        if (sg < 0 || sg_cm02 < 0 || sg_barrier < 0)
            return 1;
        double best = sg < sg_cm02 ? sg : sg_cm02;
        printf("\nSimGrid, fastest mode (%s): %.2f us per simulation; treduce %.3f us: "
               "SimGrid / treduce = %.0fx (target >= 60x: %s)\n",
               sg < sg_cm02 ? "Constant" : "CM02", best, binomial_us, best / binomial_us,
               best / binomial_us >= 60.0 ? "met" : "NOT met");
        printf("SimGrid Constant %.2f us, CM02 %.2f us; without its barrier (%.2f us): "
               "%.2f us, ratio %.0fx\n",
               sg, sg_cm02, sg_barrier, best - sg_barrier, (best - sg_barrier) / binomial_us);
    }
    return 0;
}
