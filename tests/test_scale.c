/* test_scale.c: planning, fusing, simulating and running a plan take
 * O(steps log steps) time (docs/RUNTIME.md, "Limits").  Each phase is
 * timed at S and at 8 S segments on the process's CPU clock (the time
 * its threads ran, not the time they waited for a core: on a loaded
 * machine the longer run is preempted more), the best of 5, and 8 times
 * the steps must take less than 32 times as long (quadratic work takes
 * 64 times as long; n log n about 10), plus a few milliseconds for the
 * clock's and the scheduler's noise on small times.  The segments are one element each: the steps are all there is.
 * And the memory of a threads run grows linearly with its ranks: 4 times
 * the ranks must take less than 8 times the memory (every rank holding
 * the whole plan and its engine took 16 times: 7.7 GB at p = 4096). */
#include <sys/resource.h>
#include <time.h>

#include "testutil.h"

#define GROWTH 8
#define MAX_RATIO 32.0
#define SLACK_S 0.005
#define BEST_OF 5

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef void (*phase_fn)(const char *algo, int32_t p, int64_t segments);

/* The best of BEST_OF runs of fn, in seconds. */
static double best_time(phase_fn fn, const char *algo, int32_t p, int64_t segments)
{
    double best = 1e30;
    for (int k = 0; k < BEST_OF; k++) {
        double t0 = seconds_now();
        fn(algo, p, segments);
        double t = seconds_now() - t0;
        best = t < best ? t : best;
    }
    return best;
}

static void check_growth(const char *what, phase_fn fn, const char *algo, int32_t p,
                         int64_t segments)
{
    double small = best_time(fn, algo, p, segments);
    double large = best_time(fn, algo, p, GROWTH * segments);
    TU_CHECK(large < MAX_RATIO * small + SLACK_S, "%s of %s on %d ranks: %lld segments took "
             "%.4f s, %lld took %.4f s (%.1fx): more than n log n", what, algo, (int)p,
             (long long)segments, small, (long long)(GROWTH * segments), large,
             large / small);
}

static trd_params params_of(int32_t p, int64_t segments, bool allreduce)
{
    trd_params prm;
    trd_params_init(&prm);
    prm.n = p;
    prm.segments = segments;
    prm.allreduce = allreduce;
    return prm;
}

static bool allreduce_only(const char *algo)
{
    return !strcmp(algo, "ring");
}

/* Plan, with its fusion pass. */
static void plan_once(const char *algo, int32_t p, int64_t segments)
{
    trd_params prm = params_of(p, segments, allreduce_only(algo));
    trd_plan *plan = NULL;
    TU_CHECK(trd_plan_create(&plan, algo, &prm) == TRD_OK, "%s: %s", algo, trd_errmsg());
    trd_plan_free(plan);
}

static void planning(void **state)
{
    (void)state;
    check_growth("planning", plan_once, "pipeline", 2, 512);
    check_growth("planning", plan_once, "pipeline", 4, 256);
    check_growth("planning", plan_once, "pipelined-fibonacci", 5, 256);
    check_growth("planning", plan_once, "binomial", 4, 256);
    check_growth("planning", plan_once, "ring", 3, 256);
}

/* Simulate: the plan's makespan (constant costs, full duplex), and one run
 * under random costs, half duplex (plan built outside the timing). */
static void simulate_once(const char *algo, int32_t p, int64_t segments)
{
    trd_params prm = params_of(p, segments, allreduce_only(algo));
    trd_plan *plan = NULL;
    TU_CHECK(trd_plan_create(&plan, algo, &prm) == TRD_OK, "%s: %s", algo, trd_errmsg());
    double makespan = trd_plan_makespan(plan);
    TU_CHECK(isfinite(makespan), "%s: makespan %g", algo, makespan);
    trd_plan_free(plan);
}

static void simulate_random(const char *algo, int32_t p, int64_t segments)
{
    trd_params prm = params_of(p, segments, allreduce_only(algo));
    trd_costs *costs = NULL;
    double makespan = NAN;
    assert_int_equal(trd_costs_create(&costs, p, TRD_DIST_EXP, 1, 1, 1), TRD_OK);
    TU_CHECK(trd_simulate(algo, &prm, costs, TRD_PORT_HALF, 1, 0, &makespan) == TRD_OK,
             "%s: %s", algo, trd_errmsg());
    TU_CHECK(isfinite(makespan), "%s: makespan %g", algo, makespan);
    trd_costs_free(costs);
}

