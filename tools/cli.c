/* cli.c: helpers shared by the sub-commands (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

bool cli_int(const char *cmd, const char *what, const char *text, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end != '\0') {
        fprintf(stderr, "treduce %s: invalid %s '%s': not an integer\n", cmd, what, text);
        return false;
    }
    if (errno == ERANGE) {
        fprintf(stderr, "treduce %s: invalid %s '%s': out of range\n", cmd, what, text);
        return false;
    }
    *out = v;
    return true;
}

bool cli_real(const char *cmd, const char *what, const char *text, double *out)
{
    if (trd_real_parse(text, what, out) == TRD_OK)
        return true;
    fprintf(stderr, "treduce %s: %s\n", cmd, trd_errmsg());
    return false;
}

const char *cli_errmsg(trd_status status)
{
    const char *m = trd_errmsg();
    return m && *m ? m : trd_strerror(status);
}

bool cli_finite_check(cli_finite *f, const char *name, double v)
{
    if (isfinite(v))
        return true;
    if (!f->name) {
        f->name = name;
        f->value = v;
    }
    return false;
}

json_t *cli_json_real(cli_finite *f, const char *name, double v)
{
    return cli_finite_check(f, name, v) ? json_real(v) : json_null();
}

int cli_finite_end(const char *cmd, const cli_finite *f, json_t *obj)
{
    if (!f->name)
        return CLI_OK;
    char why[256];
    snprintf(why, sizeof why, "%s is not finite (%g): a result overflowed a double; use "
             "smaller inputs", f->name, f->value);
    if (obj)
        json_object_set_new(obj, "error", json_string(why));
    fprintf(stderr, "treduce %s: %s\n", cmd, why);
    return CLI_FAILED;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "treduce %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(see 'treduce %s --help')\n", cmd);
    return CLI_USAGE;
}

int cli_lib_error_status(trd_status status)
{
    switch (status) {
    case TRD_EINVAL:
    case TRD_ENOALGO:
    case TRD_EUNSUPPORTED:
        return CLI_USAGE;
    default:
        return CLI_FAILED;
    }
}

int cli_lib_error(const char *cmd, trd_status status)
{
    fprintf(stderr, "treduce %s: %s\n", cmd, cli_errmsg(status));
    return cli_lib_error_status(status);
}

/* TREDUCE_PROGRESS: seconds between lines off a terminal; 0: off. */
static double progress_every = 5.0;

int cli_progress_init(void)
{
    const char *v = getenv("TREDUCE_PROGRESS");
    char *end;
    if (!v)
        return CLI_OK;
    if (!strcmp(v, "off")) {
        progress_every = 0;
        return CLI_OK;
    }
    double s = strtod(v, &end);
    if (end == v || *end || !(s > 0) || !isfinite(s)) {
        fprintf(stderr, "treduce: invalid TREDUCE_PROGRESS='%s': the seconds between progress "
                "lines (> 0), or off\n", v);
        return CLI_USAGE;
    }
    progress_every = s;
    return CLI_OK;
}

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* "about 12 s left" at the pace since the task's start. */
static void time_left(char *out, size_t size, double elapsed, int64_t done, int64_t total)
{
    if (done <= 0)
        snprintf(out, size, "time left not yet known");
    else
        snprintf(out, size, "about %.0f s left",
                 elapsed * (double)(total - done) / (double)done);
}

void cli_progress(const char *label, const char *unit, int64_t done, int64_t total)
{
    static double start, last;
    static int64_t task_total = -1, last_done, last_pct = -1;
    if (progress_every <= 0 || total <= 0)
        return;
    double now = monotonic_s();
    if (total != task_total || done < last_done) { /* a new task */
        task_total = total;
        start = last = now;
        last_pct = -1;
    }
    last_done = done;
    char left[64];
    time_left(left, sizeof left, now - start, done, total);
    int pct = (int)(100 * done / total);
    if (!isatty(STDERR_FILENO)) {
        if (done < total && now - last >= progress_every) {
            fprintf(stderr, "treduce %s: %d%% (%lld/%lld %s), %s\n", label, pct,
                    (long long)done, (long long)total, unit, left);
            last = now;
        }
        if (done == total)
            task_total = -1;
        return;
    }
    if (pct == last_pct && done != total && now - last < 1.0)
        return; /* redrawn when the share moves, and each second for the time left */
    last_pct = pct;
    last = now;
    int bars = pct / 5;
    fprintf(stderr, "\r%s [%.*s%*s] %3d%%  %-24s", label, bars, "####################",
            20 - bars, "", pct, done == total ? "" : left);
    if (done == total) {
        fputc('\n', stderr);
        task_total = -1;
    }
    fflush(stderr);
}

bool cli_make_dir(const char *cmd, const char *dir)
{
    struct stat sb;
    if (mkdir(dir, 0777) == 0 || (errno == EEXIST && stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode)))
        return true;
    fprintf(stderr, "treduce %s: cannot create folder %s: %s\n", cmd, dir,
            errno == EEXIST ? "a file has that name" : strerror(errno));
    return false;
}

int cli_parse_options(const char *cmd, int argc, char **argv, const struct option *opts,
                      void (*help)(void), int (*take)(int opt, void *ctx), void *ctx)
{
    return cli_parse_options_short(cmd, "p:h", argc, argv, opts, help, take, ctx);
}

int cli_parse_options_short(const char *cmd, const char *shortopts, int argc, char **argv,
                            const struct option *opts, void (*help)(void),
                            int (*take)(int opt, void *ctx), void *ctx)
{
    int opt, st;
    optind = 1;
    opterr = 0; /* our own messages, naming the option */
    while ((opt = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
        if (opt == 'h') {
            help();
            return -1;
        }
        if (opt == '?')
            return cli_usage_error(cmd, "unknown or incomplete option '%s'", argv[optind - 1]);
        if ((st = take(opt, ctx)) != CLI_OK)
            return st;
    }
    if (optind < argc)
        return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    return CLI_OK;
}

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

void cli_sort(double *v, size_t n)
{
    qsort(v, n, sizeof *v, by_value);
}
