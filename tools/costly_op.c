/* costly_op.c: operators whose combine costs a set time per call, the
 * case MPI libraries ignore when they pick an algorithm: the
 * tree that overlaps transfers with combines (canon-antoniu) matters most
 * when the operator is slow. */
#include "costly_op.h"

#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

typedef struct costly {
    double seconds;
    bool sleep;
} costly;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cli_costly_wait(double seconds, bool sleep)
{
    static _Thread_local bool slack_set;
    if (seconds <= 0)
        return;
    if (!sleep) {
        for (double end = now_s() + seconds; now_s() < end;)
            ;
        return;
    }
    if (!slack_set) { /* per thread: the default 50 us slack would dominate */
        prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
        slack_set = true;
    }
    struct timespec ts = {.tv_sec = (time_t)seconds,
                          .tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9)};
    nanosleep(&ts, NULL);
}

static void costly_sum(const void *in, void *inout, int64_t count, void *ctx)
{
    const costly *c = ctx;
    const double *a = in;
    double *b = inout;
    for (int64_t i = 0; i < count; i++)
        b[i] = a[i] + b[i];
    cli_costly_wait(c->seconds, c->sleep);
}

bool cli_costly_name(const char *name)
{
    return !strcmp(name, "sleep-sum") || !strcmp(name, "spin-sum");
}

/* The cost lives as long as the process (operators may be copied around);
 * one per distinct setting is enough. */
static costly settings[2];

trd_status cli_costly_op(const char *name, double cost_us, trd_op **op)
{
    if (!cli_costly_name(name) || !(cost_us >= 0) || cost_us > 1e7)
        return TRD_EINVAL;
    bool sleep = !strcmp(name, "sleep-sum");
    costly *c = &settings[sleep];
    *c = (costly){.seconds = 1e-6 * cost_us, .sleep = sleep};
    return trd_op_user(op, costly_sum, sizeof(double), true, c);
}