static void simulation(void **state)
{
    (void)state;
    check_growth("simulating", simulate_once, "pipeline", 2, 1024);
    check_growth("simulating", simulate_once, "pipeline", 6, 512);
    check_growth("simulating", simulate_once, "pipelined-fibonacci", 8, 256);
    check_growth("simulating", simulate_once, "binomial", 8, 256);
    check_growth("simulating", simulate_once, "ring", 4, 256);
    check_growth("simulating under random costs", simulate_random, "pipeline", 3, 512);
    check_growth("simulating under random costs", simulate_random, "binomial", 8, 256);
}

typedef struct run_ctx {
    const char *algo;
    int64_t count;
} run_ctx;

/* One reduce (allreduce for ring) of count doubles in segments of one
 * element: its plan, its fused programs and every message. */
static trd_status run_rank(trd_comm *comm, void *arg)
{
    const run_ctx *x = arg;
    trd_op *op = NULL;
    trd_status st = trd_op_builtin(&op, TRD_OP_SUM, TRD_DOUBLE);
    double *in = calloc((size_t)x->count, sizeof *in), *out = calloc((size_t)x->count, sizeof *out);
    trd_coll_opts o;
    trd_coll_opts_init(&o);
    o.algo = x->algo;
    o.segment_bytes = sizeof(double);
    o.measure_model = false;
    if (st == TRD_OK && (!in || !out))
        st = TRD_ENOMEM;
    if (st == TRD_OK)
        st = allreduce_only(x->algo) ? trd_allreduce(comm, in, out, x->count, op, &o)
                                     : trd_reduce(comm, in, out, x->count, op, 0, &o);
    free(in);
    free(out);
    trd_op_free(op);
    return st;
}

static void run_once(const char *algo, int32_t p, int64_t segments)
{
    run_ctx x = {algo, segments};
    trd_threads_opts o;
    trd_threads_opts_init(&o);
    TU_CHECK(trd_comm_threads_run(p, &o, run_rank, &x) == TRD_OK, "%s: %s", algo, trd_errmsg());
}

/* Over threads: 2 ranks (a core each here), and 4 (more ranks than cores:
 * waits sleep, and a sleeping wait looks at its peers' calls). */
static void running(void **state)
{
    (void)state;
    check_growth("running", run_once, "pipeline", 2, 4096);
    check_growth("running", run_once, "pipeline", 4, 1024);
    check_growth("running", run_once, "binomial", 4, 1024);
    check_growth("running", run_once, "ring", 3, 512);
}

static const char *self; /* this program, run again for each memory measure */

/* Makes p threads ranks run one binomial reduce of one double and prints
 * how far that raised this process's peak resident memory, in KiB. */
static int measure_run(int32_t p)
{
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    run_ctx x = {"binomial", 1};
    trd_threads_opts o;
    trd_threads_opts_init(&o);
    trd_status st = trd_comm_threads_run(p, &o, run_rank, &x);
    getrusage(RUSAGE_SELF, &after);
    printf("%ld\n", st == TRD_OK ? after.ru_maxrss - before.ru_maxrss : -1L);
    return st == TRD_OK ? 0 : 1;
}

/* The memory a run of p ranks takes, measured in a fresh process of this
 * program (a child of this one would reuse the heap its parent freed). */
static long run_growth_kib(int32_t p)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "'%s' --measure-run %d", self, (int)p);
    FILE *f = popen(cmd, "r");
    long growth = -1;
    TU_CHECK(f && fscanf(f, "%ld", &growth) == 1 && pclose(f) == 0 && growth >= 0,
             "%s: no measure", cmd);
    return growth;
}

static void memory(void **state)
{
    (void)state;
    long small = run_growth_kib(256), large = run_growth_kib(1024);
    TU_CHECK(large < 8 * small, "a threads run of 1024 ranks took %ld KiB, of 256 ranks %ld KiB "
             "(%.1fx for 4x the ranks): more than linear", large, small,
             (double)large / (double)small);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--measure-run"))
        return measure_run((int32_t)atoi(argv[2]));
    self = argv[0];
    const struct CMUnitTest tests[] = {cmocka_unit_test(planning), cmocka_unit_test(simulation),
                                       cmocka_unit_test(running), cmocka_unit_test(memory)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
